"""`tooldedup calibrate`: thresholds from labelled traffic, a policy file and a report."""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import tomli_w

from tooldedup.calibration.compare import compare_modes, markdown_table
from tooldedup.calibration.intervals import clopper_pearson_lower, wilson_lower
from tooldedup.calibration.report import console_table, plot_mode_curves, plot_scope, write_html
from tooldedup.calibration.samples import Sample, load_pairs, sample_from_entry, samples_from_log
from tooldedup.calibration.scoring import score_pairs
from tooldedup.calibration.thresholds import Bound, Calibration, choose_thresholds
from tooldedup.dedup.errors import DedupError, InvalidInput
from tooldedup.dedup.policy import (
    CompareMode,
    CosineBand,
    PolicySet,
    ToolPolicy,
    load_policy_file,
    policy_from_mapping,
    policy_to_mapping,
)
from tooldedup.dedup.protocols import Embedder

__all__ = ["held_out", "predicted_changes", "run", "would_match"]


def held_out(key: str) -> bool:
    """Whether a pair (by its group, else its id) is in the held-out half of the split."""
    return hashlib.sha256(key.encode()).digest()[0] % 2 == 1


def _calibrate_all(
    samples: Sequence[Sample], args: argparse.Namespace, bound: Bound
) -> tuple[Calibration, list[Calibration]]:
    target, confidence = args.target_precision, args.confidence
    overall = choose_thresholds(samples, target, "(global)", confidence, bound)
    by_tool: dict[str, list[Sample]] = defaultdict(list)
    for sample in samples:
        by_tool[sample.tool].append(sample)
    tools = [
        choose_thresholds(group, target, tool, confidence, bound)
        for tool, group in sorted(by_tool.items())
        if len(group) >= args.min_tool_labels
    ]
    return overall, tools


def _thresholds(calibration: Calibration) -> dict[str, Any]:
    assert calibration.min_cosine_duplicate is not None
    assert calibration.min_cosine_borderline is not None
    return {
        "min_cosine_duplicate": calibration.min_cosine_duplicate,
        "min_cosine_borderline": calibration.min_cosine_borderline,
        # The band below the guarantee is for a judge; without one it must not match, and
        # nothing under it may be confirmed into a match.
        "borderline_action": "proceed",
        "min_cosine_confirmed": calibration.min_cosine_borderline,
    }


def _policy_document(
    base: tuple[ToolPolicy, dict[str, dict[str, Any]]],
    overall: Calibration,
    tools: Sequence[Calibration],
) -> dict[str, Any]:
    defaults, tool_overrides = base
    defaults_data = policy_to_mapping(defaults)
    if overall.enough:
        defaults_data.update(_thresholds(overall))
    tools_data = {name: dict(data) for name, data in tool_overrides.items()}
    calibrated = {c.scope: c for c in tools if c.enough}
    for name, data in tools_data.items():
        if name not in calibrated and overall.enough:
            # A tool the base policy names still takes the global thresholds and action,
            # unless it sets its own thresholds.
            own = {"min_cosine_duplicate", "min_cosine_borderline", "min_cosine_confirmed"} & set(
                data
            )
            if not own:
                data.update(_thresholds(overall))
    for name, calibration in calibrated.items():
        tools_data.setdefault(name, {}).update(_thresholds(calibration))
    return {"defaults": defaults_data, "tools": tools_data}


def _kept(defaults: dict[str, Any]) -> str:
    return (
        f"min_cosine_duplicate {defaults['min_cosine_duplicate']}, min_cosine_borderline"
        f" {defaults['min_cosine_borderline']}, borderline_action"
        f' "{defaults["borderline_action"]}"'
    )


def _uncalibrated_header(overall: Calibration, defaults: dict[str, Any]) -> str:
    """TOML comments saying the defaults were not calibrated, why, and what they are."""
    if overall.labels_short:
        why = (
            f"written from too few labels; label ~{overall.labels_short} more duplicates"
            " and run tooldedup calibrate again"
        )
    else:
        why = "no duplicate threshold meets the target precision"
    lines = [
        f"NOT CALIBRATED: {why}.",
        f"({overall.message})",
        f"[defaults] below are the base policy's, unchanged: {_kept(defaults)}.",
    ]
    return "".join(f"# {line}\n" for line in lines) + "\n"


