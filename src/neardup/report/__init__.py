"""What a dedup found, for people: the HTML report with its plots (``html.py``) and why two
documents are or are not near-duplicates (``explain.py``).

May import: ``io``, ``fingerprint``, ``index``, ``decision``, ``passage``, the root's shared
modules and ``_kernels``. This ``__init__`` imports nothing; the public names come from the package root
(``neardup.write_report``, ``neardup.explain``).
"""
