"""HammingIndex updates (delta, tombstones, compact) and its file (save/open): after any sequence
of add, remove, compact, save and open, query/query_batch/pairs equal brute force exactly
(tests/naive_index.py); the file is atomic, memory-mapped, and every damage raises FormatError."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from index_checks import check_against_model, near, rows

from neardup import ConfigError, FingerprintConfig, FormatError, HammingIndex
from neardup.index import hamming_index, storage


@pytest.fixture
def small_thresholds(monkeypatch):
    """Auto-compaction after a handful of changes, so short sequences cross it many times."""
    monkeypatch.setattr(hamming_index, "DELTA_MIN", 6)
    monkeypatch.setattr(hamming_index, "DELTA_MAX", 40)


@pytest.mark.slow  # each step checked against brute force
@pytest.mark.parametrize("bits", [64, 128])
@pytest.mark.parametrize("seed", range(4))
def test_random_sequences_equal_brute_force(tmp_path, small_thresholds, bits, seed):
    rng = np.random.default_rng(seed * 10 + bits)
    k = int(rng.integers(0, 5))
    index = HammingIndex(bits=bits, max_distance=k, plan=["auto", "compact", "fast", k + 1][seed])
    model: dict[int, int] = {}
    removed: list[int] = []
    next_id = 0
    for step in range(30):
        op = rng.choice(["add", "add", "remove", "compact", "save", "readd"])
        if op == "add":
            size = int(rng.integers(0, 12))
            values = [near(rng, bits, list(model.values()), k) for _ in range(size)]
            new_ids = [next_id + int(x) for x in rng.permutation(3 * size)[:size]]
            next_id += 3 * size
            index.add(rows(values, bits), ids=np.array(new_ids, dtype=np.int64))
            model.update(zip(new_ids, values))
        elif op == "remove" and model:
            gone = rng.choice(list(model), size=int(rng.integers(1, min(len(model), 6) + 1)), replace=False)
            index.remove(gone)
            for g in gone.tolist():
                del model[g]
                removed.append(g)
        elif op == "readd" and removed:  # a removed id may come back at once
            back = removed.pop()
            value = near(rng, bits, list(model.values()), k)
            index.add(rows([value], bits), ids=[back])
            model[back] = value
        elif op == "compact":
            index.compact()
            assert len(index._delta_ids) == len(index._dead) == 0
        elif op == "save":
            path = tmp_path / f"step{step}.ndx"
            index.save(path)
            index = HammingIndex.open(path)
            if rng.random() < 0.5:
                index.auto_compact = True
        extra = [near(rng, bits, list(model.values()), k) for _ in range(3)]
        check_against_model(index, model, bits, k, extra)


def test_adds_go_to_the_delta_until_the_threshold():
    index = HammingIndex(max_distance=2)
    index.add(np.arange(10_000, dtype=np.uint64))
    tables = index._tables
    index.add(np.array([5], dtype=np.uint64))
    assert index._tables is tables and len(index._delta_ids) == 1
    for b in range(hamming_index.DELTA_MIN // 512 - 1):
        index.add(np.arange(512, dtype=np.uint64) + np.uint64(2**40 + 512 * b))
    assert index._tables is tables and len(index._delta_ids) == hamming_index.DELTA_MIN - 511
    index.add(np.arange(512, dtype=np.uint64))  # 4097 pending > max(4096, 10000 // 8)
    assert index._tables is not tables and len(index._delta_ids) == 0
    assert len(index) == index._tables.shape[1] == 10_001 + hamming_index.DELTA_MIN


def test_remove_errors_leave_the_index_unchanged():
    index = HammingIndex(max_distance=2)
    index.add(np.array([1, 3, 7, 15], dtype=np.uint64), ids=[10, 11, 12, 13])
    index.add(np.array([31], dtype=np.uint64), ids=[14])
    index.remove([11])
    before = (index.ids.tolist(), [a.tolist() for a in index.pairs()])
    for bad, match in [
        ([12, 99], "not in the index, e.g. 99"),
        ([11], "e.g. 11"),
        ([12, 12], "repeat"),
        ([1.5], None),
    ]:
        with pytest.raises((ConfigError, TypeError), match=match):
            index.remove(bad)
        assert (index.ids.tolist(), [a.tolist() for a in index.pairs()]) == before
    assert 11 not in index and 12 in index and 14 in index
    with pytest.raises(ConfigError, match="already stored"):
        index.add(np.array([0], dtype=np.uint64), ids=[14])
    index.add(np.array([3], dtype=np.uint64), ids=[11])  # re-adding a removed id is allowed
    assert index.query(3)[0].tolist() == [11, 10, 12, 13]
    index.remove(14)
    assert len(index) == 4 and 14 not in index


def test_round_trip_is_identical_and_memory_mapped(tmp_path):
    rng = np.random.default_rng(1)
    fps = rng.integers(0, 2**64, size=(3000, 2), dtype=np.uint64)
    fps[1500:1700] = fps[:200] ^ np.uint64(0b101)
    config = FingerprintConfig().to_dict()
    index = HammingIndex(bits=128, max_distance=3, plan="balanced", fingerprint_config=config)
    index.add(fps)
    index.add(fps[:50] ^ np.uint64(1 << 40))
    index.remove(np.arange(10, 40))
    path = tmp_path / "index.ndx"
    size = index.save(path)
    assert size == os.path.getsize(path) and [p.name for p in tmp_path.iterdir()] == ["index.ndx"]
    opened = HammingIndex.open(path, verify=True, fingerprint_config=config)
    assert opened.fingerprint_config == config and opened.plan == index.plan
    for name in ("_fps", "_ids", "_sorted_ids", "_tables"):
        assert isinstance(getattr(opened, name), np.memmap)
        assert not getattr(opened, name).flags.writeable
    assert np.array_equal(opened.ids, index.ids) and len(opened) == len(index)
    queries = np.concatenate([fps[::7], fps[:30] ^ np.uint64(3 << 70 % 64)])
    for a, b in zip(opened.query_batch(queries), index.query_batch(queries)):
        assert np.array_equal(a, b)
    for a, b in zip(opened.pairs(), index.pairs()):
        assert np.array_equal(a, b)
    opened.compact()
    assert not isinstance(opened._tables, np.memmap)
    opened.save(path)  # over the file it was mapped from
    again = HammingIndex.open(path)
    for a, b in zip(again.pairs(), index.pairs()):
        assert np.array_equal(a, b)


def test_empty_index_round_trip(tmp_path):
    HammingIndex(bits=64, max_distance=0).save(tmp_path / "e.ndx")
    index = HammingIndex.open(tmp_path / "e.ndx")
    assert len(index) == 0 and index.fingerprint_config is None
    index.add(np.array([7], dtype=np.uint64))
    assert index.query(7)[0].tolist() == [0]


def test_failed_save_leaves_the_old_file(tmp_path, monkeypatch):
    index = HammingIndex(max_distance=2)
    index.add(np.arange(100, dtype=np.uint64))
    path = tmp_path / "index.ndx"
    index.save(path)
    before = path.read_bytes()
    index.add(np.arange(100, dtype=np.uint64) + np.uint64(1000))
    calls = []
    real = storage.zlib.crc32

    def failing(data, value=0):
        calls.append(1)
        if len(calls) == 3:  # after the header and an array are written
            raise OSError("disk full")
        return real(data, value)

    monkeypatch.setattr(storage.zlib, "crc32", failing)
    with pytest.raises(OSError, match="disk full"):
        index.save(path)
    monkeypatch.undo()
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["index.ndx"]
    assert len(HammingIndex.open(path)) == 100


@pytest.fixture
def saved(tmp_path):
    index = HammingIndex(max_distance=2, fingerprint_config={"features": "words", "seed": 0})
    index.add(np.arange(500, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15))
    path = tmp_path / "index.ndx"
    index.save(path)
    return path


def _header(path):
    data = path.read_bytes()
    length = int.from_bytes(data[8:16], "little")
    return data, length, json.loads(data[24 : 24 + length])


def _flip(data: bytes, name: str) -> bytes:
    """``data`` with one bit flipped in the middle of array ``name``."""
    length = int.from_bytes(data[8:16], "little")
    entry = json.loads(data[24 : 24 + length])["arrays"][name]
    at = entry["offset"] + entry["nbytes"] // 2
    return data[:at] + bytes([data[at] ^ 0x10]) + data[at + 1 :]


def _rewrite(path, change):
    """Write a file like ``path`` whose header ``change`` edited (a valid file otherwise)."""
    _, _, header = _header(path)
    _, arrays = storage.read_file(path, header["format"], (header["format_version"],))
    meta = {k: v for k, v in header.items() if k not in ("arrays", "file_size")}
    change(meta)
    out = path.with_name("changed.ndx")
    storage.write_file(out, meta, {name: np.array(a) for name, a in arrays.items()})
    return out


@pytest.mark.parametrize(
    ("damage", "match"),
    [
        (lambda d, n: d[:-100], "truncated"),
        (lambda d, n: d[:30], "truncated"),
        (lambda d, n: d[:5], "not a neardup index"),
        (lambda d, n: b"PK\x03\x04" + d[4:], "not a neardup index"),
        (lambda d, n: d[:40] + bytes([d[40] ^ 1]) + d[41:], "header is corrupt"),
        (lambda d, n: _flip(d, "tables"), "'tables' is corrupt"),
        (lambda d, n: _flip(d, "ids"), "'ids' is corrupt"),
        (lambda d, n: d + b"\0" * 64, "appended"),
        (lambda d, n: b"", "not a neardup index"),
    ],
)
def test_damaged_files_raise_format_error(saved, damage, match):
    data, length, _ = _header(saved)
    saved.write_bytes(damage(data, length))
    with pytest.raises(FormatError, match=match) as info:
        HammingIndex.open(saved)
    assert str(saved) in str(info.value)


def test_verify_false_skips_array_checksums_but_not_the_header(saved):
    data, _, _ = _header(saved)
    saved.write_bytes(_flip(data, "tables"))
    assert len(HammingIndex.open(saved, verify=False)) == 500
    with pytest.raises(FormatError, match="'tables' is corrupt"):
        HammingIndex.open(saved, verify=True)


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (
            lambda m: m.update(format_version=4),
            "format version 4; this release of neardup reads format version 2 or 3",
        ),
        (lambda m: m.update(format="something.else"), "is not 'neardup.HammingIndex'"),
        (lambda m: m["plan"].update(num_blocks=5), "layout differs"),
        (lambda m: m["counts"].update(main=499), "layout differs|shape"),
        (lambda m: m["counts"].update(delta=3), "'delta_fingerprints' has shape"),
        (lambda m: m.pop("plan"), "does not describe an index"),
        (lambda m: m.update(max_distance=9), "does not describe an index"),
    ],
)
def test_incompatible_headers_raise_format_error(saved, change, match):
    out = _rewrite(saved, change)
    with pytest.raises(FormatError, match=match) as info:
        HammingIndex.open(out)
    assert str(out) in str(info.value)


def test_fingerprint_config_must_match_when_given(saved):
    stored = {"features": "words", "seed": 0}
    assert HammingIndex.open(saved).fingerprint_config == stored
    assert HammingIndex.open(saved, fingerprint_config=stored).fingerprint_config == stored
    with pytest.raises(FormatError, match="built with fingerprint config"):
        HammingIndex.open(saved, fingerprint_config={"features": "words", "seed": 1})
    with pytest.raises(ConfigError, match="JSON-able dict"):
        HammingIndex(fingerprint_config={"x": object()})


def test_arrays_are_aligned(saved):
    _, length, header = _header(saved)
    assert header["format"] == "neardup.HammingIndex" and header["format_version"] == 3
    assert header["counts"] == {"main": 500, "delta": 0, "tombstones": 0, "live": 500}
    assert all(e["offset"] % 64 == 0 and e["offset"] >= 24 + length for e in header["arrays"].values())


def test_version_1_files_are_refused_naming_the_version(saved):
    """Format 1 (no directories) was never released: such a file is refused, not read."""
    _, _, header = _header(saved)
    _, arrays = storage.read_file(saved, header["format"], (3,))
    meta = {k: v for k, v in header.items() if k not in ("arrays", "file_size")}
    meta["format_version"] = 1
    del meta["plan"]["directory_bits"]
    old = saved.with_name("v1.ndx")
    storage.write_file(old, meta, {name: np.array(a) for name, a in arrays.items() if name != "directory"})
    with pytest.raises(
        FormatError, match="format version 1; this release of neardup reads format version 2 or 3"
    ):
        HammingIndex.open(old)
