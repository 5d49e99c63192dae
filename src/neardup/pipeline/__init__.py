"""The local engine: the dedup job on this machine's cores, read -> fingerprint -> decide ->
write (``job.py``), over the corpus ``io/corpus.py`` opens, by the decision's steps
(``decision/``); the result and the writing of its outputs (``result.py``); ``warmup``
(``warmup.py``).

May import: ``io``, ``fingerprint``, ``index``, ``decision``, the root's shared modules and
``_kernels``; never another engine (``passage``, ``spark``).
This ``__init__`` imports nothing; the public names come from the package root
(``neardup.dedup``).
"""
