"""Corpora with planted near-duplicates, for tests, benchmarks and ``neardup dedup --example``:
the generator of synthetic corpora at known edit rates in four scripts (``generator.py``:
``planted_corpus``, ``planted_pairs``) and the small readable example corpus (``example.py``:
``example_corpus``).

May import: ``io``, ``fingerprint``, the root's shared modules and ``_kernels``. This
``__init__`` imports nothing.
"""
