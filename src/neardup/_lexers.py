"""Lexers of source code by name, for ``features="code"``: pygments' (the ``code`` extra),
found by a language name or by a document's file name. Shared by the config, which checks a
name when it is made, and the fingerprint, which lexes."""

from __future__ import annotations

import difflib
import functools
import importlib.metadata
import posixpath
from typing import Any

from ._errors import ConfigError
from ._extras import require


def _pygments(needed_by: str) -> Any:
    require("code", "pygments", needed_by=needed_by)
    import pygments.lexers

    return pygments.lexers


@functools.cache
def pygments_version() -> str | None:
    """The installed pygments' version, or None without the ``code`` extra. Its lexers decide a
    code fingerprint's tokens, so files of code fingerprints record it (docs/fingerprint-spec.md,
    section 5.1); read from the package's metadata, without importing pygments."""
    try:
        return importlib.metadata.version("pygments")
    except importlib.metadata.PackageNotFoundError:
        return None


@functools.cache
def lexer_named(language: str) -> Any:
    """The pygments lexer of ``language``, one of its names (``"python"``, ``"py"``, ``"c++"``),
    or ConfigError listing close names."""
    lexers = _pygments("features='code'")
    from pygments.util import ClassNotFound

    try:
        return lexers.get_lexer_by_name(language)
    except ClassNotFound:
        names = sorted({alias for _, aliases, _, _ in lexers.get_all_lexers() for alias in aliases})
        close = difflib.get_close_matches(language.lower(), names, n=5)
        hint = f"did you mean {', '.join(map(repr, close))}? " if close else ""
        raise ConfigError(
            f"language={language!r} is not a language pygments can lex; {hint}give one of its "
            f"lexer names, such as 'python', 'java', 'c', 'cpp', 'javascript' or 'go' "
            f"(`pygmentize -L lexers` lists all {len(names)})"
        ) from None


def check_language(language: str) -> None:
    """Raise ConfigError unless ``language`` names a pygments lexer."""
    lexer_named(language)


@functools.lru_cache(maxsize=4096)
def _lexer_for_base_name(base_name: str) -> Any:
    lexers = _pygments("features='code'")
    from pygments.util import ClassNotFound

    try:
        # Without the code, so that the choice is the file name's alone: the same on every run.
        return lexers.get_lexer_for_filename(base_name)
    except ClassNotFound:
        return None


def lexer_for_file_name(name: str) -> Any:
    """The lexer a file name says (``src/app.py``: Python), or None where it says none."""
    return _lexer_for_base_name(posixpath.basename(name.replace("\\", "/")))


def lexer_for(language: str | None, name: str | None) -> Any:
    """The lexer of a document: ``language``'s, or, when that is None, the one its file name
    ``name`` says (``src/app.py``: Python), or ConfigError naming the document."""
    if language is not None:
        return lexer_named(language)
    if name is None:
        raise ConfigError(
            "features='code' needs each document's language: give language= (--language NAME), "
            "or documents that are files, so that their names say it (src/**/*.py)"
        )
    lexer = lexer_for_file_name(name)
    if lexer is None:
        raise ConfigError(
            f"{name}: no language is known for this file name; give language= (--language NAME, "
            f"such as python), or leave files of other languages out"
        )
    return lexer
