"""Code features' defaults (MinHash bands of code shingles, each pair's Jaccard checked) and the
check itself: the features it reads are the fingerprint's, held equal to the spec's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from code_lines import PYTHON_LINES
from naive import naive_code_features
from neardup import ConfigError, DedupOptions, FingerprintConfig, HammingIndex
from neardup.decision.options import CODE_JACCARD, CODE_RADIUS, CODE_VERIFY
from neardup.decision.verify import DocumentFeatures, FeatureTable

pytest.importorskip("pygments", reason="code features need the code extra (pygments)")


def test_code_features_bring_jaccard_bands_on_their_own_shingles():
    for bits in (64, 128):
        config = FingerprintConfig(features="code", bits=bits)
        options = DedupOptions(config=config)
        assert options.banding is not None and options.check is not None
        assert (options.check.metric, options.check.threshold) == ("jaccard", CODE_JACCARD)
        assert options.check.features == config
        assert "--jaccard 0.7 on code 4-token shingles" in options.plan


def test_what_is_given_replaces_the_code_default_it_names():
    code = FingerprintConfig(features="code")
    narrow = DedupOptions(config=code, max_distance=3)  # a radius: each pair checked
    assert narrow.radius == 3 and narrow.banding is None
    assert narrow.check is not None and (narrow.check.metric, narrow.check.threshold) == CODE_VERIFY
    cosine = DedupOptions(config=code, verify=("cosine", 0.9))  # a check: code's wide radius
    assert cosine.radius == CODE_RADIUS and cosine.banding is None
    assert cosine.check is not None and cosine.check.metric == "cosine"
    banded = DedupOptions(config=code, jaccard=0.8)  # candidates by MinHash, on code shingles
    assert banded.banding is not None and banded.check is not None and banded.check.threshold == 0.8
    assert banded.check.features == code and "code 4-token shingles" in banded.plan
    prose_bands = DedupOptions(config=code, verify_features="word-shingles")  # the default, on these
    assert prose_bands.banding is not None and prose_bands.check is not None
    assert prose_bands.check.features.features == "word-shingles"
    prose = DedupOptions(config=code, verify=("jaccard", 0.5), verify_features="words")
    assert prose.radius == CODE_RADIUS and prose.check is not None
    assert prose.check.features.features == "words"
    seen = HammingIndex(bits=64, max_distance=3)
    against = DedupOptions(config=code, against=seen)  # its matches go unchecked: a narrow radius
    assert against.radius == 3 and against.banding is None and against.check is not None
    with pytest.raises(ConfigError, match="verify_features='code'"):
        DedupOptions(config=code, verify=("jaccard", 0.5), verify_features="code")


def test_a_bounded_join_turns_code_bands_into_its_radius():
    """``memory=`` joins by radius alone: code's default bands become code's radius, each pair
    checked by the same threshold on the same features; a jaccard asked for is refused."""
    for verify_features in (None, "words"):
        options = DedupOptions(config=FingerprintConfig(features="code"), verify_features=verify_features)
        bounded = options.bounded()
        assert bounded.banding is None and bounded.radius == CODE_RADIUS
        assert bounded.check is not None and options.check is not None
        assert (bounded.check.metric, bounded.check.threshold) == ("jaccard", CODE_JACCARD)
        assert bounded.check.features == options.check.features
    radius = DedupOptions(config=FingerprintConfig(features="code"), max_distance=5)
    assert radius.bounded() is radius
    with pytest.raises(ConfigError, match="memory= bounds the Hamming join"):
        DedupOptions(config=FingerprintConfig(features="code"), jaccard=0.8).bounded()


def test_prose_defaults_are_as_they_were():
    options = DedupOptions()
    assert options.radius == 3 and options.check is None


def _jaccard(a: set, b: set) -> float:
    return 1.0 if not a and not b else len(a & b) / len(a | b)


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(PYTHON_LINES), max_size=8), min_size=2, max_size=6),
    st.integers(1, 6),
)
def test_checked_code_features_are_the_specs(documents, shingle_size):
    """The features a check reads (each document lexed by its file name) are the spec's
    (``naive_code_features``), and their Jaccard index the sets'."""
    texts = ["\n".join(lines) + "\n" for lines in documents]
    names = [f"pkg/m{i}.py" for i in range(len(texts))]
    config = FingerprintConfig(features="code", shingle_size=shingle_size)
    table = FeatureTable.of(texts, config, names)
    expected = [set(naive_code_features(t, "python", shingle_size=shingle_size)) for t in texts]
    for d, want in enumerate(expected):
        got = table.hashes[table.doc_offsets[d] : table.doc_offsets[d + 1]]
        assert got.tolist() == sorted(want)
    features = DocumentFeatures(np.arange(len(texts)), table, config)
    first = np.zeros(len(texts) - 1, dtype=np.int64)
    second = np.arange(1, len(texts), dtype=np.int64)
    found = features.similarity(first, second, "jaccard")
    assert found.tolist() == pytest.approx([_jaccard(expected[0], expected[d]) for d in second.tolist()])


@pytest.fixture
def clone_files(tmp_path):
    """Files of code, each with a copy whose names are changed: pairs a check must pass."""
    folder = tmp_path / "src"
    folder.mkdir()
    for i in range(12):
        body = "\n".join(PYTHON_LINES[(i + j) % len(PYTHON_LINES)] for j in range(6)) + f"\nresult = {i}\n"
        (folder / f"m{i}.py").write_text(body)
        (folder / f"m{i}_copy.py").write_text(body.replace("x", "renamed") + "# copied\n")
    return folder


