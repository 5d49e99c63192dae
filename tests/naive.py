"""Slow, plain, obviously-right references that the compiled kernels must match bit for bit.

Written from docs/fingerprint-spec.md (version 1), section by section, and not from the
kernels: character classes come from the spec's rules applied to Python's ``unicodedata``, not
from the shipped table, so the tests check that table too. Everything here works on Python
``str`` and ``int``; speed is no concern.
"""

from __future__ import annotations

import math
import struct
import unicodedata
from typing import Any

import xxhash

# Spec section 4: the classes.
OTHER, WORD, SOLO, SPACE = 0, 1, 2, 3

# Spec section 4: scripts written without spaces between words (inclusive ranges).
SOLO_RANGES = (
    (0x3005, 0x3007),
    (0x3021, 0x3029),
    (0x3038, 0x303C),
    (0x3040, 0x309F),  # Hiragana
    (0x30A0, 0x30FF),  # Katakana
    (0x31F0, 0x31FF),  # Katakana phonetic extensions
    (0x3400, 0x4DBF),  # CJK ideographs, extension A
    (0x4E00, 0x9FFF),  # CJK ideographs
    (0xAC00, 0xD7AF),  # Hangul syllables
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF65, 0xFF9F),  # half-width Katakana
    (0x1AFF0, 0x1B16F),  # Kana
    (0x20000, 0x3FFFF),  # ideographic planes
)

MASK64 = 2**64 - 1


# --- Section 2: from input to text -------------------------------------------------------


def naive_decode(document: str | bytes) -> str:
    """The code points of a document: surrogates in a str become U+FFFD; bytes are UTF-8
    with each maximal ill-formed subpart replaced by U+FFFD."""
    if isinstance(document, str):
        return "".join("\ufffd" if 0xD800 <= ord(ch) <= 0xDFFF else ch for ch in document)
    return bytes(document).decode("utf-8", errors="replace")


# --- Section 3: normalisation -------------------------------------------------------------


def naive_normalize(text: str, normalize: bool) -> str:
    return unicodedata.normalize("NFKC", text).casefold() if normalize else text


# --- Section 4: character classes and tokens ----------------------------------------------


def naive_class(code_point: int) -> int:
    ch = chr(code_point)
    if ch.isspace():
        return SPACE
    if unicodedata.category(ch)[0] in "LMN":
        if any(first <= code_point <= last for first, last in SOLO_RANGES):
            return SOLO
        return WORD
    return OTHER


def naive_text(document: str | bytes, normalize: bool) -> str:
    """Sections 2 and 3: the text whose tokens or n-grams make the features."""
    return naive_normalize(naive_decode(document), normalize)


def naive_tokens(document: str | bytes, normalize: bool = True) -> list[str]:
    """Maximal runs of word code points, and each solo code point alone, in text order."""
    tokens = []
    run = ""
    for ch in naive_text(document, normalize):
        cls = naive_class(ord(ch))
        if cls == WORD:
            run += ch
            continue
        if run:
            tokens.append(run)
            run = ""
        if cls == SOLO:
            tokens.append(ch)
    if run:
        tokens.append(run)
    return tokens


# --- Section 5: features and their hashes -------------------------------------------------


def xxh3(data: bytes, seed: int) -> int:
    return xxhash.xxh3_64_intdigest(data, seed=seed)


def le64(x: int) -> bytes:
    return struct.pack("<Q", x)


def naive_collapsed(document: str | bytes, normalize: bool = True) -> str:
    """The char-ngram text S: runs of space code points as one U+0020, ends stripped."""
    out = []
    for ch in naive_text(document, normalize):
        if naive_class(ord(ch)) == SPACE:
            if out and out[-1] != " ":
                out.append(" ")
        else:
            out.append(ch)
    if out and out[-1] == " ":
        out.pop()
    return "".join(out)


