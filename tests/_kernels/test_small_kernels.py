"""Small kernels of the readers, writers and fingerprint against plain numpy and bytes methods."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup._kernels.lines import gather, split_lines

NEWLINE = np.frombuffer(b"\n", dtype=np.uint8)


def naive_lines(data: bytes) -> list[tuple[int, int, bool]]:
    """(start, end without its \\n or \\r\\n, blank) of each line, by bytes.split."""
    if not data:
        return []
    lines = data.split(b"\n")
    if data.endswith(b"\n"):
        lines = lines[:-1]
    table, start = [], 0
    for line in lines:
        end = start + len(line)
        table.append((start, end - 1 if line.endswith(b"\r") else end, line.strip(b" \t\r") == b""))
        start = end + 1
    return table


@settings(deadline=None)
@given(st.binary(max_size=40).map(lambda b: bytes(b"ab \t\r\n{"[x % 7] for x in b)), st.data())
def test_split_lines_and_gather_match_bytes_methods(data, draw):
    buf = np.frombuffer(data, dtype=np.uint8)
    starts, ends, blank = split_lines(buf)
    assert list(zip(starts.tolist(), ends.tolist(), blank.tolist())) == naive_lines(data)
    chosen = sorted(draw.draw(st.sets(st.integers(0, max(len(starts) - 1, 0)), max_size=len(starts))))
    chosen = np.array([c for c in chosen if c < len(starts)], dtype=np.int64)
    out, offsets = gather(buf, starts, ends, chosen, NEWLINE)
    pieces = [data[starts[i] : ends[i]] + b"\n" for i in chosen]
    assert out.tobytes() == b"".join(pieces)
    assert np.diff(offsets).tolist() == [len(p) for p in pieces]


@settings(deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1), max_size=3000), st.booleans())
def test_sort_hashes_sorts_like_numpy(values, clustered):
    from neardup._kernels.simhash import _SORT_MAX_BITS, _sort_hashes

    hashes = np.array(values, dtype=np.uint64)
    if clustered:  # not uniform: many equal top bits, long buckets
        hashes = hashes >> np.uint64(40)
    expected = np.sort(hashes)
    tmp = np.empty(len(hashes), dtype=np.uint64)
    counts = np.empty((1 << _SORT_MAX_BITS) + 1, dtype=np.int64)
    padded = np.concatenate([hashes, np.array([7, 7], dtype=np.uint64)])  # only [:n] is sorted
    _sort_hashes(padded, len(hashes), tmp, counts)
    assert np.array_equal(padded[: len(hashes)], expected)
    assert padded[len(hashes) :].tolist() == [7, 7]
