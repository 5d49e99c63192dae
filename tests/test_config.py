"""FingerprintConfig validation and round trips."""

from __future__ import annotations

import pytest

import neardup
from neardup import ConfigError, FingerprintConfig


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"bits": 32}, r"bits=32 is not allowed; choose one of 64, 128"),
        (
            {"features": "shingles"},
            r"features='shingles' is not allowed; choose one of 'word-shingles', 'words', 'char-ngrams'",
        ),
        ({"weighting": "bm25"}, r"weighting='bm25' is not allowed"),
        ({"shingle_size": 0}, r"shingle_size=0 must be a positive integer"),
        ({"ngram_size": 2.5}, r"ngram_size=2.5 must be a positive integer"),
        ({"normalize": "yes"}, r"normalize='yes' must be True or False"),
        ({"seed": -1}, r"seed=-1 must be an integer in \[0, 2\*\*64\)"),
        ({"seed": 2**64}, r"seed=.* must be an integer"),
        ({"weighting": "tfidf"}, r'weighting="tfidf" needs an IDF model'),
    ],
)
def test_bad_settings_say_what_is_allowed(options, message):
    with pytest.raises(ConfigError, match=message):
        FingerprintConfig(**options)
    with pytest.raises(ValueError):  # ConfigError is a ValueError too
        neardup.Fingerprinter(**options)


def test_config_is_frozen_and_hashable():
    config = FingerprintConfig(bits=128)
    with pytest.raises(AttributeError):
        config.bits = 64  # type: ignore[misc]
    assert config == FingerprintConfig(bits=128)
    assert len({config, FingerprintConfig(bits=128)}) == 1
    assert config.fingerprint_version == neardup.FINGERPRINT_VERSION


def test_to_dict_round_trip_and_version_check():
    config = FingerprintConfig(features="char-ngrams", ngram_size=4, seed=9, normalize=False)
    d = config.to_dict()
    assert d["fingerprint_version"] == 1
    assert FingerprintConfig.from_dict(d) == config
    with pytest.raises(ConfigError, match="fingerprint_version=2 is not readable"):
        FingerprintConfig.from_dict({**d, "fingerprint_version": 2})
    with pytest.raises(ConfigError, match="unknown config fields"):
        FingerprintConfig.from_dict({**d, "colour": "red"})


def test_tfidf_config_records_model_digest():
    model = neardup.fit_idf(["a b c", "a d e"], features="words")
    config = FingerprintConfig(features="words", weighting="tfidf", idf=model)
    d = config.to_dict()
    assert d["idf"] == model.digest
    assert FingerprintConfig.from_dict(d, idf=model) == config
    with pytest.raises(ConfigError, match="pass that model"):
        FingerprintConfig.from_dict(d)
    with pytest.raises(ConfigError, match="fitted on features"):
        FingerprintConfig(features="words", weighting="tfidf", idf=model, seed=1)
    with pytest.raises(ConfigError, match="only used with"):
        FingerprintConfig(features="words", idf=model)


def test_fingerprinter_takes_config_or_options_not_both():
    with pytest.raises(TypeError, match="not both"):
        neardup.Fingerprinter(FingerprintConfig(), bits=128)
    assert neardup.Fingerprinter(FingerprintConfig(bits=128)).config.bits == 128
