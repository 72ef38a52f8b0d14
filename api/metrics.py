"""Prometheus metrics, in a registry owned by one app."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from tooldedup.dedup.records import Decision

__all__ = ["Metrics"]

_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1.0)


class Metrics:
    """Checks by decision and stage, and check latency."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.checks = Counter(
            "tooldedup_checks",
            "Checks answered, by decision and matching stage.",
            ["decision", "stage"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "tooldedup_check_latency_seconds",
            "Time spent deciding one check.",
            buckets=_BUCKETS,
            registry=self.registry,
        )
        self.model_calls = Gauge(
            "tooldedup_model_calls",
            "Calls this process made to the embedding model (texts found in the cache or the"
            " database cost none).",
            registry=self.registry,
        )
        self.in_progress = Gauge(
            "tooldedup_checks_in_progress",
            "Checks received and not yet answered, waiting or deciding.",
            registry=self.registry,
        )
        self._counters: dict[tuple[str, str], Counter] = {}

    def observe(self, decision: Decision) -> None:
        """Count one decision."""
        stage = "none" if decision.match is None else decision.match.stage.value
        key = (decision.kind.value, stage)
        counter = self._counters.get(key)
        if counter is None:
            # Looking a labelled child up costs more than counting: each is looked up once.
            counter = self._counters[key] = self.checks.labels(decision=key[0], stage=stage)
        counter.inc()
        self.latency.observe(decision.latency_ms / 1000.0)

    def render(self) -> bytes:
        """The text exposition format."""
        return generate_latest(self.registry)
