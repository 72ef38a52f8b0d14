"""What an ``ask`` costs beside a ``duplicate``, at concurrency 1, through a real server and wrk.

    python -m benchmarks.ask_cost [--sessions 200] [--seconds 20] [--runs 5]

Each session holds one sent email. Four kinds of repeat are then sent: the same email again
(a duplicate from the exact stage); the email reworded (a duplicate the semantic stage and its
verifier settle); the email with a change the verifier cannot account for, from a caller that
does not handle ``ask`` (a duplicate by the tool's ``unsure_action``); and that same call from
a caller that handles ``ask`` (an ask, which also signs a confirm token and writes its note;
like a duplicate, it writes only its log line).

One wrk connection sends the four kinds interleaved, session by session, in an order that
turns with each session, for ``--seconds``; wrk's script times every response and reads what
answered it. So every kind meets the same moments of the machine: a drift of its speed, which
moves a run's p99 by a millisecond, falls on all four alike, and each run gives a paired
comparison. The table gives each kind's p50, p90 and p99 over all runs, the p99 of each run,
and the ask's p50 and p99 less each duplicate's, run by run.

Every body is sent once before the runs, so the runs' checks repeat a pair of texts seen
before: vectors and the verifier's verdict come from the server's memos (as for an agent that
retries), and the table compares the work around them, not the model or the verifier on new
text.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path
from typing import Any

import httpx

from benchmarks.report import percentile
from benchmarks.servers import python, serve_process
from benchmarks.wrk import Timed, run_wrk_timed, wrk_available

RESULTS = Path(__file__).parent / "results"
BODY = "Hi Bob, the Q3 report is attached. Let me know if you have any questions."
# A change the verifier cannot account for (a quantifier dropped): the question an ask is for.
HELD = "Hi Bob, the Q3 report is attached. Please let me know if you have questions."
# Each kind: its text, what the check body adds, and the answer (``Timed.answer``) it gets.
REPEATS: dict[str, tuple[str, dict[str, Any], str]] = {
    "duplicate (exact)": (BODY, {}, "duplicate/exact"),
    "duplicate (semantic)": (
        "Hi Bob, the Q3 report is attached, as promised. Let me know if you have any questions.",
        {},
        "duplicate/semantic",
    ),
    # The same held call from a caller that does not handle ask: the policy's unsure_action.
    "duplicate (held)": (HELD, {}, "duplicate/semantic/borderline"),
    "ask": (HELD, {"answers": ["ask"]}, "ask/semantic/borderline"),
}
# The tool's policy: a held match is a duplicate for callers that do not handle ask.
POLICY = {"unsure_action": "duplicate"}
_QUANTILES = (0.5, 0.9, 0.99)


def _body(session: int, text: str, extra: dict[str, Any]) -> dict[str, Any]:
    args = {"to": f"bob{session}@example.com", "body": text}
    return {"session_id": f"s{session}", "tool": "send_email", "args": args, **extra}


def interleaved(sessions: int) -> list[dict[str, Any]]:
    """Every session's repeats, the order of the kinds turning with each session."""
    kinds = list(REPEATS)
    bodies = []
    for n in range(sessions):
        shift = n % len(kinds)
        for kind in kinds[shift:] + kinds[:shift]:
            text, extra, _ = REPEATS[kind]
            bodies.append(_body(n, text, extra))
    return bodies


def by_kind(timed: list[Timed]) -> dict[str, list[float]]:
    """Each kind's latencies (ms), told by what answered; any other answer is an error."""
    kinds = {answer: kind for kind, (_, _, answer) in REPEATS.items()}
    latencies: dict[str, list[float]] = {kind: [] for kind in REPEATS}
    for response in timed:
        answer = response.answer
        if answer not in kinds:
            raise SystemExit(f"unexpected answer {answer} ({response.ms:.2f} ms)")
        latencies[kinds[answer]].append(response.ms)
    return latencies


