"""Arrays built from buffers equal pyarrow's own conversion, and import no pandas."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from neardup.io.arrays import int64_array, prefixed, string_array

INT64 = st.integers(-(2**63), 2**63 - 1)


@given(st.lists(INT64))
def test_int64_array_equals_pyarrows(values):
    assert int64_array(np.array(values, dtype=np.int64)).equals(pa.array(values, pa.int64()))


@given(st.lists(st.text()))
def test_string_array_equals_pyarrows(texts):
    assert string_array(texts).equals(pa.array(texts, pa.large_string()))


@given(st.text(), st.lists(INT64), st.integers(0, 3))
def test_prefixed_names_each_number(prefix, numbers, skip):
    values = np.array(numbers, dtype=np.int64)[skip:]  # a view that starts past its buffer's start
    assert prefixed(prefix, values).to_pylist() == [f"{prefix}{n}" for n in numbers[skip:]]


def test_none_imports_pandas():
    code = (
        "import sys, numpy as np; from neardup.io.arrays import int64_array, prefixed, string_array; "
        "int64_array(np.arange(3)); string_array(['a']); prefixed('f:', np.arange(3)); "
        "print('pandas' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
