"""The service's record of truth: one SQLite database in the data folder, in WAL mode with
``synchronous=FULL``, so a committed batch survives a crash of the process or the machine and a
batch is all there or not at all.

Tables: ``settings`` (the mode, the fingerprint configuration and radius, fixed when the
folder is created; where the last index snapshot stands), ``documents`` (``key``, never reused,
the id the in-memory index knows; ``id`` the caller's, unique; the fingerprint's words as signed
64-bit integers; metadata as JSON text), ``removed`` (the keys deleted or replaced, in order)
and, in Jaccard mode, ``sketches`` (a document's MinHash band keys and its distinct feature
hashes, written in the same transaction as its row), in passages mode ``passage_texts`` (a
document's distinct passage seeds and its text, likewise). At
start the in-memory :class:`HammingIndex` is the last snapshot plus the rows added and removed
since, or all rows when there is none: stored fingerprints, never a text fingerprinted again.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import re
import socket
import sqlite3
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._config import FingerprintConfig
from .._errors import ConfigError

DATABASE = "neardup.sqlite3"

LOCK = "lock"
"""The file a store holds locked (``flock``) while it is open: one service a data folder."""

_STALE = re.compile(r"\..+\.[0-9a-f]{8}\.tmp")
"""The temporary files of ``_atomic`` writes (``.index.idx.1a2b3c4d.tmp``): one left in the
data folder was cut short by a crash (a SIGKILL while the snapshot was saved)."""


_VARIABLES = 500
"""Parameters in one statement, at most (SQLite before 3.32 allows 999)."""


class StoreFullError(OSError):
    """A write found no room on the data folder's disk (SQLite's "database or disk is full");
    nothing of it was stored."""


@dataclass(frozen=True)
class Settings:
    """What a data folder was created with; every later start must agree. ``jaccard``: the
    folder answers with the stored documents at least this word-shingle Jaccard similar
    (Jaccard mode); ``passages``: with the passages they share with a text (passages mode);
    neither: within the Hamming radius ``max_distance`` (SimHash mode)."""

    config: FingerprintConfig
    max_distance: int
    jaccard: float | None = None
    passages: bool = False

    def __post_init__(self) -> None:
        if self.config.features == "code" and self.config.language is None:
            # A client's text comes without a file name to say its language.
            raise ConfigError(
                "the service lexes code by one language, as its clients send texts without file "
                "names: give --language NAME (language=) with --features code, e.g. --language python"
            )

    @property
    def mode(self) -> str:
        return "passages" if self.passages else "simhash" if self.jaccard is None else "jaccard"

    def describe(self) -> str:
        """The mode in the words of ``neardup serve``'s options: "--jaccard 0.8", "-k 3"."""
        if self.passages:
            return f"--passages -k {self.max_distance}"
        return f"--jaccard {self.jaccard:g}" if self.jaccard is not None else f"-k {self.max_distance}"

    def to_json(self) -> str:
        d: dict[str, Any] = {"config": self.config.to_dict(), "max_distance": self.max_distance}
        if self.jaccard is not None:  # a SimHash folder's record stays as it always was
            d["jaccard"] = self.jaccard
        if self.passages:
            d["passages"] = True
        return json.dumps(d, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Settings:
        d = json.loads(text)
        jaccard = d.get("jaccard")
        return cls(
            FingerprintConfig.from_dict(d["config"]),
            int(d["max_distance"]),
            None if jaccard is None else float(jaccard),
            bool(d.get("passages", False)),
        )

    @property
    def side_table(self) -> str:
        """The table of what the mode keeps beside each row (``Store.add``'s ``sketches``)."""
        return "passage_texts" if self.passages else "sketches"


@dataclass(frozen=True)
class Row:
    """One stored document: the index key, the caller's id, the fingerprint words, metadata."""

    key: int
    id: str
    words: tuple[int, ...]
    metadata: Any


class Store:
    """The SQLite database of a data folder. Writes go through one connection under a lock
    (SQLite allows one writer), each call one transaction. Reads of ids and documents (``get``,
    ``by_keys``) go through a read-only connection per thread: in WAL mode they see the last
    commit and never wait for one in progress."""

    def __init__(self, folder: str | Path, settings: Settings | None = None) -> None:
        self.folder = Path(folder)
        # Private, as a database server makes its data: ids and metadata are the callers'.
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        database = self.folder / DATABASE
        # Before anything is swept or opened: the temporary files may be another service's.
        self._held = _hold(self.folder)
        try:
            self._open(database, settings)
        except BaseException:
            os.close(self._held)
            raise

    def _open(self, database: Path, settings: Settings | None) -> None:
        # SQLite creates its -wal and -shm files with the database file's mode.
        os.close(os.open(database, os.O_RDWR | os.O_CREAT, 0o600))
        for name in remove_stale_temporaries(self.folder):
            logging.getLogger("neardup.serve").warning("removed %s, a temporary file a crash left", name)
        self._lock = threading.Lock()
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self._db = sqlite3.connect(database, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")  # a commit is on disk before it returns
        self._db.execute("CREATE TABLE IF NOT EXISTS settings (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
        self._db.execute(
            # AUTOINCREMENT: a key is never reused, so "the rows after a snapshot" are the keys above it
            "CREATE TABLE IF NOT EXISTS documents (key INTEGER PRIMARY KEY AUTOINCREMENT, "
            "id TEXT NOT NULL UNIQUE, lo INTEGER NOT NULL, hi INTEGER, metadata TEXT)"
        )
        # The keys removed (deleted, or replaced by a later add of their id), in order: a restart
        # from an index snapshot removes those that came after it.
        self._db.execute("CREATE TABLE IF NOT EXISTS removed (seq INTEGER PRIMARY KEY, key INTEGER NOT NULL)")
        # Jaccard mode: a document's band keys (uint64) and distinct feature hashes (uint64,
        # ascending), as bytes; the exact check reads the features of a query's candidates.
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS sketches (key INTEGER PRIMARY KEY, bands BLOB NOT NULL, "
            "features BLOB NOT NULL)"
        )
        # Passages mode: a document's distinct passage seeds (uint32, their top 32 bits, as the
        # passages job compares them) and its text (UTF-8): a query's candidates' words and
        # offsets are made again from it.
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS passage_texts (key INTEGER PRIMARY KEY, seeds BLOB NOT NULL, "
            "text BLOB NOT NULL)"
        )
        found = self._db.execute("SELECT value FROM settings WHERE name = 'settings'").fetchone()
        if found is None:
            if settings is None:
                settings = Settings(FingerprintConfig(), 3)
            self._db.execute("INSERT INTO settings VALUES ('settings', ?)", (settings.to_json(),))
            self.settings = settings
        else:
            self.settings = Settings.from_json(found[0])
            try:
                check_asked(self.folder, self.settings, settings)
            except ConfigError:
                self._db.close()
                raise

    def close(self) -> None:
        with self._lock:
            for reader in self._readers:
                reader.close()
            self._db.close()
            if self._held >= 0:  # and with it the lock, once: the number may be reused
                os.close(self._held)
                self._held = -1

    def _reader(self) -> sqlite3.Connection:
        """This thread's read-only connection."""
        reader = getattr(self._local, "db", None)
        if reader is None:
            reader = sqlite3.connect(self.folder / DATABASE, check_same_thread=False, isolation_level=None)
            reader.execute("PRAGMA query_only=ON")
            with self._lock:
                self._readers.append(reader)
            self._local.db = reader
        return reader

    def load(self, after: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """Every stored (key, fingerprint) with a key above ``after``: int64 keys and uint64
        fingerprints (n,) or (n, 2)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT key, lo, hi FROM documents WHERE key > ? ORDER BY key", (after,)
            ).fetchall()
        words = self.settings.config.bits // 64
        keys = np.array([r[0] for r in rows], dtype=np.int64)
        fps = (
            np.array([r[1 : 1 + words] for r in rows], dtype=np.int64)
            .reshape(len(rows), words)
            .view(np.uint64)
        )
        return keys, fps if words == 2 else fps[:, 0].copy()

    def add(
        self,
        documents: Iterable[tuple[str, tuple[int, ...], Any]],
        sketches: Iterable[tuple[bytes, bytes]] | None = None,
    ) -> tuple[list[int], list[int]]:
        """Stores ``(id, words, metadata)`` documents in one transaction (an id already stored
        is replaced), with their ``(band keys, features)`` sketches, one each, in Jaccard
        mode, or their ``(seeds, text)`` in passages mode; returns their keys and the keys
        they replaced. Raises before committing anything if one fails."""
        with self._lock:
            cursor = self._db.cursor()
            cursor.execute("BEGIN IMMEDIATE")
            try:
                keys, replaced = [], []
                sketched = iter(sketches) if sketches is not None else None
                beside = f"INSERT INTO {self.settings.side_table} VALUES (?, ?, ?)"
                for doc_id, words, metadata in documents:
                    old = cursor.execute("SELECT key FROM documents WHERE id = ?", (doc_id,)).fetchone()
                    if old is not None:
                        cursor.execute("DELETE FROM documents WHERE key = ?", old)
                        _delete_beside(cursor, old[0])
                        cursor.execute("INSERT INTO removed (key) VALUES (?)", old)
                        replaced.append(int(old[0]))
                    cursor.execute(
                        "INSERT INTO documents (id, lo, hi, metadata) VALUES (?, ?, ?, ?)",
                        (doc_id, words[0], words[1] if len(words) > 1 else None, _json(metadata)),
                    )
                    key = int(cursor.lastrowid or 0)
                    keys.append(key)
                    if sketched is not None:
                        cursor.execute(beside, (key, *next(sketched)))
                cursor.execute("COMMIT")
            except BaseException as error:
                self._rollback(error)
                raise
        return keys, replaced

    def _rollback(self, error: BaseException) -> None:
        """End a failed write's transaction, then raise :class:`StoreFullError` for a full
        disk. SQLite has rolled back already after some errors (a full disk among them): a
        ROLLBACK then raises "no transaction is active", which would hide the cause."""
        if self._db.in_transaction:
            self._db.execute("ROLLBACK")
        if isinstance(error, sqlite3.OperationalError) and _full(error):
            raise StoreFullError(
                f"the disk of {self.folder} is full ({error}): nothing of this write was "
                f"stored; free some space there"
            ) from error

    def get(self, doc_id: str) -> Row | None:
        row = (
            self._reader()
            .execute("SELECT key, id, lo, hi, metadata FROM documents WHERE id = ?", (doc_id,))
            .fetchone()
        )
        return None if row is None else _row(row)

    def by_keys(self, keys: list[int]) -> dict[int, str]:
        """The ids of these keys."""
        if not keys:
            return {}
        marks = ",".join("?" * len(keys))
        rows = (
            self._reader().execute(f"SELECT key, id FROM documents WHERE key IN ({marks})", keys).fetchall()
        )
        return {int(k): i for k, i in rows}

    def keys_of(self, ids: list[str]) -> dict[str, int]:
        """The keys of those of these ids that are stored."""
        reader = self._reader()
        found: dict[str, int] = {}
        for start in range(0, len(ids), _VARIABLES):
            part = ids[start : start + _VARIABLES]
            marks = ",".join("?" * len(part))
            found.update(reader.execute(f"SELECT id, key FROM documents WHERE id IN ({marks})", part))
        return found

    def delete(self, doc_id: str) -> int | None:
        """Removes a document; returns its key, or None when there was none."""
        with self._lock:
            cursor = self._db.cursor()
            cursor.execute("BEGIN IMMEDIATE")
            try:
                row = cursor.execute("SELECT key FROM documents WHERE id = ?", (doc_id,)).fetchone()
                if row is not None:
                    cursor.execute("DELETE FROM documents WHERE key = ?", (row[0],))
                    _delete_beside(cursor, row[0])
                    cursor.execute("INSERT INTO removed (key) VALUES (?)", (row[0],))
                cursor.execute("COMMIT")
            except BaseException as error:
                self._rollback(error)
                raise
        return None if row is None else int(row[0])

    def band_keys(self, bands: int) -> tuple[np.ndarray, np.ndarray]:
        """Every stored document's (key, band keys): int64 (n,) and uint64 (n, bands)."""
        with self._lock:
            rows = self._db.execute("SELECT key, bands FROM sketches ORDER BY key").fetchall()
        keys = np.array([r[0] for r in rows], dtype=np.int64)
        return keys, np.frombuffer(b"".join(r[1] for r in rows), dtype=np.uint64).reshape(len(rows), bands)

    def features(self, keys: list[int]) -> dict[int, bytes]:
        """The distinct feature hashes (uint64 bytes) of those of ``keys`` still stored."""
        reader = self._reader()
        found: dict[int, bytes] = {}
        for start in range(0, len(keys), _VARIABLES):
            part = keys[start : start + _VARIABLES]
            marks = ",".join("?" * len(part))
            found.update(reader.execute(f"SELECT key, features FROM sketches WHERE key IN ({marks})", part))
        return found

    def seeds(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every stored document's passage seeds: (keys of the documents, int64 (n,); their
        seeds, uint64, all in one; the document key of each seed, int64)."""
        with self._lock:
            rows = self._db.execute("SELECT key, seeds FROM passage_texts ORDER BY key").fetchall()
        keys = np.array([r[0] for r in rows], dtype=np.int64)
        seeds = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.uint32).astype(np.uint64)
        return keys, seeds, np.repeat(keys, [len(r[1]) // 4 for r in rows])

    def texts(self, keys: list[int]) -> dict[int, bytes]:
        """The texts (UTF-8) of those of ``keys`` still stored (passages mode)."""
        reader = self._reader()
        found: dict[int, bytes] = {}
        for start in range(0, len(keys), _VARIABLES):
            part = keys[start : start + _VARIABLES]
            marks = ",".join("?" * len(part))
            found.update(reader.execute(f"SELECT key, text FROM passage_texts WHERE key IN ({marks})", part))
        return found

    def marks(self) -> tuple[int, int]:
        """(the largest key, the last removal's sequence number) now: where a snapshot stands."""
        with self._lock:
            key = self._db.execute("SELECT coalesce(max(key), 0) FROM documents").fetchone()[0]
            seq = self._db.execute("SELECT coalesce(max(seq), 0) FROM removed").fetchone()[0]
        return int(key), int(seq)

    def removed_after(self, seq: int) -> np.ndarray:
        """int64 keys removed after removal ``seq``."""
        with self._lock:
            rows = self._db.execute("SELECT key FROM removed WHERE seq > ? ORDER BY seq", (seq,)).fetchall()
        return np.array([r[0] for r in rows], dtype=np.int64)

    def snapshot(self) -> dict[str, int] | None:
        """The marks of the last index snapshot (``set_snapshot``), if any."""
        with self._lock:
            found = self._db.execute("SELECT value FROM settings WHERE name = 'snapshot'").fetchone()
        return None if found is None else json.loads(found[0])

    def set_snapshot(self, key: int, seq: int) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO settings VALUES ('snapshot', ?)",
                (json.dumps({"key": key, "seq": seq}),),
            )

    def count(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM documents").fetchone()[0])


def recorded_settings(folder: str | Path) -> Settings | None:
    """The settings data folder ``folder`` was made with, read without taking the folder (a
    running service may hold it); None where none are recorded yet."""
    database = Path(folder) / DATABASE
    if not database.is_file():
        return None
    with contextlib.closing(sqlite3.connect(database, isolation_level=None)) as db:
        db.execute("PRAGMA query_only=ON")
        try:
            found = db.execute("SELECT value FROM settings WHERE name = 'settings'").fetchone()
        except sqlite3.OperationalError:  # made, but not yet its tables
            return None
    return None if found is None else Settings.from_json(found[0])


def check_asked(folder: str | Path, recorded: Settings | None, asked: Settings | None) -> None:
    """ConfigError where a start asks ``folder`` for settings (a mode, a radius, fingerprint
    options) other than the ``recorded`` ones it was made with."""
    if recorded is None or asked is None or asked == recorded:
        return
    raise ConfigError(
        f"{folder} was created in {recorded.mode} mode ({recorded.describe()}) "
        f"with {recorded.to_json()}; this start asks {asked.mode} mode "
        f"({asked.describe()}) with {asked.to_json()}. Start without "
        f"--jaccard, --passages, -k and fingerprint options to serve the folder as it was made, "
        f"or give another --data folder"
    )


def _delete_beside(cursor: sqlite3.Cursor, key: int) -> None:
    """Delete what a mode keeps beside row ``key`` (a folder has one mode: one of these holds it)."""
    cursor.execute("DELETE FROM sketches WHERE key = ?", (key,))
    cursor.execute("DELETE FROM passage_texts WHERE key = ?", (key,))


def _hold(folder: Path) -> int:
    """Lock ``folder``'s lock file for this store (the descriptor); ConfigError, naming the
    holder, when another process (or another open store) holds it: two services writing one
    folder would each serve an index without the other's writes."""
    fd = os.open(folder / LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "a process"
        os.close(fd)
        raise ConfigError(
            f"{folder} is in use by {holder}: one neardup serve a data folder. Stop that one, or "
            f"give another --data folder"
        ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"neardup serve, pid {os.getpid()} on {socket.gethostname()}\n".encode(), 0)
    return fd


def remove_stale_temporaries(folder: Path) -> list[str]:
    """Remove the temporary files a crash left in ``folder`` (at start, before anything writes
    there); returns their names."""
    removed = []
    for entry in os.scandir(folder):
        if _STALE.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(entry.path)
                removed.append(entry.name)
    return removed


def _full(error: sqlite3.OperationalError) -> bool:
    """Whether SQLite failed for want of space (SQLITE_FULL)."""
    code = getattr(error, "sqlite_errorcode", None)  # Python 3.11+
    return code == 13 or "database or disk is full" in str(error)  # 13: SQLITE_FULL


def _json(metadata: Any) -> str | None:
    return None if metadata is None else json.dumps(metadata)  # ASCII: a lone surrogate is escaped


def _row(row: tuple) -> Row:
    key, doc_id, lo, hi, metadata = row
    return Row(
        int(key),
        doc_id,
        (lo,) if hi is None else (lo, hi),
        None if metadata is None else json.loads(metadata),
    )
