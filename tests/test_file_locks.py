"""Byte-range locks across threads and processes: exclusion, a bounded wait, no leaks."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from tooldedup.dedup.errors import StoreBusy
from tooldedup.dedup.ledger.file_locks import FileStripeLocks

pytestmark = pytest.mark.skipif(
    not FileStripeLocks.supported(), reason="open-file-description locks are Linux-only"
)


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_a_held_stripe_makes_another_thread_wait_then_give_up(tmp_path: Path) -> None:
    locks = FileStripeLocks(tmp_path / "x.db-dedup-lock")
    held, release = threading.Event(), threading.Event()

    def holder() -> None:
        with locks.hold("scope/tool"):
            held.set()
            release.wait()

    thread = threading.Thread(target=holder)
    thread.start()
    held.wait()
    with pytest.raises(StoreBusy, match="held for over"), locks.hold("scope/tool", 0.05):
        pass
    # Another key (another stripe) is free meanwhile.
    with locks.hold("scope/other-tool", 0.05):
        pass
    release.set()
    thread.join()
    with locks.hold("scope/tool", 0.05):
        pass
    locks.close()


def test_descriptors_leave_with_their_threads(tmp_path: Path) -> None:
    locks = FileStripeLocks(tmp_path / "x.db-dedup-lock")
    before = _open_fds()

    def one() -> None:
        with locks.hold("k"):
            pass

    for _ in range(30):
        thread = threading.Thread(target=one)
        thread.start()
        thread.join()
    assert _open_fds() <= before + 1
    locks.close()
