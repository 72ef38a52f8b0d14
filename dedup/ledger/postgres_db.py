"""PostgreSQL as a ``Database``: psycopg 3, a connection pool, advisory locks per key."""

from __future__ import annotations

import functools
import logging
import threading
import time
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool, PoolTimeout

from tooldedup.dedup.errors import (
    ConfigurationError,
    InvalidInput,
    StoreBusy,
    StoreUnavailable,
)
from tooldedup.dedup.ledger.database import POSTGRES, Result

__all__ = ["PostgresDatabase"]

logger = logging.getLogger(__name__)

_Conn = psycopg.Connection[dict[str, Any]]


@functools.lru_cache(maxsize=512)
def _pg_sql(sql: str) -> str:
    """The ledger writes ``?`` placeholders; psycopg reads ``%s`` (and a literal ``%%``)."""
    return sql.replace("%", "%%").replace("?", "%s")


class _StaleCheck:
    """Ask the server whether a pooled connection is alive only if it sat idle a while.

    A connection used a moment ago is almost surely alive, and the round trip would cost
    about as much as the statement it guards; one idle past ``idle_seconds`` may have been
    cut by a restart, and is checked (and replaced) before a request draws it.
    """

    def __init__(self, idle_seconds: float) -> None:
        self._idle_seconds = idle_seconds
        self._last_used: weakref.WeakKeyDictionary[_Conn, float] = weakref.WeakKeyDictionary()

    def __call__(self, conn: _Conn) -> None:
        last = self._last_used.get(conn)
        if last is None or time.monotonic() - last > self._idle_seconds:
            ConnectionPool.check_connection(conn)

    def used(self, conn: _Conn) -> None:
        self._last_used[conn] = time.monotonic()