def naive_features(
    document: str | bytes,
    features: str = "word-shingles",
    shingle_size: int = 3,
    ngram_size: int = 5,
    normalize: bool = True,
    seed: int = 0,
) -> list[int]:
    """The h0 of every feature of a document, in text order, repeats kept."""
    if features == "words":
        return [xxh3(t.encode("utf-8"), seed) for t in naive_tokens(document, normalize)]
    if features == "word-shingles":
        hashes = [xxh3(t.encode("utf-8"), seed) for t in naive_tokens(document, normalize)]
        k = shingle_size
        if len(hashes) < k:
            return hashes
        return [xxh3(b"".join(le64(t) for t in hashes[i : i + k]), seed) for i in range(len(hashes) - k + 1)]
    if features == "char-ngrams":
        s = naive_collapsed(document, normalize)
        n = ngram_size
        if not s:
            return []
        if len(s) < n:
            return [xxh3(s.encode("utf-8"), seed)]
        return [xxh3(s[i : i + n].encode("utf-8"), seed) for i in range(len(s) - n + 1)]
    raise ValueError(f"unknown features {features!r}")


# --- Section 6: weights, accumulation and bits ---------------------------------------------


def hyperplane_bits(h0: int, bits: int, seed: int) -> list[int]:
    """Bit i of H for i in 0..bits-1: h0 below 64, h1 = XXH3(le64(h0)) above."""
    out = [(h0 >> i) & 1 for i in range(64)]
    if bits == 128:
        h1 = xxh3(le64(h0), seed)
        out += [(h1 >> i) & 1 for i in range(64)]
    return out


def pack(vector: list, bits: int) -> int:
    """Bit i is 1 iff V[i] > 0 (a tie gives 0); 128 bits as lo + 2**64 * hi."""
    lo = sum(1 << i for i in range(64) if vector[i] > 0)
    hi = sum(1 << i for i in range(64) if bits == 128 and vector[64 + i] > 0)
    return lo + (hi << 64)


def accumulate(weights: dict[int, Any], bits: int, seed: int, start: Any) -> int:
    """V[i] = sum of +-w_f, features taken in ascending h0 order, from ``start`` (0 or +0.0)."""
    vector = [start] * bits
    for h0 in sorted(weights):
        w = weights[h0]
        for i, bit in enumerate(hyperplane_bits(h0, bits, seed)):
            vector[i] = vector[i] + w if bit else vector[i] - w
    return pack(vector, bits)


def naive_fingerprint(
    document: str | bytes,
    bits: int = 64,
    features: str = "word-shingles",
    shingle_size: int = 3,
    ngram_size: int = 5,
    normalize: bool = True,
    weighting: str = "tf",
    idf: Any = None,
    seed: int = 0,
) -> int:
    """The fingerprint of one document as a Python int (< 2**bits). ``idf`` is an object with
    ``hashes`` (sorted uint64), ``values`` (float64) and ``default_idf``, as neardup.IdfModel."""
    counts: dict[int, int] = {}
    for h0 in naive_features(document, features, shingle_size, ngram_size, normalize, seed):
        counts[h0] = counts.get(h0, 0) + 1
    return naive_weigh(counts, bits, weighting, idf, seed)


def naive_weigh(counts: dict[int, int], bits: int, weighting: str, idf: Any, seed: int) -> int:
    """Section 6: the fingerprint of features h0 occurring ``counts[h0]`` times."""
    if not counts:
        return 0
    if weighting == "uniform":
        return accumulate({h0: 1 for h0 in counts}, bits, seed, 0)
    if weighting == "tf":
        return accumulate(counts, bits, seed, 0)
    if weighting == "sublinear":
        return accumulate({h0: 1.0 + math.log(c) for h0, c in counts.items()}, bits, seed, 0.0)
    if weighting == "tfidf":
        table = naive_idf_table(idf)
        return accumulate(
            {h0: float(c) * table.get(h0, float(idf.default_idf)) for h0, c in counts.items()},
            bits,
            seed,
            0.0,
        )
    raise ValueError(f"unknown weighting {weighting!r}")


# --- Code: features="code" -----------------------------------------------------------------


