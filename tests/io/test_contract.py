"""The contract every engine takes: one ``ReadOptions`` (every reading setting, checked once)
and one ``Outputs`` (where a dedup writes, checked once)."""

from __future__ import annotations

from pathlib import Path

import pytest

import neardup
from neardup import ConfigError
from neardup.decision.options import DedupOptions
from neardup.io.batch import MiB, ReadOptions
from neardup.io.outputs import Outputs
from neardup.pipeline.job import LocalEngine, run_job


def test_the_public_keywords_make_one_value():
    read = ReadOptions.from_keywords(
        text_field="body",
        id_field="url",
        errors="skip",
        max_skipped=0.1,
        input_format="jsonl",
        compression="gzip",
        lines=True,
        max_document_mb=2,
        block_mb=0.5,
    )
    assert read == ReadOptions(
        text_field="body",
        id_field="url",
        max_document_bytes=2 * MiB,
        block_bytes=MiB // 2,
        errors="skip",
        max_skipped=0.1,
        input_format="jsonl",
        compression="gzip",
        lines=True,
    )
    assert ReadOptions.from_keywords() == ReadOptions()


@pytest.mark.parametrize(
    ("keywords", "error", "message"),
    [
        ({"errors": "ignore"}, ValueError, "errors='ignore' is not allowed; choose 'raise' or 'skip'"),
        ({"input_format": "xml"}, ConfigError, "input format 'xml' is not known; choose one of"),
        ({"compression": "lz4"}, ConfigError, "compression 'lz4' is not known; choose one of"),
        ({"max_skipped": 1.5}, ConfigError, r"max_skipped=1.5 is not a fraction in \[0, 1\]"),
    ],
)
def test_a_setting_no_reader_takes_is_refused_where_it_is_made(keywords, error, message):
    with pytest.raises(error, match=message):
        ReadOptions(**keywords)
    with pytest.raises(error, match=message):
        neardup.dedup(["a text"], **keywords)


def test_outputs_are_checked_against_the_inputs(tmp_path):
    corpus = tmp_path / "pages.jsonl"
    corpus.write_text('{"text": "a"}\n')
    with pytest.raises(ConfigError, match=r"-o .*is the input"):
        Outputs(output=corpus).check([str(corpus)])
    with pytest.raises(ConfigError, match="--clusters"):
        Outputs(output=tmp_path / "k.jsonl", clusters=tmp_path / "k.jsonl").check([str(corpus)])
    Outputs(output=tmp_path / "kept.jsonl").check([str(corpus)])


def test_the_local_job_reads_decides_and_writes_one_contract(tmp_path):
    corpus = tmp_path / "pages.jsonl"
    texts = ["the same words in a row here", "the same words in a row here", "quite another text"]
    corpus.write_text("".join(f'{{"body": "{t}", "n": {i}}}\n' for i, t in enumerate(texts)) + "not json\n")
    read = ReadOptions(text_field="body", errors="skip", max_skipped=0.5)
    outputs = Outputs(output=tmp_path / "kept.jsonl", clusters=tmp_path / "clusters.csv")
    result = run_job([Path(corpus)], DedupOptions(), read, LocalEngine(n_jobs=1), outputs)
    assert result.stats.skipped == 1 and result.stats.duplicates == 1
    assert (tmp_path / "kept.jsonl").read_text().count("\n") == 2
    assert (tmp_path / "clusters.csv").exists()
    keywords = neardup.dedup(Path(corpus), text_field="body", errors="skip", max_skipped=0.5, n_jobs=1)
    assert keywords.kept.tolist() == result.kept.tolist()
