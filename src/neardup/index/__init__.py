"""Exact Hamming search over stored fingerprints: the distance itself (``hamming.py``),
permuted tables (Manku, Jain & Das Sarma, WWW 2007) and multi-index hashing (Norouzi, Punjani
& Fleet, CVPR 2012), their block layout and cost model (``plan.py``), the index
(``hamming_index.py``: search, add, remove, pairs; its tables built in ``tables.py``, queried
in ``search.py``, self-joined in ``join.py``), the self-join of a bare array one table at a
time (``self_join.py``), the index's file format (``storage.py``), and
clusters as connected components with copies collapsed (``components.py``: the one rule of
``HammingIndex.clusters``, ``neardup.clusters`` and dedup's components).

May import: ``io``, ``fingerprint``, the root's shared modules and ``_kernels``. This
``__init__`` imports nothing, so that ``import neardup`` (which needs ``hamming.py``) stays
free of numba; the public names come from the package root (``neardup.HammingIndex``).
"""
