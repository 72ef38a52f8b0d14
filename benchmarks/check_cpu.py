"""CPU time of ``DedupService.check`` in-process, in 0.1 and in today's build, and where it goes.

    python -m benchmarks.check_cpu [--baseline 62aca04] [--repeats 3] [--checks 300]

On a machine shared with other work, wall-clock latency measures the other work too. This
measures the thread's own CPU time (``time.thread_time``) around each ``service.check``, with
the embedder on one thread so that the model's work is the calling thread's. Each version's
store is filled through its own HTTP API (as ``benchmarks.versus`` does); then this file runs
as a script under each version's interpreter (it imports nothing from ``benchmarks``, which
in 0.1's venv is 0.1's own), builds that version's app on the store, and sends re-issues
straight to ``app.state.service.check``: paraphrases never sent before, and exact re-issues.
The versions alternate, each repeat with fresh paraphrases. ``--profiled`` adds one more
repeat sampled by py-spy (not counted in the timings) and prints each version's costliest
functions, in milliseconds of one check.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

_MODES = ("semantic", "exact")
_ROOT = str(Path(__file__).resolve().parent.parent)


def _child(args: argparse.Namespace) -> int:
    """Runs under the version's own interpreter: measure, print one JSON line."""
    # 0.1's packages are top-level (api, dedup); today's live under tooldedup.
    prefix = "tooldedup." if importlib.util.find_spec("tooldedup") else ""
    create_app = importlib.import_module(prefix + "api.app").create_app
    Settings = importlib.import_module(prefix + "api.settings").Settings
    ToolCall = importlib.import_module(prefix + "dedup.records").ToolCall
    extra: dict[str, Any] = {"pair_model": False} if prefix else {}
    settings = Settings(db_path=args.db, embed_threads=1, cache_dir=args.cache_dir, **extra)
    service = create_app(settings).state.service
    bodies = json.loads(args.bodies.read_text())
    calls = [ToolCall(session_id=b["session_id"], tool=b["tool"], args=b["args"]) for b in bodies]
    for call in calls[-20:]:  # warm up on the last few, which are not measured twice
        service.check(call)
    measured = calls[:-20] if args.mode == "semantic" else calls
    cpu: list[float] = []
    wall: list[float] = []
    decisions: dict[str, int] = {}
    for call in measured:
        c0, w0 = time.thread_time(), time.perf_counter()
        decision = service.check(call)
        c1, w1 = time.thread_time(), time.perf_counter()
        cpu.append((c1 - c0) * 1000.0)
        wall.append((w1 - w0) * 1000.0)
        stage = decision.match.stage.value if decision.match is not None else None
        decisions[f"{decision.kind.value}/{stage}"] = (
            decisions.get(f"{decision.kind.value}/{stage}", 0) + 1
        )
    cpu.sort()
    wall.sort()
    print(
        json.dumps(
            {
                "checks": len(cpu),
                "cpu_p50_ms": statistics.median(cpu),
                "cpu_p99_ms": cpu[int(0.99 * (len(cpu) - 1))],
                "cpu_mean_ms": statistics.fmean(cpu),
                "wall_p50_ms": statistics.median(wall),
                "decisions": decisions,
            }
        )
    )
    return 0


def _top(raw: str, checks: int, rate: int, limit: int) -> list[str]:
    """The costliest functions inside ``DedupService.check``, in ms of one check (inclusive)."""
    from benchmarks.profile_check import aggregate

    inside = "\n".join(line for line in raw.splitlines() if "DedupService.check (" in line)
    _, inclusive, _, own = aggregate(inside)
    ms = 1000.0 / rate / max(1, checks)
    rows = [(n, c) for n, c in inclusive.most_common() if n in own or "onnxruntime" in n]
    rows += [(n, c) for n, c in inclusive.most_common() if "sqlite" in n.lower() and n not in own]
    rows.sort(key=lambda row: -row[1])
    return [f"{c * ms:7.3f} ms  {n}" for n, c in rows[:limit]]


