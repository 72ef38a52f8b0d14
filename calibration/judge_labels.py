"""Judge-made labels: vet a judge on known pairs, and label borderline checks from a log."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tooldedup.calibration.samples import Sample, sample_from_entry
from tooldedup.dedup.canonical import Canonicalizer, canonical_json
from tooldedup.dedup.english import EnglishPack
from tooldedup.dedup.judge import GuardedJudge, Judge, JudgeRequest, OutcomeKind
from tooldedup.dedup.ledger import SqliteLedger
from tooldedup.dedup.policy import PolicySet
from tooldedup.dedup.records import DEFAULT_TENANT

__all__ = ["KNOWN_PAIRS", "KnownPairAnswer", "agreement", "label_borderline"]

# (tool, stored args, proposed args, truly a duplicate?)
KNOWN_PAIRS: tuple[tuple[str, dict[str, Any], dict[str, Any], bool], ...] = (
    ("send_email", {"to": "bob@example.com", "body": "Hi Bob, the Q3 report is attached."},
     {"to": "bob@example.com", "body": "Hello Bob, I've attached the Q3 report."}, True),
    ("post_message", {"channel": "#ops", "text": "Database 3 is down, investigating now."},
     {"channel": "#ops", "text": "We're looking into database 3, which is down."}, True),
    ("create_ticket", {"project": "WEB", "title": "Login button broken on Safari"},
     {"project": "WEB", "title": "Safari: the login button does not work"}, True),
    ("add_comment", {"issue_id": "WEB-7", "body": "Fixed in the latest deploy, please retest."},
     {"issue_id": "WEB-7", "body": "Please retest, the latest deploy fixes it."}, True),
    ("send_email", {"to": "bob@example.com", "body": "Hi Bob, the Q3 report is attached."},
     {"to": "bob@example.com", "body": "Hi Bob, did you get a chance to read the Q3 report?"},
     False),
    ("post_message", {"channel": "#team", "text": "Ask Dave to approve the budget request."},
     {"channel": "#team", "text": "Ask Dave to reject the budget request."}, False),
    ("add_comment", {"issue_id": "WEB-7", "body": "Fixed in the latest deploy, please retest."},
     {"issue_id": "WEB-7", "body": "Still broken after the latest deploy, reopening."}, False),
    ("post_message", {"channel": "#team", "text": "The offsite starts on Monday."},
     {"channel": "#team", "text": "The offsite is cancelled on Monday."}, False),
)  # fmt: skip


def _request(
    canon: Canonicalizer, tool: str, stored: Any, proposal: Any, policies: PolicySet, cosine: float
) -> JudgeRequest:
    policy = policies.for_tool(tool)
    stored_args = canon.canonicalize(stored, policy).args
    mine = canon.canonicalize(proposal, policy)
    return JudgeRequest.for_pair(tool, policy, mine, stored_args, cosine)


@dataclass(frozen=True, slots=True)
class KnownPairAnswer:
    """What the judge said about one known pair."""

    pair: str
    expected: bool
    said: str
    # None when no verdict came back: unreachable, timed out, an HTTP error, a bad reply.
    duplicate: bool | None

    @property
    def agrees(self) -> bool:
        """Whether the judge gave the expected verdict."""
        return self.duplicate is self.expected


def agreement(judge: Judge, policies: PolicySet) -> list[KnownPairAnswer]:
    """Ask the judge about each known pair."""
    guarded = GuardedJudge(judge, cache_size=0)
    canon = Canonicalizer(EnglishPack())
    answers = []
    try:
        for tool, stored, proposal, expected in KNOWN_PAIRS:
            outcome = guarded.ask(_request(canon, tool, stored, proposal, policies, 0.0))
            verdict = outcome.verdict
            if verdict is None:
                said = f"{outcome.kind.value} ({outcome.detail})"
            else:
                kind = "duplicate" if verdict.duplicate else "distinct"
                said = f"{kind} ({verdict.confidence:.2f})"
            duplicate = None if verdict is None else verdict.duplicate
            answers.append(KnownPairAnswer(f"{tool}: {proposal}", expected, said, duplicate))
    finally:
        guarded.close()
    return answers


def label_borderline(
    entries: Sequence[dict[str, Any]],
    judge: GuardedJudge,
    ledger: SqliteLedger,
    policies: PolicySet,
) -> tuple[list[Sample], int]:
    """Judge-made samples for unlabelled borderline checks, and how many judge calls failed."""
    samples, failed = [], 0
    canon = Canonicalizer(EnglishPack())
    seen: set[tuple[str, str, str]] = set()
    for entry in entries:
        if entry.get("feedback"):
            continue
        semantic = [s for s in entry["explain"]["stages"] if s["stage"] == "semantic"]
        if not semantic or not entry.get("borderline"):
            continue
        stored_id = entry.get("matched_call_id") or semantic[0]["candidates"][0]["call_id"]
        stored = ledger.get(entry.get("tenant", DEFAULT_TENANT), stored_id)
        if stored is None:
            continue
        # A repeated proposal is one pair, not fresh evidence: label it once.
        pair = (entry["tool"], canonical_json(entry["args"]), stored_id)
        if pair in seen:
            continue
        seen.add(pair)
        request = _request(
            canon, entry["tool"], stored.args, entry["args"], policies, semantic[0]["score"]
        )
        outcome = judge.ask(request)
        if outcome.kind is not OutcomeKind.VERDICT or outcome.verdict is None:
            failed += 1
            continue
        samples.append(sample_from_entry(entry, outcome.verdict.duplicate, "judge"))
    return samples, failed