class PostgresDatabase:
    """A pool of autocommit connections; ``write``/``serialized`` bind one to the thread.

    A database that is down, or a pool with no free connection, answers within
    ``timeout_seconds`` with ``StoreUnavailable`` (a 503), never a hang; the pool
    reconnects by itself when the database is back.
    """

    dialect = POSTGRES
    integrity_error: type[Exception] = psycopg.errors.UniqueViolation

    def __init__(
        self,
        url: str,
        *,
        min_connections: int = 1,
        max_connections: int = 10,
        timeout_seconds: float = 2.0,
        lock_timeout_seconds: float = 10.0,
    ) -> None:
        if not 0 < min_connections <= max_connections:
            raise ValueError("need 0 < min_connections <= max_connections")
        if timeout_seconds <= 0 or lock_timeout_seconds <= 0:
            raise ValueError("timeouts must be positive")
        try:
            conninfo_to_dict(url)
        except psycopg.ProgrammingError:
            # libpq's message quotes the URL, which may hold a password: not repeated here.
            raise ConfigurationError(
                "--db is not a valid PostgreSQL URL (libpq could not parse it)"
            ) from None
        self.url = url
        self._timeout = timeout_seconds
        # Bounded waits everywhere: a lock holder that hangs, or a statement that does,
        # ends in an error the caller can retry, not a request that never returns.
        # Commits outside ``write``/``serialized`` (decision log lines, cached vectors) do
        # not wait for the WAL flush: losing the last of them to a server crash loses no
        # claim. Claims, outcomes and key bindings are written in transactions that do wait.
        options = (
            f"-c lock_timeout={int(lock_timeout_seconds * 1000)}"
            f" -c statement_timeout={int(lock_timeout_seconds * 2000)}"
            " -c synchronous_commit=off"
            # A transaction left open by a stuck request releases its locks in the end.
            f" -c idle_in_transaction_session_timeout={int(lock_timeout_seconds * 3000)}"
        )
        self._stale = _StaleCheck(idle_seconds=1.0)
        self._pool: ConnectionPool[_Conn] = ConnectionPool(
            url,
            kwargs={
                "autocommit": True,
                "row_factory": dict_row,
                "connect_timeout": max(1, int(timeout_seconds)),
                "options": options,
                "application_name": "tooldedup",
            },
            min_size=min_connections,
            max_size=max_connections,
            timeout=timeout_seconds,
            # A connection the server dropped (a restart) is found before use, not by the
            # request that draws it.
            check=self._stale,
            reconnect_timeout=86_400.0,
            open=False,
            name="tooldedup",
        )
        self._local = threading.local()
        self._ping_lock = threading.Lock()
        self._ping_conn: psycopg.Connection[Any] | None = None
        try:
            self._pool.open(wait=True, timeout=timeout_seconds)
        except PoolTimeout:
            self._pool.close()
            raise StoreUnavailable(
                f"PostgreSQL did not answer within {timeout_seconds:g} s"
            ) from None

    @contextmanager
    def _connection(self) -> Iterator[_Conn]:
        bound: _Conn | None = getattr(self._local, "conn", None)
        if bound is not None:
            yield bound
            return
        try:
            with self._pool.connection() as conn:
                try:
                    yield conn
                finally:
                    self._stale.used(conn)
        except PoolTimeout:
            raise StoreBusy(
                f"no database connection within {self._timeout:g} s (the database is down,"
                " or every pooled connection is busy); nothing was stored"
            ) from None
        except psycopg.OperationalError as exc:
            raise _unavailable(exc) from exc

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Result:
        """Run one statement and fetch what it returns."""
        with self._connection() as conn:
            try:
                cursor = conn.execute(_pg_sql(sql), params)
                rows: list[Any] = cursor.fetchall() if cursor.description else []
            except psycopg.OperationalError as exc:
                raise _unavailable(exc) from exc
            except psycopg.DataError as exc:
                _raise_if_nul(exc)
                raise
        return Result(rows, cursor.rowcount)

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement once per parameter row (in one round trip, pipelined)."""
        with self._connection() as conn:
            try:
                with conn.cursor() as cursor:
                    cursor.executemany(_pg_sql(sql), rows)
            except psycopg.OperationalError as exc:
                raise _unavailable(exc) from exc
            except psycopg.DataError as exc:
                _raise_if_nul(exc)
                raise

    @contextmanager
    def write(self) -> Iterator[None]:
        """A transaction on a connection bound to this thread; nested, a savepoint."""
        with self._connection() as conn:
            outer = getattr(self._local, "conn", None) is None
            self._local.conn = conn
            try:
                with conn.transaction():
                    if outer:
                        # This transaction's commit waits for the WAL flush (see options).
                        conn.execute("SET LOCAL synchronous_commit TO on")
                    yield
            except psycopg.OperationalError as exc:
                raise _unavailable(exc) from exc
            finally:
                if outer:
                    self._local.conn = None

    def in_write(self) -> bool:
        """Whether the calling thread is inside ``write`` (its connection is bound)."""
        return getattr(self._local, "conn", None) is not None

    @contextmanager
    def serialized(self, key: str) -> Iterator[None]:
        """One transaction holding a transaction-scoped advisory lock on ``key``.

        The lock is waited on, never tried: a holder that rolls back must not make a
        waiter assume its work was done. It is released by the commit or rollback, and
        by the server if this process dies, so a killed worker never leaves it held.
        """
        with self.write():
            self.execute("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", (key,))
            yield

    def checkpoint(self) -> None:
        """Nothing to do: the server checkpoints on its own."""

    def ping(self) -> None:
        """Raise ``StoreUnavailable`` unless the server answers now.

        On a connection of its own, outside the pool: a pool with every connection busy
        says nothing about whether the server is up.
        """
        with self._ping_lock:
            try:
                if self._ping_conn is None or self._ping_conn.closed:
                    self._ping_conn = psycopg.connect(
                        self.url, autocommit=True, connect_timeout=max(1, int(self._timeout))
                    )
                self._ping_conn.execute("SELECT 1")
            except psycopg.Error as exc:
                if self._ping_conn is not None:
                    self._ping_conn.close()
                self._ping_conn = None
                logger.warning("PostgreSQL ping: %s", exc)
                raise StoreUnavailable("the database is unavailable") from None

    def close(self) -> None:
        """Close the pool and its connections."""
        with self._ping_lock:
            if self._ping_conn is not None:
                self._ping_conn.close()
                self._ping_conn = None
        self._pool.close()


def _raise_if_nul(exc: psycopg.DataError) -> None:
    """PostgreSQL text cannot hold U+0000 (SQLite can): a caller's fault, a 422."""
    if "NUL" in str(exc):
        raise InvalidInput("text may not contain NUL (U+0000) characters") from exc


def _unavailable(exc: psycopg.OperationalError) -> StoreUnavailable:
    """The 503 for a database error; its text (addresses, user names) stays in the log."""
    logger.warning("PostgreSQL: %s", exc)
    if isinstance(exc, psycopg.errors.LockNotAvailable | psycopg.errors.QueryCanceled):
        return StoreBusy("the database was busy past its timeout; nothing was stored")
    return StoreUnavailable("the database is unavailable; nothing was stored")
