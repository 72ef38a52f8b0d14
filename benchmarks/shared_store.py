"""SQLite beside PostgreSQL, and ``--workers 1`` beside ``--workers 2``, driven by wrk.

    python -m benchmarks.shared_store [--runs 3] [--seconds 8] [--calls 1000]

For each (backend, workers) a fresh store gets ``--calls`` calls through the API (claimed and
completed), in sessions of 100. Then wrk, a C load generator in its own process, runs:

- exact re-issues (keys reordered, a fresh request id) at concurrency 8: throughput;
- exact re-issues at concurrency 1: p50 and p99;
- semantic re-issues (paraphrases never sent before, so each pays a model call) at
  concurrency 1: p50 and p99.

Each is run ``--runs`` times; the table gives the median of the runs. PostgreSQL is a real
server started from the binaries of the ``pgserver`` wheel, on a Unix socket, with its
durable defaults (fsync on).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import Any

import httpx

from benchmarks.corpus import Layout, Pool, stored_call
from benchmarks.servers import python, serve_process
from benchmarks.workload import build_workload
from benchmarks.wrk import WrkResult, run_wrk, wrk_available

# The tests' PostgreSQL helper: the one way this repository starts a real server.
from tests.postgres import LocalPostgres

__all__ = ["main"]

CONFIGS = (("sqlite", 1), ("sqlite", 2), ("postgres", 1), ("postgres", 2))
MEASURES = (("exact", 8, 2), ("exact", 1, 1), ("semantic", 1, 1))


def _seed(port: int, layout: Layout, pool: Pool) -> None:
    """Check every stored call through the API, and complete those that proceed (a few
    of the corpus's calls repeat an earlier one of their session, and are answered so)."""

    def one(pair: tuple[int, int]) -> None:
        session, index = pair
        tool, args, _ = stored_call(layout, pool, session, index)
        body = {"session_id": layout.session_id(session), "tool": tool, "args": args}
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            answer = client.post("/v1/check", json=body).json()
            if answer["decision"] == "proceed":
                done = {"status": "succeeded", "result": {"ok": True}}
                url = f"/v1/calls/{answer['call_id']}/complete"
                client.post(url, json=done).raise_for_status()

    pairs = [(s, i) for s in range(layout.sessions) for i in range(layout.session_size)]
    with ThreadPoolExecutor(4) as pool_:
        list(pool_.map(one, pairs))


def _answered(port: int, bodies: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    """(decision, stage) of each body, asked as a dry run."""
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
        answers = [client.post("/v1/check", json={**b, "dry_run": True}).json() for b in bodies]
    return [(a["decision"], (a.get("match") or {}).get("stage")) for a in answers]


def _measure(
    backend: str, workers: int, store: str, args: argparse.Namespace, work_dir: Path
) -> dict[str, Any]:
    layout = Layout(args.calls, 100)
    pool = Pool(args.calls)
    command = [python(), "-m", "tooldedup.api.cli", "serve", "--db", store, "--port", "{port}"]
    command += ["--workers", str(workers), "--log-level", "warning"]
    row: dict[str, Any] = {"backend": backend, "workers": workers}
    with serve_process(command, cwd=work_dir) as server:
        _seed(server.port, layout, pool)
        semantic_needed = int(args.seconds * 400 * args.runs)
        work = build_workload(layout, pool, targets=args.calls, semantic=semantic_needed, misses=0)
        candidates = work.take("exact", args.calls)
        # Exact re-issues of calls that were stored (not of those answered as repeats).
        answered = _answered(server.port, candidates)
        exact = [b for b, a in zip(candidates, answered, strict=True) if a[1] == "exact"]
        semantic = work.take("semantic", semantic_needed)
        # Warm every worker's code paths and faiss groups with paraphrases of their own.
        run_wrk(server.port, semantic[-300:], connections=2, threads=1, seconds=3, work=work_dir)
        sample = _answered(server.port, semantic[:50])
        row["semantic_sample"] = {f"{d}/{s}": sample.count((d, s)) for d, s in set(sample)}
        semantic = semantic[50:-300]
        for mix, connections, threads in MEASURES:
            runs: list[WrkResult] = []
            for _ in range(args.runs):
                bodies = exact if mix == "exact" else semantic
                result = run_wrk(
                    server.port,
                    bodies,
                    connections=connections,
                    threads=threads,
                    seconds=args.seconds,
                    work=work_dir,
                )
                if mix == "semantic":
                    semantic = semantic[result.requests :]
                runs.append(result)
            name = f"{mix}_c{connections}"
            row[name] = {
                "per_second": statistics.median(r.per_second for r in runs),
                "p50_ms": statistics.median(r.p50_ms for r in runs),
                "p99_ms": statistics.median(r.p99_ms for r in runs),
                "non_2xx": sum(r.non_2xx for r in runs),
                "socket_errors": sum(r.socket_errors for r in runs),
                "wrapped": any(r.wrapped for r in runs),
                "runs": [asdict(r) for r in runs],
            }
            print(backend, workers, name, json.dumps(row[name]["runs"]), file=sys.stderr)
    return row


def _revision() -> str:
    done = subprocess.run(
        ["git", "describe", "--always", "--dirty"], capture_output=True, text=True, check=False
    )
    return done.stdout.strip() or "unknown"


def _table(rows: list[dict[str, Any]], args: argparse.Namespace) -> str:
    lines = [
        f"Revision {_revision()}, `python -m benchmarks.shared_store --runs {args.runs}"
        f" --seconds {args.seconds:g} --calls {args.calls}`.",
        "",
        f"Medians of {args.runs} wrk runs of {args.seconds:g} s each; {args.calls} stored calls"
        " in sessions of 100; 2 cores shared by server, database and wrk.",
        "",
        "| backend | workers | exact checks/s (c8) | exact p50 / p99 ms (c1)"
        " | semantic p50 / p99 ms (c1) | non-2xx |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        e8, e1, s1 = r["exact_c8"], r["exact_c1"], r["semantic_c1"]
        bad = e8["non_2xx"] + e1["non_2xx"] + s1["non_2xx"]
        lines.append(
            f"| {r['backend']} | {r['workers']} | {e8['per_second']:.0f}"
            f" | {e1['p50_ms']:.2f} / {e1['p99_ms']:.2f}"
            f" | {s1['p50_ms']:.2f} / {s1['p99_ms']:.2f} | {bad} |"
        )
    by = {(r["backend"], r["workers"]): r for r in rows}
    lines.append("")
    sample = rows[0]["semantic_sample"]
    lines.append(f"Semantic re-issues, a sample of 50 answered as a dry run: {sample}")
    lines.append("")
    for backend in ("sqlite", "postgres"):
        one, two = by[(backend, 1)], by[(backend, 2)]
        gain = two["exact_c8"]["per_second"] / one["exact_c8"]["per_second"]
        lines.append(
            f"- {backend}: `--workers 2` ÷ `--workers 1`, exact checks/s: {gain:.2f} times"
        )
    for workers in (1, 2):
        pg, lite = by[("postgres", workers)], by[("sqlite", workers)]
        ratio = pg["exact_c1"]["p99_ms"] / lite["exact_c1"]["p99_ms"]
        lines.append(
            f"- `--workers {workers}`: PostgreSQL ÷ SQLite, exact p99 at c1: {ratio:.2f} times"
        )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Run every configuration and write the table."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.shared_store", description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/shared-store.md"))
    args = parser.parse_args(argv)
    if not wrk_available():
        print("this benchmark needs wrk: apt-get install wrk", file=sys.stderr)
        return 2
    rows = []
    postgres = LocalPostgres(durable=True)
    try:
        with tempfile.TemporaryDirectory(prefix="tooldedup-shared-") as tmp:
            for backend, workers in CONFIGS:
                work_dir = Path(tmp) / f"{backend}-{workers}"
                work_dir.mkdir()
                store = (
                    postgres.create_database()
                    if backend == "postgres"
                    else str(work_dir / "ledger.db")
                )
                rows.append(_measure(backend, workers, store, args, work_dir))
    finally:
        postgres.close()
    table = _table(rows, args)
    args.out.write_text(table, encoding="utf-8")
    args.out.with_suffix(".json").write_text(json.dumps(rows, indent=1), encoding="utf-8")
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
