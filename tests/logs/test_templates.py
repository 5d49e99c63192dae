"""LogTemplates: the rules of merging, ids that stay, state that resumes, and the fast
version equal to the naive reference (tests/naive_logs.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from naive_logs import NaiveLogTemplates

from neardup import LogTemplates
from neardup.logs import templates
from neardup.logs.masking import DEFAULT_MASKS
from neardup.logs.templates import _WINDOW, _KeyCache

USERS = [f"user{c}" for c in "abcdefgh"] + ["root", "admin", "oracle", "guest"]


def test_lines_alike_but_for_numbers_share_a_template():
    mined = LogTemplates()
    assert mined.add("Connection from 10.0.0.1 port 22") == (0, True)
    assert mined.add("Connection from 10.0.0.7 port 2201") == (0, False)
    assert mined.add("Connection closed by 10.0.0.7") == (1, True)
    assert [t.text for t in mined.templates()] == ["Connection from <*> port <*>", "Connection closed by <*>"]
    assert [t.count for t in mined.templates()] == [2, 1]


def test_a_word_differing_between_min_values_templates_becomes_a_variable():
    mined = LogTemplates(min_values=5)
    names = ["alice", "bob", "carol", "dave", "erin"]
    ids = [mined.add(f"Invalid user {name} from 10.1.2.3")[0] for name in names]
    assert ids == [0, 1, 2, 3, 0]  # each new until the fifth makes them one: the oldest id
    assert mined.resolve(ids).tolist() == [0] * 5  # ids given out stay valid, as aliases
    assert mined.template(3).text == "Invalid user <*> from <*>"
    assert mined.template(3).count == 5 and mined.template(3).first == "Invalid user alice from 10.1.2.3"
    assert mined.add("Invalid user mallory from 10.9.9.9") == (0, False)  # fits the merged one
    assert len(mined) == 1


def test_a_few_constant_words_apart_stay_apart():
    mined = LogTemplates()
    for kind in ["bytes", "values"]:
        for n in range(20):
            mined.add(f"Block {n} stored as {kind} in memory")
    assert sorted(t.text for t in mined.templates()) == [
        "Block <*> stored as bytes in memory",
        "Block <*> stored as values in memory",
    ]


def test_lines_of_few_constants_are_not_merged_by_chance():
    mined = LogTemplates(min_values=5, min_constants=3)
    for word in ["normal", "warning", "running", "critical", "blocked", "active"]:
        mined.add(word)  # six one-word templates: no constant left to anchor a variable
    assert len(mined) == 6


def test_a_template_with_a_variable_absorbs_the_words_that_fit_it():
    mined = LogTemplates()
    failure = "authentication failure; logname= uid=0 euid=0 tty=ssh ruser= rhost="
    mined.add(failure + "10.0.0.1")
    assert mined.add(failure + "shell.example") == (0, False)
    assert (
        mined.template(0).text == "authentication failure; logname= uid=<*> euid=<*> tty=ssh ruser= rhost=<*>"
    )


def test_state_saved_and_loaded_goes_on_as_one_run(tmp_path):
    lines = _lines(np.random.default_rng(1), 3000)
    whole = LogTemplates()
    ids = whole.add_lines(lines)
    for cut in (1, 777, 2222):
        first = LogTemplates()
        early = first.add_lines(lines[:cut])
        first.save(tmp_path / "state.json")
        later = LogTemplates.load(tmp_path / "state.json")
        rest = later.add_lines(lines[cut:])
        assert later.resolve(np.concatenate([early, rest])).tolist() == whole.resolve(ids).tolist()
        assert [(t.id, t.text, t.count, t.first) for t in later.templates()] == [
            (t.id, t.text, t.count, t.first) for t in whole.templates()
        ]


def test_a_state_file_of_something_else_is_refused_by_name(tmp_path):
    path = tmp_path / "state.json"
    path.write_text(json.dumps({"format": "other"}))
    with pytest.raises(ValueError, match=r"state\.json: cannot read log templates: not a file of log"):
        LogTemplates.load(path)
    path.write_text("{")
    with pytest.raises(ValueError, match=r"state\.json: cannot read log templates"):
        LogTemplates.load(path)


def test_settings_are_checked():
    with pytest.raises(ValueError, match="min_values=1"):
        LogTemplates(min_values=1)
    with pytest.raises(ValueError, match="mask 'bad'"):
        LogTemplates(masks=[("bad", "(")])
    assert LogTemplates(masks=DEFAULT_MASKS).settings()["min_values"] == 5


PATTERNS = [
    "Accepted password for {user} from {ip} port {n}",
    "Failed password for {user} from {ip} port {n}",
    "session opened for user {user} by (uid={n})",
    "Received block blk_{n} of size {n} from /{ip}",
    "Block {n} stored as {kind} in memory",
    "rhost={host} user={user}",
    "{user} logged in",
    "job {n} done",
]


def _line(draw_user: str, kind: str, host: str, n: int, pattern: str) -> str:
    return pattern.format(user=draw_user, ip=f"10.0.{n % 7}.{n % 250}", n=n, kind=kind, host=host)


def _lines(rng: np.random.Generator, count: int) -> list[str]:
    return [
        _line(
            USERS[rng.integers(len(USERS))],
            ["bytes", "values"][rng.integers(2)],
            ["a.example.com", "10.0.0.5", "b.example.org", "localhost"][rng.integers(4)],
            int(rng.integers(1000)),
            PATTERNS[rng.integers(len(PATTERNS))],
        )
        for _ in range(count)
    ]


line_lists = st.lists(
    st.builds(
        _line,
        st.sampled_from(USERS),
        st.sampled_from(["bytes", "values"]),
        st.sampled_from(["a.example.com", "10.0.0.5", "b.example.org", "localhost", "x"]),
        st.integers(0, 999),
        st.sampled_from(PATTERNS),
    ),
    max_size=120,
)


@settings(deadline=None)
@given(line_lists, st.integers(2, 6), st.integers(0, 4))
def test_the_fast_templates_equal_the_naive_reference(lines, min_values, min_constants):
    fast = LogTemplates(min_values=min_values, min_constants=min_constants)
    naive = NaiveLogTemplates(min_values=min_values, min_constants=min_constants)
    ids = fast.add_lines(lines)
    for line in lines:
        naive.add(line)
    assert ids.tolist() == naive.lines  # as first given
    assert fast.resolve(ids).tolist() == naive.resolved()
    assert {t.id: t.text for t in fast.templates()} == naive.texts()


@settings(deadline=None)
@given(line_lists, st.integers(0, 120))
def test_one_line_at_a_time_equals_a_batch(lines, cut):
    one = LogTemplates()
    singly = [one.add(line)[0] for line in lines]
    batch = LogTemplates()
    ids = [*batch.add_lines(lines[:cut]).tolist(), *batch.add_lines(lines[cut:]).tolist()]
    assert singly == ids
    assert one.resolve(singly).tolist() == batch.resolve(ids).tolist()


@pytest.mark.parametrize("seed", [0, 1])
def test_the_fast_templates_equal_the_naive_reference_on_a_long_log(seed):
    lines = _lines(np.random.default_rng(seed), 1500)
    fast = LogTemplates(min_values=3, min_constants=1)
    naive = NaiveLogTemplates(min_values=3, min_constants=1)
    ids = fast.add_lines(lines)
    for line in lines:
        naive.add(line)
    assert len(naive.live()) < len(naive.words)  # templates were merged
    assert fast.resolve(ids).tolist() == naive.resolved()
    assert {t.id: t.text for t in fast.templates()} == naive.texts()


def test_a_batch_over_many_windows_equals_lines_one_at_a_time():
    lines = _lines(np.random.default_rng(2), 3 * _WINDOW)  # three windows of lookups
    one = LogTemplates(min_values=3, min_constants=1)
    singly = [one.add(line)[0] for line in lines]
    batch = LogTemplates(min_values=3, min_constants=1)
    assert batch.add_lines(lines).tolist() == singly
    assert batch.resolve(singly).tolist() == one.resolve(singly).tolist()


def test_lines_made_arrow_in_blocks_equal_lines_one_at_a_time(monkeypatch):
    monkeypatch.setattr(templates, "_BLOCK", 1000)  # 5 blocks, each made in a thread
    lines = _lines(np.random.default_rng(3), 4500)
    one = LogTemplates(min_values=3, min_constants=1)
    singly = [one.add(line)[0] for line in lines]
    batch = LogTemplates(min_values=3, min_constants=1)
    assert batch.add_lines(lines).tolist() == singly
    assert batch.resolve(singly).tolist() == one.resolve(singly).tolist()
    assert [(t.id, t.text, t.count) for t in batch.templates()] == [
        (t.id, t.text, t.count) for t in one.templates()
    ]


@settings(deadline=None)
@given(st.lists(st.one_of(st.tuples(st.integers(0, 40), st.integers(0, 9)), st.none()), max_size=200))
def test_the_key_cache_answers_as_a_dict(operations):
    """Puts (hash, template) and clears (None), each followed by a lookup of every hash: what
    the sorted copy answers and what get adds to it is exactly the dict's."""
    cache, expected = _KeyCache(), {}
    every = np.arange(41, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)  # spread out
    for operation in operations:
        if operation is None:
            cache.clear()
            expected.clear()
        else:
            hashed, template = int(every[operation[0]]), operation[1]
            if hashed not in expected:  # as LogTemplates puts: a key once, till a clear
                cache.put(hashed, template)
                expected[hashed] = template
        answers = cache.lookup(every)
        for hashed, answer in zip(every.tolist(), answers.tolist(), strict=True):
            assert answer == -1 or answer == expected[hashed]
            assert (answer if answer >= 0 else cache.get(hashed)) == expected.get(hashed)
