"""0.1 beside today's build, in one run on one machine, driven by wrk: the ratios.

    python -m benchmarks.versus [--baseline 62aca04] [--repeats 5] [--seconds 8] [--calls 1000]

The baseline revision is checked out into a temporary git worktree and installed, with its own
dependencies, into a venv kept under ``--work-dir`` (keyed by the commit, so a rerun reuses it);
the worktree is removed once the venv holds the code. Then three servers run side by side, one
process each: the baseline, and today's build from this checkout with the pair model on and
off. Each gets a fresh SQLite store of ``--calls`` calls in sessions of 100, checked and
completed through its own HTTP API (the two ledgers' schemas differ). wrk, a C load generator in
its own process, then runs, for each repeat, every measure on every server in turn (the order of
the servers rotates from one repeat to the next):

- semantic re-issues at concurrency 1: paraphrases whose set of free texts no server has
  been sent before, so each pays a model call (the workload says its texts again further on:
  such repeats are left out), every server the same ones in a run, from where the fastest
  stopped in the last;
- exact re-issues (keys reordered, a fresh request id) at concurrency 1;
- exact re-issues at concurrency 8 (two wrk threads): throughput.

Before each run the benchmark waits (at most ``--quiet-wait`` s) for the machine to go idle, and
it records the load average and the CPU used outside the server and wrk during the run. The
result gives each run's p50, p99 and checks/s, their median over the repeats, and the ratios of
today's build to the baseline, in ``benchmarks/results/versus-0.1.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx

from benchmarks.corpus import Layout, Pool, stored_call
from benchmarks.load import _machine
from benchmarks.servers import CpuMeter, ServerProcess, serve_process, wait_quiet
from benchmarks.versus_report import markdown, noise, paired_ratios, ratios, summary
from benchmarks.workload import build_workload
from benchmarks.wrk import WrkResult, run_wrk, wrk_available

__all__ = ["main"]

Body = dict[str, Any]
MEASURES = (("semantic", 1, 1), ("exact", 1, 1), ("exact", 8, 2))
_MEASURE_NAMES = ", ".join(f"{m}_c{c}" for m, c, _ in MEASURES)
_REPO = Path(__file__).resolve().parent.parent
_READY = ".tooldedup-revision"


def _git(*args: str) -> str:
    done = subprocess.run(["git", *args], cwd=_REPO, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def baseline_python(revision: str, work_dir: Path) -> tuple[str, Path]:
    """The commit of ``revision`` and the interpreter of a venv that has it installed."""
    sha = _git("rev-parse", f"{revision}^{{commit}}")
    venv = work_dir / f"venv-{sha[:12]}"
    python = venv / "bin" / "python"
    marker = venv / _READY
    if marker.exists() and marker.read_text().strip() == sha and python.exists():
        return sha, python
    shutil.rmtree(venv, ignore_errors=True)
    work_dir.mkdir(parents=True, exist_ok=True)
    tree = Path(tempfile.mkdtemp(prefix=f"tooldedup-{sha[:7]}-", dir=work_dir))
    _git("worktree", "add", "--detach", str(tree), sha)
    try:
        base = getattr(sys, "_base_executable", None) or "python3"
        subprocess.run([base, "-m", "venv", str(venv)], check=True)
        print(f"installing {sha[:12]} and its dependencies into {venv}", file=sys.stderr)
        # Not editable: the venv keeps the code, so the worktree can go.
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", str(tree)], check=True)
    finally:
        _git("worktree", "remove", "--force", str(tree))
        shutil.rmtree(tree, ignore_errors=True)
    marker.write_text(sha + "\n")
    return sha, python


@dataclass
class System:
    """One server under test, and what it has been sent so far."""

    name: str
    command: list[str]
    cwd: Path
    server: ServerProcess | None = None
    exact: list[Body] = field(default_factory=list)
    sample: dict[str, int] = field(default_factory=dict)
    startup_seconds: float = 0.0
    runs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


def system_commands(
    sha: str, python: Path, run_dir: Path, work_dir: Path, extra: Sequence[str] = ()
) -> dict[str, System]:
    """The baseline and today's build with the pair model on and off, each with a fresh store
    (``extra``: more options for every server, that both versions take)."""
    common = ["--port", "{port}", "--log-level", "warning", *extra]
    serve = [sys.executable, "-m", "tooldedup.api.cli", "serve", *common]
    cache = str(work_dir / f"cache-{sha[:12]}")
    baseline = [str(python), "-m", "api.cli", "serve", *common, "--cache-dir", cache]
    # The pair model is a policy option: loaded by default, read where a policy asks.
    run_dir.mkdir(parents=True, exist_ok=True)
    with_model = run_dir / "pair-model.toml"
    with_model.write_text("[defaults]\npair_model = true\n", encoding="utf-8")
    return {
        "baseline": System(
            f"0.1 ({sha[:7]})", [*baseline, "--db", str(run_dir / "base.db")], run_dir
        ),
        "on": System(
            "today, pair model on",
            [*serve, "--db", str(run_dir / "on.db"), "--policy", str(with_model)],
            run_dir,
        ),
        "off": System(
            "today, pair model off",
            [*serve, "--db", str(run_dir / "off.db"), "--no-pair-model"],
            run_dir,
        ),
    }


def _seed(port: int, layout: Layout, pool: Pool) -> None:
    """Check every stored call through the API, session by session, and complete each that
    proceeds (a few calls of the corpus repeat an earlier one of their session)."""

    def session(number: int) -> None:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            for index in range(layout.session_size):
                tool, args, _ = stored_call(layout, pool, number, index)
                body = {"session_id": layout.session_id(number), "tool": tool, "args": args}
                answer = client.post("/v1/check", json=body).json()
                if answer["decision"] == "proceed":
                    done = {"status": "succeeded", "result": {"ok": True}}
                    url = f"/v1/calls/{answer['call_id']}/complete"
                    client.post(url, json=done).raise_for_status()

    with ThreadPoolExecutor(2) as pool_:
        list(pool_.map(session, range(layout.sessions)))


def _answered(port: int, bodies: list[Body]) -> list[tuple[str, str | None]]:
    """(decision, stage) of each body, asked as a dry run."""
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
        answers = [client.post("/v1/check", json={**b, "dry_run": True}).json() for b in bodies]
    return [(a["decision"], (a.get("match") or {}).get("stage")) for a in answers]


class _Meter:
    """Load average, and cores used by the server, by wrk, and by everything else, over a run."""

    def __init__(self, server: ServerProcess) -> None:
        self.server = server

    @staticmethod
    def _children() -> float:
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # wrk, once it has been reaped
        return usage.ru_utime + usage.ru_stime

    def __enter__(self) -> _Meter:
        self.load1 = os.getloadavg()[0]
        self.marks = (
            time.perf_counter(),
            CpuMeter._busy(),
            self.server.cpu_seconds(),
            self._children(),
        )
        return self

    def __exit__(self, *exc: object) -> None:
        wall = max(1e-9, time.perf_counter() - self.marks[0])
        busy = (CpuMeter._busy() - self.marks[1]) / wall
        server = (self.server.cpu_seconds() - self.marks[2]) / wall
        wrk = (self._children() - self.marks[3]) / wall
        self.cpu = {
            "load1": round(self.load1, 2),
            "server_cores": round(server, 2),
            "wrk_cores": round(wrk, 2),
            "other_cores": round(max(0.0, busy - server - wrk), 2),
        }


def prepare_system(
    system: System,
    layout: Layout,
    pool: Pool,
    semantic: list[Body],
    candidates: list[Body],
    work_dir: Path,
) -> None:
    assert system.server is not None
    port = system.server.port
    _seed(port, layout, pool)
    answered = _answered(port, candidates)  # exact re-issues of calls that were stored
    system.exact = [b for b, a in zip(candidates, answered, strict=True) if a[1] == "exact"]
    sample = _answered(port, semantic[:50])  # the first 50 paraphrases: never measured
    system.sample = {f"{d}/{s}": sample.count((d, s)) for d, s in sorted(set(sample), key=str)}
    # Warm code paths and faiss groups with paraphrases of their own (the last 300: unmeasured).
    run_wrk(port, semantic[-300:], connections=1, threads=1, seconds=3, work=work_dir)
    run_wrk(port, system.exact, connections=8, threads=2, seconds=1, work=work_dir)


def fresh_paraphrases(bodies: list[Body]) -> list[Body]:
    """The paraphrases in order, but for those whose set of free texts an earlier one has: the
    workload says the same texts again further on, which a server answers from its memo of
    vectors (one text of a set may recur beside others; keeping only bodies of all-new texts
    would leave too few)."""
    seen: set[tuple[tuple[str, str], ...]] = set()
    fresh = []
    for body in bodies:
        texts = tuple(
            sorted((k, v) for k, v in body["args"].items() if isinstance(v, str) and " " in v)
        )
        if texts not in seen:
            seen.add(texts)
            fresh.append(body)
    return fresh


def _semantic_bodies(semantic: list[Body], start: int, size: int) -> tuple[list[Body], int]:
    """The paraphrases of one run from ``start``, and how many of them no run sent before
    (past the end, the list starts again: those are texts the servers have seen)."""
    first = semantic[start : start + size]
    again = semantic[: max(0, size - len(first))]
    return first + again, len(first)


def _run(
    system: System,
    connections: int,
    threads: int,
    bodies: list[Body],
    args: argparse.Namespace,
    work_dir: Path,
) -> dict[str, Any]:
    assert system.server is not None
    waited = wait_quiet(args.quiet_wait)
    with _Meter(system.server) as meter:
        result: WrkResult = run_wrk(
            system.server.port,
            bodies,
            connections=connections,
            threads=threads,
            seconds=args.seconds,
            work=work_dir,
        )
    return {
        **asdict(result),
        "per_second": round(result.per_second, 1),
        "quiet_wait_seconds": round(waited, 1),
        **meter.cpu,
    }


@contextmanager
def _started(systems: list[System], args: argparse.Namespace) -> Iterator[None]:
    with ExitStack() as stack:
        for system in systems:
            wait_quiet(args.quiet_wait)
            system.server = stack.enter_context(serve_process(system.command, cwd=system.cwd))
            system.startup_seconds = round(system.server.started_seconds, 1)
        yield


def main(argv: Sequence[str] | None = None) -> int:
    """Run the baseline and today's build side by side and write the ratios."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.versus",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add = parser.add_argument
    add("--baseline", default="62aca04", help="the revision to compare with")
    add("--repeats", type=int, default=5, help="wrk runs per server and measure")
    add("--seconds", type=float, default=8.0, help="length of one wrk run")
    add("--calls", type=int, default=1000, help="stored calls, in sessions of 100")
    add("--quiet-wait", type=float, default=60.0, help="max s to wait for an idle machine")
    add(
        "--nice",
        type=int,
        default=0,
        help="niceness of the servers and wrk (negative, as root: ahead of other work)",
    )
    add("--embed-threads", type=int, default=None, help="for every server (default: theirs, 2)")
    add(
        "--systems",
        default="baseline,on,off",
        help="which servers: baseline, on (pair model on), off (pair model off)",
    )
    add(
        "--measures",
        default=_MEASURE_NAMES.replace(" ", ""),
        help=f"which measures, of {_MEASURE_NAMES}",
    )
    add("--work-dir", type=Path, default=Path("/tmp/tooldedup-versus"))
    add("--out", type=Path, default=_REPO / "benchmarks" / "results" / "versus-0.1.md")
    args = parser.parse_args(argv)
    if not wrk_available():
        print("this benchmark needs wrk: apt-get install wrk", file=sys.stderr)
        return 2
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    # A stop (SIGTERM) unwinds like Ctrl-C, so that the servers are stopped and files removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.nice:
        os.setpriority(os.PRIO_PROCESS, 0, args.nice)  # inherited by the servers and wrk
    sha, base_python = baseline_python(args.baseline, args.work_dir)
    head = _git("rev-parse", "HEAD")
    dirty = _git("status", "--porcelain")
    run_dir = Path(tempfile.mkdtemp(prefix="run-", dir=args.work_dir))
    layout, pool = Layout(args.calls, 100), Pool(args.calls)
    work = build_workload(layout, pool, targets=args.calls, semantic=10**7, misses=0)
    semantic, candidates = (
        fresh_paraphrases(work.bodies["semantic"]),
        work.take("exact", args.calls),
    )
    extra = [] if args.embed_threads is None else ["--embed-threads", str(args.embed_threads)]
    commands = system_commands(sha, base_python, run_dir, args.work_dir, extra)
    chosen = [name.strip() for name in args.systems.split(",") if name.strip()]
    asked = {name.strip() for name in args.measures.split(",") if name.strip()}
    measures = [m for m in MEASURES if f"{m[0]}_c{m[1]}" in asked]
    if "baseline" not in chosen or any(name not in commands for name in chosen):
        parser.error("--systems takes baseline and some of on, off")
    if not measures or len(measures) != len(asked):
        parser.error(f"--measures takes some of {_MEASURE_NAMES}")
    # The baseline first: the ratios divide by the first system's figures.
    systems = [system for name, system in commands.items() if name in chosen]
    command = " ".join(["python -m benchmarks.versus", *(sys.argv[1:] if argv is None else argv)])
    data: dict[str, Any] = {
        "command": command,
        "machine": _machine(),
        "baseline": sha,
        "current": head
        + (f" with uncommitted changes ({len(dirty.splitlines())} paths)" if dirty else ""),
        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
        "repeats": args.repeats,
        "seconds": args.seconds,
        "nice": args.nice,
        "embed_threads": args.embed_threads,
        "calls": args.calls,
    }
    try:
        with _started(systems, args):
            for system in systems:
                print(f"seeding {system.name}", file=sys.stderr)
                prepare_system(system, layout, pool, semantic, candidates, run_dir)
            semantic = semantic[50:-300]
            if not semantic:
                parser.error("too few paraphrases to measure: raise --calls")
            cursor = 0  # the next paraphrase no server has been sent
            for repeat in range(args.repeats):
                order = systems[repeat % len(systems) :] + systems[: repeat % len(systems)]
                for mix, connections, threads in measures:
                    # Every server gets the same paraphrases, from the same place: a faster
                    # one must not reach further into the list than a slower one.
                    bodies, fresh = _semantic_bodies(semantic, cursor, int(args.seconds * 800))
                    served = 0
                    for system in order:
                        exact = mix != "semantic"
                        sent = system.exact if exact else bodies
                        row = _run(system, connections, threads, sent, args, run_dir)
                        if not exact:
                            # wrk stops with a request in flight on each connection: the
                            # server was sent those bodies too.
                            served = max(served, row["requests"] + connections)
                            row["first_seen"] = min(row["requests"], fresh)
                        system.runs.setdefault(f"{mix}_c{connections}", []).append(row)
                        print(
                            repeat, system.name, mix, connections, json.dumps(row), file=sys.stderr
                        )
                    cursor += served
            for system in systems:
                if system.server is not None:
                    system.startup_seconds = round(system.server.started_seconds, 1)
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
    data["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
    data["systems"] = [
        {
            "name": s.name,
            "command": " ".join(s.command),
            "sample": s.sample,
            "exact_bodies": len(s.exact),
            "startup_seconds": s.startup_seconds,
            "medians": {m: summary(r) for m, r in s.runs.items()},
            "runs": s.runs,
        }
        for s in systems
    ]
    data["noise"] = noise(data, args.quiet_wait)
    data["ratios"] = ratios(data)
    data["paired_ratios"] = paired_ratios(data)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(markdown(data), encoding="utf-8")
    args.out.with_suffix(".json").write_text(json.dumps(data, indent=1), encoding="utf-8")
    print(args.out.read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
