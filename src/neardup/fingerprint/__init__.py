"""What a fingerprint is and how to compute it (docs/fingerprint-spec.md): normalisation,
character classes and feature kinds (``features.py``), text buffers handed to the kernels
(``text_buffers.py``), :class:`Fingerprinter` and :func:`simhash` (``fingerprinter.py``), IDF
weights (``idf.py``).

May import: ``io``, the root's shared modules and ``_kernels``. This ``__init__`` imports
nothing; the public names come from the package root (``neardup.Fingerprinter``).
"""
