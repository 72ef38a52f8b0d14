"""Plain-data explanations of a decision, for the HTTP answer and the decision log."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from tooldedup.dedup.records import Decision, StageReport

__all__ = ["explain_data"]


def _stage(report: StageReport) -> dict[str, Any]:
    data: dict[str, Any] = {
        "stage": report.stage.value,
        "score": report.score,
        "threshold": report.threshold,
        "matched": report.matched,
    }
    if report.candidates:
        data["candidates"] = [{"call_id": c, "score": s} for c, s in report.candidates]
    if report.detail is not None:
        data["detail"] = report.detail
    if report.verdict is not None:
        data["verdict"] = report.verdict
    return data


def explain_data(decision: Decision) -> dict[str, Any]:
    """Each stage that ran with its score and threshold, and why a call is not a duplicate."""
    data: dict[str, Any] = {"stages": [_stage(r) for r in decision.reports]}
    if decision.differing_fields:
        data["differing_fields"] = list(decision.differing_fields)
        data["differing_from"] = decision.differing_from
    if decision.judge is not None:
        judge = {k: v for k, v in asdict(decision.judge).items() if v is not None}
        data["judge"] = judge
    if decision.borderline:
        data["borderline"] = True
    if decision.unread:
        # Free text compared exactly, not by meaning, and why.
        data["unread"] = [{"path": path, "reason": reason} for path, reason in decision.unread]
    if decision.observed is not None:
        # What enforcement would have answered: the review page and calibration read it.
        observed = decision.observed
        data["observed"] = {
            "decision": observed.kind.value,
            "call_id": None if observed.match is None else observed.match.call.call_id,
        }
    if decision.confirmed_ask is not None:
        data["confirmed_ask"] = decision.confirmed_ask
    if decision.notes:
        data["notes"] = list(decision.notes)
    if decision.dry_run:
        data["dry_run"] = True
    return data
