"""GroupCommit: every row stored once, each caller told its own batch's fate."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tooldedup.dedup.ledger.group_commit import GroupCommit


class _Store:
    """Records each write; holds the first one until released, so others queue up."""

    def __init__(self, fail_on: int | None = None) -> None:
        self.batches: list[list[int]] = []
        self.fail_on = fail_on
        self.first_started = threading.Event()
        self.release_first = threading.Event()

    def write(self, rows: Sequence[int]) -> None:
        if not self.batches:
            self.first_started.set()
            self.release_first.wait(10)
        self.batches.append(list(rows))
        if self.fail_on is not None and self.fail_on in rows:
            raise RuntimeError(f"row {self.fail_on} refused")


def test_a_row_alone_is_written_at_once() -> None:
    store = _Store()
    store.release_first.set()
    GroupCommit(store.write).add(7)
    assert store.batches == [[7]]


def test_rows_added_during_a_write_share_the_next_one() -> None:
    store = _Store()
    group = GroupCommit(store.write)
    first = threading.Thread(target=group.add, args=(0,))
    first.start()
    assert store.first_started.wait(10)
    waiting = [threading.Thread(target=group.add, args=(n,)) for n in range(1, 6)]
    for thread in waiting:
        thread.start()
    while group.queued < 5:  # every later row queued behind the first write
        threading.Event().wait(0.001)
    store.release_first.set()
    for thread in [first, *waiting]:
        thread.join(10)
    assert store.batches[0] == [0]
    assert sorted(store.batches[1]) == [1, 2, 3, 4, 5]
    assert len(store.batches) == 2


def _queue_behind_first(group: GroupCommit[int], store: _Store, rows: tuple[int, ...]) -> dict:
    """Add row 0, hold its write, queue ``rows`` behind it, release; each row's outcome."""
    outcomes: dict[int, str] = {}

    def add(n: int) -> None:
        try:
            group.add(n)
            outcomes[n] = "stored"
        except RuntimeError as exc:
            outcomes[n] = str(exc)

    first = threading.Thread(target=add, args=(0,))
    first.start()
    assert store.first_started.wait(10)
    later = [threading.Thread(target=add, args=(n,)) for n in rows]
    for thread in later:
        thread.start()
    while group.queued < len(rows):
        threading.Event().wait(0.001)
    store.release_first.set()
    for thread in [first, *later]:
        thread.join(10)
    return outcomes


def test_a_bad_row_fails_alone_and_the_rest_of_its_batch_is_stored() -> None:
    store = _Store(fail_on=3)
    outcomes = _queue_behind_first(GroupCommit(store.write), store, (1, 2, 3))
    assert outcomes == {0: "stored", 1: "stored", 2: "stored", 3: "row 3 refused"}
    # The batch, then each of its rows alone.
    assert sorted(store.batches[1]) == [1, 2, 3]
    assert sorted(map(tuple, store.batches[2:])) == [(1,), (2,), (3,)]


class _Interrupted(BaseException):
    """Stands for KeyboardInterrupt or SystemExit in the writing thread."""


def test_an_interrupted_writer_leaves_its_rows_to_the_next() -> None:
    written: list[int] = []
    interrupt = [True]

    def write(rows: Sequence[int]) -> None:
        if interrupt[0]:
            interrupt[0] = False
            raise _Interrupted
        written.extend(rows)

    group = GroupCommit(write)
    with pytest.raises(_Interrupted):
        group.add(1)
    assert group.queued == 1  # not lost, not marked stored
    group.add(2)  # the next writer takes both
    assert sorted(written) == [1, 2]


@pytest.mark.parametrize("max_rows", [0, -1])
def test_max_rows_must_be_positive(max_rows: int) -> None:
    with pytest.raises(ValueError, match="max_rows"):
        GroupCommit(lambda rows: None, max_rows=max_rows)


@settings(max_examples=25, deadline=None)
@given(threads=st.integers(1, 12), per_thread=st.integers(1, 20), max_rows=st.integers(1, 8))
def test_every_row_is_written_exactly_once(threads: int, per_thread: int, max_rows: int) -> None:
    written: list[int] = []
    lock = threading.Lock()

    def write(rows: Sequence[int]) -> None:
        assert 1 <= len(rows) <= max_rows
        with lock:
            written.extend(rows)

    group = GroupCommit(write, max_rows=max_rows)

    def run(first: int) -> None:
        for n in range(first, first + per_thread):
            group.add(n)

    workers = [threading.Thread(target=run, args=(t * per_thread,)) for t in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(30)
    assert sorted(written) == list(range(threads * per_thread))
