"""Blocking locks per key that hold across processes: byte-range locks on one lock file."""

from __future__ import annotations

import fcntl
import os
import struct
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tooldedup.dedup.canonical import stable_hash
from tooldedup.dedup.errors import StoreBusy

__all__ = ["FileStripeLocks"]

# Open-file-description locks (Linux 3.15+) belong to one open file, not to the process:
# with a descriptor per thread, two threads of one process exclude each other too, and the
# kernel does no process-level deadlock detection that would fail a wait.
_OFD_SET = getattr(fcntl, "F_OFD_SETLK", None)


def _flock(kind: int, offset: int) -> bytes:
    # struct flock: l_type, l_whence, l_start, l_len, l_pid (0 for OFD locks), padded.
    return struct.pack("hhqqi4x", kind, os.SEEK_SET, offset, 1, 0)


class _ThreadOwner:
    """Lives in one thread's local storage; collected when the thread ends."""


class FileStripeLocks:
    """One byte of a lock file per stripe; a key's stripe is locked for the block.

    Every process that opens the same lock file waits on the same stripes, so a decision
    and its claim run one at a time per key across processes. A waiter retries after
    pauses that start at 0.2 ms (a decision holds the lock for about a millisecond),
    where SQLite's busy handler would sleep in steps of milliseconds from the start.
    """

    def __init__(self, path: Path, stripes: int = 65_536) -> None:
        if stripes <= 0:
            raise ValueError("stripes must be positive")
        self._path = path
        self._stripes = stripes
        self._local = threading.local()
        self._fds: list[int] = []
        self._fds_lock = threading.Lock()

    @staticmethod
    def supported() -> bool:
        """Whether this platform has open-file-description locks."""
        return _OFD_SET is not None

    def _fd(self) -> int:
        fd: int | None = getattr(self._local, "fd", None)
        if fd is None:
            fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o600)
            self._local.fd = fd
            with self._fds_lock:
                self._fds.append(fd)
            # A thread pool retires idle threads: the descriptor goes with its thread.
            self._local.owner = _ThreadOwner()
            weakref.finalize(self._local.owner, self._release, fd)
        return fd

    def _release(self, fd: int) -> None:
        with self._fds_lock:
            if fd in self._fds:
                self._fds.remove(fd)
                os.close(fd)

    @contextmanager
    def hold(self, key: str, timeout_seconds: float = 10.0) -> Iterator[None]:
        """Hold ``key``'s stripe for the block (other threads and processes wait).

        A wait longer than ``timeout_seconds`` (a holder stopped or stuck) raises
        ``StoreBusy`` (a 503) instead of hanging.
        """
        if _OFD_SET is None:
            raise RuntimeError("open-file-description locks are not available here")
        stripe = int(stable_hash(key)[:8], 16) % self._stripes
        fd = self._fd()
        self._acquire(fd, stripe, timeout_seconds)
        try:
            yield
        finally:
            fcntl.fcntl(fd, _OFD_SET, _flock(fcntl.F_UNLCK, stripe))

    @staticmethod
    def _acquire(fd: int, stripe: int, timeout_seconds: float) -> None:
        assert _OFD_SET is not None
        request = _flock(fcntl.F_WRLCK, stripe)
        deadline = time.monotonic() + timeout_seconds
        pause = 0.0002
        while True:
            try:
                fcntl.fcntl(fd, _OFD_SET, request)
                return
            except (BlockingIOError, PermissionError):
                pass  # held elsewhere (EAGAIN or EACCES)
            if time.monotonic() >= deadline:
                raise StoreBusy(
                    f"the lock of this scope and tool was held for over {timeout_seconds:g} s"
                )
            # Short first: a decision holds the lock for about a millisecond.
            time.sleep(pause)
            pause = min(pause * 2, 0.005)

    def close(self) -> None:
        """Close every thread's descriptor (releasing whatever they held)."""
        with self._fds_lock:
            for fd in self._fds:
                os.close(fd)
            self._fds.clear()
        self._local = threading.local()
