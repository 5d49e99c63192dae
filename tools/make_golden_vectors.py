"""Write tests/fingerprint/golden_vectors.jsonl: texts, configs and their fingerprints under spec version 1.

The file pins the fingerprint format: tests fail if any bit changes. The code vectors pin
pygments' lexers too (the version the spec names). Regenerating it is only
right when docs/fingerprint-spec.md gets a new version (and FINGERPRINT_VERSION with it), so
this script refuses to overwrite the file unless given --force.

    python tools/make_golden_vectors.py [--force]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import neardup

TEXTS = [
    "",
    "   \t\n ",
    "the cat sat on the mat",
    "The Cat sat on the MAT!",
    "hello",
    "two words",
    "Near-duplicate detection for web crawling, as Manku, Jain and Das Sarma described it in 2007.",
    "Ｆｕｌｌｗｉｄｔｈ ＡＳＣＩＩ and ligatures: ﬁle ﬂow",
    "東京タワーは東京都港区芝公園にある総合電波塔です。",
    "我们的系统能够在大规模网页中发现近似重复的文档。",
    "한국어 문장도 토큰으로 나뉩니다",
    "Съешь же ещё этих мягких французских булок, да выпей чаю.",
    "النص العربي يعمل أيضا مثل الإنجليزية",
    "emoji 😀 between 👍🏽 words 🇫🇷 flags",
    "Straße GROSS ǅemal ΣΊΣΥΦΟΣ",
    "combining: e\u0301 a\u0308 n\u0303 vs é ä ñ",
    "tabs\tand\nnewlines\u2028and\u3000ideographic space",
    "control\x00chars\x07and\x1fseparators\x1c",
    "lone surrogate \ud800 here",
    "numbers 3.14159 and 2,718 and ١٢٣ and ½",
    "a " * 40,
    " ".join(f"word{i % 17}" for i in range(500)),
    "x" * 300,
]

CONFIGS = [
    {},
    {"bits": 128},
    {"features": "words"},
    {"features": "char-ngrams"},
    {"features": "char-ngrams", "ngram_size": 3, "bits": 128},
    {"weighting": "uniform"},
    {"weighting": "sublinear"},
    {"weighting": "sublinear", "bits": 128, "features": "words"},
    {"shingle_size": 1},
    {"shingle_size": 5},
    {"normalize": False},
    {"seed": 42},
    {"seed": 2**64 - 1, "bits": 128},
]

# features="code": source texts under the lexers' rules (pygments; see the spec's code section).
CODE_TEXTS = [
    "",
    "# only a comment\n",
    "x = 1\n",
    'def add(x, y):\n    """Sum."""\n    return x + y  # plus\n',
    "def plus(a, b):\n  return a+b\n",
    "s = f'{name}!' + 'a' 'b' + r\"\\d\" * 0x1F\nyield from items\nif a is not None and \\\n    b: pass\n",
    "class Ünïcode:\n    Straße = 'ΣΊΣΥΦΟΣ'\n",
    "for i in range(10):\n    total += i * 2.5e-3\n" * 20,
]
CODE_CONFIGS = [
    {"features": "code", "language": "python"},  # the default shingle size: 4 tokens
    {"features": "code", "language": "python", "shingle_size": 5},
    {"features": "code", "language": "python", "code_normalize": "none", "shingle_size": 3},
    {
        "features": "code",
        "language": "python",
        "normalize": False,
        "weighting": "sublinear",
        "bits": 128,
        "shingle_size": 5,
    },
    {"features": "code", "language": "c", "seed": 7, "shingle_size": 5},
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true", help="overwrite the existing file")
    args = parser.parse_args()
    out = Path(__file__).resolve().parents[1] / "tests/fingerprint/golden_vectors.jsonl"
    if out.exists() and not args.force:
        sys.exit(f"{out} exists: changing fingerprints needs a new spec version (--force to overwrite)")
    lines = []
    cases = [(c, t) for c in CONFIGS for t in TEXTS] + [(c, t) for c in CODE_CONFIGS for t in CODE_TEXTS]
    for config, text in cases:
        fingerprinter = neardup.Fingerprinter(**config)
        width = fingerprinter.config.bits // 4
        fp = fingerprinter.fingerprint(text)
        vector = {
            "version": neardup.FINGERPRINT_VERSION,
            "config": config,
            "text": text,
            "fingerprint": f"{fp:0{width}x}",
        }
        lines.append(json.dumps(vector, ensure_ascii=True))
    out.write_text("\n".join(lines) + "\n")
    print(f"wrote {len(lines)} vectors to {out}")


if __name__ == "__main__":
    main()
