"""What the index tests share: fingerprints as rows, planted and drawn cases, and the checks of an
index against brute force (tests/naive_index.py)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

import naive_index as naive
import neardup
from neardup import HammingIndex


def rows(values: list[int], bits: int) -> np.ndarray:
    """Python ints as the index takes them: uint64, shape (n,) at 64 bits, (n, 2) at 128."""
    words = bits // 64
    arr = np.array(
        [[(v >> (64 * w)) & (2**64 - 1) for w in range(words)] for v in values], dtype=np.uint64
    ).reshape(len(values), words)
    return arr[:, 0].copy() if bits == 64 else arr


def flip(value: int, positions) -> int:
    for p in positions:
        value ^= 1 << int(p)
    return value


def planted(rng: np.random.Generator, bits: int, k: int, bases: int = 12) -> list[int]:
    """Random bases, each with copies at exactly every distance 0..k+1, plus identical runs."""
    values = []
    for _ in range(bases):
        base = int.from_bytes(rng.bytes(bits // 8), "little")
        values.append(base)
        for d in range(k + 2):
            values.append(flip(base, rng.choice(bits, size=d, replace=False)))
    values += [values[0]] * 20  # many identical fingerprints
    return values


def near(rng: np.random.Generator, bits: int, bases: list[int], k: int) -> int:
    """A fingerprint within k + 1 bits of a random base (or a fresh random one)."""
    if not bases or rng.random() < 0.2:
        return int.from_bytes(rng.bytes(bits // 8), "little")
    v = bases[rng.integers(len(bases))]
    for p in rng.choice(bits, size=rng.integers(0, k + 2), replace=False):
        v ^= 1 << int(p)
    return v


def joined(fps, k, **options) -> list[tuple[int, int, int]]:
    """Every pair the self-join (``neardup.self_join``) yields, checked to come once each, sorted."""
    found = []
    for i, j, d in neardup.self_join(fps, k, **options):
        assert i.dtype == j.dtype == d.dtype == np.int64 and (i < j).all()
        found += zip(i.tolist(), j.tolist(), d.tolist())
    assert len(found) == len(set(found))
    return sorted(found)


def draw_families(data, bits: int, k: int, max_copies: int) -> list[int]:
    """Hypothesis draw: up to 8 random bases, each followed by up to ``max_copies`` copies of
    it with at most k + 2 bits flipped."""
    bases = data.draw(st.lists(st.integers(0, 2**bits - 1), min_size=1, max_size=8))
    values = []
    for base in bases:
        values.append(base)
        for _ in range(data.draw(st.integers(0, max_copies))):
            values.append(flip(base, data.draw(st.sets(st.integers(0, bits - 1), max_size=k + 2))))
    return values


def draw_case(data, bits: int, k: int, max_bases: int, max_queries: int):
    """Hypothesis draw: bases with neighbours up to k + 2 bits away, distinct int64 ids, and
    queries up to k + 1 bits from the first values."""
    bases = data.draw(st.lists(st.integers(0, 2**bits - 1), min_size=1, max_size=max_bases))
    values = []
    for base in bases:
        values.append(base)
        for _ in range(data.draw(st.integers(0, 4))):
            values.append(flip(base, data.draw(st.sets(st.integers(0, bits - 1), max_size=k + 2))))
    ids = data.draw(
        st.lists(st.integers(-(2**63), 2**63 - 1), min_size=len(values), max_size=len(values), unique=True)
    )
    queries = [
        flip(v, data.draw(st.sets(st.integers(0, bits - 1), max_size=k + 1))) for v in values[:max_queries]
    ]
    return values, ids, queries


def build_and_check(
    values: list[int],
    ids: list[int],
    bits: int,
    k: int,
    plan: object,
    queries: list[int] | None = None,
    batches: int = 1,
) -> HammingIndex:
    """An index of ``values`` added in ``batches``, whose pairs, streams and queries (the values
    and ``queries``) must equal brute force exactly; returned for further checks."""
    index = HammingIndex(bits=bits, max_distance=k, plan=plan)
    for part in np.array_split(np.arange(len(values)), batches):
        index.add(rows([values[r] for r in part], bits), ids=np.array([ids[r] for r in part], dtype=np.int64))
    assert len(index) == len(values)
    i, j, d = index.pairs()
    expected = naive.pairs(values, ids, k)
    assert list(zip(i.tolist(), j.tolist(), d.tolist())) == expected
    naive.assert_streams(index, expected)
    queries = values + (queries or [])
    offsets, found, dist = index.query_batch(rows(queries, bits))
    assert offsets[0] == 0 and offsets[-1] == len(found) == len(dist)
    for q, value in enumerate(queries):
        got = list(
            zip(found[offsets[q] : offsets[q + 1]].tolist(), dist[offsets[q] : offsets[q + 1]].tolist())
        )
        assert got == naive.query(values, ids, value, k)
    one_ids, one_dist = index.query(rows(queries[:1], bits)[0])
    assert list(zip(one_ids.tolist(), one_dist.tolist())) == naive.query(values, ids, queries[0], k)
    return index


def check_against_model(
    index: HammingIndex, model: dict[int, int], bits: int, k: int, extra: list[int]
) -> None:
    """``index`` holds exactly ``model`` (id -> value): its ids, pairs, streams and queries (some
    values and ``extra``) equal brute force over the model."""
    ids = list(model)
    values = [model[i] for i in ids]
    assert len(index) == len(model)
    assert sorted(index.ids.tolist()) == sorted(ids)
    assert all(i in index for i in ids[:20])
    i, j, d = index.pairs()
    expected = naive.pairs(values, ids, k)
    assert list(zip(i.tolist(), j.tolist(), d.tolist())) == expected
    naive.assert_streams(index, expected)  # tombstones, the delta and a re-added id included
    queries = values[:25] + extra
    if queries:
        offsets, found, dist = index.query_batch(rows(queries, bits))
        for q, value in enumerate(queries):
            got = list(
                zip(found[offsets[q] : offsets[q + 1]].tolist(), dist[offsets[q] : offsets[q + 1]].tolist())
            )
            assert got == naive.query(values, ids, value, k)
        one = index.query(rows(queries[-1:], bits)[0])
        assert list(zip(*[a.tolist() for a in one])) == naive.query(values, ids, queries[-1], k)
