"""features="code": the compiled path equals tests/naive.py's plain reference bit for bit, and
the fingerprints see through what code clones change (comments, layout, names) where prose
features do not."""

from __future__ import annotations

import importlib.metadata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import neardup
from naive import naive_code_fingerprint, naive_code_tokens
from neardup import ConfigError, FingerprintConfig
from neardup._config import FEATURES
from neardup._lexers import lexer_named
from neardup.fingerprint.code import code_tokens

pytest.importorskip("pygments", reason="features='code' needs the code extra (pygments)")

ORIGINAL = '''\
import os


def read_config(path, default=None):
    """Read a config file, or give the default."""
    # A missing file is not an error here.
    if not os.path.exists(path):
        return default
    with open(path, encoding="utf-8") as handle:
        lines = [line.strip() for line in handle if line.strip()]
    settings = {}
    for line in lines:
        key, _, value = line.partition("=")
        settings[key.strip()] = value.strip()  # last one wins
    return settings


def merge(first, second):
    merged = dict(first)
    for key, value in second.items():
        if key not in merged or merged[key] is None:
            merged[key] = value
    return merged
'''

# Type 1: comments and docstring gone, layout changed.
RELAID = """\
import os
def read_config(path, default = None):
    if not os.path.exists(path): return default
    with open(path, encoding = "utf-8") as handle:
        lines = [line.strip()
                 for line in handle
                 if line.strip()]
    settings = {}
    for line in lines:
        key, _, value = line.partition("=")
        settings[key.strip()] = value.strip()
    return settings
def merge(first, second):
    merged = dict(first)
    for key, value in second.items():
        if key not in merged or merged[key] is None: merged[key] = value
    return merged
"""

# Type 2: every identifier and literal renamed.
RENAMED = '''\
import os


def load_settings(filename, fallback=None):
    """Load settings."""
    if not os.path.exists(filename):
        return fallback
    with open(filename, encoding="latin-1") as f:
        rows = [r.strip() for r in f if r.strip()]
    table = {}
    for r in rows:
        k, _, v = r.partition(":")
        table[k.strip()] = v.strip()
    return table


def combine(a, b):
    out = dict(a)
    for k, v in b.items():
        if k not in out or out[k] is None:
            out[k] = v
    return out
'''

# Code-like texts for the reference: fragments a lexer sees in real code, and some it does not.
FRAGMENTS = [
    "def", "class", "return", "if", "else", "for", "in", "import", "lambda", "None", "True",
    "x", "value", "self", "_private", "CamelCase", "ÄÖÜ", "ǅ", "名前",
    "0", "42", "3.14", "0x1F", "1e-9", "'a'", '"text"', "f'{x}'", "b'\\x00'", '"""doc"""',
    "(", ")", "[", "]", "{", "}", ":", ",", ".", "=", "==", "+", "-", "*", "**", "->", "@",
    "# comment", "#", "\\", "\t", " ", "\n", "\n    ", "\r\n", "\x00", "\ud800",
]  # fmt: skip
code_texts = st.lists(st.sampled_from(FRAGMENTS), max_size=60).map(" ".join)


@settings(deadline=None)
@given(
    texts=st.lists(code_texts, min_size=1, max_size=6),
    code_normalize=st.sampled_from(["identifiers", "none"]),
    shingle_size=st.integers(1, 7),
    normalize=st.booleans(),
    weighting=st.sampled_from(["uniform", "tf", "sublinear"]),
    bits=st.sampled_from([64, 128]),
    seed=st.integers(0, 2**64 - 1),
)
def test_code_fingerprint_equals_naive(texts, code_normalize, shingle_size, normalize, weighting, bits, seed):
    options = dict(
        code_normalize=code_normalize, shingle_size=shingle_size, normalize=normalize,
        weighting=weighting, bits=bits, seed=seed,
    )  # fmt: skip
    fingerprinter = neardup.Fingerprinter(features="code", language="python", **options)
    expected = [naive_code_fingerprint(t, "python", **options) for t in texts]
    assert [fingerprinter.fingerprint(t) for t in texts] == expected
    batch = fingerprinter.fingerprint_batch(texts)
    got = [int(x) for x in batch] if bits == 64 else [int(lo) | (int(hi) << 64) for lo, hi in batch]
    assert got == expected


