"""Text to UTF-8 bytes and back, the one way every reader and the fingerprint engine do it."""

from __future__ import annotations

import re

from .rejects import Rejects

_SURROGATES = re.compile("[\ud800-\udfff]")

UTF8_MARK = b"\xef\xbb\xbf"
"""The UTF-8 byte-order mark: it may open a file, and is not part of its first document."""


def encode_text(text: str) -> bytes:
    """UTF-8 bytes of ``text``, with lone surrogates (which UTF-8 cannot hold) made U+FFFD."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATES.sub("\ufffd", text).encode("utf-8")


def decode_bytes(data: bytes) -> str:
    """Text of UTF-8 ``data``; each ill-formed sequence becomes U+FFFD (Unicode's "maximal
    subpart" practice, as Python's ``errors="replace"`` does)."""
    return data.decode("utf-8", errors="replace")


# Checked longest first: UTF-32 LE's mark begins with UTF-16 LE's.
_FOREIGN_MARKS = (
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)


def foreign_encoding(head: bytes) -> str | None:
    """``"UTF-16"`` or ``"UTF-32"`` when ``head``, a file's first bytes, starts with that
    encoding's byte-order mark; None otherwise (neardup reads UTF-8, with or without a mark)."""
    for mark, name in _FOREIGN_MARKS:
        if head.startswith(mark):
            return name
    return None


def rejected_as_not_utf8(name: str, head: bytes, rejects: Rejects) -> bool:
    """Whether the file ``name``, whose first bytes are ``head``, is UTF-16 or UTF-32 by its
    byte-order mark: then ``rejects`` is told so, with the fix (it raises, or counts the file
    as skipped), and the caller reads no further."""
    encoding = foreign_encoding(head)
    if encoding is None:
        return False
    rejects.reject(
        name,
        f"the file is {encoding} (it starts with a {encoding} byte-order mark), and neardup reads "
        f"UTF-8; convert it first (iconv -f {encoding} -t UTF-8)",
        "not UTF-8 (UTF-16 or UTF-32)",
    )
    return True
