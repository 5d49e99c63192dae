"""Compiled kernels: every ``@njit`` of neardup lives in this package (see ``_jit.py``)."""
