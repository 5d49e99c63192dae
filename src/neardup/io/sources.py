"""What the inputs are: files and folders expanded into sources, each with a format and a
compression detected from its name (or given).

Nothing here imports pyarrow: ``neardup --help`` stays light.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

from .._atomic import folder_taken
from .._errors import ConfigError, FormatError
from .formats import COMPRESSION_SUFFIXES, FORMATS, SUFFIXES, check_format_names


@dataclass(frozen=True)
class Source:
    """One input file.

    Attributes:
        path: where it is.
        name: how ids and messages name it: the path as given, or a folder's path joined
            with the file's path inside it.
        format: one of ``INPUT_FORMATS``.
        compression: ``"gzip"``, ``"zstd"``, ``"bz2"`` or None.
        size: bytes on disk, for progress.
        relative: its path inside the folder given, or its file name: where a kept file
            goes in an output folder.
        mtime_ns: its modification time when found, with ``size`` what
            :meth:`check_unchanged` compares (0: not recorded, for a stream).
    """

    path: Path
    name: str
    format: str
    compression: str | None
    size: int
    relative: str
    mtime_ns: int = 0

    def check_unchanged(self) -> None:
        """Raise :class:`FormatError` if the file's size or modification time is no longer
        what it was when found. A dedup reads its inputs more than once (the kept lines are
        copied in a second pass, by the offsets the first one saw): a file rewritten or cut
        in between would be copied wrong, so the run stops instead."""
        if not self.mtime_ns:
            return
        try:
            now = self.path.stat()
        except FileNotFoundError:
            raise FormatError(
                f"{self.name}: the file was removed while neardup was reading it; "
                f"run again on inputs that nothing writes meanwhile"
            ) from None
        if now.st_size != self.size or now.st_mtime_ns != self.mtime_ns:
            change = (
                f"its size went from {self.size:,} to {now.st_size:,} bytes"
                if now.st_size != self.size
                else "it was modified"
            )
            raise FormatError(
                f"{self.name}: the file changed while neardup was reading it ({change}), so what "
                f"was read from it no longer matches it; nothing was written; run again on "
                f"inputs that nothing writes meanwhile"
            )

    def document_id(self, row: int) -> str:
        """The id of the document at 1-based ``row`` (line or row) when no id field names
        it: ``name:row``, or ``name`` for a file that is one document (row 0)."""
        return self.name if row == 0 else f"{self.name}:{row}"


def split_suffixes(name: str) -> tuple[str | None, str | None]:
    """(format, compression) named by a file's suffixes, each None when it names none:
    ``pages.jsonl.gz`` is ``("jsonl", "gzip")``."""
    lower = name.lower()
    compression = None
    for suffix, kind in COMPRESSION_SUFFIXES.items():
        if lower.endswith(suffix):
            compression, lower = kind, lower[: -len(suffix)]
            break
    fmt = next((kind for suffix, kind in SUFFIXES.items() if lower.endswith(suffix)), None)
    return fmt, compression


def find_sources(
    inputs: list[str], *, format: str | None = None, compression: str | None = None, lines: bool = False
) -> list[Source]:
    """The input files of ``inputs`` (files and folders, walked recursively and sorted), in
    order; a folder's files and folders named ``.*`` or ``_*`` are left out. A file's format
    comes from its suffix (``.jsonl``, ``.parquet``, ``.csv``, ``.tsv``, ...); any other file
    is text: one document per line when named in ``inputs`` (or when ``lines``), one document
    per file when found in a folder. ``format`` and ``compression`` override what the names
    say, for every file (``format="text"``: a named file is one document)."""
    check_format_names(format, compression)
    if not inputs:
        raise ConfigError("no input given: name files or folders of documents")
    sources = []
    for given in inputs:
        root = Path(given)
        if root.is_dir():
            files = regular_files(root)
            if not files:
                raise ConfigError(
                    f"{given}: the folder holds no files (names starting with . or _ are left out)"
                )
            named = [(root / relative, f"{given.rstrip('/')}/{relative}", relative) for relative in files]
        elif root.exists():
            named = [(root, given, root.name)]
        else:
            raise FileNotFoundError(f"{given}: no such file or folder")
        # A text file named as an input holds one document per line; a folder's files are
        # one document each, unless ``lines``: the one rule of every command.
        direct = not root.is_dir()
        for path, name, relative in named:
            sources.append(_source(path, name, relative, format, compression, lines or direct))
    return sources


def _source(
    path: Path, name: str, relative: str, format: str | None, compression: str | None, lines: bool
) -> Source:
    named_format, named_compression = split_suffixes(path.name)
    fmt = format or named_format or ("lines" if lines else "text")
    if compression is None:
        compression = named_compression
    elif compression == "none":
        compression = None
    if compression is not None and not FORMATS[fmt].compressible:
        raise ConfigError(
            f"{name}: {FORMATS[fmt].shown} is not compressed as a whole; name the file "
            f"without a {compression} suffix"
        )
    stat = path.stat()
    return Source(path, name, fmt, compression, stat.st_size, relative, stat.st_mtime_ns)


def regular_files(root: Path) -> list[str]:
    """Relative POSIX paths of the regular files under ``root`` (symlinks to files count;
    symlinked folders are not entered), sorted so that runs are repeatable. Files and folders
    whose names start with ``.`` or ``_`` are left out, as Spark's readers leave them out (and
    so does ``spark/splits.py``): ``.DS_Store``, ``.git/``, a Spark output's ``_SUCCESS``."""
    found = []
    for folder, folders, names in os.walk(root):
        folders[:] = [name for name in folders if not is_hidden(name)]
        for name in names:
            path = Path(folder, name)
            if not is_hidden(name) and path.is_file():
                found.append(path.relative_to(root).as_posix())
    return sorted(found)


