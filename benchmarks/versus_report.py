"""The tables of ``benchmarks.versus``: medians over runs, ratios to the baseline, Markdown."""

from __future__ import annotations

import math
import statistics
from typing import Any

__all__ = ["TARGETS", "markdown", "noise", "paired_ratios", "ratios", "summary"]

# The targets, as bounds on today's build ÷ the baseline.
TARGETS = (
    ("semantic_c1", "p50_ms", "<=", 1.2),
    ("semantic_c1", "p99_ms", "<=", 1.5),
    ("exact_c8", "per_second", ">=", 0.9),
)


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The median p50, p99 and checks/s of some runs, and whether any went wrong."""
    return {
        "p50_ms": statistics.median(r["p50_ms"] for r in runs),
        "p99_ms": statistics.median(r["p99_ms"] for r in runs),
        "per_second": statistics.median(r["per_second"] for r in runs),
        "non_2xx": sum(r["non_2xx"] for r in runs),
        "socket_errors": sum(r["socket_errors"] for r in runs),
        "wrapped": any(r["wrapped"] for r in runs),
    }


def noise(data: dict[str, Any], quiet_wait: float) -> dict[str, Any]:
    """Load averages and the cores busy outside the server and wrk, over every run."""
    every = [r for s in data["systems"] for runs in s["runs"].values() for r in runs]
    return {
        "runs": len(every),
        "load1_median": round(statistics.median(r["load1"] for r in every), 2),
        "load1_max": max(r["load1"] for r in every),
        "other_cores_median": round(statistics.median(r["other_cores"] for r in every), 2),
        "other_cores_max": max(r["other_cores"] for r in every),
        "runs_not_quiet": sum(r["quiet_wait_seconds"] >= quiet_wait for r in every),
    }


def ratios(data: dict[str, Any]) -> dict[str, dict[str, dict[str, float]]]:
    """Each of today's builds ÷ the baseline (the first system), per measure."""
    base = data["systems"][0]["medians"]
    out: dict[str, dict[str, dict[str, float]]] = {}
    for system in data["systems"][1:]:
        out[system["name"]] = {
            measure: {
                k: round(v[k] / (base[measure][k] or math.nan), 2)
                for k in ("p50_ms", "p99_ms", "per_second")
            }
            for measure, v in system["medians"].items()
        }
    return out


def paired_ratios(data: dict[str, Any]) -> dict[str, dict[str, dict[str, float]]]:
    """Each of today's builds ÷ the baseline, run by run (the servers of one repeat run back
    to back), then the median: the machine's drift between repeats falls out."""
    base = data["systems"][0]["runs"]
    keys = ("p50_ms", "p99_ms", "per_second")
    return {
        system["name"]: {
            measure: {
                k: round(
                    statistics.median(
                        r[k] / (b[k] or math.nan) for r, b in zip(runs, base[measure], strict=True)
                    ),
                    2,
                )
                for k in keys
            }
            for measure, runs in system["runs"].items()
        }
        for system in data["systems"][1:]
    }


def _cell(value: float, op: str | None = None, bound: float | None = None) -> str:
    if op is None or bound is None:
        return f"{value:.2f}"
    ok = value <= bound if op == "<=" else value >= bound
    return f"{value:.2f} {'✓' if ok else '✗'}"


def markdown(data: dict[str, Any]) -> str:
    """The report: conditions, the medians, the ratios with the targets, each run."""
    systems = data["systems"]
    names = [s["name"] for s in systems]
    lines = [
        f"`{data['command']}`",
        "",
        f"Baseline {data['baseline']}; today's build {data['current']}.",
        "",
        f"{data['machine']}. Started {data['started']}, finished {data['finished']}.",
        f"Load average over the runs: median {data['noise']['load1_median']},"
        f" max {data['noise']['load1_max']}; cores busy outside the server and wrk during a run:"
        f" median {data['noise']['other_cores_median']}, max {data['noise']['other_cores_max']};"
        f" {data['noise']['runs_not_quiet']} of {data['noise']['runs']} runs started before the"
        " machine was idle.",
        "",
        f"Medians of {data['repeats']} wrk runs of {data['seconds']:g} s per server and measure,"
        " alternating the servers; p50 / p99 in ms, then checks/s."
        + (f" Servers and wrk ran at niceness {data['nice']}." if data.get("nice") else "")
        + (
            f" Every server ran with --embed-threads {data['embed_threads']}."
            if data.get("embed_threads")
            else ""
        ),
        "",
        "| measure | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for measure in systems[0]["medians"]:
        cells = [
            f"{s['medians'][measure]['p50_ms']:.2f} / {s['medians'][measure]['p99_ms']:.2f}"
            f" ms, {s['medians'][measure]['per_second']:.0f}/s"
            for s in systems
        ]
        lines.append(f"| {measure} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Today's build ÷ the baseline (the issue's targets in the last column): the ratio of"
        " the medians above, and the median of each repeat's ratio (paired: the servers of a"
        " repeat run one after the other, so the machine's drift between repeats falls out).",
        "",
        "| measure | "
        + " | ".join(f"{name} | {name}, paired" for name in data["ratios"])
        + " | target |",
        "|---|" + "---|" * (2 * len(data["ratios"]) + 1),
    ]
    both = [(data["ratios"][n], data["paired_ratios"][n]) for n in data["ratios"]]
    for measure, key, op, bound in TARGETS:
        if measure not in systems[0]["medians"]:
            continue  # not measured in this run (--measures)
        cells = [_cell(r[measure][key], op, bound) for pair in both for r in pair]
        lines.append(f"| {measure} {key} | " + " | ".join(cells) + f" | {op} {bound} |")
    for measure in systems[0]["medians"]:
        for key in ("p50_ms", "p99_ms", "per_second"):
            if any(m == measure and k == key for m, k, _, _ in TARGETS):
                continue
            cells = [_cell(r[measure][key]) for pair in both for r in pair]
            lines.append(f"| {measure} {key} | " + " | ".join(cells) + " | |")
    lines += ["", "Each run (p50 / p99 ms, checks/s, load average, other cores):", ""]
    for s in systems:
        for measure, runs in s["runs"].items():
            each = "; ".join(
                f"{r['p50_ms']:.2f}/{r['p99_ms']:.2f}, {r['per_second']:.0f},"
                f" {r['load1']}, {r['other_cores']}"
                for r in runs
            )
            lines.append(f"- {s['name']} {measure}: {each}")
    repeated = [
        f"{s['name']} run {i + 1}: {r['requests'] - r['first_seen']} of {r['requests']}"
        for s in systems
        for i, r in enumerate(s["runs"].get("semantic_c1", []))
        if r.get("first_seen", r["requests"]) < r["requests"]
    ]
    lines += [
        "",
        "Semantic re-issues whose texts the server had been sent before (the list of fresh"
        " paraphrases ran out): " + ("; ".join(repeated) if repeated else "none") + ".",
    ]
    lines += [
        "",
        "Semantic re-issues, 50 answered as a dry run (decision/stage): "
        + "; ".join(f"{s['name']} {s['sample']}" for s in systems),
    ]
    return "\n".join(lines) + "\n"
