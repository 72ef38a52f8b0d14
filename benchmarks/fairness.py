"""How long a heavy session holds up another: /healthz and light checks, idle and under load.

    python -m benchmarks.fairness [--runs 3] [--out benchmarks/results/fairness.md]

Each run starts a real `tooldedup serve`. Session A's load comes from a separate process
(``--drive``): heavy checks of 256 new free-text leaves (~200k characters, inside a budget
raised for the tool), each followed by 45 small checks, back to back. Meanwhile this process
sends light checks in other sessions (B) and ``/healthz`` one at a time, and records their latency;
the same requests with no load give the baseline. The table gives the median over runs of
each run's p50 and p99.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from benchmarks.report import percentile
from benchmarks.servers import python, serve_process

WORDS = (
    "garden morning letter window quiet river yellow market bridge winter summer kitchen "
    "lantern meadow harbour pencil orchard forest candle blanket ladder mirror basket "
    "village valley cottage journey station theatre library painting country mountain"
).split()
BUDGET = {"max_text_leaves": 256, "max_text_chars": 200_000}


def _prose(rng: random.Random, chars: int) -> str:
    words: list[str] = []
    while sum(len(w) + 1 for w in words) < chars:
        words.append(rng.choice(WORDS))
    return " ".join(words)[:chars].rsplit(" ", 1)[0]


def drive(port: int, rounds: int, seed: int) -> None:
    """Session A: each round, one heavy check and 45 small ones at once."""
    rng = random.Random(seed)
    url = f"http://127.0.0.1:{port}/v1/check"
    with httpx.Client(timeout=300) as client, ThreadPoolExecutor(46) as pool:
        for _ in range(rounds):
            heavy = {"notes": [_prose(rng, 780) for _ in range(256)]}
            small = [{"to": "a@example.com", "body": _prose(rng, 60)} for _ in range(45)]
            bodies = [{"session_id": "heavy", "tool": "log", "args": a} for a in [heavy, *small]]
            for response in pool.map(lambda b: client.post(url, json=b), bodies):
                response.raise_for_status()


def _measure(client: httpx.Client, rng: random.Random, until: subprocess.Popen[bytes] | None,
             count: int) -> tuple[list[float], list[float]]:  # fmt: skip
    checks: list[float] = []
    health: list[float] = []
    while (until is None and len(checks) < count) or (until is not None and until.poll() is None):
        # An ordinary check: a new call in a session of its own, so that idle and loaded
        # requests cost the same (a growing session would make later ones dearer).
        session = f"light-{rng.getrandbits(64):x}"
        body = {"session_id": session, "tool": "log", "args": {"note": _prose(rng, 80)}}
        started = time.perf_counter()
        client.post("/v1/check", json=body).raise_for_status()
        checks.append((time.perf_counter() - started) * 1000.0)
        started = time.perf_counter()
        client.get("/healthz").raise_for_status()
        health.append((time.perf_counter() - started) * 1000.0)
    return checks, health


def run_once(work: Path, rounds: int, seed: int) -> dict[str, float]:
    """One server, a baseline, then the same requests while session A is loaded."""
    rng = random.Random(seed)
    command = [python(), "-m", "tooldedup.api.cli", "serve", "--db", str(work / "f.db"),
               "--port", "{port}", "--log-level", "warning"]  # fmt: skip
    with serve_process(command, cwd=work) as server:
        base = f"http://127.0.0.1:{server.port}"
        with httpx.Client(base_url=base, timeout=300) as client:
            client.put("/v1/tools/log/policy", json=BUDGET).raise_for_status()
            _measure(client, rng, None, 20)  # warm-up
            idle_checks, idle_health = _measure(client, rng, None, 100)
            argv = [python(), "-m", "benchmarks.fairness", "--drive", str(server.port),
                    "--rounds", str(rounds), "--seed", str(seed)]  # fmt: skip
            driver = subprocess.Popen(argv)
            while "tooldedup_checks_in_progress 0.0" in client.get("/metrics").text:
                time.sleep(0.001)
            busy_checks, busy_health = _measure(client, rng, driver, 0)
            if driver.wait() != 0:
                raise RuntimeError("the load driver failed")
    return {
        "idle_check_p50": percentile(idle_checks, 0.5),
        "idle_check_p99": percentile(idle_checks, 0.99),
        "busy_check_p50": percentile(busy_checks, 0.5),
        "busy_check_p99": percentile(busy_checks, 0.99),
        "idle_health_p50": percentile(idle_health, 0.5),
        "idle_health_p99": percentile(idle_health, 0.99),
        "busy_health_p50": percentile(busy_health, 0.5),
        "busy_health_p99": percentile(busy_health, 0.99),
        "busy_samples": float(len(busy_checks)),
    }


def _table(runs: Sequence[dict[str, float]]) -> str:
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    lines = [
        "| request (session B) | idle p50 / p99 | while session A is loaded p50 / p99 |"
        " added p99 | target |",
        "|---|---:|---:|---:|---|",
    ]
    for name, key in (("light check", "check"), ("/healthz", "health")):
        idle50, idle99 = med[f"idle_{key}_p50"], med[f"idle_{key}_p99"]
        busy50, busy99 = med[f"busy_{key}_p50"], med[f"busy_{key}_p99"]
        added = busy99 - idle99
        verdict = "met" if busy99 < 100.0 else "missed"
        lines.append(
            f"| {name} | {idle50:.2f} / {idle99:.2f} ms | {busy50:.2f} / {busy99:.2f} ms |"
            f" {added:+.2f} ms | < 100 ms: {verdict} |"
        )
    samples = int(statistics.median(r["busy_samples"] for r in runs))
    lines.append("")
    lines.append(f"Median of {len(runs)} runs; about {samples} loaded samples per run.")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark, or (``--drive``) be session A's load."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fairness")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3, help="heavy bursts per run")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--drive", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    args = parser.parse_args(argv)
    if args.drive is not None:
        drive(args.drive, args.rounds, args.seed)
        return 0
    runs = []
    for number in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            runs.append(run_once(Path(tmp), args.rounds, args.seed + number))
        print(json.dumps(runs[-1]), file=sys.stderr)
    table = _table(runs)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "fairness.md").write_text(table, encoding="utf-8")
    (args.out / "fairness.json").write_text(json.dumps(runs, indent=1), encoding="utf-8")
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
