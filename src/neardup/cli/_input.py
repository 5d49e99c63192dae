"""Documents for the CLI: read (id, text) pairs one at a time from a lines file, JSONL, a
folder or stdin, gzip-aware, so a large input streams in bounded memory.

Nothing here imports numpy or numba: ``neardup --help`` stays light.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

from .._errors import FormatError
from ..io.rejects import json_type
from ..io.sources import _regular_files

FORMATS = ("lines", "jsonl", "files")
ERRORS = ("raise", "skip")
STDIN = "-"
_JSONL_SUFFIXES = (".jsonl", ".ndjson")
_BOM = b"\xef\xbb\xbf"

Document = tuple[str, "str | bytes"]


def detect_format(source: str, format: str | None = None) -> str:
    """The format of ``source``: ``format`` when given (and possible), else a folder is
    ``"files"``, a ``.jsonl``/``.ndjson`` name (optionally ``.gz``) is ``"jsonl"``, and
    anything else, stdin included, is ``"lines"``."""
    is_dir = source != STDIN and os.path.isdir(source)
    if format is not None:
        if format not in FORMATS:
            raise FormatError(f"format={format!r} is not allowed; choose one of {', '.join(FORMATS)}")
        if (format == "files") != is_dir:
            what = "a folder" if is_dir else "not a folder"
            raise FormatError(
                f"{source} is {what}; --format files reads a folder, "
                f"--format lines and jsonl read a file or '-'"
            )
        return format
    if is_dir:
        return "files"
    name = source.lower().removesuffix(".gz")
    return "jsonl" if name.endswith(_JSONL_SUFFIXES) else "lines"


class DocumentReader:
    """Iterates over the (id, text) documents of ``source``: a file, a folder or ``"-"``.

    Args:
        source: a path, or ``"-"`` for ``stdin`` (bytes).
        format: ``"lines"``, ``"jsonl"``, ``"files"``, or None to detect it (:func:`detect_format`).
        text_field, id_field: the JSONL fields holding the text and the id. Without an id
            field, a document's id is its 1-based line number.
        errors: ``"raise"``: a bad line (not JSON, no text, a bad id) raises FormatError naming
            file and line. ``"skip"``: it is left out, and counted in ``skipped``.

    Texts are ``bytes`` for lines and files (the library decodes UTF-8, repairing bad bytes) and
    ``str`` for JSONL.
    """

    def __init__(
        self,
        source: str,
        format: str | None = None,
        *,
        text_field: str = "text",
        id_field: str | None = None,
        errors: str = "raise",
        stdin: IO[bytes] | None = None,
    ) -> None:
        if errors not in ERRORS:
            raise ValueError(f"errors={errors!r} is not allowed; choose one of {', '.join(ERRORS)}")
        if source != STDIN and not os.path.exists(source):
            raise FileNotFoundError(f"{source}: no such file or folder")
        self.source = source
        self.format = detect_format(source, format)
        self.text_field = text_field
        self.id_field = id_field
        self.errors = errors
        self.stdin = stdin
        self.skipped = 0
        self.first_skip: str | None = None

    @property
    def name(self) -> str:
        return "<stdin>" if self.source == STDIN else self.source

    def __iter__(self) -> Iterator[Document]:
        if self.format == "files":
            return self._files()
        return self._jsonl() if self.format == "jsonl" else self._lines()

    def _bad(self, message: str) -> None:
        if self.errors == "raise":
            raise FormatError(f"{message}; fix it, or pass --on-error skip to leave it out")
        self.skipped += 1
        if self.first_skip is None:
            self.first_skip = message

    def _raw_lines(self) -> Iterator[tuple[int, bytes]]:
        """Numbered lines without their ending (``\\n`` or ``\\r\\n``) or a leading BOM."""
        if self.source == STDIN:
            yield from _numbered(self.stdin)
            return
        if not self.source.lower().endswith(".gz"):
            with open(self.source, "rb") as f:
                yield from _numbered(f)
            return
        with gzip.open(self.source, "rb") as f:
            try:
                yield from _numbered(f)
            except (OSError, EOFError) as e:  # BadGzipFile is an OSError; a cut file is EOFError
                raise FormatError(f"{self.name}: not a readable gzip file ({e})") from None

    def _lines(self) -> Iterator[Document]:
        for number, line in self._raw_lines():
            yield str(number), line

    def _jsonl(self) -> Iterator[Document]:
        for number, line in self._raw_lines():
            if not line.strip():
                continue  # blank lines are not records; ids stay line numbers
            where = f"{self.name}:{number}"
            try:
                record = json.loads(line)
            except ValueError as e:
                detail = f"{e.msg} at column {e.colno}" if isinstance(e, json.JSONDecodeError) else str(e)
                self._bad(f"{where}: not valid JSON ({detail})")
                continue
            if not isinstance(record, dict):
                self._bad(f"{where}: a JSON {json_type(record)}, not an object")
                continue
            text = self._field(record, self.text_field, where, "--text-field")
            if text is None:
                continue
            if not isinstance(text, str):
                self._bad(f"{where}: field {self.text_field!r} is a JSON {json_type(text)}, not a string")
                continue
            doc_id = str(number)
            if self.id_field is not None:
                value = self._field(record, self.id_field, where, "--id-field")
                if value is None:
                    continue
                if isinstance(value, bool) or not isinstance(value, (str, int)):
                    self._bad(
                        f"{where}: field {self.id_field!r} is a JSON {json_type(value)}; "
                        f"ids must be strings or integers"
                    )
                    continue
                doc_id = str(value)
                if not _valid_id(doc_id):
                    self._bad(f"{where}: id {doc_id!r} holds a tab or line break, which the output cannot")
                    continue
            yield doc_id, text

    def _field(self, record: dict, field: str, where: str, flag: str) -> object | None:
        if field in record and record[field] is not None:
            return record[field]
        if field in record:
            self._bad(f"{where}: field {field!r} is null")
        else:
            fields = ", ".join(repr(k) for k in list(record)[:10]) or "none"
            self._bad(f"{where}: no field {field!r} (fields: {fields}); name another with {flag}")
        return None

    def _files(self) -> Iterator[Document]:
        root = Path(self.source)
        for relative in _regular_files(root):
            if not _valid_id(relative):
                self._bad(f"{root / relative}: the name holds a tab or line break, which the output cannot")
                continue
            path = root / relative
            try:
                data = (
                    gzip.decompress(path.read_bytes())
                    if path.name.lower().endswith(".gz")
                    else path.read_bytes()
                )
            except (OSError, EOFError) as e:
                self._bad(f"{path}: cannot read ({type(e).__name__}: {e})")
                continue
            yield relative, data


def _numbered(f: Iterable[bytes]) -> Iterator[tuple[int, bytes]]:
    for number, line in enumerate(f, 1):
        if number == 1 and line.startswith(_BOM):
            line = line[len(_BOM) :]
        if line.endswith(b"\n"):
            line = line[:-2] if line.endswith(b"\r\n") else line[:-1]
        yield number, line


def _valid_id(doc_id: str) -> bool:
    return not any(c in doc_id for c in "\t\n\r")


EXAMPLE_DOCUMENTS = (
    "The quick brown fox jumps over the lazy dog while the farmer watches from the porch.",
    "the quick brown fox jumps over the lazy dog, while the farmer watches from the porch!",
    "A journey of a thousand miles begins with a single step, or so the old proverb says.",
    "Fresh bread is baked every morning at the small bakery on the corner of Elm Street.",
    "Fresh bread is baked every morning at the small bakery on the corner of Elm Road.",
    "The city council will vote on the new library budget at its meeting next Tuesday evening.",
    "The city council will vote on the new library budget at its meeting next Tuesday evening. Read more.",
    "Rain is expected across the northern valleys tomorrow, with clearing skies by the weekend.",
    "She planted tomatoes, basil and peppers in the raised beds behind the old stone cottage.",
    "Our store opens at nine in the morning and closes at six, Monday through Saturday.",
    "OUR STORE OPENS AT NINE IN THE MORNING AND CLOSES AT SIX, MONDAY THROUGH SATURDAY.",
    "The museum's new exhibit traces the history of printing from woodblocks to laser printers.",
    "Scientists have discovered a new species of frog in the cloud forests of Ecuador.",
    "Researchers have discovered a new species of frog in the cloud forests of Ecuador.",
    "The train to the coast leaves platform four at ten past eight every weekday morning.",
    "He learned to play the violin as a child and still practises for an hour every day.",
    "Click here to subscribe to our newsletter and never miss an update from our team.",
    "Click here to subscribe to our newsletter and never miss an update from our editors.",
    "The recipe calls for two cups of flour, one egg, a pinch of salt and warm milk.",
    "Mountain roads can be icy in winter, so drivers should carry chains and drive slowly.",
)
"""The corpus of ``neardup fingerprint --example``: short sentences, some of them edited copies
of another (re-cased, re-punctuated, a word changed or added), as a crawler finds them."""


def example_documents() -> list[Document]:
    """The example corpus as (id, text), ids its 1-based positions."""
    return [(str(i), text) for i, text in enumerate(EXAMPLE_DOCUMENTS, 1)]
