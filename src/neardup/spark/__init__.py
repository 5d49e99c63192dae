"""neardup on Apache Spark (``pip install "neardup[spark]"``): the same fingerprints and the
same near-duplicate pairs as the local engine, computed on a cluster.

- :func:`fingerprint` adds the fingerprint column(s) to a DataFrame, through the same compiled
  kernels in ``mapInArrow`` (``fingerprints.py``);
- :func:`near_duplicate_pairs` is Manku's permuted tables as a distributed join over the
  distinct fingerprints, key groups checked in each task by the local kernels, every pair
  within the radius exactly once (``join.py``);
- :func:`representatives` runs Manku's rule or connected components over a ranked pair graph
  (``keep_rules.py``);
- :func:`dedup` is the local job's answer on a DataFrame, :func:`dedup_with_pairs` with the
  pairs that rebuild its clusters (``dedup.py``): it decides on a narrow table of each row's
  facts (``facts.py``), on the driver by the local engine's steps while they are few
  (``driver.py``), past that on the cluster, where ``buckets.py`` pairs ``jaccard``'s
  candidates and ``checks.py`` checks pairs on their texts;
- :func:`run` is the whole job on files, as ``neardup dedup --engine spark`` runs it: the
  inputs read (``inputs.py``), the session, the decision, the outputs and the summary
  (``job.py``); ``splits.py`` has the tasks read JSONL files (and write the kept lines)
  themselves, a byte range each; ``folders.py`` writes folders of part files through
  pyarrow's file systems.

May import ``io``, ``fingerprint``, ``index``, ``decision`` and the root's shared modules;
never another engine (``pipeline``, ``passage``, ``service``). pyspark is imported here, so
only a caller of ``neardup.spark`` needs it.
"""

from __future__ import annotations

from .._extras import require

# Before the modules that import pyspark, so that its absence names the extra to install.
require("spark", "pyspark", "py4j", needed_by="neardup.spark")

from .dedup import dedup, dedup_with_pairs  # noqa: E402
from .fingerprints import fingerprint, fingerprint_columns  # noqa: E402
from .job import run  # noqa: E402
from .join import near_duplicate_pairs  # noqa: E402
from .keep_rules import representatives  # noqa: E402

__all__ = [
    "dedup",
    "dedup_with_pairs",
    "fingerprint",
    "fingerprint_columns",
    "near_duplicate_pairs",
    "representatives",
    "run",
]