def is_hidden(name: str) -> bool:
    """Whether a file or folder found in a folder is left out, as Spark's readers leave it out."""
    return name.startswith((".", "_"))


def check_outputs(
    outputs: Mapping[str, str | os.PathLike | None],
    inputs: list[str],
    *,
    folders: Collection[str] = (),
    replace: bool = False,
) -> None:
    """Refuse, before anything is read or written, outputs that would replace documents or
    results, or that could be written only to fail once the whole job is done:

    - an output that is one of ``inputs`` (the same file, however named), lies inside an
      input folder, or is a folder holding an input: written atomically, it would replace
      the documents being read, or be read as input by the next run;
    - two outputs on one path (after ``./``, ``..``, symbolic and hard links), or one inside
      the other: the one written last would replace the other;
    - an output whose folder is missing, not a folder, or not writable; a file output that
      is a folder; a folder output (``folders``) that exists and is not an empty folder,
      unless ``replace`` says it is replaced whole (Spark's folders of part files).

    ``outputs`` maps each option (``-o``, ``--clusters``) to its path, None or ``-``
    (stdout) when not written; a URL (``s3://...``) is left to the file system that writes
    it. ``folders`` names the options whose output is a folder."""
    written = [
        (option, os.fspath(output))
        for option, output in outputs.items()
        if output is not None and os.fspath(output) != "-" and "://" not in os.fspath(output)
    ]
    given = [(name, Path(name).resolve()) for name in inputs if name != "-" and "://" not in name]
    for option, output in written:
        _check_apart_from_inputs(option, output, given)
    for (option, output), (other_option, other) in itertools.combinations(written, 2):
        _check_apart(option, output, other_option, other)
    for option, output in written:
        _check_writable(option, output, option in folders, replace)


def _check_apart_from_inputs(option: str, output: str, inputs: list[tuple[str, Path]]) -> None:
    target = Path(output).resolve()
    for name, source in inputs:
        if _same(target, source):
            problem = f"is the input {name}: writing it would replace the documents being read"
        elif source.is_dir() and target.is_relative_to(source):
            problem = f"is inside the input folder {name}: the next run would read it as input"
        elif source.is_relative_to(target):
            problem = f"holds the input {name}: writing it would replace the documents being read"
        else:
            continue
        raise ConfigError(f"{option} {output} {problem}; write it somewhere else")


def _check_apart(option: str, output: str, other_option: str, other: str) -> None:
    """Refuse two outputs on one path, or one inside the other."""
    first, second = Path(output).resolve(), Path(other).resolve()
    if _same(first, second):
        raise ConfigError(
            f"{option} {output} and {other_option} {other} are one file: the one written last "
            f"would replace the other; give each its own path"
        )
    for (inner_option, inner, inner_path), (outer_option, outer, outer_path) in (
        ((option, output, first), (other_option, other, second)),
        ((other_option, other, second), (option, output, first)),
    ):
        if inner_path.is_relative_to(outer_path):
            raise ConfigError(
                f"{inner_option} {inner} is inside {outer_option} {outer}: writing one would "
                f"replace or break the other; give each its own path"
            )


def _same(first: Path, second: Path) -> bool:
    """Whether two resolved paths name one file: the same path, or hard links."""
    return first == second or (first.exists() and second.exists() and os.path.samefile(first, second))


def _check_writable(option: str, output: str, folder: bool, replace: bool) -> None:
    """Refuse an output that could not be written where it is named."""
    path = Path(output)
    parent = path.parent  # as given ("." for a bare name), for the message
    if parent.exists() and not parent.is_dir():
        raise ConfigError(f"{option} {output}: {parent} is a file, not a folder; write elsewhere")
    if not parent.is_dir():
        raise ConfigError(
            f"{option} {output}: the folder {parent} does not exist; make it first "
            f"(mkdir -p {parent}), or write elsewhere"
        )
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ConfigError(
            f"{option} {output}: the folder {parent} is not writable (permissions, or a "
            f"read-only file system); write elsewhere"
        )
    if not folder and path.is_dir():
        raise ConfigError(f"{option} {output} is a folder; name a file to write, in it or elsewhere")
    if folder and not replace and folder_taken(path):
        raise ConfigError(
            f"{option} {output} exists and is not an empty folder; remove it, or name a new folder"
        )
