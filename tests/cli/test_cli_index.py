"""``neardup pairs`` and ``neardup index build|query|info`` on files in tmp_path."""

from __future__ import annotations

import random

import numpy as np
import pytest

import naive_index as naive
import neardup
from neardup._errors import FormatError
from neardup.cli.pairs import WRITE_ROWS
from neardup.io.fingerprint_files import format_header, format_rows, read_fingerprints


def _corpus(n: int = 60) -> list[str]:
    rng = random.Random(3)
    words = [f"w{i}" for i in range(400)]
    base = [" ".join(rng.choice(words) for _ in range(120)) for _ in range(n // 2)]
    # Each base text and a copy with one word changed: near-duplicates at a few bits.
    return base + [t.replace(t.split()[50], "changed", 1) for t in base]


@pytest.fixture
def fpfile(tmp_path, run):
    texts = _corpus()
    (tmp_path / "docs.txt").write_text("\n".join(texts) + "\n")
    result = run("fingerprint", "docs.txt", "-o", "docs.fp", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return tmp_path / "docs.fp"


def _brute_force_pairs(path, k):
    data = read_fingerprints(path)
    d = neardup.hamming_pairwise(data.fingerprints)
    i, j = np.nonzero(np.triu(d <= k, k=1))
    return {(data.ids[a], data.ids[b], int(d[a, b])) for a, b in zip(i.tolist(), j.tolist())}


@pytest.mark.parametrize("k", [0, 3, 6])
def test_pairs_equal_brute_force(fpfile, k, run):
    result = run("pairs", fpfile.name, "-k", str(k), cwd=fpfile.parent)
    assert result.returncode == 0, result.stderr
    header, *rows = result.stdout.splitlines()
    assert header.startswith("# neardup pairs")
    found = [tuple(row.split("\t")) for row in rows]
    found = [(a, b, int(d)) for a, b, d in found]
    assert len(found) == len(set(found))
    assert set(found) == _brute_force_pairs(fpfile, k)
    if k == 6:
        assert len(found) >= 20  # most planted near-duplicates are found at this radius


def test_fingerprint_file_round_trip(tmp_path):
    fps64 = np.array([0, 1, 2**64 - 1], dtype=np.uint64)
    fps128 = np.array([[1, 2], [2**64 - 1, 0]], dtype=np.uint64)
    for config, fps, ids in [
        (neardup.FingerprintConfig(), fps64, ["a", "b b", "ü"]),
        (neardup.FingerprintConfig(bits=128), fps128, ["1", "2"]),
    ]:
        path = tmp_path / f"{config.bits}.fp"
        path.write_bytes(format_header(config) + format_rows(ids, fps))
        data = read_fingerprints(path)
        assert data.ids == ids and data.config == config.to_dict()
        np.testing.assert_array_equal(data.fingerprints, fps)


def test_bad_fingerprint_files_name_file_and_line(tmp_path, run):
    bad = tmp_path / "bad.fp"
    bad.write_text("1\tabc\n")
    with pytest.raises(FormatError, match=r"bad.fp:1: not a neardup fingerprint file"):
        read_fingerprints(bad)
    bad.write_bytes(format_header(neardup.FingerprintConfig()) + b"1\t0123456789abcdef\n2\tzz\n")
    with pytest.raises(FormatError, match=r"bad.fp:3: expected ID<TAB>HEX with 16 hex digits"):
        read_fingerprints(bad)
    result = run("pairs", "bad.fp", cwd=tmp_path)
    assert result.returncode == 1 and "FormatError: " in result.stderr and "bad.fp:3" in result.stderr
    assert "Traceback" not in result.stderr


def test_index_build_query_info(fpfile, run):
    cwd = fpfile.parent
    result = run("index", "build", fpfile.name, "-o", "docs.idx", "-k", "4", cwd=cwd)
    assert result.returncode == 0, result.stderr
    assert "indexed 60 fingerprints (their ids in docs.idx.ids)" in result.stderr
    data = read_fingerprints(fpfile)
    index = neardup.HammingIndex.open(cwd / "docs.idx")
    assert len(index) == 60 and index.max_distance == 4
    assert index.fingerprint_config == data.config

    info = run("index", "info", "docs.idx", cwd=cwd)
    assert info.returncode == 0 and "fingerprints: 60" in info.stdout and "max_distance: 4" in info.stdout
    assert "ids: numbers, named in docs.idx.ids" in info.stdout

    # By fingerprint: the ids within 4 bits of document 31's fingerprint, as brute force says.
    target = data.fingerprints[30]
    expected = sorted(
        (int(neardup.hamming(target, fp)), doc_id)
        for doc_id, fp in zip(data.ids, data.fingerprints)
        if neardup.hamming(target, fp) <= 4
    )
    by_hex = run("index", "query", "docs.idx", "--fingerprint", f"{int(target):016x}", cwd=cwd)
    assert by_hex.returncode == 0, by_hex.stderr
    got = [(doc_id, int(d)) for doc_id, d in (line.split("\t") for line in by_hex.stdout.splitlines())]
    assert sorted((d, i) for i, d in got) == expected and ("docs.txt:31", 0) in got

    # By text: fingerprinted with the config recorded in the index.
    text = _corpus()[30]
    by_text = run("index", "query", "docs.idx", "--text", text, cwd=cwd)
    assert by_text.stdout == by_hex.stdout


def test_index_of_integer_ids_holds_them_and_drops_an_old_id_list(fpfile, run):
    cwd = fpfile.parent
    assert run("index", "build", fpfile.name, "-o", "docs.idx", cwd=cwd).returncode == 0
    assert (cwd / "docs.idx.ids").exists()
    data = read_fingerprints(fpfile)
    numbered = cwd / "numbered.fp"
    ids = [str(1000 + k) for k in range(len(data.ids))]
    numbered.write_bytes(format_header(neardup.FingerprintConfig()) + format_rows(ids, data.fingerprints))
    built = run("index", "build", "numbered.fp", "-o", "docs.idx", cwd=cwd)
    assert "indexed 60 fingerprints (their ids);" in built.stderr
    assert not (cwd / "docs.idx.ids").exists()
    np.testing.assert_array_equal(
        np.sort(neardup.HammingIndex.open(cwd / "docs.idx").ids), np.arange(1000, 1060)
    )
    found = run(
        "index",
        "query",
        "docs.idx",
        "--fingerprint",
        f"{int(data.fingerprints[30]):016x}",
        "-k",
        "0",
        cwd=cwd,
    )
    assert found.stdout.splitlines()[0] == "1030\t0"


def test_an_id_list_of_another_build_is_refused(fpfile, run):
    cwd = fpfile.parent
    assert run("index", "build", fpfile.name, "-o", "docs.idx", cwd=cwd).returncode == 0
    lines = (cwd / "docs.idx.ids").read_text().splitlines()
    (cwd / "docs.idx.ids").write_text("\n".join(lines[:-1]) + "\n")
    result = run("index", "query", "docs.idx", "--fingerprint", "0" * 16, cwd=cwd)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith("FormatError: docs.idx.ids: holds 59 ids (its header says 60)")
    assert "build the index again" in result.stderr


def test_index_query_of_a_damaged_file_is_a_clear_error(tmp_path, run):
    (tmp_path / "bad.idx").write_bytes(b"not an index at all")
    result = run("index", "info", "bad.idx", cwd=tmp_path)
    assert result.returncode == 1 and result.stderr.startswith("FormatError: ") and "bad.idx" in result.stderr


def _planted_array(n: int, words: int, seed: int) -> tuple[np.ndarray, set]:
    """Random fingerprints with near copies planted: (array, pairs within 3 bits by brute force)."""
    rng = np.random.default_rng(seed)
    fps = rng.integers(0, 2**64, size=(n, words), dtype=np.uint64)
    fps[n // 2 :] = fps[: n - n // 2] ^ (
        np.uint64(1) << rng.integers(0, 64, size=(n - n // 2, words)).astype(np.uint64)
    )
    flat = fps.reshape(-1) if words == 1 else fps
    distances = neardup.hamming_pairwise(flat)
    i, j = np.nonzero(np.triu(distances <= 3, k=1))
    return flat, {(str(a), str(b), int(distances[a, b])) for a, b in zip(i.tolist(), j.tolist())}


@pytest.mark.parametrize("words", [1, 2])
def test_pairs_and_index_of_a_numpy_array_of_fingerprints(tmp_path, run, words):
    fps, expected = _planted_array(400, words, seed=words)
    np.save(tmp_path / "fps.npy", fps)
    result = run("pairs", "fps.npy", "-k", "3", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    found = {(a, b, int(d)) for a, b, d in (row.split("\t") for row in result.stdout.splitlines()[1:])}
    assert found == expected and len(found) >= 200  # rows, not the .npy's bytes read as text
    assert "among 400 fingerprints" in result.stderr

    built = run("index", "build", "fps.npy", "-o", "fps.idx", "-k", "3", cwd=tmp_path)
    assert built.returncode == 0 and "ids: their rows, from 0" in built.stderr
    index = neardup.HammingIndex.open(tmp_path / "fps.idx")
    assert index.bits == 64 * words and index.fingerprint_config is None
    value = int(fps[250]) if words == 1 else int(fps[250][0]) | int(fps[250][1]) << 64
    query = run(
        "index", "query", "fps.idx", "--fingerprint", f"{value:0{16 * words}x}", "-k", "0", cwd=tmp_path
    )
    assert query.stdout.splitlines()[0] == "250\t0"
    text = run("index", "query", "fps.idx", "--text", "a page", cwd=tmp_path)
    assert text.returncode == 1 and "does not record the fingerprint config" in text.stderr


def test_a_numpy_array_is_read_by_its_header_and_checked(tmp_path, run):
    fps, expected = _planted_array(100, 1, seed=5)
    with open(tmp_path / "signed", "wb") as f:  # no suffix, int64: read by NumPy's magic
        np.save(f, fps.view(np.int64))
    signed = run("pairs", "signed", "-k", "3", cwd=tmp_path)
    assert signed.returncode == 0, signed.stderr
    assert {tuple(row.split("\t")[:2]) for row in signed.stdout.splitlines()[1:]} == {p[:2] for p in expected}
    np.save(tmp_path / "floats.npy", np.zeros(10))
    floats = run("pairs", "floats.npy", cwd=tmp_path)
    assert floats.returncode == 1
    assert floats.stderr.startswith("FormatError: floats.npy: a NumPy array of float64 and shape (10,)")
    np.save(tmp_path / "other.npy", fps)
    two = run("pairs", "other.npy", "floats.npy", cwd=tmp_path)
    assert two.returncode == 1 and "give it alone" in two.stderr
    np.save(tmp_path / "objects.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    pickled = run("pairs", "objects.npy", cwd=tmp_path)
    assert pickled.returncode == 1 and pickled.stderr.startswith(
        "FormatError: objects.npy: not a NumPy array"
    )


def test_a_chunk_of_pairs_past_a_written_slice_comes_whole_and_in_order(tmp_path, run):
    """500 copies of one fingerprint among random ones: 124,750 pairs in one chunk, formatted
    and written a slice of WRITE_ROWS at a time, each once, sorted."""
    rng = np.random.default_rng(6)
    fps = np.concatenate(
        [np.full(500, 0x0123_4567_89AB_CDEF, np.uint64), rng.integers(0, 2**64, 300, np.uint64)]
    )
    rng.shuffle(fps)
    np.save(tmp_path / "fps.npy", fps)
    result = run("pairs", "fps.npy", "-o", "pairs.tsv", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    rows = (tmp_path / "pairs.tsv").read_text().splitlines()[1:]
    expected = naive.pairs(naive.as_ints(fps), list(range(len(fps))), 3)
    assert [tuple(map(int, row.split("\t"))) for row in rows] == expected and len(rows) > WRITE_ROWS


def test_pairs_past_memory_are_joined_out_of_core_in_the_work_dir(tmp_path, run):
    rng = np.random.default_rng(9)
    fps = rng.integers(0, 2**64, size=30_000, dtype=np.uint64)
    fps[::3] = fps[1::3] ^ (np.uint64(1) << rng.integers(0, 64, size=10_000).astype(np.uint64))
    np.save(tmp_path / "fps.npy", fps)
    expected = {
        (str(i), str(j), d)
        for a, b, c in neardup.self_join(fps, 3)
        for i, j, d in zip(a.tolist(), b.tolist(), c.tolist())
    }
    (tmp_path / "work").mkdir()
    result = run(
        "pairs", "fps.npy", "--memory", "300K", "--work-dir", "work", "-o", "pairs.tsv", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    rows = (tmp_path / "pairs.tsv").read_text().splitlines()[1:]
    assert {(a, b, int(d)) for a, b, d in (row.split("\t") for row in rows)} == expected
    assert len(rows) == len(expected) >= 10_000
    assert "out of core in 0.00 GiB of memory" in result.stderr and "in work" in result.stderr
    assert "table 1/" in result.stderr and list((tmp_path / "work").iterdir()) == []

    fits = run("pairs", "fps.npy", "--memory", "1G", cwd=tmp_path)
    assert fits.returncode == 0 and "out of core" not in fits.stderr
    assert len(fits.stdout.splitlines()) == len(rows) + 1
    alone = run("pairs", "fps.npy", "--work-dir", "work", cwd=tmp_path)
    assert alone.returncode == 2 and "give --memory SIZE too" in alone.stderr
    for size in ("0", "eight", "-1G", "nan"):
        bad = run("pairs", "fps.npy", f"--memory={size}", cwd=tmp_path)
        assert bad.returncode == 2 and "is not a size in bytes" in bad.stderr