# Small snippets whose names and literals fold in ways ASCII does not: casefold longer than the
# text (ß, İ, ﬁ), Σ's final form, title case (ǅ), NFKC (Ｆ, Ⅻ, ①), marks that compose (e +
# U+0301), scripts without case; each literal split by escapes into several pygments parts.
FOLDING = "AZaz_09ÄäÖÜßẞΣσςΊİıǅǄﬁﬀＦｚⅫ①éE\u0301\u0308ñ名前東京ДжЖ"
folding_words = st.text(
    st.one_of(st.sampled_from(FOLDING), st.characters(min_codepoint=0x80)), min_size=1, max_size=5
)
literal_parts = st.one_of(
    folding_words, st.sampled_from(["\\n", "\\x41", "\\N{DIGIT ONE}", " ", "{x}", "\\"])
)
literals = st.builds(
    lambda prefix, quote, parts: f"{prefix}{quote}{''.join(parts)}{quote}",
    st.sampled_from(["", "f", "r", "b", "u"]),
    st.sampled_from(["'", '"', '"""']),
    st.lists(literal_parts, max_size=4),
)
snippet_pieces = st.one_of(
    folding_words, literals, st.sampled_from(["=", "(", ")", ":", "+", ".", "\n", "class", "def", "return"])
)
snippets = st.lists(snippet_pieces, min_size=1, max_size=12).map(" ".join)


@settings(max_examples=60, deadline=None)
@given(
    texts=st.lists(snippets, min_size=1, max_size=4),
    code_normalize=st.sampled_from(["identifiers", "none"]),
    normalize=st.booleans(),
    shingle_size=st.integers(1, 4),
)
def test_code_fingerprint_of_non_ascii_names_and_literals_equals_naive(
    texts, code_normalize, normalize, shingle_size
):
    options = dict(code_normalize=code_normalize, normalize=normalize, shingle_size=shingle_size)
    fingerprinter = neardup.Fingerprinter(features="code", language="python", **options)
    expected = [naive_code_fingerprint(t, "python", **options) for t in texts]
    assert [fingerprinter.fingerprint(t) for t in texts] == expected
    assert [int(x) for x in fingerprinter.fingerprint_batch(texts)] == expected


def test_a_string_literal_folds_whole():
    """Spec 5.1: a literal's parts are joined (step 2), then folded (step 4); each part of
    'ABC' or 'ΣΊΣΥΦΟΣ' is a pygments token of its own, and every one folds."""
    text = "S = 'ABC' 'Straße' + 'ΣΊΣΥΦΟΣ'\n"
    folded = ["s", "=", "'abc''strasse'", "+", "'σίσυφοσ'"]
    assert naive_code_tokens(text, "python", "none", True) == folded
    assert code_tokens(text, lexer_named("python"), identifiers=False, fold=True) == folded
    options = dict(features="code", language="python", code_normalize="none")
    fingerprinter = neardup.Fingerprinter(**options)
    assert fingerprinter.fingerprint(text) == naive_code_fingerprint(text, "python", "none")
    assert fingerprinter.fingerprint(text) == fingerprinter.fingerprint(text.lower().replace("ß", "ss"))


def test_tokens_leave_out_comments_docstrings_and_layout():
    tokens = naive_code_tokens(
        'def f(x):\n    """Doc."""\n    return x + 1  # one\n', "python", "identifiers", True
    )
    assert tokens == ["def", "$id", "(", "$id", ")", ":", "return", "$id", "+", "$num"]
    tokens = naive_code_tokens("s = f'a{b}c' 'd'\n", "python", "none", True)
    assert tokens == ["s", "=", "f'a{", "b", "}c''d'"]


def distance(config: FingerprintConfig, a: str, b: str) -> int:
    fingerprinter = neardup.Fingerprinter(config)
    return bin(fingerprinter.fingerprint(a) ^ fingerprinter.fingerprint(b)).count("1")


