"""End-to-end load benchmark of ``POST /v1/check`` over HTTP, with GPTCache measured beside it.

``python -m benchmarks.load`` preloads a ledger per (store size, session size), starts a real
``tooldedup serve`` process on 127.0.0.1, and runs three mixes (exact re-issues, semantic
re-issues, misses) at each concurrency, each several times, every run bounded in requests and
seconds. GPTCache then answers the same lookups over the same kind of HTTP server. Results go to
``benchmarks/results/``: ``load.json``, ``load.md`` and ``latency_vs_store.png``.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from tqdm import tqdm

from benchmarks.client import run_load
from benchmarks.corpus import Layout, Pool, stored_call
from benchmarks.gptcache_store import build_gptcache_store, gptcache_prompt, prototype_vectors
from benchmarks.preload import build_ledger, pool_texts, pool_vectors
from benchmarks.report import run_stats, summarize, write_json, write_markdown, write_plot
from benchmarks.servers import CpuMeter, ServerProcess, serve_process, wait_quiet
from benchmarks.workload import MIXES, Workload, build_workload

__all__ = ["main"]

Row = dict[str, Any]
_MB = 1024 * 1024


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.load", description=__doc__)
    add = parser.add_argument
    add("--stores", type=_ints, default=[1_000, 100_000, 1_000_000], help="stored calls")
    add("--sessions", type=_ints, default=[10, 100, 1_000], help="calls per session")
    add("--big-sessions", type=_ints, default=None, help="session sizes for the largest store")
    add("--concurrency", type=_ints, default=[1, 8, 32])
    add("--repeats", type=int, default=3, help="runs per mix and concurrency")
    add("--exact-requests", type=int, default=1500, help="requests per exact run")
    add("--semantic-requests", type=int, default=500, help="requests per semantic run")
    add("--miss-requests", type=int, default=400, help="requests per miss run")
    add("--targets", type=int, default=800, help="stored calls that re-issues aim at")
    add("--max-seconds", type=float, default=10.0, help="time cap of one run")
    add("--pool", type=int, default=3000, help="distinct stored texts (embedded once)")
    add("--gptcache-stores", type=_ints, default=None, help="default: --stores; empty: skip")
    add("--work-dir", type=Path, default=Path("/tmp/tooldedup-bench"))
    add("--cache-dir", type=Path, default=Path.home() / ".cache" / "tooldedup")
    add("--out", type=Path, default=Path(__file__).parent / "results")
    add("--quiet-wait", type=float, default=60.0, help="max s to wait for an idle machine")
    add("--keep-dbs", action="store_true", help="keep the preloaded files")
    add("--no-pair-model", action="store_true", help="serve with the verifier's rules alone")
    return parser


def _machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1024**3
    return (
        f"{os.cpu_count()} cores ({cpu}), {memory:.0f} GiB RAM, {platform.system()}"
        f" {platform.release()}, Python {platform.python_version()}"
    )


def _revision() -> str:
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + (" with uncommitted changes" if dirty else "")


def _run_mixes(
    system: str, server: ServerProcess, layout: Layout, work: Workload, args: Any, bar: Any
) -> list[Row]:
    base = {"system": system, "store": layout.total, "session_size": layout.session_size}
    meter = CpuMeter(server)
    run_load(server.port, work.take("exact", 50), 1)  # warm up connections and code paths
    rows: list[Row] = []
    wait_quiet(args.quiet_wait)
    meter.start()
    cold = run_load(server.port, work.cold, 1, max_seconds=args.max_seconds * 3)
    stats = {**run_stats(cold), "cpu": asdict(meter.stop())}
    rows.append({**base, "mix": "semantic-cold", "concurrency": 1, **summarize([stats])})
    rows[-1]["runs"] = [stats]
    bar.update(1)
    counts = {
        "exact": args.exact_requests,
        "semantic": args.semantic_requests,
        "miss": args.miss_requests,
    }
    for mix in MIXES:
        for concurrency in args.concurrency:
            runs: list[Row] = []
            for _ in range(args.repeats):
                bodies = work.take(mix, counts[mix])
                if bodies:
                    bar.set_postfix_str(f"{system} {layout.total:,}/{layout.session_size} {mix}")
                    wait_quiet(args.quiet_wait)
                    meter.start()
                    result = run_load(
                        server.port, bodies, concurrency, max_seconds=args.max_seconds
                    )
                    runs.append({**run_stats(result), "cpu": asdict(meter.stop())})
                bar.update(1)
            if runs:
                row = {**base, "mix": mix, "concurrency": concurrency, **summarize(runs)}
                row["other_cpu_cores"] = round(
                    statistics.median(r["cpu"]["other"] for r in runs), 2
                )
                rows.append({**row, "runs": runs})
    return rows


def _config(system: str, layout: Layout, preload: float, server: ServerProcess, rss0: int) -> Row:
    return {
        "system": system,
        "store": layout.total,
        "session_size": layout.session_size,
        "preload_seconds": round(preload, 1),
        "startup_seconds": round(server.started_seconds, 1),
        "rss_start_mb": round(rss0 / _MB, 1),
        "rss_peak_mb": round(server.peak_rss / _MB, 1),
    }


def _plan(args: Any) -> list[tuple[int, int]]:
    plan = []
    biggest = max(args.stores)
    for store in args.stores:
        sessions = args.big_sessions if store == biggest and args.big_sessions else args.sessions
        plan += [(store, s) for s in sessions if s <= store]
    return plan


def main(argv: Sequence[str] | None = None) -> int:
    """Run the load benchmark and write its results."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    args = _parser().parse_args(argv)
    from tooldedup.index.settings import ServiceSettings
    from tooldedup.index.wiring import build_embedder

    args.work_dir.mkdir(parents=True, exist_ok=True)
    args.out.mkdir(parents=True, exist_ok=True)
    embedder = build_embedder(ServiceSettings(cache_dir=args.cache_dir))
    model_id = embedder.model_id
    pool = Pool(args.pool)
    texts = pool_texts(pool)
    tag = model_id.replace(":", "-")
    vectors = pool_vectors(embedder, texts, args.work_dir / f"pool-{tag}-{len(texts)}.npy")
    by_text = dict(zip(texts, vectors, strict=True))
    command = " ".join(["python -m benchmarks.load", *(argv if argv is not None else sys.argv[1:])])
    data: Row = {
        "machine": _machine(),
        "revision": _revision(),
        "command": command,
        "model": model_id,
        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
        "rows": [],
        "configs": [],
    }
    plan = _plan(args)
    gpt_stores = args.stores if args.gptcache_stores is None else args.gptcache_stores
    runs_per_config = 1 + len(MIXES) * len(args.concurrency) * args.repeats
    total_runs = runs_per_config * (len(plan) + len(gpt_stores))
    reference: dict[int, Workload] = {}
    with tqdm(total=total_runs, desc="runs", unit="run", position=0) as bar:
        for store, session in plan:
            layout = Layout(store, session)
            work = build_workload(
                layout, pool, targets=args.targets, seed=store + session,
                semantic=len(args.concurrency) * args.repeats * args.semantic_requests,
                misses=len(args.concurrency) * args.repeats * args.miss_requests,
            )  # fmt: skip
            if session == 100:
                reference[store] = Workload(work.targets, work.cold, work.bodies)
            db = args.work_dir / f"tooldedup-{store}-{session}.db"
            with tqdm(total=store, desc=f"preload {store:,} in sessions of {session}",
                      unit="call", unit_scale=True, leave=False,
                      position=1) as load_bar:  # fmt: skip
                seconds = build_ledger(
                    db, layout, pool, model_id, by_text, progress=load_bar.update
                )
            serve = [sys.executable, "-m", "tooldedup.api.cli", "serve", "--db", str(db),
                     "--port", "{port}", "--cache-dir", str(args.cache_dir),
                     "--log-level", "warning"]  # fmt: skip
            if args.no_pair_model:
                serve.append("--no-pair-model")
            with serve_process(serve, cwd=args.work_dir) as server:
                rss0 = server.rss()
                data["rows"] += _run_mixes("tooldedup", server, layout, work, args, bar)
                data["configs"].append(_config("tooldedup", layout, seconds, server, rss0))
            if not args.keep_dbs:
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{db}{suffix}").unlink(missing_ok=True)
            write_json(data, args.out / "load.json")
        protos = prototype_vectors(embedder, pool, args.work_dir / f"proto-{tag}-{args.pool}.npy")
        for store in gpt_stores:
            layout = Layout(store, 100)
            work = reference.get(store) or build_workload(
                layout, pool, targets=args.targets, seed=store + 100,
                semantic=len(args.concurrency) * args.repeats * args.semantic_requests,
                misses=len(args.concurrency) * args.repeats * args.miss_requests,
            )  # fmt: skip
            exact = {}
            for session, index in work.targets:
                tool, call_args, _ = stored_call(layout, pool, session, index)
                exact[(session, index)] = embedder.embed([gptcache_prompt(tool, call_args)])[0]
            folder = args.work_dir / f"gptcache-{store}"
            with tqdm(total=store, desc=f"preload GPTCache {store:,}", unit="call",
                      unit_scale=True, leave=False, position=1) as load_bar:  # fmt: skip
                seconds = build_gptcache_store(
                    folder, layout, pool, protos, exact, progress=load_bar.update
                )
            serve = [sys.executable, "-m", "benchmarks.gptcache_server", "--data-dir",
                     str(folder), "--port", "{port}",
                     "--cache-dir", str(args.cache_dir)]  # fmt: skip
            with serve_process(serve, cwd=folder) as server:
                rss0 = server.rss()
                data["rows"] += _run_mixes("gptcache", server, layout, work, args, bar)
                data["configs"].append(_config("gptcache", layout, seconds, server, rss0))
            if not args.keep_dbs:
                shutil.rmtree(folder, ignore_errors=True)
            write_json(data, args.out / "load.json")
    data["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
    write_json(data, args.out / "load.json")
    write_markdown(data, args.out / "load.md")
    write_plot(data, args.out / "latency_vs_store.png")
    print(f"wrote {args.out / 'load.json'}, load.md and latency_vs_store.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
