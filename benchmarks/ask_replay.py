"""The held-out half replayed through the real service, by a caller that handles ``ask``.

    python -m benchmarks.ask_replay [--limit N] [--ask-unconfirmed] [--pair-model] [--out FILE]

Each held-out pair of ``calibration/data/pairs.jsonl`` (the half ``tooldedup calibrate``
never trains on): ``a`` is checked and completed in a session of its own, then ``b`` is
checked twice, as a dry run (nothing is claimed, so the second sees what the first saw):
once by a caller that sends ``answers: ["ask"]`` and once by one that does not (today's
answer, the policy's ``unsure_action``, which is ``proceed`` by default). The table counts
the answers per category of pair: distinct pairs answered ``duplicate`` are silent drops;
repeats answered ``proceed`` run twice; asks go to the agent. ``--ask-unconfirmed`` replays
under ``ask_unconfirmed = true`` (a semantic match the verifier only did not object to is
asked about too), into ``ask-replay-unconfirmed.md``.
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
from tooldedup.dedup.policy import PolicySet, ToolPolicy
from tooldedup.dedup.records import DEFAULT_TENANT, CallStatus, Outcome, Stage, ToolCall
from tooldedup.index.settings import ServiceSettings
from tooldedup.index.wiring import build_embedder, build_service

PAIRS = Path(__file__).resolve().parent.parent / "calibration" / "data" / "pairs.jsonl"
RESULTS = Path(__file__).parent / "results"
_ANSWERS = ("proceed", "duplicate", "ask", "in_progress", "reconcile")


def replay(
    pairs: list[LabelledPair], workdir: Path, policies: PolicySet
) -> dict[str, Counter[str]]:
    """Counts per category: ``ask:<answer>`` and ``old:<answer>``, ``exact`` (a duplicate
    the exact stage made), ``rejected`` (refused as invalid input)."""
    settings = ServiceSettings(db_path=workdir / "replay.db")
    built = build_service(settings, embedder=build_embedder(settings), policies=policies)
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
            if asked.kind.value == "duplicate" and asked.match is not None and not fixed:
                # What settled a duplicate past the exact stage: the verifier's confirmation,
                # or only its lack of objection.
                verdict = asked.reports[-1].verdict if asked.reports else None
                tally[f"verdict:{asked.match.stage.value}:{verdict}"] += 1
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
    lines += ["", "Duplicates past the exact stage, by the stage and the verifier's verdict:", ""]
    lines += ["| label | stage: verdict | pairs |", "| --- | --- | ---: |"]
    for label, tally in totals.items():
        for key in sorted(k for k in tally if k.startswith("verdict:")):
            _, stage, verdict = key.split(":")
            lines.append(f"| {label} | {stage}: {verdict} | {tally[key]} |")
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
    parser.add_argument("--ask-unconfirmed", action="store_true")
    parser.add_argument("--pair-model", action="store_true", help="policy pair_model = true")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    name = "ask-replay" + "-unconfirmed" * args.ask_unconfirmed + "-pair-model" * args.pair_model
    out = args.out or RESULTS / f"{name}.md"
    policy = ToolPolicy(ask_unconfirmed=args.ask_unconfirmed, pair_model=args.pair_model)
    policies = PolicySet(policy)
    pairs = [p for p in load_pairs(PAIRS) if held_out(p.group or p.ref)][: args.limit]
    with tempfile.TemporaryDirectory() as workdir:
        counts = replay(pairs, Path(workdir), policies)
    text = table(counts)
    rejected = sum(tally["rejected"] for tally in counts.values())
    setting = "ask_unconfirmed = true" if args.ask_unconfirmed else "default policy"
    model = "on" if args.pair_model else "off"
    report = (
        '# The held-out half, replayed with answers: ["ask"]\n\n'
        "<!-- --8<-- [start:table] -->\n"
        f"`python -m benchmarks.ask_replay`: {len(pairs)} held-out pairs of"
        f" calibration/data/pairs.jsonl, {setting}, pair model {model};"
        f" {rejected} refused as"
        " invalid input. Each pair's second call is answered once to a caller that handles"
        ' `ask` and once to one that does not (`unsure_action = "proceed"`).\n\n'
        f"{text}\n<!-- --8<-- [end:table] -->\n"
    )
    print(report)
    out.write_text(report, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