def naive_code_tokens(
    document: str | bytes, language: str, code_normalize: str, normalize: bool
) -> list[str]:
    """pygments' tokens of the document, less comments, docstrings, whitespace and lone
    backslashes (a line continued), the space inside a token made one space; runs of
    string-literal parts joined into one; names and literals as placeholders under
    "identifiers"; every other token NFKC-normalised and casefolded under ``normalize``."""
    from pygments.lexers import get_lexer_by_name
    from pygments.token import Comment, Literal, Name, Number, String, Whitespace

    def kind(token_type: Any) -> str:
        if token_type in Comment or token_type in String.Doc or token_type in Whitespace:
            return "drop"
        for name, family in (("$id", Name), ("$str", String), ("$num", Number), ("$lit", Literal)):
            if token_type in family:
                return name
        return "keep"

    text = naive_decode(document)
    kept = [(kind(t), " ".join(v.split())) for t, v in get_lexer_by_name(language).get_tokens(text)]
    kept = [(k, v) for k, v in kept if k != "drop" and v and (v, k) != ("\\", "keep")]
    joined: list[tuple[str, str]] = []
    for k, v in kept:
        if k == "$str" and joined and joined[-1][0] == "$str":
            joined[-1] = (k, joined[-1][1] + v)
        else:
            joined.append((k, v))
    out = []
    for k, v in joined:
        if code_normalize == "identifiers" and k != "keep":
            out.append(k)
        else:
            out.append(naive_normalize(v, normalize).lower() if normalize else v)
    return out


def naive_code_fingerprint(
    document: str | bytes,
    language: str,
    code_normalize: str = "identifiers",
    bits: int = 64,
    shingle_size: int = 4,  # features="code"'s default
    normalize: bool = True,
    weighting: str = "tf",
    seed: int = 0,
) -> int:
    """A token's h0 is XXH3(0x01 + UTF-8 of the token); shingles as for words."""
    hashes = naive_code_features(document, language, code_normalize, shingle_size, normalize, seed)
    counts: dict[int, int] = {}
    for h0 in hashes:
        counts[h0] = counts.get(h0, 0) + 1
    return naive_weigh(counts, bits, weighting, None, seed)


def naive_code_features(
    document: str | bytes,
    language: str,
    code_normalize: str = "identifiers",
    shingle_size: int = 4,
    normalize: bool = True,
    seed: int = 0,
) -> list[int]:
    """The h0 of each code feature in order: shingles of ``shingle_size`` tokens (the tokens
    themselves when there are fewer)."""
    tokens = naive_code_tokens(document, language, code_normalize, normalize)
    hashes = [xxh3(b"\x01" + t.encode("utf-8"), seed) for t in tokens]
    k = shingle_size
    if len(hashes) >= k:
        hashes = [
            xxh3(b"".join(le64(t) for t in hashes[i : i + k]), seed) for i in range(len(hashes) - k + 1)
        ]
    return hashes


# --- Section 7: IDF models ----------------------------------------------------------------


def naive_idf_table(idf: Any) -> dict[int, float]:
    return {int(h): float(v) for h, v in zip(idf.hashes.tolist(), idf.values.tolist())}


def naive_document_frequencies(
    texts: list,
    features: str = "word-shingles",
    shingle_size: int = 3,
    ngram_size: int = 5,
    normalize: bool = True,
    seed: int = 0,
) -> dict[int, int]:
    """df of every feature h0 over ``texts``: in how many texts it occurs."""
    df: dict[int, int] = {}
    for text in texts:
        for h0 in set(naive_features(text, features, shingle_size, ngram_size, normalize, seed)):
            df[h0] = df.get(h0, 0) + 1
    return df


def naive_idf(df: int, n_docs: int) -> float:
    """idf = ln((1 + N) / (1 + df)) + 1; a feature never seen has df = 0."""
    return math.log((1 + n_docs) / (1 + df)) + 1


# --- Section 8: caller-given features -----------------------------------------------------


def naive_fingerprint_features(pairs: list, seed: int = 0, bits: int = 64) -> int:
    """Fingerprint of (feature, weight) pairs: features hashed as their bytes (str as UTF-8,
    not normalised, lone surrogates as U+FFFD as in section 2); weights of equal features added
    in input order; then binary64 accumulation in ascending h0 order."""
    weights: dict[int, float] = {}
    for feature, weight in pairs:
        data = naive_decode(feature).encode("utf-8") if isinstance(feature, str) else bytes(feature)
        h0 = xxh3(data, seed)
        weights[h0] = weights[h0] + float(weight) if h0 in weights else float(weight)
    if not weights:
        return 0
    return accumulate(weights, bits, seed, 0.0)


def naive_components(n: int, pairs) -> list[int]:
    """Smallest member of each item's connected component, by repeated relaxation."""
    label = list(range(n))
    changed = True
    while changed:
        changed = False
        for a, b in pairs:
            low = min(label[a], label[b])
            if label[a] != low or label[b] != low:
                label[a] = label[b] = low
                changed = True
    return label
