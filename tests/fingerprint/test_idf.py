"""IDF models: fitting, weighting, saving and loading."""

from __future__ import annotations

import math

import numpy as np
import pytest
import xxhash

import neardup
from neardup import FormatError, IdfModel, fit_idf

CORPUS = ["the cat sat", "the dog sat", "the bird flew", "a cat flew"]


def test_document_frequencies_and_smoothed_idf():
    model = fit_idf(CORPUS, features="words")
    assert model.n_docs == 4
    df = dict(zip(model.hashes.tolist(), model.doc_freqs.tolist()))
    h = lambda w: xxhash.xxh3_64_intdigest(w.encode())  # noqa: E731
    assert df[h("the")] == 3 and df[h("cat")] == 2 and df[h("dog")] == 1
    assert len(model) == len({w for t in CORPUS for w in t.split()})
    k = int(np.searchsorted(model.hashes, h("the")))
    assert model.values[k] == pytest.approx(math.log(5 / 4) + 1)
    assert model.default_idf == pytest.approx(math.log(5) + 1)


def test_batches_and_inputs_give_the_same_model():
    whole = fit_idf(CORPUS, features="words")
    assert fit_idf(iter(CORPUS), features="words", batch_size=1) == whole
    import pyarrow as pa

    assert fit_idf(pa.array(CORPUS), features="words") == whole


def test_tfidf_weights_rare_features_up():
    model = fit_idf(CORPUS * 5, features="words")
    h = lambda w: xxhash.xxh3_64_intdigest(w.encode())  # noqa: E731
    # Under tf, "the" and "rare" tie wherever their bits differ, and a tie gives 0.
    assert neardup.simhash("the rare", features="words") == h("the") & h("rare")
    # Under tf-idf the unseen "rare" (idf ln 21 + 1) outweighs "the" (ln(21/16) + 1) everywhere.
    tfidf = neardup.Fingerprinter(features="words", weighting="tfidf", idf=model)
    assert tfidf.fingerprint("the rare") == h("rare")
    assert tfidf.fingerprint("") == 0


def test_save_and_load_round_trip(tmp_path):
    model = fit_idf(CORPUS, features="char-ngrams", ngram_size=3)
    path = tmp_path / "idf.npz"
    model.save(path)
    loaded = IdfModel.load(path)
    assert loaded == model and loaded.digest == model.digest
    assert loaded.feature_config == model.feature_config
    config = dict(features="char-ngrams", ngram_size=3, weighting="tfidf")
    assert neardup.Fingerprinter(**config, idf=loaded).fingerprint("the cat") == neardup.Fingerprinter(
        **config, idf=model
    ).fingerprint("the cat")
    assert [p.name for p in tmp_path.iterdir()] == ["idf.npz"]  # no temporary file left


def test_damaged_and_foreign_files_are_refused(tmp_path):
    model = fit_idf(CORPUS, features="words")
    path = tmp_path / "idf.npz"
    model.save(path)
    data = path.read_bytes()
    (tmp_path / "cut.npz").write_bytes(data[: len(data) // 2])
    with pytest.raises(FormatError, match=r"cut\.npz"):
        IdfModel.load(tmp_path / "cut.npz")
    np.savez(tmp_path / "other.npz", x=np.arange(3))
    with pytest.raises(FormatError, match="not a readable neardup IDF model"):
        IdfModel.load(tmp_path / "other.npz")
    # Same shapes, changed counts: the checksum catches it.
    with np.load(path) as z:
        parts = dict(z)
    parts["doc_freqs"] = parts["doc_freqs"] + 1
    np.savez(tmp_path / "tampered.npz", **parts)
    with pytest.raises(FormatError, match="checksum"):
        IdfModel.load(tmp_path / "tampered.npz")