def _lexed_count(monkeypatch) -> list[int]:
    import neardup.fingerprint.code as code

    count = [0]
    lex = code.code_tokens

    def counting(*args, **kwargs):
        count[0] += 1
        return lex(*args, **kwargs)

    monkeypatch.setattr(code, "code_tokens", counting)
    return count


def test_dedup_checks_code_with_the_features_it_fingerprinted(clone_files, monkeypatch):
    """A radius's check of code by its own features reads the features the read pass kept:
    each file is lexed once. Where they do not fit, the texts are read again, to the same
    result; and a join in bounded memory, where code's default is this radius, gives it too."""
    from neardup import dedup

    lexed = _lexed_count(monkeypatch)
    held = dedup(clone_files, features="code", max_distance=8, n_jobs=1)
    files = len(list(clone_files.iterdir()))
    assert lexed[0] == files
    assert held.stats.duplicates >= 12 and held.stats.checked_pairs

    monkeypatch.setattr("neardup.decision.verify.available_memory", lambda: 0)  # nothing fits
    lexed[0] = 0
    read_again = dedup(clone_files, features="code", max_distance=8, n_jobs=1)
    assert lexed[0] > files
    np.testing.assert_array_equal(read_again.labels, held.labels)
    np.testing.assert_array_equal(read_again.kept, held.kept)
    assert read_again.stats.checked_pairs == held.stats.checked_pairs
    bounded = dedup(clone_files, features="code", memory=64 << 20, n_jobs=1)
    np.testing.assert_array_equal(bounded.labels, held.labels)
    assert bounded.stats.checked_pairs == held.stats.checked_pairs


def test_jaccard_on_code_joins_copies_by_their_code_shingles(clone_files, monkeypatch):
    """Code's default, ``jaccard=0.7``, bands the code shingles the fingerprint reads: each
    file lexed once, every copy kept with its original, every pair in a cluster at least 0.7
    alike by the spec's features, and the same answer where the features do not fit and are
    read again."""
    from neardup import dedup

    lexed = _lexed_count(monkeypatch)
    held = dedup(clone_files, features="code", n_jobs=1)
    assert held.stats.plan.startswith("--jaccard 0.7 on code 4-token shingles")
    files = sorted(clone_files.iterdir())
    assert lexed[0] == len(files)
    ids = [Path(i).name for i in held.ids]
    label_of = dict(zip(ids, np.asarray(held.labels).tolist()))
    for i in range(12):
        assert label_of[f"m{i}.py"] == label_of[f"m{i}_copy.py"]
    features = {f.name: set(naive_code_features(f.read_text(), "python", shingle_size=4)) for f in files}
    kept_of = dict(zip(ids, [ids[k] for k in np.asarray(held.representatives).tolist()]))
    for name, kept in kept_of.items():
        assert _jaccard(features[name], features[kept]) >= 0.7

    monkeypatch.setattr("neardup.decision.lsh.available_memory", lambda: 0)  # nothing fits
    lexed[0] = 0
    read_again = dedup(clone_files, features="code", jaccard=0.7, n_jobs=1)
    assert lexed[0] > len(files)
    np.testing.assert_array_equal(read_again.labels, held.labels)
    np.testing.assert_array_equal(read_again.kept, held.kept)


@settings(max_examples=20, deadline=None)
@given(st.lists(st.lists(st.sampled_from(PYTHON_LINES), max_size=8), min_size=1, max_size=6))
def test_band_keys_of_code_are_those_of_its_features(documents):
    """Code's band keys are the MinHash keys of the spec's code shingles: documents with the
    same shingles share every key, whatever their text."""
    from neardup._kernels.minhash import band_keys
    from neardup.decision.lsh import Banding

    texts = ["\n".join(lines) + "\n" for lines in documents]
    config = FingerprintConfig(features="code", language="python")
    table = FeatureTable.of(texts, config, None)
    banding = Banding(bands=4, rows=3)
    keys = banding.keys_of_features(table)
    for d, text in enumerate(texts):
        hashes = np.array(sorted(set(naive_code_features(text, "python", shingle_size=4))), dtype=np.uint64)
        alone = band_keys(np.array([0, len(hashes)], dtype=np.int64), hashes, np.uint64(0), 4, 3)
        np.testing.assert_array_equal(keys[d], alone[0])


@settings(max_examples=20, deadline=None)
@given(st.lists(st.lists(st.sampled_from(PYTHON_LINES), max_size=8), min_size=1, max_size=5))
def test_the_service_sketches_code_as_the_dedup_job_keys_it(documents):
    """The service's sketches of code: the spec's distinct code shingles, their MinHash band
    keys as the dedup job makes them, and the fingerprints, from one lexing."""
    from neardup import Fingerprinter
    from neardup.service.sketches import Sketcher

    texts = ["\n".join(lines) + "\n" for lines in documents]
    fingerprinter = Fingerprinter(features="code", language="python")
    sketcher = Sketcher(0.7, fingerprinter)
    sketches = sketcher.sketch(texts)
    table = FeatureTable.of(texts, fingerprinter.config, None)
    np.testing.assert_array_equal(sketches.bands, sketcher.banding.keys_of_features(table))
    np.testing.assert_array_equal(sketches.fingerprints.reshape(-1), fingerprinter.fingerprint_batch(texts))
    for d, text in enumerate(texts):
        got = sketches.hashes[sketches.doc_offsets[d] : sketches.doc_offsets[d + 1]]
        assert got.tolist() == sorted(set(naive_code_features(text, "python", shingle_size=4)))
    assert len(sketcher.sketch([])) == 0
