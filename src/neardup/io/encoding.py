"""Text to UTF-8 bytes and back, the one way every reader and the fingerprint engine do it."""

from __future__ import annotations

import re

_SURROGATES = re.compile("[\ud800-\udfff]")


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
