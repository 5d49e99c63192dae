"""The dedup rules over LSH buckets, every candidate pair verified exactly (``--jaccard``).

A document's candidates are the documents sharing one of its band keys (a *bucket*). Ranks are
visited best first (``--keep`` order), and each rule asks only about the pairs it needs, so a
bucket holding a near-identical family of 100,000 pages costs about one check per page, not
one per pair:

- greedy (Manku's rule): a rank is kept unless an earlier *kept* rank sharing a bucket is at
  least ``threshold`` similar; only kept ranks are listed in the buckets.
- components: each bucket lists its ranks grouped by the component they joined it in; a new
  rank is checked against the members of each other component in turn, up to the first that
  is similar (which joins the two). A pair already in one component is never checked.

Both give exactly the rule's answer over the graph of verified candidate pairs (tested
against the pair-by-pair rules).
"""

from __future__ import annotations

import numpy as np

from ._jit import jit
from .pair_graph import KEPT, REMOVED, UNDECIDED, _find
from .similarity import similarity_of


@jit
def greedy_in_buckets(
    groups, n_groups, state, representative, feature_row, doc_offsets, hashes, weights, threshold, cosine
):
    """Manku's rule over ranks ``0 .. m - 1``. ``groups`` (int64, shape (m, bands)) names each
    rank's bucket per band, -1 where the rank is alone in it; ``feature_row`` (int64, shape
    (m,)) each rank's document in the feature CSR (``doc_offsets``, ``hashes``, ``weights``).
    ``state`` and ``representative`` (int8, int64; blocked ranks already REMOVED) are updated.
    Returns (pairs checked, pairs similar)."""
    m, bands = groups.shape
    head = np.full(n_groups, -1, dtype=np.int64)  # per bucket, its latest kept entry
    following = np.empty(m * bands, dtype=np.int64)  # entry r * bands + b -> the one before
    seen = np.full(m, -1, dtype=np.int64)
    candidates = np.empty(m, dtype=np.int64)
    checked = similar = 0
    for x in range(m):
        if state[x] != UNDECIDED:
            continue
        count = 0
        for b in range(bands):
            g = groups[x, b]
            if g < 0:
                continue
            entry = head[g]
            while entry >= 0:
                y = entry // bands
                if seen[y] != x:
                    seen[y] = x
                    candidates[count] = y
                    count += 1
                entry = following[entry]
        found = candidates[:count]
        found.sort()  # the first kept in --keep order that is similar represents x
        for y in found:
            checked += 1
            a, c = feature_row[x], feature_row[y]
            if similarity_of(doc_offsets, hashes, weights, a, c, cosine, threshold) >= threshold:
                similar += 1
                state[x] = REMOVED
                representative[x] = y
                break
        if state[x] == REMOVED:
            continue
        state[x] = KEPT
        representative[x] = x
        for b in range(bands):
            g = groups[x, b]
            if g >= 0:
                following[x * bands + b] = head[g]
                head[g] = x * bands + b
    return checked, similar


@jit
def components_in_buckets(groups, n_groups, feature_row, doc_offsets, hashes, weights, threshold, cosine):
    """Connected components of the verified candidate pairs of ranks ``0 .. m - 1`` (arguments
    as :func:`greedy_in_buckets`). Returns (int64 root of each rank: the smallest rank of its
    component, pairs checked, pairs similar)."""
    m, bands = groups.shape
    parent = np.arange(m, dtype=np.int64)
    first_entry = np.full(n_groups, -1, dtype=np.int64)  # per bucket, its component entries
    next_entry = np.empty(m * bands, dtype=np.int64)
    entry_rank = np.empty(m * bands, dtype=np.int64)  # a member, to find the entry's component
    first_member = np.empty(m * bands, dtype=np.int64)  # members as nodes r * bands + b
    next_member = np.empty(m * bands, dtype=np.int64)
    entries = 0
    seen = np.full(m, -1, dtype=np.int64)
    checked = similar = 0
    for x in range(m):
        for b in range(bands):
            g = groups[x, b]
            if g < 0:
                continue
            joined = -1  # the entry of x's component in this bucket
            entry = first_entry[g]
            while entry >= 0:
                root = _find(parent, x)
                if _find(parent, entry_rank[entry]) == root:
                    if joined < 0:
                        joined = entry
                else:
                    node = first_member[entry]
                    while node >= 0:
                        y = node // bands
                        if seen[y] != x:
                            seen[y] = x
                            checked += 1
                            a, c = feature_row[x], feature_row[y]
                            if (
                                similarity_of(doc_offsets, hashes, weights, a, c, cosine, threshold)
                                >= threshold
                            ):
                                similar += 1
                                other = _find(parent, y)
                                if other < root:
                                    parent[root] = other
                                else:
                                    parent[other] = root
                                if joined < 0:
                                    joined = entry
                                break
                        node = next_member[node]
                entry = next_entry[entry]
            if joined < 0:
                joined = entries
                entries += 1
                entry_rank[joined] = x
                first_member[joined] = -1
                next_entry[joined] = first_entry[g]
                first_entry[g] = joined
            node = x * bands + b
            next_member[node] = first_member[joined]
            first_member[joined] = node
    roots = np.empty(m, dtype=np.int64)
    for v in range(m):
        roots[v] = _find(parent, v)
    return roots, checked, similar


@jit
def pairs_in_runs(keys, order, starts, ends, band, cursor, capacity):
    """Candidate pairs of one band, resumable: rows ``order[starts[r]:ends[r]]`` share band
    ``band``'s key; each pair (i, j) is given once, in the first band where the two agree
    (rows that agree in an earlier band were given there). ``cursor`` (int64, shape (3,):
    run, first member, second member) says where to start and is advanced; at most
    ``capacity`` pairs are returned (first, second: int64 rows, unordered)."""
    first = np.empty(capacity, dtype=np.int64)
    second = np.empty(capacity, dtype=np.int64)
    count = 0
    r, i, j = cursor[0], cursor[1], cursor[2]
    while r < starts.shape[0]:
        end = ends[r]
        while i < end:
            while j < end:
                if count == capacity:
                    cursor[0], cursor[1], cursor[2] = r, i, j
                    return first[:count], second[:count]
                a, b = order[i], order[j]
                earlier = False
                for c in range(band):
                    if keys[a, c] == keys[b, c]:
                        earlier = True
                        break
                if not earlier:
                    first[count] = a
                    second[count] = b
                    count += 1
                j += 1
            i += 1
            j = i + 1
        r += 1
        if r < starts.shape[0]:
            i, j = starts[r], starts[r] + 1
    cursor[0], cursor[1], cursor[2] = r, i, j
    return first[:count], second[:count]
