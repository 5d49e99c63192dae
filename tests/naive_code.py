"""Slow, plain, obviously-right references for passages of code (``--features code``): where
each code token lies in the original text and on which lines, from pygments' own
preprocessing (``Lexer._preprocess_lexer_input``) and character-by-character walks, not from
the offset arithmetic of ``fingerprint/code.py`` and ``decision/passage_code.py``."""

from __future__ import annotations

from typing import Any

from neardup.fingerprint.code import code_tokens


def naive_lexed_positions(text: str, lexer: Any) -> list[int]:
    """Where each character pygments lexes lies in ``text``: its preprocessed text walked
    beside ``text``, a character of ``text`` that is not the next one lexed (a byte-order mark,
    an opening line break, the ``\\r`` of ``\\r\\n``) skipped; a lone ``\\r`` is lexed as ``\\n``.
    The line break pygments adds at the end lies at ``len(text)``."""
    lexed = lexer._preprocess_lexer_input(text)
    positions, i = [], int(text.startswith("\ufeff"))  # the mark pygments drops, not a character
    for ch in lexed:
        while i < len(text):
            here = text[i]
            lone_cr = here == "\r" and text[i + 1 : i + 2] != "\n"
            if here == ch or (ch == "\n" and lone_cr):
                break
            i += 1
        positions.append(i)
        i = min(i + 1, len(text))
    return positions


def naive_token_spans(text: str, lexer: Any, identifiers: bool) -> list[tuple[str, int, int]]:
    """(token, start, end) of each code token of ``text``: the tokens are ``code_tokens``'
    (the fingerprint's own); each one's span is where its characters lie in ``text``: the
    lexed text's pygments tokens, walked one at a time, the kept ones stripped of space, the
    parts of one string literal joined (a part extends the literal before it)."""
    from neardup.fingerprint.code import DROP, KEEP, STRING, _action

    positions = naive_lexed_positions(text, lexer)
    spans: list[list[int]] = []
    at = 0
    in_string = False
    for token_type, raw in lexer.get_tokens(text):
        start, at = at, at + len(raw)
        action = _action(token_type)
        value = raw.strip()
        if action == DROP or not value or (value == "\\" and action == KEEP):
            continue
        first = start + raw.index(value[0])
        last = start + len(raw.rstrip()) - 1
        if action == STRING and in_string:
            spans[-1][1] = positions[last] + 1
            continue
        in_string = action == STRING
        spans.append([positions[first], positions[last] + 1])
    tokens = code_tokens(text, lexer, identifiers, True)
    assert len(tokens) == len(spans)
    return [(token, start, end) for token, (start, end) in zip(tokens, spans)]


def naive_line(text: str, offset: int) -> int:
    """The 1-based line of the character at ``offset``: one more than the line breaks before
    it, ``\\r\\n`` one break, a lone ``\\r`` or ``\\n`` one each."""
    return 1 + text[:offset].replace("\r\n", "\n").replace("\r", "\n").count("\n")


def naive_last_uses(text: str, spans: list[tuple[str, int, int]], window: int) -> list[str]:
    """The tokens of ``spans`` (``naive_token_spans``' with names placeholders) as passages
    hash them: each ``$id`` whose name, as written in ``text``, was used within ``window``
    tokens before made ``$id`` and that many tokens, by a walk back to the last use."""
    tokens = []
    for i, (token, start, end) in enumerate(spans):
        if token == "$id":
            for back in range(1, min(i, window) + 1):
                before, b_start, b_end = spans[i - back]
                if before == "$id" and text[b_start:b_end] == text[start:end]:
                    token = f"$id{back}"
                    break
        tokens.append(token)
    return tokens


def naive_phrases(tokens: list[int]) -> int:
    """Lempel and Ziv's complexity of ``tokens`` (1976), by their definition: from the start,
    each phrase grows a token at a time while it is found starting at an earlier token (the
    occurrence may run into the phrase itself), and ends with the token that makes it new."""
    count, at = 0, 0
    while at < len(tokens):
        length = 1
        while at + length <= len(tokens) and any(
            tokens[start : start + length] == tokens[at : at + length] for start in range(at)
        ):
            length += 1
        count, at = count + 1, at + length
    return count
