"""``python -m neardup``: the ``neardup`` command."""

from .cli import main

raise SystemExit(main())
