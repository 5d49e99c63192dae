"""The dedup job, read -> fingerprint -> join -> clusters -> write (``job.py``), over a corpus
of files or in-memory texts (``corpus.py``); exact-similarity verification of candidate pairs
(``verify.py``); which documents stay, by Manku's rule or components (``selection.py``, over
``index/components.py``); clusters from a list of pairs (``clustering.py``,
``neardup.clusters``); ``warmup`` (``warmup.py``); the names of the job's choices, light for ``--help``
(``choices.py``).

May import: ``io``, ``fingerprint``, ``index``, the root's shared modules and ``_kernels``.
This ``__init__`` imports nothing; the public names come from the package root
(``neardup.dedup``).
"""