def main(argv: Sequence[str] | None = None) -> int:
    """Fill each version's store, then alternate in-process measurements."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.check_cpu",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add = parser.add_argument
    add("--child", action="store_true", help=argparse.SUPPRESS)
    add("--db", type=Path, help=argparse.SUPPRESS)
    add("--bodies", type=Path, help=argparse.SUPPRESS)
    add("--mode", choices=_MODES, default="semantic", help=argparse.SUPPRESS)
    add("--cache-dir", type=Path, default=None, help=argparse.SUPPRESS)
    add("--baseline", default="62aca04")
    add("--repeats", type=int, default=3)
    add("--checks", type=int, default=300, help="semantic checks per repeat")
    add("--calls", type=int, default=1000)
    add("--top", type=int, default=30, help="functions listed per version with --profiled")
    add("--profiled", action="store_true", help="sample one more repeat with py-spy")
    add("--rate", type=int, default=1000, help="py-spy samples per second")
    add("--work-dir", type=Path, default=Path("/tmp/tooldedup-versus"))
    add("--out", type=Path, default=None, help="also write the report here")
    args = parser.parse_args(argv)
    if args.child:
        return _child(args)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from benchmarks.corpus import Layout, Pool
    from benchmarks.servers import serve_process
    from benchmarks.versus import baseline_python, prepare_system, system_commands
    from benchmarks.workload import build_workload

    sha, base_python = baseline_python(args.baseline, args.work_dir)
    layout, pool = Layout(args.calls, 100), Pool(args.calls)
    work = build_workload(layout, pool, targets=args.calls, semantic=10**7, misses=0)
    semantic, candidates = work.bodies["semantic"], work.take("exact", args.calls)
    results: dict[str, dict[str, list[dict[str, Any]]]] = {}
    counted: dict[tuple[str, str], int] = {}  # checks in the sampled repeat, warm-up included
    with tempfile.TemporaryDirectory(prefix="cpu-", dir=args.work_dir) as tmp:
        run_dir = Path(tmp)
        systems = system_commands(sha, base_python, run_dir, args.work_dir)
        chosen = {
            "baseline": (systems["baseline"], base_python),
            "off": (systems["off"], Path(sys.executable)),
        }
        for system, _ in chosen.values():
            with serve_process(system.command, cwd=run_dir) as server:
                system.server = server
                prepare_system(system, layout, pool, semantic, candidates, run_dir)
        fresh = semantic[50:-300]
        # With --profiled, one more repeat runs under py-spy; its timings are not counted.
        for repeat in range(args.repeats + args.profiled):
            profiled = repeat == args.repeats
            for mode in _MODES:
                if mode == "semantic":
                    start = repeat * (args.checks + 20)
                    bodies = fresh[start : start + args.checks + 20]
                for key, (system, python) in chosen.items():
                    if mode == "exact":
                        bodies = system.exact
                    path = run_dir / "bodies.json"
                    path.write_text(json.dumps(bodies))
                    db = system.command[system.command.index("--db") + 1]
                    child = [
                        str(python),
                        __file__,
                        "--child",
                        "--db",
                        db,
                        "--bodies",
                        str(path),
                        "--mode",
                        mode,
                        "--cache-dir",
                        str(args.work_dir / f"cache-{sha[:12]}"),
                    ]
                    if profiled:
                        spy = [
                            str(Path(sys.executable).parent / "py-spy"),
                            "record",
                            "--rate",
                            str(args.rate),
                            "--function",
                            "--format",
                            "raw",
                            "--output",
                            str(run_dir / f"{key}-{mode}.txt"),
                            "--",
                        ]
                        child = spy + child
                    done = subprocess.run(
                        child,
                        cwd=run_dir,
                        capture_output=True,
                        text=True,
                        env={**os.environ, "PYTHONPATH": ""},
                    )
                    if done.returncode != 0:
                        tail = (done.stdout + done.stderr)[-3000:]
                        raise RuntimeError(f"{' '.join(child)} exited {done.returncode}:\n{tail}")
                    row = json.loads([x for x in done.stdout.splitlines() if x.startswith("{")][-1])
                    print(repeat, system.name, mode, json.dumps(row), file=sys.stderr)
                    if not profiled:
                        results.setdefault(key, {}).setdefault(mode, []).append(row)
                    else:
                        counted[(key, mode)] = row["checks"] + 20
        command = " ".join(["python -m benchmarks.check_cpu", *(argv or sys.argv[1:])])
        lines = [f"`{command}` (baseline {sha[:12]}, {time.strftime('%Y-%m-%d %H:%M')})", ""]
        for mode in _MODES if results else ():
            base = [r["cpu_p50_ms"] for r in results["baseline"][mode]]
            now = [r["cpu_p50_ms"] for r in results["off"][mode]]
            lines.append(
                f"- {mode}: CPU per check, median of {len(base)} p50s: 0.1"
                f" {statistics.median(base):.3f} ms, today (pair model off)"
                f" {statistics.median(now):.3f} ms, ratio"
                f" {statistics.median(now) / statistics.median(base):.2f}"
                f" (p50s: 0.1 {', '.join(f'{x:.2f}' for x in base)};"
                f" today {', '.join(f'{x:.2f}' for x in now)})"
            )
        for key in chosen if args.profiled else ():
            for mode in _MODES:
                lines += [
                    "",
                    f"{chosen[key][0].name}, {mode}: ms of one check, sampled by py-spy",
                    "",
                ]
                raw = (run_dir / f"{key}-{mode}.txt").read_text()
                lines += [
                    f"    {row}" for row in _top(raw, counted[(key, mode)], args.rate, args.top)
                ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out is not None:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