def _uncalibrated_warning(out: Path, overall: Calibration, defaults: dict[str, Any]) -> str:
    kept = f"its defaults are the base policy's, unchanged ({_kept(defaults)})"
    if overall.labels_short:
        return (
            f"tooldedup calibrate: wrote {out} from too few labels, not calibrated: {kept};"
            f" label ~{overall.labels_short} more duplicates to calibrate"
        )
    return f"tooldedup calibrate: wrote {out} not calibrated ({overall.message}): {kept}"


def _policy_set(document: dict[str, Any]) -> PolicySet:
    return PolicySet.build(policy_from_mapping(document["defaults"]), document["tools"])


def would_match(sample: Sample, policy: ToolPolicy) -> bool:
    """Whether the funnel, under ``policy``, would match a pair with these recorded scores."""
    if sample.fixed is not None:
        return True
    if sample.cosine is None or sample.vetoed:
        return False
    if sample.confirmed and policy.band(sample.cosine) is CosineBand.CONFIRMABLE:
        return True
    return policy.matches_at(sample.cosine)


def predicted_changes(entries: Sequence[dict[str, Any]], policies: PolicySet) -> list[str]:
    """Logged checks whose match would flip under ``policies``, one line each."""
    lines = []
    for entry in entries:
        sample = sample_from_entry(entry, False, "log")
        before = entry.get("stage") is not None
        after = would_match(sample, policies.for_tool(sample.tool))
        if before != after:
            verb = "would now match" if after else "would no longer match"
            # Observe mode answered proceed: what it would have answered is what changes.
            was = entry.get("observed") or entry["decision"]
            lines.append(
                f"{entry['check_id']} {entry['tool']}: {verb} (cosine {sample.cosine}, was {was})"
            )
    return lines


def _judge_labels(
    args: argparse.Namespace, entries: list[dict[str, Any]], policies: PolicySet
) -> list[Sample]:
    from tooldedup.calibration.judge_labels import label_borderline
    from tooldedup.dedup.ledger import SqliteLedger
    from tooldedup.index.settings import ServiceSettings
    from tooldedup.index.wiring import build_judge

    if args.db is None or args.judge_base_url is None or args.judge_model is None:
        raise InvalidInput("--judge needs --db, --judge-base-url and --judge-model")
    if not args.db.exists():
        raise InvalidInput(f"no database at {args.db}")
    judge = build_judge(
        ServiceSettings(
            judge_base_url=args.judge_base_url,
            judge_model=args.judge_model,
            judge_api_key_env=args.judge_api_key_env,
            judge_timeout_seconds=args.judge_timeout,
        )
    )
    assert judge is not None
    ledger = SqliteLedger(args.db)
    try:
        made, failed = label_borderline(entries, judge, ledger, policies)
    finally:
        ledger.close()
    print(f"judge: labelled {len(made)} borderline checks ({failed} judge calls failed)")
    return made


def _embedder(args: argparse.Namespace) -> Embedder:
    from tooldedup.index.settings import EmbedderBackend, ServiceSettings
    from tooldedup.index.wiring import build_embedder

    return build_embedder(
        ServiceSettings(cache_dir=args.cache_dir, embedder=EmbedderBackend(args.embedder))
    )


