"""Errors raised by neardup.

    NeardupError                 every error neardup raises on purpose
    ├── ConfigError (ValueError) a setting outside what is allowed; says what is
    └── FormatError (ValueError) a file neardup cannot read: wrong version, config or contents

Non-text documents raise the built-in ``TypeError``, naming their position and type.
"""

from __future__ import annotations


class NeardupError(Exception):
    """Base class of every error neardup raises on purpose."""


class ConfigError(NeardupError, ValueError):
    """A setting has a value outside what is allowed; the message lists what is."""


class FormatError(NeardupError, ValueError):
    """A file cannot be read: wrong format version, another configuration, or corrupt contents."""
