"""The names a dedup's choices take, in one light module: the CLI offers them in ``--help``
without importing the job (pyarrow, numba)."""

KEEP = ("first", "longest", "shortest", "lowest-id")
"""Which document of near-duplicates to keep (``--keep``)."""

CLUSTERINGS = ("greedy", "components")
"""Which documents go (``--cluster``): Manku's rule in ``--keep`` order, or components."""

FEATURELESS = ("keep", "drop", "compare")
"""What to do with documents that have no features (empty, blank, or for word features only
punctuation): every such text gets fingerprint 0, so compared like the others they would all be
near-duplicates of each other. ``"keep"``: keep each, compared with nothing; ``"drop"``: leave
them out of the output; ``"compare"``: compare them as any other document."""

PASSAGE_FEATURES = ("words", "code")
"""What a passage is made of (``neardup passages --features``): words of prose, or the tokens
of source code."""
