"""What ``neardup.passages`` finds: the shared passages as a table, the common ones as another,
and their writing."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pyarrow as pa

from .._atomic import atomic_path
from .._errors import ConfigError
from ..io.corpus import FileCorpus
from ..io.sources import check_outputs
from ..io.writers import table_format, write_table

if TYPE_CHECKING:
    import numpy as np

    from .documents import Documents

MATCH_COLUMNS = ("id_a", "id_b", "start_a", "end_a", "start_b", "end_b", "words", "similarity")
COMMON_COLUMNS = ("passage", "documents", "id", "start", "end", "words")
# Passages of code (features="code") say the lines too: 1-based, inclusive, of the first
# character of their first token and the last of their last.
CODE_MATCH_COLUMNS = (*MATCH_COLUMNS[:6], "line_a", "end_line_a", "line_b", "end_line_b", *MATCH_COLUMNS[6:])
CODE_COMMON_COLUMNS = (*COMMON_COLUMNS[:5], "line", "end_line", COMMON_COLUMNS[5])


@dataclass
class PassageResult:
    """Shared passages.

    Attributes:
        matches: one row per passage two documents share (a pair may have several):
            ``id_a, id_b`` (a before b in the input), where the passage lies in each as
            code point offsets ``[start_a, end_a)`` and ``[start_b, end_b)`` (``str``
            indices), ``words`` (the longer copy's length) and ``similarity`` (2 * matched
            words / words of both copies). Passages of code add ``line_a, end_line_a, line_b,
            end_line_b`` after the offsets (1-based, inclusive: the lines of the first and
            last token), and ``words`` counts tokens.
        common: one row per passage held by ``common_docs`` documents or more, which
            ``matches`` leaves out: ``passage`` (its number), ``documents`` (how many hold
            it), ``id``, ``start``, ``end`` (for code, ``line`` and ``end_line``) and ``words``
            of its first copy.
        documents: documents read; ``words``: their words; ``bytes``: their text's size.
        skipped: records left out (``errors="skip"``).
    """

    matches: pa.Table
    common: pa.Table
    documents: int
    words: int
    bytes: int
    skipped: int = 0
    _documents: Documents | None = field(default=None, repr=False)

    def summary(self) -> str:
        """One paragraph for people: what was read and found."""
        pairs = len(
            set(zip(self.matches.column("id_a").to_pylist(), self.matches.column("id_b").to_pylist()))
        )
        common = self.common.column("documents").to_pylist()
        lines = [
            f"read {self.documents:,} documents ({self.words:,} words, {self.bytes / 2**20:.1f} MiB)"
            + (f", skipped {self.skipped:,} bad records" if self.skipped else ""),
            f"{len(self.matches):,} shared passages between {pairs:,} pairs of documents",
        ]
        if common:
            fewest, most = min(common), max(common)
            spread = f"{fewest:,}" if fewest == most else f"{fewest:,} to {most:,}"
            lines.append(
                f"{len(common):,} common passages, each in {spread} documents (listed once, not as pairs)"
            )
        return "\n".join(lines)

    def copied_share(self, keep: str = "first") -> np.ndarray:
        """The share of each document's characters (documents in input order, float64) that a
        document before it in ``keep`` order holds (``first``: the input's; ``longest``,
        ``shortest``, ``lowest-id``, as ``dedup`` keeps): the later copy of a shared passage,
        every copy of a common one but the one that comes first."""
        return self._held().copied_share(keep)

    def stripped_texts(self, keep: str = "first") -> list[str]:
        """Every document's text without what it copies (see :meth:`copied_share`): the
        boilerplate and repeated paragraphs left only where they come first."""
        documents = self._held()
        copied = documents.copied(keep)
        return [documents.text(d, copied) for d in range(len(documents.ids))]

    def write_documents(
        self,
        path: str | os.PathLike,
        *,
        strip: bool = True,
        max_copied: float | None = None,
        keep: str = "first",
    ) -> int:
        """Write the documents to ``path`` atomically, every field as read, in the inputs'
        format or the one its suffix names (.jsonl, .csv, .parquet, .txt; texts from memory
        as ``id`` and ``text``): with ``strip``, without what each copies; with
        ``max_copied``, leaving out those whose copied share is at least that; ``keep`` says
        which copy is the original (:meth:`copied_share`). The inputs are read again for their
        other fields. Returns how many documents were written."""
        if max_copied is not None and not 0 < max_copied <= 1:
            raise ConfigError(f"max_copied (--max-copied) must be in (0, 1], got {max_copied!r}")
        self._check_outputs({"path": path})
        return self._held().write(path, strip, max_copied, keep)

    def _check_outputs(self, outputs: dict[str, str | os.PathLike | None]) -> None:
        """:func:`neardup.io.sources.check_outputs`, against the files read, if any."""
        corpus = None if self._documents is None else self._documents.corpus
        check_outputs(outputs, corpus.inputs if isinstance(corpus, FileCorpus) else [])

    def _held(self) -> Documents:
        if self._documents is None:
            raise ConfigError("this result holds no documents: it was made from tables alone")
        return self._documents

    def write(self, output: str | os.PathLike | None = None, common: str | os.PathLike | None = None) -> None:
        """Write the matches to ``output`` and the common passages to ``common``, each
        atomically, as its suffix says (.tsv, .csv, .jsonl, .parquet). Outputs that would
        replace an input or each other, or could not be written, are refused first."""
        self._check_outputs({"output": output, "common": common})
        with contextlib.ExitStack() as stack:
            for table, path in ((self.matches, output), (self.common, common)):
                if path is not None:
                    write_table(table, stack.enter_context(atomic_path(path)), table_format(path))
