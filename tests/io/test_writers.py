"""``io.writers.write_table``: one writer of a whole table (clusters, pairs) in each format, to
a file or into an open stream (the Spark engine's part files), the same bytes either way."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
import pytest

from neardup import ConfigError
from neardup.io.writers import TABLE_FORMATS, write_table

TABLE = pa.table({"id": ["a", "b,c", 'é"d'], "cluster": [0, 0, 2], "distance": [0, 3, 0]})


def _read(path, fmt: str) -> list[dict]:
    if fmt == "parquet":
        return pq.read_table(path).to_pylist()
    if fmt in ("csv", "tsv"):
        options = pa_csv.ParseOptions(delimiter="\t" if fmt == "tsv" else ",")
        return pa_csv.read_csv(path, parse_options=options).to_pylist()
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("fmt", TABLE_FORMATS)
def test_a_table_round_trips_and_a_stream_gets_the_file_s_bytes(tmp_path, fmt):
    write_table(TABLE, tmp_path / f"t.{fmt}", fmt)
    assert _read(tmp_path / f"t.{fmt}", fmt) == TABLE.to_pylist()
    sink = pa.BufferOutputStream()
    write_table(TABLE, sink, fmt)
    assert not sink.closed  # its opener closes it
    assert sink.getvalue().to_pybytes() == (tmp_path / f"t.{fmt}").read_bytes()


def test_an_unknown_format_is_refused_with_the_known_ones(tmp_path):
    with pytest.raises(ConfigError, match="a table is written as parquet, csv, tsv, jsonl, not xml"):
        write_table(TABLE, tmp_path / "t.xml", "xml")
    assert list(tmp_path.iterdir()) == []
