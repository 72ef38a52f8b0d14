"""One SQLite connection per thread on one migrated file, all closed together."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from tooldedup.dedup.ledger.migrations import migrate

__all__ = ["SqliteConnections"]


class SqliteConnections:
    """A WAL-mode SQLite file, migrated on open, with a connection per calling thread."""

    def __init__(self, path: Path) -> None:
        self._path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._conns: list[sqlite3.Connection] = []
        self._conns_lock = threading.Lock()
        self.migrations = migrate(self._conn())

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(
                self._path, timeout=30, isolation_level=None, check_same_thread=False
            )
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA busy_timeout=30000")
            # Request threads rarely checkpoint; the service's maintenance thread does.
            conn.execute("PRAGMA wal_autocheckpoint=20000")
            self._local.conn = conn
            with self._conns_lock:
                self._conns.append(conn)
        return conn

    def close(self) -> None:
        """Release connections."""
        with self._conns_lock:
            for conn in self._conns:
                conn.close()
            self._conns.clear()
        self._local = threading.local()
