"""Blocking locks per key that hold across processes: byte-range locks on one lock file."""

from __future__ import annotations

import fcntl
import os
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tooldedup.dedup.canonical import stable_hash

__all__ = ["FileStripeLocks"]

# Open-file-description locks (Linux 3.15+) belong to one open file, not to the process:
# with a descriptor per thread, two threads of one process exclude each other too, and the
# kernel does no process-level deadlock detection that would fail a plain wait.
_OFD_WAIT = getattr(fcntl, "F_OFD_SETLKW", None)
_OFD_SET = getattr(fcntl, "F_OFD_SETLK", None)


def _flock(kind: int, offset: int) -> bytes:
    # struct flock: l_type, l_whence, l_start, l_len, l_pid (0 for OFD locks), padded.
    return struct.pack("hhqqi4x", kind, os.SEEK_SET, offset, 1, 0)


class FileStripeLocks:
    """One byte of a lock file per stripe; a key's stripe is locked for the block.

    Every process that opens the same lock file waits on the same stripes, so a decision
    and its claim run one at a time per key across processes. Waiting blocks in the kernel
    and wakes at once, unlike SQLite's busy handler, which sleeps in steps.
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
        return _OFD_WAIT is not None

    def _fd(self) -> int:
        fd: int | None = getattr(self._local, "fd", None)
        if fd is None:
            fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o600)
            self._local.fd = fd
            with self._fds_lock:
                self._fds.append(fd)
        return fd

    @contextmanager
    def hold(self, key: str) -> Iterator[None]:
        """Hold ``key``'s stripe for the block (other threads and processes wait)."""
        if _OFD_WAIT is None or _OFD_SET is None:
            raise RuntimeError("open-file-description locks are not available here")
        stripe = int(stable_hash(key)[:8], 16) % self._stripes
        fd = self._fd()
        fcntl.fcntl(fd, _OFD_WAIT, _flock(fcntl.F_WRLCK, stripe))
        try:
            yield
        finally:
            fcntl.fcntl(fd, _OFD_SET, _flock(fcntl.F_UNLCK, stripe))

    def close(self) -> None:
        """Close every thread's descriptor (releasing whatever they held)."""
        with self._fds_lock:
            for fd in self._fds:
                os.close(fd)
            self._fds.clear()
        self._local = threading.local()
