"""The decision every engine shares: which documents are near-duplicates and which stay.

Its options, validated once (``options.py``: ``DedupOptions``; the names of its choices, light
for ``--help``, in ``choices.py``); the steps (``steps.py``): representatives chosen by Manku's
rule or components (``selection.py``, over ``index/components.py``), the distinct fingerprints'
self-join in memory or a budget (``bounded.py``), MinHash-LSH candidates for ``jaccard``
(``lsh.py``), the radius for ``cosine`` (``cosine.py``), exact-similarity checks of candidate
pairs (``verify.py``), the pairs listed (``pairs.py``); the summary (``stats.py``); clusters
from a list of pairs (``clustering.py``, ``neardup.clusters``); the passages two texts share
(``passage_words.py``, ``passage_matching.py``: the job's and the service's).

The engines stand on it as peers: the local job (``pipeline``), Spark (``spark``), the
passages (``passage``) and the service (``service``); none imports another.

May import: ``io``, ``fingerprint``, ``index``, the root's shared modules and ``_kernels``.
This ``__init__`` imports nothing.
"""
