"""Exact Hamming search over stored fingerprints: permuted tables (Manku, Jain & Das Sarma,
WWW 2007) and multi-index hashing (Norouzi, Punjani & Fleet, CVPR 2012), their block layout
(``plan.py``) and the index (``hamming_index.py``)."""

from __future__ import annotations

from .hamming_index import HammingIndex
from .plan import IndexPlan

__all__ = ["HammingIndex", "IndexPlan"]
