"""What the review page shows: a decision beside the call it was compared with, field by
field, and a tenant's traffic and labels at a glance."""

from __future__ import annotations

import json
import math
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from tooldedup.calibration.samples import sample_from_entry
from tooldedup.calibration.thresholds import labels_to_go
from tooldedup.dedup.canonical import Canonicalizer
from tooldedup.dedup.errors import InvalidInput, NotFound
from tooldedup.dedup.ledger.base import LogEntry, LogQuery
from tooldedup.dedup.ledger.database import Row
from tooldedup.dedup.policy import PolicySet
from tooldedup.dedup.protocols import Embedder
from tooldedup.dedup.records import CallRecord

__all__ = [
    "DecisionView",
    "FieldView",
    "LogReader",
    "Reviewer",
    "Summary",
    "ToolCount",
]

# The figure the page shows is the one `tooldedup calibrate` prints with its defaults.
TARGET_PRECISION = 0.99
CONFIDENCE = 0.95
_MAX_COMPARED_TEXTS = 64
_LATENCY_ROWS = 50_000
_LABELLED_ROWS = 100_000


class LogReader(Protocol):
    """What the page reads from the ledger."""

    def log_page(self, query: LogQuery) -> list[LogEntry]:
        """Log entries, newest first."""
        ...

    def log_entry(self, tenant: str, check_id: str) -> LogEntry | None:
        """One log entry."""
        ...

    def get(self, tenant: str, call_id: str) -> CallRecord | None:
        """One call."""
        ...

    def traffic(self, tenant: str, since: float, bucket_seconds: int) -> list[Row]:
        """Checks counted per bucket, decision, stage and tool."""
        ...

    def latencies(self, tenant: str, since: float, limit: int) -> list[float]:
        """The latency of the newest checks."""
        ...

    def labelled(self, tenant: str, limit: int) -> list[Row]:
        """The newest labelled checks with their latest label."""
        ...

    def observed_counts(self, tenant: str, since: float) -> list[Row]:
        """Observe mode's would-be answers, per tool and answer."""
        ...

    def ask_ends(
        self, tenant: str, since: float, now: float, check_ids: Sequence[str] | None = None
    ) -> dict[str, tuple[str, str]]:
        """Asks by check id: (tool, how it ended)."""
        ...


@dataclass(frozen=True, slots=True)
class FieldView:
    """One field of the two calls: compared exactly, or by meaning (with its cosine)."""

    path: str
    compared: str  # "exact" or "meaning"
    proposed: str | None
    matched: str | None
    same: bool
    cosine: float | None = None


@dataclass(frozen=True, slots=True)
class DecisionView:
    """A logged decision, the call it claimed, and the call it was compared with."""

    entry: LogEntry
    claimed: CallRecord | None
    compared_with: CallRecord | None
    # Why that call: "match" (the decision's match) or "closest" (nothing matched; the
    # same-tool call whose exact fields differ least).
    relation: str | None
    fields: tuple[FieldView, ...]


@dataclass(frozen=True, slots=True)
class ToolCount:
    """One tool's checks, duplicates, labels, and the labels calibration still needs.

    ``labels_to_go`` is the count ``tooldedup calibrate`` asks for when too few labels are
    its only problem; ``note`` says when labels alone will not do.
    """

    tool: str
    checks: int
    duplicates: int
    labels: int
    labels_to_go: int
    note: str | None = None
    # Asks by how they ended, and observe mode's would-be answers, by answer.
    asks: dict[str, int] = field(default_factory=dict)
    observed: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Summary:
    """A tenant's traffic since ``since``, and its labels."""

    since: float
    checks: int
    bucket_seconds: int
    # (bucket start, decision, stage or "none", count)
    series: tuple[tuple[float, str, str, int], ...]
    tools: tuple[ToolCount, ...]
    latency_ms: dict[str, float]
    # (score, label) of labelled checks in the window the semantic stage scored
    scores: tuple[tuple[float, str], ...]
    # The latency percentiles are of the newest this many checks of the window.
    latency_sample: int
    min_cosine_duplicate: float
    min_cosine_borderline: float
    target_precision: float = TARGET_PRECISION


