"""``neardup logs``: its outputs, state kept between runs (and through a SIGKILL), bad lines
named by file and line, and the refusals it shares with the other commands."""

from __future__ import annotations

import gzip
import io
import json
import os
import signal
import subprocess
import sys
import time

import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
import pytest
from cli_helpers import run_python

SSH = [
    "Accepted password for alice from 10.0.0.1 port 22 ssh2",
    "Connection closed by 10.0.0.9 [preauth]",
    "Accepted password for bob from 10.0.0.2 port 2202 ssh2",
    "Connection closed by 192.168.1.1 [preauth]",
    "Received disconnect from 10.0.0.3: 11: Bye Bye",
]


def _templates(text: str) -> list[tuple[int, str, int, str]]:
    """The rows of the templates' TSV ``text``."""
    table = pa_csv.read_csv(io.BytesIO(text.encode()), parse_options=pa_csv.ParseOptions(delimiter="\t"))
    assert table.column_names == ["template_id", "template", "count", "first_line"]
    return list(zip(*(table.column(name).to_pylist() for name in table.column_names)))


def test_prints_the_templates_and_writes_each_lines(tmp_path, run):
    (tmp_path / "auth.log").write_text("\n".join(SSH) + "\n")
    ran = run("logs", "auth.log", "-o", "lines.csv", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert _templates(ran.stdout) == [
        (0, "Accepted password for alice from <*> port <*> ssh2", 1, SSH[0]),
        (1, "Connection closed by <*> [preauth]", 2, SSH[1]),
        (2, "Accepted password for bob from <*> port <*> ssh2", 1, SSH[2]),
        (3, "Received disconnect from <*> Bye Bye", 1, SSH[4]),
    ]  # two user names are two templates: it takes --min-values (5) to make one a variable
    lines = pa_csv.read_csv(tmp_path / "lines.csv")
    assert lines.column_names == ["line", "template_id"]
    assert lines.column("line").to_pylist() == [f"auth.log:{n}" for n in range(1, 6)]
    assert lines.column("template_id").to_pylist() == [0, 1, 2, 1, 3]
    assert "neardup: 5 lines into 4 templates in " in ran.stderr


def test_ids_given_before_a_merge_are_written_as_the_merged_template(tmp_path, run):
    users = ["alice", "bob", "carol", "dave", "erin", "frank"]
    (tmp_path / "auth.log").write_text(
        "".join(f"Invalid user {u} from 10.0.0.{i}\n" for i, u in enumerate(users))
    )
    ran = run("logs", "auth.log", "-o", "lines.parquet", "--templates", "templates.jsonl", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert pq.read_table(tmp_path / "lines.parquet").column("template_id").to_pylist() == [0] * 6
    rows = [json.loads(row) for row in (tmp_path / "templates.jsonl").read_text().splitlines()]
    assert rows == [
        {
            "template_id": 0,
            "template": "Invalid user <*> from <*>",
            "count": 6,
            "first_line": "Invalid user alice from 10.0.0.0",
        }
    ]
    assert ran.stdout == ""


def test_state_goes_on_from_the_last_run_as_one_run_would(tmp_path, run):
    first, second = SSH[:3], [*SSH[3:], "Server listening on 0.0.0.0 port 22.", SSH[0]]
    (tmp_path / "a.log").write_text("\n".join(first) + "\n")
    (tmp_path / "b.log").write_text("\n".join(second) + "\n")
    (tmp_path / "ab.log").write_text("\n".join(first + second) + "\n")
    assert run("logs", "a.log", "--state", "state", cwd=tmp_path).returncode == 0
    later = run("logs", "b.log", "--state", "state", "-o", "b.csv", cwd=tmp_path)
    whole = run("logs", "ab.log", cwd=tmp_path)
    assert later.returncode == whole.returncode == 0, later.stderr
    assert _templates(later.stdout) == _templates(whole.stdout)  # ids, counts and first lines
    assert pa_csv.read_csv(tmp_path / "b.csv").column("template_id").to_pylist() == [1, 3, 4, 0]
    assert "4 lines into 5 templates (2 new) in " in later.stderr


def test_a_state_of_other_settings_is_refused(tmp_path, run):
    (tmp_path / "a.log").write_text("\n".join(SSH) + "\n")
    assert run("logs", "a.log", "--state", "state", cwd=tmp_path).returncode == 0
    saved = (tmp_path / "state" / "templates.json").read_bytes()
    other = run("logs", "a.log", "--state", "state", "--min-values", "3", cwd=tmp_path)
    assert other.returncode == 1
    assert "min_values: 5 there, 3 here" in other.stderr and "give the same --mask" in other.stderr
    assert (tmp_path / "state" / "templates.json").read_bytes() == saved
    (tmp_path / "file").write_text("x")
    not_a_folder = run("logs", "a.log", "--state", "file", cwd=tmp_path)
    assert not_a_folder.returncode == 1 and "--state file: not a folder" in not_a_folder.stderr


def test_a_mask_of_the_users_own_groups_what_it_matches(tmp_path, run):
    lines = [f"job {name} finished" for name in ["alpha", "beta"]]
    (tmp_path / "jobs.log").write_text("\n".join(lines) + "\n")
    plain = run("logs", "jobs.log", cwd=tmp_path)
    masked = run("logs", "jobs.log", "--mask", r"(?<=job )\w+", cwd=tmp_path)
    assert [t[1] for t in _templates(plain.stdout)] == lines
    assert [t[1:3] for t in _templates(masked.stdout)] == [("job <*> finished", 2)]
    bad = run("logs", "jobs.log", "--mask", "(", cwd=tmp_path)
    assert bad.returncode == 1 and "--mask: mask 'mask 1': '(' is not a regular expression" in bad.stderr


def test_reads_stdin_and_compressed_files_as_every_command_does(tmp_path, run):
    (tmp_path / "auth.log.gz").write_bytes(gzip.compress(("\n".join(SSH) + "\n").encode()))
    from_file = run("logs", "auth.log.gz", cwd=tmp_path)
    from_stdin = run("logs", "-", "-o", "lines.tsv", cwd=tmp_path, stdin=("\n".join(SSH) + "\n").encode())
    assert from_file.returncode == from_stdin.returncode == 0, from_stdin.stderr
    assert from_file.stdout == from_stdin.stdout
    names = pa_csv.read_csv(tmp_path / "lines.tsv", parse_options=pa_csv.ParseOptions(delimiter="\t"))
    assert names.column("line").to_pylist()[:2] == ["<stdin>:1", "<stdin>:2"]


def test_bad_lines_are_named_and_handled_as_on_error_says(tmp_path, run):
    long_line = "x" * (2 * 1024 * 1024)
    (tmp_path / "app.log").write_bytes(
        b"started worker 1\nnot UTF-8 \xff here\n" + long_line.encode() + b"\nstarted worker 2\n"
    )
    strict = run("logs", "app.log", "--max-document-mb", "1", cwd=tmp_path)
    assert strict.returncode == 1 and strict.stderr.startswith("FormatError: app.log:2: not valid UTF-8")
    skip = run("logs", "app.log", "--max-document-mb", "1", "--on-error", "skip", "-o", "l.csv", cwd=tmp_path)
    assert skip.returncode == 0, skip.stderr
    assert "skipped 2" in skip.stderr and "app.log:2" in skip.stderr
    assert _templates(skip.stdout) == [(0, "started worker <*>", 2, "started worker 1")]
    assert pa_csv.read_csv(tmp_path / "l.csv").column("line").to_pylist() == ["app.log:1", "app.log:4"]
    (tmp_path / "core.bin").write_bytes(bytes(range(256)) * 64)
    binary = run("logs", "core.bin", cwd=tmp_path)
    assert binary.returncode == 1 and "core.bin" in binary.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("-o", "same.csv", "--templates", "same.csv"), "same.csv"),
        (("-o", "auth.log"), "auth.log"),
        (("-o", "-"), "-o needs a file"),
        (("--templates", "t.unknown"), "t.unknown"),
        (("--min-values", "1"), "--min-values"),
    ],
)
def test_refuses_outputs_it_cannot_write_right(tmp_path, run, args, message):
    (tmp_path / "auth.log").write_text("\n".join(SSH) + "\n")
    ran = run("logs", "auth.log", *args, cwd=tmp_path)
    assert ran.returncode in (1, 2) and message in ran.stderr
    assert (tmp_path / "auth.log").read_text() == "\n".join(SSH) + "\n"
    assert not (tmp_path / "same.csv").exists()