def _seed(base: str, sessions: int) -> None:
    """One sent email per session, then every repeat once, each checked for its answer."""
    with httpx.Client(base_url=base, timeout=30) as http:
        http.put("/v1/tools/send_email/policy", json=POLICY).raise_for_status()
        for n in range(sessions):
            first = http.post("/v1/check", json=_body(n, BODY, {})).json()
            outcome = {"status": "succeeded", "result": {"message_id": f"m-{n}"}}
            http.post(f"/v1/calls/{first['call_id']}/complete", json=outcome)
        expected = {answer for _, _, answer in REPEATS.values()}
        for body in interleaved(sessions):
            answer = http.post("/v1/check", json=body).json()
            explain = answer["explain"]
            # Read as wrk's script reads it, so that the runs tell the kinds apart the same way.
            stage, borderline = explain["stages"][-1]["stage"], bool(explain.get("borderline"))
            said = Timed(0.0, answer["decision"], stage, borderline).answer
            if said not in expected:
                raise SystemExit(f"{body['args']['body']!r}: answered {said}")


def _table(runs: list[dict[str, list[float]]], args: argparse.Namespace) -> str:
    pooled = {kind: [ms for run in runs for ms in run[kind]] for kind in REPEATS}
    rows = [
        "| repeat | answer | p50 ms | p90 ms | p99 ms | p99 of each run, ms | requests |",
        "| --- | --- | ---: | ---: | ---: | --- | ---: |",
    ]
    for kind, (_, _, answer) in REPEATS.items():
        quantiles = " | ".join(f"{percentile(pooled[kind], q):.3f}" for q in _QUANTILES)
        each = ", ".join(f"{percentile(run[kind], 0.99):.2f}" for run in runs)
        rows.append(f"| {kind} | {answer} | {quantiles} | {each} | {len(pooled[kind])} |")
    paired = []
    for other in ("duplicate (held)", "duplicate (semantic)"):
        for q in (0.5, 0.99):
            differences = [percentile(r["ask"], q) - percentile(r[other], q) for r in runs]
            listed = ", ".join(f"{d:+.3f}" for d in differences)
            at_most = sum(1 for d in differences if d <= 0)
            paired.append(
                f"| {other} | p{round(q * 100)} | {listed} | {statistics.median(differences):+.3f}"
                f" | {at_most} of {len(runs)} |"
            )
    return (
        "# The cost of an ask\n\n"
        "<!-- --8<-- [start:table] -->\n"
        f"`python -m benchmarks.ask_cost --runs {args.runs} --seconds {args.seconds:g}`: one"
        " connection (wrk -c1 -t1) sending the four kinds interleaved (the order turning with"
        f" each of {args.sessions} sessions), each response timed by wrk's script;"
        f" {args.runs} runs of {args.seconds:g} s. Default serve settings (SQLite, pair model"
        ' off); the tool\'s policy has `unsure_action = "duplicate"`. Every body was sent'
        " once before: vectors and verdicts come from the server's memos.\n\n"
        + "\n".join(rows)
        + "\n\nThe ask less each duplicate, run by run (ms):\n\n"
        "| against | quantile | each run | median | ask at most the duplicate |\n"
        "| --- | --- | --- | ---: | ---: |\n" + "\n".join(paired) + "\n"
        "<!-- --8<-- [end:table] -->\n"
    )


def main(argv: list[str] | None = None) -> int:
    """Seed the sessions, drive the interleaved repeats, print (and write) the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", type=Path, default=RESULTS / "ask-cost.md")
    args = parser.parse_args(argv)
    if not wrk_available():
        raise SystemExit("wrk is not installed (apt-get install wrk)")
    runs = []
    with tempfile.TemporaryDirectory() as work:
        folder = Path(work)
        command = [python(), "-m", "tooldedup.api.cli", "serve", "--db", str(folder / "a.db")]
        with serve_process([*command, "--port", "{port}"], cwd=folder) as server:
            _seed(f"http://127.0.0.1:{server.port}", args.sessions)
            bodies = interleaved(args.sessions)
            for _ in range(args.runs):
                timed = run_wrk_timed(
                    server.port, bodies, seconds=args.seconds, work=folder / "wrk"
                )
                runs.append(by_kind(timed))
    report = _table(runs, args)
    print(report)
    args.out.write_text(report, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
