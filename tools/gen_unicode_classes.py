"""Regenerate ``src/neardup/_data/unicode_classes.txt`` from Python's Unicode database.

The fingerprint spec pins its character classes to one Unicode version (14.0.0, the database of
CPython 3.11), so fingerprints do not drift when a newer Python ships a newer Unicode. Run this
only under a Python whose ``unicodedata.unidata_version`` is that version; a new version of the
table is a new fingerprint version (docs/fingerprint-spec.md).

    python tools/gen_unicode_classes.py
"""

from __future__ import annotations

import sys
import unicodedata
from pathlib import Path

UNICODE_VERSION = "14.0.0"

OTHER, WORD, SOLO, SPACE = 0, 1, 2, 3

# Scripts written without spaces between words: each letter is a token of its own
# (docs/fingerprint-spec.md, "Character classes").
SOLO_RANGES = [
    (0x3005, 0x3007),  # ideographic iteration mark, closing mark, number zero
    (0x3021, 0x3029),  # Hangzhou numerals
    (0x3038, 0x303C),  # more Hangzhou numerals, vertical iteration marks
    (0x3040, 0x309F),  # Hiragana
    (0x30A0, 0x30FF),  # Katakana
    (0x31F0, 0x31FF),  # Katakana phonetic extensions
    (0x3400, 0x4DBF),  # CJK unified ideographs extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xAC00, 0xD7AF),  # Hangul syllables
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF65, 0xFF9F),  # half-width Katakana
    (0x1AFF0, 0x1B16F),  # Kana extended-B, Kana supplement, Kana extended-A, small Kana extension
    (0x20000, 0x3FFFF),  # supplementary and tertiary ideographic planes
]


def char_class(cp: int) -> int:
    ch = chr(cp)
    if ch.isspace():
        return SPACE
    if unicodedata.category(ch)[0] not in "LMN":
        return OTHER
    if any(lo <= cp <= hi for lo, hi in SOLO_RANGES):
        return SOLO
    return WORD


def main() -> None:
    if unicodedata.unidata_version != UNICODE_VERSION:
        sys.exit(f"needs Unicode {UNICODE_VERSION}, this Python has {unicodedata.unidata_version}")
    lines = [
        f"# neardup character classes, Unicode {UNICODE_VERSION}: first last class",
        "# classes: 0 other (separator), 1 word, 2 solo (a token by itself), 3 space",
    ]
    start, current = 0, char_class(0)
    for cp in range(1, 0x110000):
        cls = char_class(cp)
        if cls != current:
            lines.append(f"{start:X} {cp - 1:X} {current}")
            start, current = cp, cls
    lines.append(f"{start:X} 10FFFF {current}")
    out = Path(__file__).resolve().parents[1] / "src/neardup/_data/unicode_classes.txt"
    out.write_text("\n".join(lines) + "\n")
    print(f"wrote {len(lines) - 2} ranges to {out}")


if __name__ == "__main__":
    main()
