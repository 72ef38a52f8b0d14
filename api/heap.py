"""The serving process's garbage collector, set once its app is built."""

from __future__ import annotations

import gc

__all__ = ["GC_THRESHOLDS", "settle_heap"]

# Collections by generation: after 20,000 new container objects rather than CPython's 700, and
# the older generations at 20 and 100 collections of the one below. A check makes a few
# hundred short-lived containers, nearly all freed by reference counting: at the default a
# young collection ran every few checks and a full one scanned every memo and table.
GC_THRESHOLDS = (20_000, 20, 100)


def settle_heap() -> None:
    """Collect once, freeze what startup built, and collect less often from then on.

    What startup built (the model, word tables, the app) is kept out of every later
    collection. Called by a serving process (``tooldedup serve`` and each of its workers)
    once its app is built; never in a process that builds many apps, whose garbage it would
    keep.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
