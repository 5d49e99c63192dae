"""``python -m neardup``: the ``neardup`` command."""

from .cli import run

run()
