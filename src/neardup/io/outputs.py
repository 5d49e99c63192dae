"""What a dedup writes (:class:`Outputs`), the one value every engine and the CLI take."""

from __future__ import annotations

import os
from collections.abc import Collection
from dataclasses import dataclass

from .sources import check_outputs

PathLike = str | os.PathLike


@dataclass(frozen=True)
class Outputs:
    """Where a dedup's results go; None (or False) writes nothing of that kind.

    Attributes:
        output: the kept documents (``-o``), every field as it was read.
        format: the format of ``output`` (a name of ``OUTPUT_FORMATS``); None: its suffix
            says, else the inputs' format.
        clusters: the clusters table (``--clusters``): Parquet, CSV, TSV or JSONL by suffix.
        pairs: the near-duplicate pairs (``--pairs``), likewise: those that rebuild the clusters.
        every_pair: ``pairs`` holds every pair of documents, not just those (``--all-pairs``).
        save_index: an index of every document's fingerprint, for later ``against`` runs.
    """

    output: PathLike | None = None
    format: str | None = None
    clusters: PathLike | None = None
    pairs: PathLike | None = None
    every_pair: bool = False
    save_index: PathLike | None = None

    def by_option(self) -> dict[str, PathLike | None]:
        """Each path by the option that names it on the command line, as messages name it."""
        return {
            "-o": self.output,
            "--clusters": self.clusters,
            "--pairs": self.pairs,
            "--save-index": self.save_index,
        }

    def check(self, inputs: list[str], *, folders: Collection[str] = (), replace: bool = False) -> None:
        """Refuse, before anything is read, outputs that would replace an input or each other,
        or could not be written: :func:`neardup.io.sources.check_outputs`, ``folders`` and
        ``replace`` as it takes them (option names: ``"-o"``, ``"--clusters"``, ...)."""
        check_outputs(self.by_option(), inputs, folders=folders, replace=replace)
