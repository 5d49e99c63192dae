"""pygments' lexing loop with each state's rules joined (``fingerprint/pygments_loop.py``)
gives pygments' own tokens: on generated text, on real files, and where it falls back."""

from __future__ import annotations

import sysconfig
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.fingerprint.pygments_loop import _joined_states, tokens

pytest.importorskip("pygments", reason="code features need the code extra (pygments)")
from pygments.lexers import get_lexer_by_name

# Pieces that open and close the states lexers have: strings of every kind, f-strings and
# their fields, comments, numbers, decorators, regex literals, template strings, raw strings.
PIECES = (
    "def ", "class ", "return ", "x", "_y1", " ", "\n", "\t", "  ", "(", ")", "[", "]", "{", "}",
    ":", ";", ",", ".", "=", "==", "+", "-", "*", "/", "%", "<", ">", "!", "&", "|", "^", "~",
    "@", "#", "# c\n", "//", "/*", "*/", "'", '"', "'''", '"""', "`", "${", "\\", "\\n", "f'",
    'rb"', "u'", "b'", "0x1F", "1.5e-3", "42", "0o7", "1_000", "True", "None", "lambda", "if ",
    "else", "import ", "from ", "async ", "await ", "yield from ", "fn ", "let ", "var ",
    "function ", "=>", "$", "?", "é", "\u00a0", "\r\n",
)  # fmt: skip
LANGUAGES = ("python", "java", "javascript", "rust", "kotlin", "scala", "bash", "go")


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(LANGUAGES), st.lists(st.sampled_from(PIECES) | st.text(max_size=3), max_size=60))
def test_tokens_are_pygments_tokens(language, pieces):
    lexer = get_lexer_by_name(language)
    text = "".join(pieces)
    assert list(tokens(lexer, text)) == list(lexer.get_tokens(text))


def test_real_files_lex_as_pygments_lexes_them():
    library = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(library.glob("*.py"))[::12]
    assert len(files) > 10
    lexer = get_lexer_by_name("python")
    for path in files:
        text = path.read_text("utf-8", "replace")
        assert list(tokens(lexer, text)) == list(lexer.get_tokens(text)), path


def test_python_lexes_through_joined_rules():
    """The fast path is taken where it matters: Python's busiest states are joined."""
    joined = _joined_states(type(get_lexer_by_name("python")))
    assert joined is not None
    assert all(joined[state] is not None for state in ("root", "expr", "name", "fstringescape"))


def test_lexers_that_lex_their_own_way_keep_pygments_loop():
    c = get_lexer_by_name("c")  # post-processes names in its own get_tokens_unprocessed
    assert _joined_states(type(c)) is None
    text = "int main(void) { return 0; }\n"
    assert list(tokens(c, text)) == list(c.get_tokens(text))
    filtered = get_lexer_by_name("python")
    filtered.add_filter("keywordcase", case="upper")
    assert list(tokens(filtered, "if x:\n    pass\n")) == list(filtered.get_tokens("if x:\n    pass\n"))
    assert ("Keyword", "IF") in [(str(t).rsplit(".", 1)[-1], v) for t, v in tokens(filtered, "if x: pass")]
