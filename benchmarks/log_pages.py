"""How long a page of the review page's log takes with a million entries in the store.

Fills a store with ``--rows`` decision-log entries of two tenants (30 days, 20 tools,
realistic shares of decisions, stages, borderline checks and labels), then times each kind
of page the review page asks for, through the ledger, ``--runs`` times ``--repeats``
pages each, on SQLite and on PostgreSQL. Medians and p99 of all pages, per filter.

    python -m benchmarks.log_pages            # 1,000,000 rows, about 10 minutes
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.postgres import LocalPostgres
from tooldedup.calibration.review import Reviewer
from tooldedup.dedup.canonical import Canonicalizer
from tooldedup.dedup.english import EnglishPack
from tooldedup.dedup.ledger import PostgresLedger, SqliteLedger, SqlLedger
from tooldedup.dedup.ledger.base import LogQuery
from tooldedup.dedup.policy import PolicySet

RESULTS = Path(__file__).parent / "results"
DAY = 86_400.0
_INSERT = (
    "INSERT INTO decisions (check_id, ts, scope, session_id, tool, args_json, decision, stage,"
    " score, call_id, matched_call_id, latency_ms, dry_run, explain_json, borderline, tenant,"
    " key_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
)


def _rows(start: int, count: int, total: int, now: float) -> list[tuple[Any, ...]]:
    """Entries ``start`` to ``start + count`` of ``total``, spread in order over 30 days."""
    rng = random.Random(start)
    tools = [f"tool_{n:02d}" for n in range(20)]
    weights = [1.0 / (n + 1) for n in range(20)]  # a few busy tools, a long tail
    rows = []
    for n in range(start, start + count):
        ts = now - 30 * DAY + n * (30 * DAY / total)
        tenant = "acme" if rng.random() < 0.9 else "beta"
        roll = rng.random()
        decision, stage, score = "proceed", None, None
        if roll < 0.10:
            decision, stage, score = "duplicate", "exact", 1.0
        elif roll < 0.14:
            decision, stage, score = "duplicate", "semantic", rng.uniform(0.85, 1.0)
        elif roll < 0.30:
            stage, score = None, rng.uniform(0.3, 0.85)
        borderline = stage == "semantic" and score is not None and score < 0.9
        rows.append(
            (
                "chk_" + uuid.UUID(int=rng.getrandbits(128)).hex,
                ts,
                f"s{n % 5000}",
                f"s{n % 5000}",
                rng.choices(tools, weights)[0],
                '{"to":"x@example.com","body":"hello"}',
                decision,
                stage,
                score,
                None,
                None,
                rng.uniform(1.0, 12.0),
                0,
                '{"stages":[]}',
                int(borderline),
                tenant,
                "k1",
            )
        )
    return rows


def _fill(ledger: SqlLedger, count: int, now: float) -> None:
    batch = 20_000
    for start in range(0, count, batch):
        rows = _rows(start, min(batch, count - start), count, now)
        with ledger.db.write():
            ledger.db.executemany(_INSERT, rows)
    # Labels on one entry in 200: what people label by hand.
    with ledger.db.write():
        labelled = ledger.db.execute(
            "SELECT check_id FROM decisions WHERE stage = 'semantic' ORDER BY row_id"
        ).rows[::50]
        ledger.db.executemany(
            "INSERT INTO feedback (check_id, label, note, source, ts) VALUES (?,?,?,?,?)",
            [(r["check_id"], "duplicate", None, "human", now) for r in labelled],
        )


def _queries(now: float) -> dict[str, Callable[[str | None], LogQuery]]:
    week = now - 7 * DAY
    return {
        "newest": lambda before: LogQuery("acme", 50, before),
        "one tool (tail)": lambda before: LogQuery("acme", 50, before, tool="tool_19"),
        "duplicates": lambda before: LogQuery("acme", 50, before, decision="duplicate"),
        "semantic stage": lambda before: LogQuery("acme", 50, before, stage="semantic"),
        "score 0.85-0.90": lambda before: LogQuery(
            "acme", 50, before, min_score=0.85, max_score=0.90
        ),
        "borderline, unlabelled": lambda before: LogQuery(
            "acme", 50, before, borderline=True, labelled=False
        ),
        "labelled": lambda before: LogQuery("acme", 50, before, labelled=True),
        "a week, 3 weeks ago": lambda before: LogQuery(
            "acme", 50, before, since=week - 14 * DAY, until=week - 7 * DAY
        ),
        "small tenant": lambda before: LogQuery("beta", 50, before, stage="semantic"),
        # The cases that find little or nothing: a page must not read the tenant to say so.
        "score -1 to -0.5 (none)": lambda before: LogQuery(
            "acme", 50, before, min_score=-1.0, max_score=-0.5
        ),
        "score 0.999-1.0, semantic": lambda before: LogQuery(
            "acme", 50, before, stage="semantic", min_score=0.999
        ),
        "labelled, rare tool": lambda before: LogQuery(
            "acme", 50, before, tool="tool_19", labelled=True
        ),
        "a tool, one day (rare)": lambda before: LogQuery(
            "acme", 50, before, tool="tool_19", since=now - 2 * DAY, until=now - DAY
        ),
    }


def _time(ledger: SqlLedger, make: Callable[[str | None], LogQuery], repeats: int) -> list[float]:
    """``repeats`` pages: the first, then each next page by its cursor (as the page does)."""
    times = []
    before = None
    for _ in range(repeats):
        started = time.perf_counter()
        page = ledger.log_page(make(before))
        times.append((time.perf_counter() - started) * 1000.0)
        before = page[-1].check_id if len(page) == 50 else None
    return times


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


def measure(ledger: SqlLedger, rows: int, runs: int, repeats: int) -> dict[str, Any]:
    """Fill ``ledger`` and time every kind of page."""
    now = time.time()
    started = time.perf_counter()
    _fill(ledger, rows, now)
    filled = time.perf_counter() - started
    results: dict[str, Any] = {"rows": rows, "fill_seconds": round(filled, 1), "pages": {}}
    for name, make in _queries(now).items():
        runs_ms = [_time(ledger, make, repeats) for _ in range(runs)]
        every = [t for run in runs_ms for t in run]
        results["pages"][name] = {
            "median_ms": round(statistics.median(every), 2),
            "p99_ms": round(_p99(every), 2),
            "run_medians_ms": [round(statistics.median(r), 2) for r in runs_ms],
        }
    reviewer = Reviewer(
        ledger, _NoEmbedder(), lambda tenant: PolicySet(), Canonicalizer(EnglishPack())
    )
    summary_ms = []
    for _ in range(runs):
        started = time.perf_counter()
        reviewer.summary("acme", 24.0 * 7)
        summary_ms.append((time.perf_counter() - started) * 1000.0)
    results["summary_7d_ms"] = [round(t, 1) for t in summary_ms]
    return results


class _NoEmbedder:
    """The summary embeds nothing."""

    model_id = "none"
    dims = 0

    def embed(self, texts: Any) -> Any:
        raise AssertionError("the summary embeds nothing")


def _markdown(results: dict[str, dict[str, Any]]) -> str:
    lines = [
        "# Review page: a page of the decision log, 1M entries in the store",
        "",
        "`python -m benchmarks.log_pages`: pages of 50 entries through the ledger, each next page"
        " by its cursor; medians and p99 over all pages of all runs.",
        "",
        "| page | SQLite median | SQLite p99 | PostgreSQL median | PostgreSQL p99 |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    lite, pg = results["sqlite"]["pages"], results["postgres"]["pages"]
    for name in lite:
        lines.append(
            f"| {name} | {lite[name]['median_ms']} ms | {lite[name]['p99_ms']} ms"
            f" | {pg[name]['median_ms']} ms | {pg[name]['p99_ms']} ms |"
        )
    lines += [
        "",
        f"Summary of the last 7 days: SQLite {results['sqlite']['summary_7d_ms']} ms,"
        f" PostgreSQL {results['postgres']['summary_7d_ms']} ms (each run).",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    """Run on both backends and write ``results/log-pages.{json,md}``."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=40)
    args = parser.parse_args()
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        lite = SqliteLedger(Path(tmp) / "ledger.db")
        try:
            results["sqlite"] = measure(lite, args.rows, args.runs, args.repeats)
        finally:
            lite.close()
    postgres = LocalPostgres(durable=True)
    try:
        pg = PostgresLedger(postgres.create_database())
        try:
            results["postgres"] = measure(pg, args.rows, args.runs, args.repeats)
        finally:
            pg.close()
    finally:
        postgres.close()
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "log-pages.json").write_text(json.dumps(results, indent=2) + "\n")
    (RESULTS / "log-pages.md").write_text(_markdown(results))
    print(_markdown(results))


if __name__ == "__main__":
    main()
