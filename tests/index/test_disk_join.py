"""``neardup.self_join`` out of core (``memory=``): each table partitioned by key into files of
a work folder and joined a partition at a time, against brute force (tests/naive_index.py)
and the in-memory join. Budgets of a few dozen rows (``MIN_ROWS`` lowered) make many
partitions, and partitions split again, from a few hundred fingerprints."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from index_checks import draw_families, joined, planted, rows

import naive_index as naive
from neardup.index import disk_join
from neardup.index import self_join as self_join_module
from neardup.index.disk_join import MappedPages
from neardup.index.self_join import disk_bytes_needed


def budget(partition_rows: int, words: int, window: int) -> int:
    """The memory= that makes partitions of at most ``partition_rows`` rows, for a window of
    at most ``MIN_WINDOW`` pairs (which memory= does not lower)."""
    plan = disk_join.DiskPlan(0, words, 0, window)
    return plan.window_bytes + partition_rows * plan.row_bytes


@pytest.fixture(autouse=True)
def small_partitions():
    with mock.patch.object(disk_join, "MIN_ROWS", 1):
        yield


@pytest.mark.parametrize("bits", [64, 128])
@pytest.mark.parametrize("k", [0, 1, 3, 6])
def test_planted_pairs_out_of_core_equal_brute_force(bits, k, tmp_path):
    values = planted(np.random.default_rng(k + bits), bits, k, bases=30)
    expected = naive.pairs(values, list(range(len(values))), k)
    tables = []
    memory = budget(16, bits // 64, 7)
    found = joined(
        rows(values, bits),
        k,
        memory=memory,
        chunk_size=7,
        work_dir=tmp_path,
        on_table=lambda *a: tables.append(a),
    )
    assert found == expected
    assert [t for t, *_ in tables] == list(range(len(tables))) and tables[0][1] == len(tables)
    assert all(written >= len(values) * (8 + bits // 8) for *_, written in tables)  # written to disk
    assert list(tmp_path.iterdir()) == []  # the work folder's files are gone


@pytest.mark.slow  # 5,500 rows
def test_a_skewed_key_range_is_split_again_and_a_key_group_held_whole(tmp_path):
    """2,000 copies of one fingerprint and 500 near it share their keys in most tables: their
    partition is split by the key's next bits until only their key group is left, which is
    joined whole although it is far past the budget."""
    rng = np.random.default_rng(5)
    base = np.uint64(0x0123_4567_89AB_CDEF)
    flips = np.uint64(1) << rng.integers(0, 64, size=500).astype(np.uint64)
    fps = np.concatenate(
        [rng.integers(0, 2**64, size=3000, dtype=np.uint64), np.full(2000, base), base ^ flips]
    )
    rng.shuffle(fps)
    written = []
    memory = budget(64, 1, 1000)
    found = joined(
        fps, 3, memory=memory, chunk_size=1000, work_dir=tmp_path, on_table=lambda *a: written.append(a[3])
    )
    assert found == joined(fps, 3)
    assert min(written) > 1.2 * len(fps) * 16  # a partition written again, in each table


def test_the_in_memory_join_is_kept_when_it_fits_and_a_memory_mapped_array(tmp_path):
    fps = rows(planted(np.random.default_rng(1), 64, 3, bases=40), 64)
    np.save(tmp_path / "fps.npy", fps)
    mapped = np.load(tmp_path / "fps.npy", mmap_mode="r")
    tables = []
    found = joined(mapped, 3, memory=budget(20, 1, 100), chunk_size=100, on_table=lambda *a: tables.append(a))
    # out of core, in the system's temporary folder
    assert found == joined(fps, 3) and tables and all(written > 0 for *_, written in tables)
    tables.clear()
    assert joined(fps, 3, memory=1 << 30, on_table=lambda *a: tables.append(a)) == found
    assert tables and all(written == 0 for *_, written in tables)  # it fits: in memory
    assert disk_bytes_needed(fps) == 2 * len(fps) * 16


def test_budgets_and_plans_that_cannot_be_joined_out_of_core_are_refused():
    fps = rows(planted(np.random.default_rng(2), 64, 8, bases=6), 64)
    too_little = pytest.raises(ValueError, match="memory=1,000 bytes is too little")
    with mock.patch.object(disk_join, "MIN_ROWS", 4096), too_little:
        joined(fps, 3, memory=1000)
    with pytest.raises(ValueError, match="cannot be joined out of core"):
        joined(fps, 8, plan=6, memory=budget(16, 1, 7), chunk_size=7)
    with pytest.raises(ValueError, match="memory"):
        joined(fps, 3, memory=0)


@pytest.mark.slow  # 40 drawn joins, out of core
@settings(deadline=None, max_examples=40)
@given(st.data())
def test_drawn_fingerprints_out_of_core_equal_brute_force(data):
    """In memory or in a read-only memory-mapped file, whose pages each slice releases."""
    bits = data.draw(st.sampled_from([64, 128]))
    k = data.draw(st.integers(0, 7))
    values = draw_families(data, bits, k, max_copies=8)
    window = data.draw(st.integers(1, 50))
    memory = budget(data.draw(st.integers(1, 8)), bits // 64, window)
    expected = naive.pairs(values, list(range(len(values))), k)
    with mock.patch.object(disk_join, "MIN_ROWS", 1), tempfile.TemporaryDirectory() as folder:
        fps = rows(values, bits)
        if data.draw(st.booleans(), label="memory-mapped"):
            np.save(f"{folder}/fps.npy", fps)
            fps = np.load(f"{folder}/fps.npy", mmap_mode="r")
        assert joined(fps, k, memory=memory, chunk_size=window) == expected
        del fps  # unmapped before its folder is removed (Windows refuses a mapped file's)


def mapped_kib(path: Path) -> int:
    """KiB of ``path`` resident in this process's mappings of it (/proc/self/smaps)."""
    target, inside, total = os.path.realpath(path), False, 0
    for line in Path("/proc/self/smaps").read_text().splitlines():
        fields = line.split()
        if not fields[0].endswith(":"):  # a mapping: address range, mode, offset, device, inode, path
            inside = len(fields) > 5 and fields[5] == target
        elif inside and fields[0] == "Rss:":
            total += int(fields[1])
    return total


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/proc/self/smaps"), reason="reads /proc/self/smaps (Linux)")
@pytest.mark.parametrize("bits", [64, 128])
def test_a_read_only_mapping_s_pages_are_released_behind_each_pass(bits, tmp_path):
    """The fingerprints of a ``.npy`` mapped read-only are read a slice at a time, and each
    slice's pages released once it is partitioned: as each table ends, the process holds
    none of the file's pages (before, every one: 320 or 640 KB here, 100M fingerprints' 800 MB in
    ``neardup pairs --memory 1G``), and the pairs are the in-memory join's."""
    rng = np.random.default_rng(bits)
    fps = rng.integers(0, 2**64, size=(40_000, bits // 64), dtype=np.uint64)
    fps[::2] = fps[1::2] ^ (np.uint64(1) << rng.integers(0, 64, size=(20_000, 1)).astype(np.uint64))
    fps = fps[:, 0].copy() if bits == 64 else fps
    path = tmp_path / "fps.npy"
    np.save(path, fps)
    mapped = np.load(path, mmap_mode="r")
    resident: list[int] = []
    found = joined(
        mapped,
        3,
        memory=budget(4000, bits // 64, 1000),  # slices of 4,000 rows
        chunk_size=1000,
        work_dir=tmp_path,
        on_table=lambda *_: resident.append(mapped_kib(path)),
    )
    assert found == joined(fps, 3) and len(found) >= 20_000
    assert len(resident) >= 4 and max(resident) <= 16, resident
    assert int(np.bitwise_xor.reduce(mapped, axis=None)) == int(np.bitwise_xor.reduce(fps, axis=None))
    assert mapped_kib(path) >= 0.9 * fps.nbytes / 1024  # read whole, the pages are counted


def test_only_a_mapping_that_cannot_have_been_written_through_is_released(tmp_path):
    """A copy-on-write mapping (``mmap_mode="c"``) written to holds private pages, which a
    release would drop for the file's: its writes are joined, and only a read-only mapping's
    pages are ever released."""
    rng = np.random.default_rng(3)
    np.save(tmp_path / "fps.npy", rng.integers(0, 2**64, size=10_000, dtype=np.uint64))
    written = np.load(tmp_path / "fps.npy", mmap_mode="c")
    written[::2] = written[1::2] ^ np.uint64(1)  # 5,000 pairs at 1 bit, in this process only
    found = joined(written, 3, memory=budget(1000, 1, 1000), chunk_size=1000, work_dir=tmp_path)
    assert found == joined(np.array(written), 3) and len(found) >= 5_000
    assert MappedPages.of(written) is None and MappedPages.of(np.asarray(written)[5:]) is None
    assert MappedPages.of(np.load(tmp_path / "fps.npy", mmap_mode="r+")) is None
    assert MappedPages.of(np.array(written)) is None
    assert MappedPages.of(np.load(tmp_path / "fps.npy", mmap_mode="r").reshape(-1, 1)[5:]) is not None


def first_agreeing_table(a: int, b: int, plan) -> int:
    """The first of ``plan``'s tables whose kept blocks two 64-bit fingerprints agree on."""
    x = a ^ b
    for t, kept in enumerate(plan.tables):
        if all((x >> plan.block_starts[j]) & ((1 << plan.block_sizes[j]) - 1) == 0 for j in kept):
            return t
    raise AssertionError("no table: the pair is beyond the radius")


@pytest.mark.slow  # a join resumed from each table
@pytest.mark.parametrize("out_of_core", [False, True])
def test_a_join_resumed_from_a_table_reports_the_rest_each_once(out_of_core, tmp_path):
    """A run stopped after tables 0 .. t - 1 and one resumed with first_table=t: together the
    whole self-join, each pair once, the resumed one holding the pairs whose first agreeing
    table is t or later."""
    from neardup.index.plan import IndexPlan

    values = planted(np.random.default_rng(9), 64, 3, bases=30)
    fps = rows(values, 64)
    plan = IndexPlan.choose(64, 3, "balanced", len(values))
    expected = naive.pairs(values, list(range(len(values))), 3)
    options = {"plan": "balanced", "chunk_size": 7}
    if out_of_core:
        options.update(memory=budget(16, 1, 7), work_dir=tmp_path)
    for t in (0, 1, 4, plan.num_tables):
        done: list[int] = []
        resumed = joined(
            fps, 3, first_table=t, on_table=lambda table, *_, done=done: done.append(table), **options
        )
        assert resumed == [p for p in expected if first_agreeing_table(values[p[0]], values[p[1]], plan) >= t]
        assert done == list(range(t, plan.num_tables))  # in memory too
    assert {first_agreeing_table(values[i], values[j], plan) for i, j, _ in expected} > {0, 1}
    with pytest.raises(ValueError, match="first_table=11 must be in"):
        joined(fps, 3, first_table=11, **options)


@pytest.mark.slow
def test_an_index_file_s_pairs_in_a_memory_budget(tmp_path):
    """iter_pairs(memory=) joins an opened index's memory-mapped fingerprints out of core, ids
    and all, with or without pending changes, as pairs() finds them."""
    from neardup import HammingIndex

    values = planted(np.random.default_rng(4), 64, 3, bases=30)
    index = HammingIndex(max_distance=3)
    index.add(rows(values, 64), ids=np.arange(len(values)) * 7 + 100)
    path = tmp_path / "index.ndx"
    index.save(path)
    work = tmp_path / "work"
    work.mkdir()
    opened = HammingIndex.open(path)
    memory = budget(16, 1, 7)
    for changed in (False, True):
        if changed:
            opened.remove([100, 107, 114])
            opened.add(rows(values, 64)[:5] ^ np.uint64(1), ids=[1, 2, 3, 4, 5])
        expected = sorted(zip(*(a.tolist() for a in opened.pairs())))
        with mock.patch.object(self_join_module, "disk_self_join", wraps=disk_join.disk_self_join) as spy:
            found = [
                p
                for i, j, d in opened.iter_pairs(chunk_size=7, memory=memory, work_dir=work)
                for p in zip(i.tolist(), j.tolist(), d.tolist())
            ]
        assert sorted(found) == expected and len(found) == len(set(found)) and len(expected) > 30
        assert spy.called and list(work.iterdir()) == []  # out of core, its files removed
