"""What the Spark engine refuses itself (``SparkEngine.refuse_local_only``), with the messages
``neardup dedup --engine spark`` shows; no session is started."""

from __future__ import annotations

import pytest

from neardup import ConfigError
from neardup.decision.options import DedupOptions
from neardup.io.batch import ReadOptions
from neardup.io.outputs import Outputs
from neardup.spark.job import SparkEngine, run, run_job


@pytest.mark.parametrize(
    ("paths", "read", "keywords", "option"),
    [
        (["-"], None, {}, "'-' (stdin)"),
        (["a.jsonl"], None, {"memory": 1 << 30}, "--memory"),
        (["a.jsonl"], None, {"work_dir": "work"}, "--work-dir"),
        (["a.jsonl"], ReadOptions(input_format="jsonl"), {}, "--input-format"),
        (["a.jsonl"], ReadOptions(compression="gzip"), {}, "--compression"),
    ],
)
def test_what_only_the_local_engine_does_is_refused(paths, read, keywords, option):
    message = f"{option} does not run on --engine spark yet; run it with the local engine"
    with pytest.raises(ConfigError) as refused:
        SparkEngine().refuse_local_only(paths, read, **keywords)
    assert str(refused.value) == message
    SparkEngine().refuse_local_only(["a.jsonl"], ReadOptions())


def test_the_job_refuses_before_a_session_starts(tmp_path):
    with pytest.raises(ConfigError, match="'-' \\(stdin\\) does not run on --engine spark"):
        run_job(["-"], DedupOptions(), ReadOptions(), Outputs(output=str(tmp_path / "k")), SparkEngine())
    with pytest.raises(ConfigError, match="--pairs on --engine spark names the documents by --id-field"):
        run([str(tmp_path / "a.jsonl")], DedupOptions(), pairs=str(tmp_path / "p.parquet"))
    assert not list(tmp_path.iterdir())


def test_run_s_reading_keywords_take_the_place_of_read_s_own():
    from neardup.spark.job import _merged

    read = ReadOptions(id_field="id", errors="skip", lines=True)
    assert _merged(read, errors="raise", max_skipped=None, lines=False) == read
    assert _merged(ReadOptions(), errors="skip", max_skipped=0.1, lines=True) == ReadOptions(
        errors="skip", max_skipped=0.1, lines=True
    )
