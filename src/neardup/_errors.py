"""Errors raised by neardup.

    NeardupError                 every error neardup raises on purpose
    ├── ConfigError (ValueError) a setting outside what is allowed; says what is
    ├── FormatError (ValueError) a file neardup cannot read: wrong version, config or contents
    ├── TooManyPairsError (MemoryError) a pair list larger than memory; names the streaming way
    ├── ServiceError             a ``neardup serve`` answered a request with an error
    └── MissingExtraError (ImportError) an optional dependency is missing; names the pip extra

Non-text documents raise the built-in ``TypeError``, naming their position and type.
"""

from __future__ import annotations


class NeardupError(Exception):
    """Base class of every error neardup raises on purpose."""


class ConfigError(NeardupError, ValueError):
    """A setting has a value outside what is allowed; the message lists what is."""


class FormatError(NeardupError, ValueError):
    """A file cannot be read: wrong format version, another configuration, or corrupt contents."""


class TooManyPairsError(NeardupError, MemoryError):
    """A list of pairs would not fit in memory (n copies of one text make n(n-1)/2 pairs); the
    message names the way to stream them or to cluster without them."""


class ServiceError(NeardupError):
    """A ``neardup serve`` answered with an error (4xx or 5xx); the message holds its reason."""


class MissingExtraError(NeardupError, ImportError):
    """An optional dependency is not installed; the message names the pip extra that installs it
    (``pip install "neardup[serve]"``). Raised by ``neardup._extras.require``."""
