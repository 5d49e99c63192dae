"""``read_fingerprints`` (a compiled pass over the bytes) against the Python line loop it
replaced: the same ids, fingerprints and first error, file and line, on drawn files."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import neardup
from neardup import FormatError
from neardup.io.fingerprint_files import format_header, format_rows, read_fingerprints


def reference_read(path, bits: int) -> tuple[list[str], list[int]] | tuple[int, str]:
    """The rows of a fingerprint file (ids, values as ints) read line by line in Python, or
    (line number, fault) of the first bad line."""
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        f.readline()
        ids, values = [], []
        for number, line in enumerate(f, start=2):
            doc_id, tab, value = line.rstrip("\n").rpartition("\t")
            if not tab or len(value) != bits // 4:
                return number, "expected ID<TAB>HEX"
            try:
                values.append(int(value, 16))
            except ValueError:
                return number, "is not hexadecimal"
            ids.append(doc_id)
    return ids, values


ID_TEXT = st.text(st.characters(exclude_characters="\r\n", exclude_categories=("Cs",)), max_size=12)
NOT_HEX = "gz!#G\u00e9"  # never a digit to int(..., 16), unlike " ", "_", "+" or "0x"


@st.composite
def fingerprint_files(draw):
    bits = draw(st.sampled_from([64, 128]))
    n = draw(st.integers(0, 30))
    ids = draw(st.lists(ID_TEXT, min_size=n, max_size=n))
    words = np.array(
        draw(st.lists(st.integers(0, 2**64 - 1), min_size=n * bits // 64, max_size=n * bits // 64)),
        dtype=np.uint64,
    ).reshape(n, bits // 64)
    body = format_rows(ids, words.reshape(-1) if bits == 64 else words).decode("utf-8", "surrogateescape")
    lines = body.split("\n")[:-1]
    if lines and draw(st.booleans()):  # damage one line
        at = draw(st.integers(0, len(lines) - 1))
        line = lines[at]
        damage = draw(st.sampled_from(["digit", "tab", "short", "long", "empty", "no tab"]))
        if damage == "digit":
            p = draw(st.integers(1, bits // 4))
            line = line[:-p] + draw(st.sampled_from(NOT_HEX)) + line[len(line) - p + 1 :]
        elif damage == "tab":
            line = line[:-3] + "\t" + line[-2:]
        elif damage == "short":
            line = line[:-1]
        elif damage == "long":
            line += "a"
        elif damage == "empty":
            line = ""
        else:
            line = line.replace("\t", " ")
        lines[at] = line
    ending = draw(st.sampled_from(["\n", "\r\n"]))
    text = ending.join(lines) + (ending if lines and draw(st.booleans()) else "")
    config = neardup.FingerprintConfig(bits=bits)
    return bits, format_header(config) + text.encode("utf-8", "surrogateescape")


@settings(max_examples=300, deadline=None)
@given(drawn=fingerprint_files())
def test_the_compiled_reader_equals_the_line_loop(tmp_path_factory, drawn):
    bits, content = drawn
    path = tmp_path_factory.mktemp("fp") / "drawn.fp"
    path.write_bytes(content)
    expected = reference_read(path, bits)
    if isinstance(expected[0], int):
        number, fault = expected
        with pytest.raises(FormatError, match=rf"drawn.fp:{number}: .*{fault}"):
            read_fingerprints(path)
        return
    ids, values = expected
    data = read_fingerprints(path)
    assert data.ids == ids
    got = data.fingerprints.reshape(len(ids), bits // 64)
    assert [sum(int(w) << (64 * c) for c, w in enumerate(row)) for row in got] == values