def run(args: argparse.Namespace) -> int:
    """Calibrate, write the policy and the report; exit 2 on bad input."""
    if args.log is None and args.labels is None:
        print("tooldedup calibrate: give --log, --labels or both", file=sys.stderr)
        return 2
    if not 0.0 < args.target_precision < 1.0 or not 0.0 < args.confidence < 1.0:
        print("tooldedup calibrate: target and confidence must be in (0, 1)", file=sys.stderr)
        return 2
    bound: Bound = clopper_pearson_lower if args.interval == "clopper-pearson" else wilson_lower
    try:
        base = load_policy_file(args.policy) if args.policy else (ToolPolicy(), {})
        base_set = PolicySet.build(*base)
        samples: list[Sample] = []
        entries: list[dict[str, Any]] = []
        sections: list[tuple[str, str]] = []
        plots: dict[str, bytes] = {}
        if args.log is not None:
            logged, entries = samples_from_log(args.log)
            samples += logged
            judged = sum(1 for s in logged if s.source == "judge")
            print(f"log: {len(entries)} write checks, {len(logged)} labelled ({judged} by a judge)")
            if args.judge:
                made = _judge_labels(args, entries, base_set)
                samples += made
                listing = "\n".join(
                    f"{s.ref} {s.tool} cosine {s.cosine}: "
                    f"{'duplicate' if s.duplicate else 'distinct'}"
                    for s in made
                )
                sections.append(("Judge-made labels", listing or "none"))
        if args.labels is not None:
            pairs = load_pairs(args.labels)
            embedder = _embedder(args)
            with tempfile.TemporaryDirectory() as work:
                fields, rejected = score_pairs(pairs, base_set, embedder, Path(work) / "fields")
                print(f"labels: {len(fields)} pairs scored, {len(rejected)} rejected as invalid")
                samples += fields
                if args.compare_modes:
                    whole_defaults = replace(base_set.defaults, mode=CompareMode.WHOLE)
                    whole, _ = score_pairs(
                        pairs,
                        PolicySet(whole_defaults),
                        embedder,
                        Path(work) / "whole",
                        label="scoring pairs (whole-call mode)",
                        pair_model=False,
                    )
                    with_model, _ = score_pairs(
                        pairs,
                        base_set,
                        embedder,
                        Path(work) / "pair-model",
                        label="scoring pairs (with the pair model)",
                        pair_model=True,
                    )
                    _compare(fields, whole, with_model, args, bound, sections, plots)
    except (DedupError, OSError) as exc:
        print(f"tooldedup calibrate: {getattr(exc, 'message', exc)}", file=sys.stderr)
        return 2
    overall, tools = _calibrate_all(samples, args, bound)
    document = _policy_document(base, overall, tools)
    # A policy is written either way, so that per-tool results are kept; one whose defaults
    # were not calibrated must say so where it is read, not only in this run's output.
    header = "" if overall.enough else _uncalibrated_header(overall, document["defaults"])
    args.out.write_text(header + tomli_w.dumps(document), encoding="utf-8")
    table = console_table([overall, *tools])
    print(table)
    if not overall.enough:
        print(f"global: {overall.message}")
        print(_uncalibrated_warning(args.out, overall, document["defaults"]), file=sys.stderr)
    if entries:
        changes = predicted_changes(entries, _policy_set(document))
        summary = f"{len(changes)} of {len(entries)} logged write checks would change:\n"
        sections.append(("Predicted decision changes", summary + "\n".join(changes)))
        print(summary.rstrip())
    for calibration in (overall, *tools):
        scoped = (
            samples
            if calibration is overall
            else [s for s in samples if s.tool == calibration.scope]
        )
        if any(s.cosine is not None for s in scoped):
            plots[calibration.scope] = plot_scope(scoped, calibration)
    write_html(args.report, "tooldedup calibration", [overall, *tools], plots, sections)
    print(f"wrote {args.out} and {args.report}")
    return 0


def _compare(
    fields: list[Sample],
    whole: list[Sample],
    with_model: list[Sample],
    args: argparse.Namespace,
    bound: Bound,
    sections: list[tuple[str, str]],
    plots: dict[str, bytes],
) -> None:
    """Calibrate on one half of the pairs and compare every mode on the other half."""
    train = [s for s in fields if not held_out(s.split_key)]
    test_fields = [s for s in fields if held_out(s.split_key)]
    test_whole = [s for s in whole if held_out(s.split_key)]
    split = choose_thresholds(train, args.target_precision, "(train half)", args.confidence, bound)
    test_model = [s for s in with_model if held_out(s.split_key)]
    results = compare_modes(
        test_fields, test_whole, split.min_cosine_duplicate, pair_model=test_model
    )
    table = markdown_table(results)
    note = (
        f"Held-out half: {len(test_fields)} pairs. Calibrated on the other half "
        f"({len(train)} pairs): {split.message}\n\n"
    )
    sections.append(("Modes compared", note + table))
    plots["modes: precision-recall"] = plot_mode_curves(test_fields, test_whole)
    stem = args.report.with_suffix("")
    Path(f"{stem}-modes.md").write_text(note + table + "\n", encoding="utf-8")
    Path(f"{stem}-pr.png").write_bytes(plots["modes: precision-recall"])
    print(note + table)