def test_a_run_killed_midway_leaves_the_state_before_it(tmp_path):
    """SIGKILL while lines still come in (stdin left open): the state is the last run's, byte
    for byte, and running the killed run's input again gives what one uninterrupted run gives."""
    lines = [f"request {i} served in {i % 97} ms by worker{i % 7}a for user{i % 13}x" for i in range(50_000)]
    text = ("\n".join(lines) + "\n").encode()
    (tmp_path / "a.log").write_text("\n".join(SSH) + "\n")
    neardup = [sys.executable, "-m", "neardup", "logs"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    subprocess.run([*neardup, "a.log", "--state", "s", "-q"], cwd=tmp_path, env=env, check=True)
    saved = (tmp_path / "s" / "templates.json").read_bytes()
    process = subprocess.Popen(
        [*neardup, "-", "--state", "s", "-o", "l.csv"], cwd=tmp_path, env=env, stdin=subprocess.PIPE
    )
    assert process.stdin is not None
    process.stdin.write(text)
    process.stdin.flush()  # and left open: the run is still reading when it is killed
    time.sleep(1.0)
    assert process.poll() is None
    process.send_signal(signal.SIGKILL)
    process.wait()
    process.stdin.close()
    assert (tmp_path / "s" / "templates.json").read_bytes() == saved
    assert not (tmp_path / "l.csv").exists()
    resumed = subprocess.run(
        [*neardup, "-", "--state", "s", "-q"], cwd=tmp_path, env=env, input=text, capture_output=True
    )
    (tmp_path / "ab.log").write_text("\n".join(SSH + lines) + "\n")
    whole = subprocess.run([*neardup, "ab.log", "-q"], cwd=tmp_path, env=env, capture_output=True)
    assert resumed.returncode == whole.returncode == 0, resumed.stderr
    assert resumed.stdout == whole.stdout


def test_lines_are_named_by_file_and_line_or_by_the_id_field(tmp_path, run):
    (tmp_path / "a.log").write_text("\n".join(SSH[:2]) + "\n")
    (tmp_path / "b.log").write_text("\n".join(SSH[2:]) + "\n")
    records = [{"event": f"e{i}", "message": line} for i, line in enumerate(SSH)]
    (tmp_path / "events.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    files = run("logs", "a.log", "b.log", "-o", "files.csv", cwd=tmp_path)
    events = run(
        "logs", "events.jsonl", "--text-field", "message", "--id-field", "event", "-o", "events.csv",
        cwd=tmp_path,
    )  # fmt: skip
    assert files.returncode == events.returncode == 0, events.stderr
    assert files.stdout == events.stdout
    named = pa_csv.read_csv(tmp_path / "files.csv").column("line").to_pylist()
    assert named == ["a.log:1", "a.log:2", "b.log:1", "b.log:2", "b.log:3"]
    by_id = pa_csv.read_csv(tmp_path / "events.csv")
    assert by_id.column("line").to_pylist() == [f"e{i}" for i in range(5)]
    assert by_id.column("template_id").to_pylist() == [0, 1, 2, 1, 3]


def test_a_text_log_is_read_without_pyarrow_compute_or_parquet(tmp_path):
    # Each costs 20-50 ms of every start, and `neardup logs` is often run on a small file.
    (tmp_path / "auth.log").write_text("\n".join(SSH) + "\n")
    code = (
        "import sys\n"
        "from neardup import cli\n"
        "code = cli.main(['logs', 'auth.log', '-q', '-o', 'lines.csv', '--templates', 't.csv'])\n"
        "print(code, sorted({'pyarrow.compute', 'pyarrow.parquet'} & set(sys.modules)))\n"
    )
    assert run_python(code, tmp_path).split() == ["0", "[]"]
    assert (tmp_path / "lines.csv").read_text().count("auth.log:") == len(SSH)
