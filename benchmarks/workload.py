"""The request bodies of one load run: cold and steady semantic re-issues, exact re-issues, misses.

Every semantic re-issue and every miss carries free text the server has never embedded, so each
one pays for a real model call; only exact re-issues repeat. Targets are stored calls picked at
random; the cold pass sends one paraphrase per target, which is the first semantic check in that
target's group and so pays for loading the group into faiss. Steady semantic checks and misses
then go to the same, now warm, sessions.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from benchmarks.corpus import Layout, Pool, exact_reissue, miss_call, stored_call, with_text

__all__ = ["MIXES", "Workload", "build_workload"]

Body = dict[str, Any]
MIXES = ("exact", "semantic", "miss")


@dataclass
class Workload:
    """Bodies per mix, handed out in slices so that no run reuses another's free text."""

    targets: list[tuple[int, int]]
    cold: list[Body]
    bodies: dict[str, list[Body]]
    _used: dict[str, int] = field(default_factory=dict)

    def take(self, mix: str, count: int) -> list[Body]:
        """The next ``count`` bodies of ``mix``; exact re-issues cycle, the others never repeat."""
        pool = self.bodies[mix]
        start = self._used.get(mix, 0)
        if mix == "exact":
            self._used[mix] = start + count
            return [pool[(start + i) % len(pool)] for i in range(count)]
        chunk = pool[start : start + count]
        self._used[mix] = start + len(chunk)
        return chunk


def _body(layout: Layout, session: int, tool: str, args: dict[str, Any]) -> Body:
    return {"session_id": layout.session_id(session), "tool": tool, "args": args}


def build_workload(
    layout: Layout, pool: Pool, *, targets: int, semantic: int, misses: int, seed: int = 11
) -> Workload:
    """Bodies for ``targets`` random stored calls, ``semantic`` paraphrases and ``misses``."""
    rng = random.Random(seed)
    picked: dict[tuple[int, int], None] = {}
    while len(picked) < min(targets, layout.total):
        picked[(rng.randrange(layout.sessions), rng.randrange(layout.session_size))] = None
    chosen = list(picked)
    cold: list[Body] = []
    exact: list[Body] = []
    options: list[list[Body]] = []
    for session, index in chosen:
        tool, args, number = stored_call(layout, pool, session, index)
        item = pool.items[number]
        choices = item.paraphrases()
        rng.shuffle(choices)
        texts = [item.text(c) for c in choices]
        cold.append(_body(layout, session, tool, with_text(tool, args, texts[0])))
        exact.append(_body(layout, session, tool, exact_reissue(args)))
        options.append([_body(layout, session, tool, with_text(tool, args, t)) for t in texts[1:]])
    steady: list[Body] = []
    for round_ in range(max(len(o) for o in options)):
        steady.extend(o[round_] for o in options if round_ < len(o))
    sem = steady[:semantic]
    rng.shuffle(sem)
    miss: list[Body] = []
    for n in range(misses):
        session, _ = chosen[n % len(chosen)]
        tool, args = miss_call(layout, pool, session, 10_000 + n)
        miss.append(_body(layout, session, tool, args))
    rng.shuffle(exact)
    return Workload(chosen, cold, {"exact": exact, "semantic": sem, "miss": miss})
