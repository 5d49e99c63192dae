"""The dedup job, read -> fingerprint -> join -> clusters (``job.py``), over a corpus of files
or in-memory texts (``corpus.py``), as its options say (``options.py``: ``DedupOptions``);
the decision's steps both engines take (``steps.py``), which documents stay by Manku's rule
or components (``selection.py``, over ``index/components.py``), MinHash-LSH candidates for
``jaccard`` (``lsh.py``), the radius for ``cosine`` (``cosine.py``), exact-similarity checks
of candidate pairs (``verify.py``) and the pairs listed (``pairs.py``); the result and the
writing of its outputs (``result.py``) and its summary (``stats.py``); clusters from a list
of pairs (``clustering.py``, ``neardup.clusters``); ``warmup`` (``warmup.py``); the names of
the job's choices, light for ``--help`` (``choices.py``).

May import: ``io``, ``fingerprint``, ``planted``, ``index``, the root's shared modules and
``_kernels``.
This ``__init__`` imports nothing; the public names come from the package root
(``neardup.dedup``).
"""
