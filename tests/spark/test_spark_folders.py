"""Folders of part files written through pyarrow's file systems (``neardup.spark.folders``)."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
import pytest

from neardup import ConfigError
from neardup.io import writers
from neardup.spark.folders import file_system, write_table

TABLE = pa.table({"id": ["a", "b", "c"], "cluster": [0, 0, 2], "kept": [True, False, True]})


@pytest.mark.parametrize("fmt", ["parquet", "csv", "tsv", "jsonl"])
def test_a_table_round_trips_and_replaces_the_folder(tmp_path, fmt):
    folder = tmp_path / f"clusters.{fmt}"
    folder.mkdir()
    (folder / "part-00007.old").write_text("from an earlier run")
    write_table(TABLE, str(folder), fmt)
    (part,) = folder.iterdir()  # the earlier part gone, no temporary file left
    assert part.name == f"part-00000.{fmt}"
    if fmt == "parquet":
        back = pq.read_table(part)
    elif fmt in ("csv", "tsv"):
        back = pa_csv.read_csv(
            part, parse_options=pa_csv.ParseOptions(delimiter="\t" if fmt == "tsv" else ",")
        )
    else:
        back = pa.Table.from_pylist([json.loads(line) for line in part.read_text().splitlines()])
    assert back.to_pylist() == TABLE.to_pylist()
    writers.write_table(TABLE, tmp_path / f"local.{fmt}", fmt)  # the local engine's file
    assert part.read_bytes() == (tmp_path / f"local.{fmt}").read_bytes()


def test_what_pyarrow_does_not_open_is_left_to_spark(tmp_path):
    assert file_system(str(tmp_path / "out")) is not None
    assert file_system(f"{tmp_path}/*.jsonl") is None  # a glob
    assert file_system("s3a://bucket/out") is None  # Hadoop's scheme, not pyarrow's
    with pytest.raises(ConfigError, match="not a path pyarrow's file systems open"):
        write_table(TABLE, "s3a://bucket/out", "parquet")
