"""The ``neardup`` command: parse, call the library, print. One module per command; the
fingerprint options shared by several commands are in ``options.py``.

May import anything in the package. ``neardup --help`` must not import numba or pyarrow, so a
command imports the library inside its handler.
"""

from __future__ import annotations

from .main import main, run

__all__ = ["main", "run"]
