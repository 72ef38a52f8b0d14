"""Where a check's time goes: py-spy samples a real server while wrk drives one kind of check.

    python -m benchmarks.profile_check [--system off|on|baseline] [--mix semantic|exact]
                                       [--seconds 20] [--calls 1000] [--top 40] [--gil]

The server (today's build with the pair model off or on, or the baseline of
``benchmarks.versus``) gets a fresh store of ``--calls`` calls through its API, is warmed up,
and is then sampled by py-spy (``--function``: one row per function, not per line) while wrk
sends re-issues at concurrency 1 (or ``--connections``). The report gives each function's
share of the sampled busy time: inclusive (the function or anything it calls is running) and
self (it is the innermost Python frame), for the project's own functions and for everything
else. Idle threads are not sampled, so 100 % is the time the server was busy; with ``--gil``
only the thread holding the GIL is, the resource a server of one process runs out of first.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import threading
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from benchmarks.corpus import Layout, Pool
from benchmarks.servers import serve_process, wait_quiet
from benchmarks.versus import baseline_python, prepare_system, system_commands
from benchmarks.workload import build_workload
from benchmarks.wrk import WrkResult, run_wrk

__all__ = ["aggregate", "main"]

_FRAME = re.compile(r"^(?P<func>.+?) \((?P<file>[^()]*?)(?::\d+)?\)$")
_OWN = {"dedup", "index", "api", "calibration"}
# Innermost frames of a thread that waits: a pool thread or a background loop on its condition,
# and the event loop inside uvloop (mostly in epoll at concurrency 1). Not busy time.
IDLE = ("Condition.wait (threading.py", "Runner.run (asyncio/runners.py")


def _name(frame: str) -> tuple[str, bool]:
    match = _FRAME.match(frame.strip())
    if match is None:
        return frame.strip(), False
    file = match["file"]
    return f"{file}:{match['func']}", file.split("/", 1)[0] in _OWN


def aggregate(raw: str) -> tuple[int, Counter[str], Counter[str], set[str]]:
    """From py-spy's raw (collapsed) output: total samples, inclusive and self counts per
    function, and which functions are the project's own."""
    total = 0
    inclusive: Counter[str] = Counter()
    selfs: Counter[str] = Counter()
    own: set[str] = set()
    for line in raw.splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        if stack.rsplit(";", 1)[-1].startswith(IDLE):
            continue
        total += count
        names = []
        for frame in stack.split(";"):
            if frame.startswith(("process ", "thread ")):
                continue
            name, mine = _name(frame)
            names.append(name)
            if mine:
                own.add(name)
        for name in set(names):
            inclusive[name] += count
        if names:
            selfs[names[-1]] += count
    return total, inclusive, selfs, own


def _report(raw: str, top: int, header: str, per_sample_ms: float) -> str:
    """Shares of the busy samples, and milliseconds per check (``per_sample_ms``: one sample's
    worth of a check's time, 1000 / rate / checks)."""
    total, inclusive, selfs, own = aggregate(raw)
    if not total:
        return header + "\nno samples\n"

    def share(n: int) -> str:
        return f"{100 * n / total:5.1f} % {n * per_sample_ms:6.3f} ms"

    lines = [
        header,
        "",
        f"{total} samples of busy time, {total * per_sample_ms:.2f} ms per check.",
        "",
        "Project functions, inclusive (self):",
        "",
    ]
    mine = [(n, c) for n, c in inclusive.most_common() if n in own][:top]
    lines += [f"- {share(c)} ({share(selfs[n])})  {n}" for n, c in mine]
    lines += ["", "Every function, self time (innermost Python frame):", ""]
    lines += [f"- {share(c)}  {n}" for n, c in selfs.most_common(top)]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Profile one server under one mix and print the shares."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.profile_check",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add = parser.add_argument
    add("--system", choices=("off", "on", "baseline"), default="off")
    add("--mix", choices=("semantic", "exact"), default="semantic")
    add("--baseline", default="62aca04")
    add("--seconds", type=int, default=20)
    add("--connections", type=int, default=1, help="wrk's concurrency (two threads above 1)")
    add("--rate", type=int, default=200, help="py-spy samples per second")
    add("--calls", type=int, default=1000)
    add("--top", type=int, default=40)
    add("--quiet-wait", type=float, default=60.0)
    add("--work-dir", type=Path, default=Path("/tmp/tooldedup-versus"))
    add("--raw", type=Path, default=None, help="keep py-spy's collapsed stacks here")
    add("--gil", action="store_true", help="sample only the thread holding the GIL")
    args = parser.parse_args(argv)
    sha, base_python = baseline_python(args.baseline, args.work_dir)
    layout, pool = Layout(args.calls, 100), Pool(args.calls)
    work = build_workload(layout, pool, targets=args.calls, semantic=10**7, misses=0)
    semantic, candidates = work.bodies["semantic"], work.take("exact", args.calls)
    with tempfile.TemporaryDirectory(prefix="profile-", dir=args.work_dir) as tmp:
        run_dir = Path(tmp)
        system = system_commands(sha, base_python, run_dir, args.work_dir)[args.system]
        with serve_process(system.command, cwd=run_dir) as server:
            system.server = server
            prepare_system(system, layout, pool, semantic, candidates, run_dir)
            bodies = semantic[50:-300] if args.mix == "semantic" else system.exact
            raw = args.raw or run_dir / "stacks.txt"
            wait_quiet(args.quiet_wait)
            command = [
                str(Path(sys.executable).parent / "py-spy"),
                "record",
                "--pid",
                str(server.process.pid),
                "--rate",
                str(args.rate),
                "--duration",
                str(args.seconds),
                "--function",
                "--format",
                "raw",
                "--output",
                str(raw),
                *(["--gil"] if args.gil else []),
            ]
            done: list[WrkResult] = []

            def drive() -> None:
                done.append(
                    run_wrk(
                        server.port,
                        bodies,
                        connections=args.connections,
                        threads=1 if args.connections == 1 else 2,
                        seconds=args.seconds,
                        work=run_dir,
                    )
                )

            load = threading.Thread(target=drive)
            load.start()
            subprocess.run(command, check=True, capture_output=True)
            load.join()
            text = raw.read_text()
    checks = done[0].per_second * args.seconds
    header = (
        f"{system.name}, {args.mix} re-issues at concurrency {args.connections}:"
        f" {done[0].per_second:.0f}/s,"
        f" p50 {done[0].p50_ms:.2f} ms, p99 {done[0].p99_ms:.2f} ms"
    )
    print(_report(text, args.top, header, 1000.0 / args.rate / max(1.0, checks)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