class Reviewer:
    """Reads the log for the review page: pages, one decision in detail, a summary."""

    def __init__(
        self,
        ledger: LogReader,
        embedder: Embedder,
        policies_for: Callable[[str], PolicySet],
        canonicalizer: Canonicalizer,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._ledger = ledger
        self._embedder = embedder
        # The service's own: a text it did not read is shown as compared exactly, as it was.
        self._canonicalizer = canonicalizer
        self._policies_for = policies_for
        self._clock = clock

    def page(self, query: LogQuery) -> list[LogEntry]:
        """Log entries, newest first."""
        return self._ledger.log_page(query)

    def ask_endings(self, tenant: str, entries: Sequence[LogEntry]) -> dict[str, str]:
        """How each ``ask`` among ``entries`` ended: confirmed, abandoned, expired or open."""
        asked = [e.check_id for e in entries if e.decision == "ask"]
        if not asked:
            return {}
        since = min(e.ts for e in entries if e.decision == "ask")
        ends = self._ledger.ask_ends(tenant, since, self._clock(), asked)
        return {check_id: ending for check_id, (_, ending) in ends.items()}

    def decision(self, tenant: str, check_id: str) -> DecisionView:
        """One decision beside what it was compared with."""
        entry = self._ledger.log_entry(tenant, check_id)
        if entry is None:
            raise NotFound(f"no check with id {check_id!r}")
        claimed = None if entry.call_id is None else self._ledger.get(tenant, entry.call_id)
        other_id, relation = entry.matched_call_id, "match"
        if other_id is None and isinstance(entry.explain, dict):
            other_id, relation = entry.explain.get("differing_from"), "closest"
        other = None if not isinstance(other_id, str) else self._ledger.get(tenant, other_id)
        if other is None:
            return DecisionView(entry, claimed, None, None, ())
        return DecisionView(entry, claimed, other, relation, self._fields(entry, other))

    def _fields(self, entry: LogEntry, other: CallRecord) -> tuple[FieldView, ...]:
        policy = self._policies_for(entry.tenant).for_tool(entry.tool)
        if not isinstance(entry.args, dict):
            return ()
        try:
            mine = self._canonicalizer.canonicalize(
                entry.args, policy, received_at=entry.ts, tool=entry.tool
            )
        except InvalidInput:
            return ()
        exact_mine, exact_theirs = dict(mine.exact_leaves), dict(other.exact_leaves)
        text_mine = {leaf.path: leaf.text for leaf in mine.semantic_leaves}
        text_theirs = {leaf.path: leaf.text for leaf in other.semantic_leaves}
        views = []
        for path in sorted(exact_mine.keys() | exact_theirs.keys()):
            a, b = exact_mine.get(path), exact_theirs.get(path)
            views.append(FieldView(path, "exact", a, b, a == b))
        paths = sorted(text_mine.keys() | text_theirs.keys())
        pairs = [p for p in paths if p in text_mine and p in text_theirs][:_MAX_COMPARED_TEXTS]
        cosines: dict[str, float] = {}
        if pairs:
            vectors = self._embedder.embed(
                [text_mine[p] for p in pairs] + [text_theirs[p] for p in pairs]
            )
            for n, path in enumerate(pairs):
                cosines[path] = round(float(vectors[n] @ vectors[len(pairs) + n]), 6)
        for path in paths:
            a, b = text_mine.get(path), text_theirs.get(path)
            views.append(FieldView(path, "meaning", a, b, a == b, cosines.get(path)))
        return tuple(views)

    def summary(self, tenant: str, hours: float) -> Summary:
        """Checks per decision and stage over time, per tool, latency, labelled scores."""
        since = self._clock() - hours * 3600.0
        bucket = 3600 if hours > 6 else 300
        series: Counter[tuple[float, str, str]] = Counter()
        checks: Counter[str] = Counter()
        duplicates: Counter[str] = Counter()
        for row in self._ledger.traffic(tenant, since, bucket):
            count = int(row["n"])
            key = (float(row["bucket"]), str(row["decision"]), str(row["stage"] or "none"))
            series[key] += count
            checks[row["tool"]] += count
            duplicates[row["tool"]] += count if row["decision"] == "duplicate" else 0
        latencies = self._ledger.latencies(tenant, since, _LATENCY_ROWS)
        labelled = self._ledger.labelled(tenant, _LABELLED_ROWS)
        scores = tuple(
            (round(float(row["score"]), 6), str(row["label"]))
            for row in labelled
            if float(row["ts"]) >= since and row["score"] is not None and row["stage"] != "exact"
        )
        by_tool: dict[str, list[Row]] = defaultdict(list)
        for row in labelled:
            by_tool[row["tool"]].append(row)
        asks: dict[str, Counter[str]] = defaultdict(Counter)
        for tool, ending in self._ledger.ask_ends(tenant, since, self._clock()).values():
            asks[tool][ending] += 1
        observed: dict[str, Counter[str]] = defaultdict(Counter)
        for row in self._ledger.observed_counts(tenant, since):
            observed[row["tool"]][str(row["observed"])] += int(row["n"])
        defaults = self._policies_for(tenant).defaults
        return Summary(
            since=since,
            checks=sum(checks.values()),
            bucket_seconds=bucket,
            series=tuple(sorted((t, d, s, n) for (t, d, s), n in series.items())),
            tools=tuple(
                replace(
                    _tool_count(tool, checks[tool], duplicates[tool], by_tool[tool]),
                    asks=dict(asks[tool]),
                    observed=dict(observed[tool]),
                )
                for tool in sorted(checks.keys() | by_tool.keys())
            ),
            latency_ms=_percentiles(latencies),
            scores=scores,
            latency_sample=len(latencies),
            min_cosine_duplicate=defaults.min_cosine_duplicate,
            min_cosine_borderline=defaults.min_cosine_borderline,
        )


def _tool_count(tool: str, checks: int, duplicates: int, labelled: Sequence[Row]) -> ToolCount:
    samples = [
        sample_from_entry(
            {
                "check_id": row["check_id"],
                "tool": row["tool"],
                "stage": row["stage"],
                "explain": json.loads(row["explain_json"]),
            },
            row["label"] == "duplicate",
            "log",
        )
        for row in labelled
    ]
    false_fixed = sum(s.fixed is not None and not s.duplicate for s in samples)
    note = None
    if false_fixed:
        # What calibrate says then: more labels will not make these thresholds hold.
        note = f"exact and fuzzy matches alone already include {false_fixed} false duplicates"
    to_go = labels_to_go(samples, TARGET_PRECISION, CONFIDENCE)
    return ToolCount(tool, checks, duplicates, len(samples), to_go, note)


def _percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    ordered = sorted(values)
    return {
        name: round(ordered[min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)], 3)
        for name, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99))
    }
