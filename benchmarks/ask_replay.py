"""The held-out half replayed through the real service, by a caller that handles ``ask``.

    python -m benchmarks.ask_replay [--limit N] [--out benchmarks/results/ask-replay.md]

Each held-out pair of ``calibration/data/pairs.jsonl`` (the half ``tooldedup calibrate``
never trains on): ``a`` is checked and completed in a session of its own, then ``b`` is
checked twice, as a dry run (nothing is claimed, so the second sees what the first saw):
once by a caller that sends ``answers: ["ask"]`` and once by one that does not (today's
answer, the policy's ``unsure_action``, which is ``proceed`` by default). The table counts
the answers per category of pair: distinct pairs answered ``duplicate`` are silent drops;
repeats answered ``proceed`` run twice; asks go to the agent.
"""

from __future__ import annotations

import argparse
import tempfile
from collections import Counter
from pathlib import Path

from tooldedup.calibration.command import held_out
from tooldedup.calibration.compare import DISTINCT_KINDS, DUPLICATE_KINDS
from tooldedup.calibration.samples import LabelledPair, load_pairs
from tooldedup.dedup.errors import DedupError
from tooldedup.dedup.policy import PolicySet
from tooldedup.dedup.records import DEFAULT_TENANT, CallStatus, Outcome, Stage, ToolCall
from tooldedup.index.settings import ServiceSettings
from tooldedup.index.wiring import build_embedder, build_service

PAIRS = Path(__file__).resolve().parent.parent / "calibration" / "data" / "pairs.jsonl"
RESULTS = Path(__file__).parent / "results"
_ANSWERS = ("proceed", "duplicate", "ask", "in_progress", "reconcile")


def replay(pairs: list[LabelledPair], workdir: Path) -> dict[str, Counter[str]]:
    """Counts per category: ``ask:<answer>`` and ``old:<answer>``, ``exact`` (a duplicate
    the exact stage made), ``rejected`` (refused as invalid input)."""
    settings = ServiceSettings(db_path=workdir / "replay.db")
    built = build_service(settings, embedder=build_embedder(settings), policies=PolicySet())
    service = built.service
    counts: dict[str, Counter[str]] = {}
    try:
        for pair in pairs:
            kind = pair.kind or ("duplicate" if pair.duplicate else "distinct")
            tally = counts.setdefault(kind, Counter())
            try:
                first = service.check(ToolCall(pair.ref, pair.tool, pair.a))
                if first.call is not None:
                    outcome = Outcome(CallStatus.SUCCEEDED, result={"ok": True})
                    service.complete(DEFAULT_TENANT, first.call.call_id, outcome)
                asked = service.check(
                    ToolCall(pair.ref, pair.tool, pair.b, handles_ask=True), dry_run=True
                )
                old = service.check(ToolCall(pair.ref, pair.tool, pair.b), dry_run=True)
            except DedupError:
                tally["rejected"] += 1
                continue
            tally["pairs"] += 1
            tally[f"ask:{asked.kind.value}"] += 1
            tally[f"old:{old.kind.value}"] += 1
            fixed = asked.match is not None and asked.match.stage is Stage.EXACT
            if asked.kind.value == "duplicate" and fixed:
                tally["exact"] += 1
    finally:
        built.close()
    return counts


def table(counts: dict[str, Counter[str]]) -> str:
    """The markdown table: per category, answers to the asking caller, and today's."""
    lines = [
        "| category | label | pairs | duplicate (exact stage) | proceed | ask |"
        " duplicate without ask | proceed without ask |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    totals: dict[str, Counter[str]] = {"repeat": Counter(), "distinct": Counter()}
    for kind in (*DUPLICATE_KINDS, *DISTINCT_KINDS):
        tally = counts.get(kind)
        if not tally:
            continue
        label = "repeat" if kind in DUPLICATE_KINDS else "distinct"
        totals[label].update(tally)
        lines.append(_row(kind, label, tally))
    for label, tally in totals.items():
        lines.append(_row(f"**all {label}s**", label, tally))
    return "\n".join(lines)


def _row(name: str, label: str, tally: Counter[str]) -> str:
    return (
        f"| {name} | {label} | {tally['pairs']} | {tally['ask:duplicate']} ({tally['exact']})"
        f" | {tally['ask:proceed']} | {tally['ask:ask']} | {tally['old:duplicate']}"
        f" | {tally['old:proceed']} |"
    )


def main(argv: list[str] | None = None) -> int:
    """Replay the held-out half and print (and write) the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="only the first N pairs")
    parser.add_argument("--out", type=Path, default=RESULTS / "ask-replay.md")
    args = parser.parse_args(argv)
    pairs = [p for p in load_pairs(PAIRS) if held_out(p.group or p.ref)][: args.limit]
    with tempfile.TemporaryDirectory() as workdir:
        counts = replay(pairs, Path(workdir))
    text = table(counts)
    rejected = sum(tally["rejected"] for tally in counts.values())
    report = (
        '# The held-out half, replayed with answers: ["ask"]\n\n'
        "<!-- --8<-- [start:table] -->\n"
        f"`python -m benchmarks.ask_replay`: {len(pairs)} held-out pairs of"
        f" calibration/data/pairs.jsonl, default policy, pair model on; {rejected} refused as"
        " invalid input. Each pair's second call is answered once to a caller that handles"
        ' `ask` and once to one that does not (`unsure_action = "proceed"`).\n\n'
        f"{text}\n<!-- --8<-- [end:table] -->\n"
    )
    print(report)
    args.out.write_text(report, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
