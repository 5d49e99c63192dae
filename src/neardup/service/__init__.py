"""``neardup serve``: an online near-duplicate service for crawlers (``pip install
"neardup[serve]"``). ``store.py`` keeps every document in SQLite (WAL, a batch one
transaction, committed before it is answered); ``state.py`` holds the store and the in-memory
index rebuilt from it at start, with their locks; ``app.py`` makes the HTTP API (FastAPI) of
``models.py`` (request and answer schemas), ``routes.py`` (the routes), ``asgi.py`` (the
``/query`` lane, body limits, requests counted) and ``metrics.py`` (the Prometheus counters);
``client.py`` is the Python client.

May import ``io``, ``fingerprint``, ``index``, ``decision`` and the root's shared modules;
never another engine (``pipeline``, ``passage``, ``spark``). This ``__init__`` imports nothing.
"""