def test_code_features_see_through_comments_layout_and_renames():
    code = FingerprintConfig(features="code", language="python")
    prose = FingerprintConfig()
    assert distance(code, ORIGINAL, RELAID) <= 3
    assert distance(code, ORIGINAL, RENAMED) <= 3
    assert distance(prose, ORIGINAL, RELAID) > 6
    assert distance(prose, ORIGINAL, RENAMED) > 12
    as_written = FingerprintConfig(features="code", language="python", code_normalize="none")
    assert distance(as_written, ORIGINAL, RELAID) <= 3
    assert distance(as_written, ORIGINAL, RENAMED) > 12
    unrelated = "class Stack:\n    def __init__(self):\n        self.items = []\n"
    assert distance(code, ORIGINAL, unrelated) > 12


def test_language_from_the_file_name():
    fingerprinter = neardup.Fingerprinter(features="code")
    by_name = fingerprinter.fingerprint_batch([ORIGINAL, ORIGINAL], names=["src/a.py", "lib/b.c"])
    python = neardup.Fingerprinter(features="code", language="python").fingerprint(ORIGINAL)
    assert int(by_name[0]) == python == fingerprinter.fingerprint(ORIGINAL, name="a.py")
    assert int(by_name[1]) != python  # lexed as C
    with pytest.raises(ConfigError, match=r"notes\.zzz: no language is known for this file name"):
        fingerprinter.fingerprint_batch([ORIGINAL], names=["notes.zzz"])
    with pytest.raises(ConfigError, match="features='code' needs each document's language"):
        fingerprinter.fingerprint(ORIGINAL)


def test_code_features_are_not_prose_features():
    """The 0x01 opening each token keeps a code feature's hash apart from a prose word's."""
    text = "alpha beta gamma delta"
    code = neardup.Fingerprinter(features="code", language="text", code_normalize="none", normalize=False)
    words = neardup.Fingerprinter(features="words", normalize=False)
    assert code.fingerprint(text) != words.fingerprint(text)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"features": "code", "language": "pyton"},
            r"language='pyton' is not a language pygments can lex; did you",
        ),
        (
            {"features": "code", "code_normalize": "names"},
            r"code_normalize='names' is not allowed; choose one of",
        ),
        ({"language": "python"}, r"language= and code_normalize= are settings of features='code'"),
        ({"features": "code", "language": 3}, r"language=3 must be a name"),
    ],
)
def test_bad_code_settings_say_what_is_allowed(options, message):
    with pytest.raises(ConfigError, match=message):
        FingerprintConfig(**options)


def test_code_config_round_trips_and_defaults():
    config = FingerprintConfig(features="code", language="python", code_normalize="none")
    assert config.shingle_size == 4 and FingerprintConfig().shingle_size == 3
    d = config.to_dict()
    assert d["language"] == "python" and d["code_normalize"] == "none"
    assert FingerprintConfig.from_dict(d) == config
    assert "language" not in FingerprintConfig().to_dict()  # prose configs are written as before
    assert config.feature_config()["language"] == "python"


def test_code_configs_record_the_pygments_version():
    """The lexers decide the tokens: a code config's dict names the pygments that lexed, and a
    dict from another pygments reads back but compares unequal, and its index is refused naming
    both versions."""
    config = FingerprintConfig(features="code", language="python")
    d = config.to_dict()
    assert d["pygments_version"] == importlib.metadata.version("pygments")
    assert all(
        "pygments_version" not in FingerprintConfig(features=f).to_dict() for f in FEATURES if f != "code"
    )
    older = {**d, "pygments_version": "2.0"}
    assert FingerprintConfig.from_dict(older) == config and FingerprintConfig.from_dict(older).to_dict() == d
    texts = [ORIGINAL, RENAMED]
    fingerprints = neardup.Fingerprinter(config).fingerprint_batch(texts)
    for recorded, refused in ((d, False), (older, True)):
        index = neardup.HammingIndex(bits=64, max_distance=3, fingerprint_config=recorded)
        index.add(fingerprints)
        if refused:
            with pytest.raises(ConfigError, match=r"lexed by pygments 2\.0, but pygments \S+ is installed"):
                neardup.dedup(texts, features="code", language="python", against=index)
        else:
            assert neardup.dedup(texts, features="code", language="python", against=index).matched.min() >= 0
