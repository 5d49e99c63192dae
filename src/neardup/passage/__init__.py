"""Near-duplicate passages between documents: the job over a corpus (``job.py``), from the
words and passages the decision finds (``decision/passage_words.py``,
``decision/passage_matching.py``: the service's too), and its result (``result.py``).

May import: ``io``, ``fingerprint``, ``index``, ``decision``, the root's shared modules and
``_kernels``; never another engine (``pipeline``, ``spark``, ``service``).
This ``__init__`` imports nothing; the public names come from the package root
(``neardup.passages``: the folder is ``passage``, singular, so that importing it never hides
that function behind the package of the same name).
"""
