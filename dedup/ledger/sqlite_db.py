"""SQLite as a ``Database``: one WAL file, a connection per thread, locks across processes."""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from tooldedup.dedup.errors import StoreBusy, StoreUnavailable
from tooldedup.dedup.ledger.database import SQLITE, Result
from tooldedup.dedup.ledger.file_locks import FileStripeLocks
from tooldedup.dedup.locks import KeyedLocks

__all__ = ["SqliteDatabase"]

_OPTIMIZE_SECONDS = 3600.0
_BUSY_SECONDS = 30.0
# A checkpoint copies each page the log holds once, however often it was written since: at
# a few commits a second, one every 0.1 s copied the same index pages again and again (a
# fifth of a millisecond of CPU per semantic check). Every 100 commits bounds a checkpoint's
# size as 0.1 s did at a thousand commits a second, when a larger one stalled checks.
CHECKPOINT_COMMITS = 100
CHECKPOINT_MAX_SECONDS = 1.0

logger = logging.getLogger(__name__)


class _ThreadOwner:
    """Lives in one thread's local storage; collected when the thread ends."""


class SqliteDatabase:
    """A WAL-mode SQLite file with a connection per calling thread, all closed together.

    ``serialized`` locks a stripe of ``<file>-dedup-lock`` that every process opening the
    same file shares, so processes on one file decide one (scope, tool) at a time.
    """

    dialect = SQLITE
    integrity_error: type[Exception] = sqlite3.IntegrityError

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._conns: list[sqlite3.Connection] = []
        self._conns_lock = threading.Lock()
        self._next_optimize = 0.0
        # Commits of this process since its last checkpoint, and when that was.
        self._commits = 0
        self._checkpointed_at = time.monotonic()
        self._file_locks: FileStripeLocks | None = None
        self._thread_locks = KeyedLocks()
        # One writer of this process at a time, queued here: SQLite lets one writer in and
        # makes the others sleep in its busy handler (1 ms, then 2, 5, 10 …), which at a few
        # concurrent checks cost more than the writes. Other processes still meet the
        # busy handler.
        self._writer = threading.RLock()
        if FileStripeLocks.supported():
            self._file_locks = FileStripeLocks(path.with_name(path.name + "-dedup-lock"))
        else:
            logger.warning(
                "no open-file-description locks on this platform: run one process per"
                " SQLite file (%s)",
                path,
            )

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(
                self.path, timeout=_BUSY_SECONDS, isolation_level=None, check_same_thread=False
            )
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(f"PRAGMA busy_timeout={int(_BUSY_SECONDS * 1000)}")
            # Request threads rarely checkpoint; the service's maintenance thread does.
            conn.execute("PRAGMA wal_autocheckpoint=20000")
            self._local.conn = conn
            with self._conns_lock:
                self._conns.append(conn)
            # A thread pool retires idle threads: the connection goes with its thread.
            self._local.owner = _ThreadOwner()
            weakref.finalize(self._local.owner, self._release, conn)
        return conn

    def _release(self, conn: sqlite3.Connection) -> None:
        with self._conns_lock:
            if conn in self._conns:
                self._conns.remove(conn)
                conn.close()

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Result:
        """Run one statement and fetch what it returns."""
        writes = _writes(sql)
        with self._writing() if writes else nullcontext():
            try:
                cursor = self._conn().execute(sql, params)
                rows: list[Any] = cursor.fetchall()
            except sqlite3.OperationalError as exc:
                _raise_if_unavailable(exc)
                raise
            if writes and cursor.rowcount > 0 and not self.in_write():
                self._commits += 1  # a write of its own (autocommit), counted in its turn
        return Result(rows, cursor.rowcount)

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement once per parameter row."""
        with self._writing():
            try:
                self._conn().executemany(sql, rows)
            except sqlite3.OperationalError as exc:
                _raise_if_unavailable(exc)
                raise

    @contextmanager
    def write(self) -> Iterator[None]:
        """``BEGIN IMMEDIATE`` … ``COMMIT``; inside another ``write``, a savepoint."""
        conn = self._conn()
        depth: int = getattr(self._local, "depth", 0)
        self._local.depth = depth + 1
        try:
            if depth:
                yield from self._savepoint(conn, depth)
                return
            with self._writing():
                try:
                    conn.execute("BEGIN IMMEDIATE")
                except sqlite3.OperationalError as exc:
                    _raise_if_unavailable(exc)
                    raise
                try:
                    yield
                    conn.execute("COMMIT")
                    self._commits += 1
                except BaseException as exc:
                    # A failed COMMIT too: never leave the connection inside a transaction.
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    if isinstance(exc, sqlite3.OperationalError):
                        _raise_if_unavailable(exc)
                    raise
        finally:
            self._local.depth = depth

    def in_write(self) -> bool:
        """Whether the calling thread is inside ``write``."""
        return bool(getattr(self._local, "depth", 0))

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """This process's turn to write, waited for no longer than SQLite's own busy wait."""
        if not self._writer.acquire(timeout=_BUSY_SECONDS):
            raise StoreBusy("the database was busy past its timeout; nothing was stored")
        try:
            yield
        finally:
            self._writer.release()

    @staticmethod
    def _savepoint(conn: sqlite3.Connection, depth: int) -> Iterator[None]:
        name = f"nested{depth}"
        conn.execute(f"SAVEPOINT {name}")
        try:
            yield
        except BaseException:
            conn.execute(f"ROLLBACK TO {name}")
            conn.execute(f"RELEASE {name}")
            raise
        conn.execute(f"RELEASE {name}")

    @contextmanager
    def serialized(self, key: str) -> Iterator[None]:
        """Hold ``key``'s stripe of the lock file: other threads and processes wait."""
        if self._file_locks is None:
            with self._thread_locks.hold(key):
                yield
            return
        with self._file_locks.hold(key):
            yield

    def checkpoint(self) -> None:
        """Fold the write-ahead log into the database, off the request path, once this
        process has committed ``CHECKPOINT_COMMITS`` times or ``CHECKPOINT_MAX_SECONDS``
        have passed since the last; hourly, let SQLite refresh the statistics its planner
        chooses indexes by (a bounded sample)."""
        now = time.monotonic()
        due = self._commits >= CHECKPOINT_COMMITS or (
            self._commits and now - self._checkpointed_at >= CHECKPOINT_MAX_SECONDS
        )
        if due:
            self._commits = 0
            self._checkpointed_at = now
            self.execute("PRAGMA wal_checkpoint(PASSIVE)")
        if now >= self._next_optimize:
            self._next_optimize = now + _OPTIMIZE_SECONDS
            # A sample of each index, not a full scan: milliseconds on a million rows.
            self.execute("PRAGMA analysis_limit = 1000")
            self.execute("ANALYZE")

    def ping(self) -> None:
        """Raise ``StoreUnavailable`` unless the file answers."""
        self.execute("SELECT 1")

    def close(self) -> None:
        """Release connections and lock descriptors."""
        with self._conns_lock:
            for conn in self._conns:
                conn.close()
            self._conns.clear()
        self._local = threading.local()
        if self._file_locks is not None:
            self._file_locks.close()


def _writes(sql: str) -> bool:
    """Whether a statement may write (take SQLite's one write lock): all but a SELECT and a
    PRAGMA. A checkpoint (a PRAGMA) must not hold writers up; a query that is not plainly a
    read waits its turn, which costs at most a little time."""
    return not sql.lstrip()[:6].upper().startswith(("SELECT", "PRAGMA"))


def _raise_if_unavailable(exc: sqlite3.OperationalError) -> None:
    """A busy, locked or unreadable file is a 503 to retry, not a bug."""
    text = str(exc)
    if "locked" in text or "busy" in text:
        logger.warning("SQLite: %s", text)
        raise StoreBusy("the database was busy past its timeout; nothing was stored") from exc
    if any(word in text for word in ("disk I/O", "unable to open", "disk is full", "readonly")):
        logger.warning("SQLite: %s", text)
        raise StoreUnavailable("the database is unavailable; nothing was stored") from exc
