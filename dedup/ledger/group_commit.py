"""Group commit: rows that threads add at once are stored in one transaction."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

__all__ = ["GroupCommit"]

Row = TypeVar("Row")


class _Ticket:
    """One added row's fate: stored, or the error its transaction raised."""

    __slots__ = ("done", "error")

    def __init__(self) -> None:
        self.done = False
        self.error: BaseException | None = None


class GroupCommit(Generic[Row]):
    """Each ``add`` returns once its row is stored, as if written alone; a thread that
    finds no write under way writes every row queued by then, in one call of ``write``.

    A commit costs far more than a row (a decision log row touches a page of each of its
    indexes, written again at every commit), so concurrent checks share one. Alone, a row
    is written at once: nothing waits for company.
    """

    def __init__(self, write: Callable[[Sequence[Row]], None], max_rows: int = 256) -> None:
        if max_rows < 1:
            raise ValueError("max_rows must be at least 1")
        self._write = write
        self._max_rows = max_rows
        self._turn = threading.Condition()
        self._queued: list[tuple[Row, _Ticket]] = []
        self._writing = False

    @property
    def queued(self) -> int:
        """Rows waiting for a write (not counting one under way)."""
        with self._turn:
            return len(self._queued)

    def add(self, row: Row) -> None:
        """Store ``row``; raise what its write raised."""
        ticket = _Ticket()
        with self._turn:
            self._queued.append((row, ticket))
            while not ticket.done:
                if self._writing:
                    self._turn.wait()
                else:
                    self._write_queued()
        if ticket.error is not None:
            raise ticket.error

    def _write_queued(self) -> None:
        """Write the queue's head, outside the condition's lock; called holding it."""
        batch = self._queued[: self._max_rows]
        del self._queued[: self._max_rows]
        self._writing = True
        errors: list[BaseException | None] = [None] * len(batch)
        written = False
        self._turn.release()
        try:
            errors = self._write_each_fate([row for row, _ in batch])
            written = True
        finally:
            self._turn.acquire()
            self._writing = False
            if written:
                for (_, ticket), error in zip(batch, errors, strict=True):
                    ticket.done, ticket.error = True, error
            else:
                # Interrupted (KeyboardInterrupt, SystemExit): nothing is known of the batch;
                # its rows go back to the queue's head for the next writer, and only this
                # thread sees the interruption.
                self._queued[:0] = batch
            self._turn.notify_all()

    def _write_each_fate(self, rows: list[Row]) -> list[BaseException | None]:
        """Each row's error (None: stored). A batch that fails is written again row by row,
        so that one bad row fails alone."""
        try:
            self._write(rows)
            return [None] * len(rows)
        except Exception as exc:
            if len(rows) == 1:
                return [exc]
        fates: list[BaseException | None] = []
        for row in rows:
            try:
                self._write([row])
                fates.append(None)
            except Exception as exc:
                fates.append(exc)
        return fates
