"""Statistics of load runs, and the JSON, markdown and PNG they are written as."""

from __future__ import annotations

import json
import statistics
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.client import RunResult

__all__ = ["percentile", "run_stats", "summarize", "write_json", "write_markdown", "write_plot"]

Row = dict[str, Any]


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank ``q`` quantile (0..1) of ``values``."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = max(0, min(len(ordered) - 1, round(q * len(ordered) + 0.5) - 1))
    return ordered[rank]


def run_stats(result: RunResult) -> Row:
    """Count, errors, p50/p95/p99 in ms, throughput and answers of one run."""
    ms = [x * 1000.0 for x in result.latencies]
    outcomes = Counter(
        f"{a.get('decision')}/{(a.get('match') or {}).get('stage', 'none')}" for a in result.answers
    )
    return {
        "requests": len(ms),
        "errors": result.errors,
        "p50_ms": round(percentile(ms, 0.50), 3),
        "p95_ms": round(percentile(ms, 0.95), 3),
        "p99_ms": round(percentile(ms, 0.99), 3),
        "throughput": round(result.throughput, 1),
        "outcomes": dict(outcomes),
    }


def summarize(runs: Sequence[Row]) -> Row:
    """Medians over repeated runs, plus the worst run's p99."""
    outcomes: Counter[str] = Counter()
    for run in runs:
        outcomes.update(run["outcomes"])
    return {
        "p50_ms": round(statistics.median(r["p50_ms"] for r in runs), 3),
        "p95_ms": round(statistics.median(r["p95_ms"] for r in runs), 3),
        "p99_ms": round(statistics.median(r["p99_ms"] for r in runs), 3),
        "p99_max_ms": max(r["p99_ms"] for r in runs),
        "throughput": round(statistics.median(r["throughput"] for r in runs), 1),
        "requests": sum(r["requests"] for r in runs),
        "errors": sum(r["errors"] for r in runs),
        "outcomes": dict(outcomes),
    }


def _hit_rate(row: Row) -> float:
    total = sum(row["outcomes"].values())
    hits = sum(n for k, n in row["outcomes"].items() if not k.startswith("proceed"))
    return hits / total if total else float("nan")


def _fmt(value: float) -> str:
    return f"{value:.2f}" if value < 100 else f"{value:.0f}"


def _find(rows: Sequence[Row], **keys: Any) -> Row | None:
    for row in rows:
        if all(row.get(k) == v for k, v in keys.items()):
            return row
    return None


def write_markdown(data: Row, path: Path) -> None:
    """The tables: every tooldedup run, GPTCache beside it, and server memory."""
    rows: list[Row] = data["rows"]
    lines = [
        "# /v1/check under load",
        "",
        f"Machine: {data['machine']}. Command: `{data['command']}`.",
        "Latency in ms (median over repeated runs of each run's percentile); throughput in",
        "checks/s; hit = share of answers that were not `proceed`.",
        "",
        "## tooldedup",
        "",
        "| stored | session | mix | conc | p50 | p95 | p99 | p99 worst run | checks/s | hit |",
        "|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        if r["system"] != "tooldedup":
            continue
        lines.append(
            f"| {r['store']:,} | {r['session_size']} | {r['mix']} | {r['concurrency']} |"
            f" {_fmt(r['p50_ms'])} | {_fmt(r['p95_ms'])} | {_fmt(r['p99_ms'])} |"
            f" {_fmt(r['p99_max_ms'])} | {r['throughput']:.0f} | {_hit_rate(r):.0%} |"
        )
    lines += [
        "",
        "## GPTCache beside tooldedup (same lookups, sessions of 100 calls)",
        "",
        "Ratios are GPTCache over tooldedup for latency, tooldedup over GPTCache for throughput.",
        "",
        "| stored | mix | conc | GPTCache p50 | GPTCache p99 | GPTCache checks/s | GPTCache hit"
        " | p50 ratio | p99 ratio | checks/s ratio |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for g in rows:
        if g["system"] != "gptcache":
            continue
        ours = _find(
            rows, system="tooldedup", store=g["store"], session_size=g["session_size"],
            mix=g["mix"], concurrency=g["concurrency"],
        )  # fmt: skip
        if ours is None:
            continue
        lines.append(
            f"| {g['store']:,} | {g['mix']} | {g['concurrency']} | {_fmt(g['p50_ms'])} |"
            f" {_fmt(g['p99_ms'])} | {g['throughput']:.0f} | {_hit_rate(g):.0%} |"
            f" {g['p50_ms'] / ours['p50_ms']:.1f} | {g['p99_ms'] / ours['p99_ms']:.1f} |"
            f" {ours['throughput'] / max(g['throughput'], 1e-9):.1f} |"
        )
    lines += [
        "",
        "## Server memory and start-up",
        "",
        "| system | stored | session | preload s | start s | RSS at start MB | peak RSS MB |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for c in data["configs"]:
        lines.append(
            f"| {c['system']} | {c['store']:,} | {c['session_size']} | {c['preload_seconds']:.0f}"
            f" | {c['startup_seconds']:.1f} | {c['rss_start_mb']:.0f} | {c['rss_peak_mb']:.0f} |"
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_plot(data: Row, path: Path, session_size: int = 100) -> None:
    """p50 and p99 at concurrency 1 against store size, per mix, with GPTCache beside."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows: list[Row] = data["rows"]
    fig, ax = plt.subplots(figsize=(8, 5), dpi=110)
    styles = {
        ("tooldedup", "exact"): "tab:blue",
        ("tooldedup", "semantic"): "tab:green",
        ("tooldedup", "semantic-cold"): "tab:olive",
        ("tooldedup", "miss"): "tab:orange",
        ("gptcache", "exact"): "tab:purple",
        ("gptcache", "semantic"): "tab:red",
        ("gptcache", "miss"): "tab:brown",
    }
    for (system, mix), color in styles.items():
        picked = sorted(
            (r["store"], r["p50_ms"], r["p99_ms"])
            for r in rows
            if r["system"] == system and r["mix"] == mix and r["concurrency"] == 1
            and r["session_size"] == session_size
        )  # fmt: skip
        if not picked:
            continue
        xs = [p[0] for p in picked]
        ax.plot(xs, [p[2] for p in picked], "o-", color=color, label=f"{system} {mix} p99")
        ax.plot(
            xs, [p[1] for p in picked], "o:", color=color, alpha=0.6, label=f"{system} {mix} p50"
        )
    ax.axhline(10, color="grey", lw=0.8, ls="--")
    ax.axhline(2, color="grey", lw=0.8, ls="--")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("stored calls")
    ax.set_ylabel("/check latency, ms (concurrency 1)")
    ax.set_title(f"Latency against store size (sessions of {session_size} calls)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def write_json(data: Row, path: Path) -> None:
    """The full results, one object."""
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
