"""The Spark rules over a pair graph equal the local ones: Manku's rule (the lexicographically
first maximal independent set, in rounds) and connected components (large-star/small-star),
both all on Spark (local_limit=0) and finished on the driver."""

from __future__ import annotations

import numpy as np
import pytest

import naive_index
from neardup.spark.keep_rules import representatives


def graphs():
    rng = np.random.default_rng(2)
    path = [(i, i + 1) for i in range(12)]  # a chain: the rule decides two nodes a round
    star = [(0, i) for i in range(1, 30)] + [(i, i + 1) for i in range(30, 45)]
    clique = [(a, b) for a in range(100, 115) for b in range(a + 1, 115)]
    random = {tuple(sorted(rng.choice(300, size=2, replace=False).tolist())) for _ in range(400)}
    shuffled = rng.permutation(500)  # ranks need not follow the path
    return {
        "path": path,
        "star+path": star,
        "clique+random": clique + sorted(random),
        "shuffled path": [(int(shuffled[i]), int(shuffled[i + 1])) for i in range(30)],
    }


def reference(edges, cluster):
    nodes = sorted({n for e in edges for n in e})
    if cluster == "components":
        labels = naive_index.clusters([a for a, _ in edges], [b for _, b in edges], nodes)
        return dict(zip(nodes, labels))
    adjacent = {(a, b) for a, b in edges} | {(b, a) for a, b in edges}
    kept, chosen = {}, []
    for n in nodes:  # in rank order
        near = [c for c in chosen if (c, n) in adjacent]
        kept[n] = near[0] if near else n
        if not near:
            chosen.append(n)
    return kept


@pytest.mark.parametrize("cluster", ["greedy", "components"])
@pytest.mark.parametrize("local_limit", [0, 10_000])
def test_representatives_equal_the_local_rules(spark, cluster, local_limit):
    # The graphs side by side in one DataFrame (nodes of graph g from 1000 g): one run of rounds.
    edges = [(1000 * g + a, 1000 * g + b) for g, graph in enumerate(graphs().values()) for a, b in graph]
    df = spark.createDataFrame(edges, "u long, v long")
    got = dict(representatives(df, cluster, local_limit=local_limit).collect())
    assert got == reference(edges, cluster)
