"""``neardup serve``: an online near-duplicate service for crawlers (``pip install
"neardup[serve]"``). ``store.py`` keeps every document in SQLite (WAL, a batch one
transaction, committed before it is answered); ``app.py`` is the HTTP API (FastAPI), its
in-memory index rebuilt from the store at start.

May import anything but ``cli``. This ``__init__`` imports nothing.
"""
