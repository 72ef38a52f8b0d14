"""What an ``ask`` costs beside a ``duplicate``, at concurrency 1, through a real server and wrk.

    python -m benchmarks.ask_cost [--sessions 200] [--seconds 10] [--rounds 3]

Each session holds one sent email. Three kinds of repeat are then driven in turns, one
connection each: the same email again (a duplicate from the exact stage), the email
reworded (a duplicate the semantic stage and its verifier settle), and the email with a
change the verifier cannot account for, from a caller that handles ``ask`` (an ask, which
also signs a confirm token; like a duplicate, it writes only its log line). Each kind runs
``--rounds`` times, interleaved, each round starting with the next kind, so that other load
on the machine and the growing log fall on all three alike; the table gives each kind's
median p50 and p99.

wrk cycles through the sessions' bodies, so after a session's first request every check
repeats a pair of texts seen before: its vectors and the verifier's verdict come from the
server's memos (as for an agent that retries), and the table compares the work around them,
not the model or the verifier on new text.

A second pass sends the kinds request by request from one client (``--paired-rounds``), so
that a drift of the machine's speed, which moves a 10 s run's p99 by a millisecond, falls on
every kind alike.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from benchmarks.report import percentile
from benchmarks.servers import python, serve_process
from benchmarks.wrk import run_wrk, wrk_available

RESULTS = Path(__file__).parent / "results"
BODY = "Hi Bob, the Q3 report is attached. Let me know if you have any questions."
REPEATS = {
    "duplicate (exact)": (BODY, {}),
    "duplicate (semantic)": (
        "Hi Bob, the Q3 report is attached, as promised. Let me know if you have any questions.",
        {},
    ),
    "ask": (
        "Hi Bob, the Q3 report is attached. Please let me know if you have questions.",
        {"answers": ["ask"]},
    ),
}


def _body(session: int, text: str, extra: dict[str, Any]) -> dict[str, Any]:
    args = {"to": f"bob{session}@example.com", "body": text}
    return {"session_id": f"s{session}", "tool": "send_email", "args": args, **extra}


def _paired(http: httpx.Client, sessions: int, rounds: int) -> dict[str, list[float]]:
    """Each kind's latencies (ms) from one client that sends the kinds request by request,
    in an order that turns with each request: the machine's drift falls on all alike."""
    kinds = list(REPEATS)
    bodies = {
        kind: [json.dumps(_body(n, *REPEATS[kind])).encode() for n in range(sessions)]
        for kind in kinds
    }
    headers = {"content-type": "application/json"}
    latencies: dict[str, list[float]] = {kind: [] for kind in kinds}
    for round_number in range(rounds):
        for n in range(sessions):
            shift = (round_number + n) % len(kinds)
            for kind in kinds[shift:] + kinds[:shift]:
                started = time.perf_counter()
                http.post("/v1/check", content=bodies[kind][n], headers=headers)
                latencies[kind].append((time.perf_counter() - started) * 1000.0)
    return latencies


def main(argv: list[str] | None = None) -> int:
    """Seed the sessions, drive each kind of repeat in turns, print (and write) the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--paired-rounds", type=int, default=10, help="rounds of the request-by-request pass"
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "ask-cost.md")
    args = parser.parse_args(argv)
    if not wrk_available():
        raise SystemExit("wrk is not installed (apt-get install wrk)")
    runs: dict[str, list[tuple[float, float, int]]] = {kind: [] for kind in REPEATS}
    with tempfile.TemporaryDirectory() as work:
        folder = Path(work)
        command = [python(), "-m", "tooldedup.api.cli", "serve", "--db", str(folder / "a.db")]
        with serve_process([*command, "--port", "{port}"], cwd=folder) as server:
            base = f"http://127.0.0.1:{server.port}"
            with httpx.Client(base_url=base, timeout=30) as http:
                for n in range(args.sessions):
                    first = http.post("/v1/check", json=_body(n, BODY, {})).json()
                    outcome = {"status": "succeeded", "result": {"message_id": f"m-{n}"}}
                    http.post(f"/v1/calls/{first['call_id']}/complete", json=outcome)
                for kind, (text, extra) in REPEATS.items():
                    answer = http.post("/v1/check", json=_body(0, text, extra)).json()
                    expected = "ask" if kind == "ask" else "duplicate"
                    if answer["decision"] != expected:
                        raise SystemExit(f"{kind}: answered {answer['decision']}")
            kinds = list(REPEATS)
            for round_number in range(args.rounds):
                # Each round starts with another kind: the log grows and the machine drifts
                # during a round, and no kind should always run last.
                shift = round_number % len(kinds)
                for kind in kinds[shift:] + kinds[:shift]:
                    text, extra = REPEATS[kind]
                    bodies = [_body(n, text, extra) for n in range(args.sessions)]
                    result = run_wrk(
                        server.port,
                        bodies,
                        connections=1,
                        threads=1,
                        seconds=args.seconds,
                        work=folder / "wrk",
                    )
                    runs[kind].append((result.p50_ms, result.p99_ms, result.requests))
            with httpx.Client(base_url=base, timeout=30) as http:
                paired = _paired(http, args.sessions, args.paired_rounds)
    lines = [
        "| repeat | answer | p50 ms | p99 ms | p99 of each round, ms | requests |",
        "| --- | --- | ---: | ---: | --- | ---: |",
    ]
    for kind, measured in runs.items():
        p50 = statistics.median(m[0] for m in measured)
        p99 = statistics.median(m[1] for m in measured)
        rounds = ", ".join(f"{m[1]:.1f}" for m in measured)
        answer = "ask" if kind == "ask" else "duplicate"
        total = sum(m[2] for m in measured)
        lines.append(f"| {kind} | {answer} | {p50:.2f} | {p99:.2f} | {rounds} | {total} |")
    pairs = [
        "| repeat | p50 ms | p90 ms | p99 ms | requests |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for kind, values in paired.items():
        quantiles = " | ".join(f"{percentile(values, q):.3f}" for q in (0.5, 0.9, 0.99))
        pairs.append(f"| {kind} | {quantiles} | {len(values)} |")
    report = (
        "# The cost of an ask\n\n"
        "<!-- --8<-- [start:table] -->\n"
        f"`python -m benchmarks.ask_cost`: one connection (wrk -c1 -t1), {args.sessions}"
        f" sessions, {args.rounds} interleaved rounds of {args.seconds:g} s per kind (each"
        " round starting with the next kind); the median of the rounds' p50 and p99."
        " Default serve settings (SQLite, pair model off). Each body recurs every 200"
        " requests: vectors and verdicts come from the server's memos after the first."
        "\n\n" + "\n".join(lines) + "\n\n"
        f"Request by request ({args.paired_rounds} rounds of the {args.sessions} sessions from"
        " one httpx client in the benchmark's process, the three kinds in turn, the order"
        " turning with each session; client-side time, so the client's own work is in every"
        " row alike):\n\n" + "\n".join(pairs) + "\n<!-- --8<-- [end:table] -->\n"
    )
    print(report)
    args.out.write_text(report, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
