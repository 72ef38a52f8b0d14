"""The matching funnel: exact, fuzzy and semantic stages run in order; the first match wins."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from rapidfuzz import fuzz
from rapidfuzz.distance import Indel
from rapidfuzz.utils import default_process

from tooldedup.dedup.canonical import sent_hash as hash_as_sent
from tooldedup.dedup.policy import ToolPolicy
from tooldedup.dedup.protocols import LanguagePack, SpellingBudget
from tooldedup.dedup.records import (
    CallRecord,
    CanonicalCall,
    Match,
    Scope,
    Stage,
    StageReport,
    ToolCall,
)
from tooldedup.dedup.verifier import VerdictKind, Verifiers, verified_candidates, verify_leaves

__all__ = [
    "EquivalentStage",
    "ExactStage",
    "FunnelHooks",
    "FunnelStage",
    "FuzzyStage",
    "Proposal",
    "StageResult",
    "best_scored",
    "leaf_texts",
    "run_funnel",
    "top_scored",
]

_TOP_SCORES = 5


@dataclass(frozen=True, slots=True)
class Proposal:
    """A call under check: what was sent, its canonical form and the policy that applies."""

    call: ToolCall
    canonical: CanonicalCall
    policy: ToolPolicy
    # A check may read the hash of its args as sent several times (a replay's lookup before
    # and under the lock, a key's binding, an ask's token), each a JSON encoding of the
    # whole args; a repeat found by its canonical args reads it only to bind a key.
    _sent_hash: str | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def sent_hash(self) -> str:
        """The hash of the args exactly as sent, worked out once."""
        value = self._sent_hash
        if value is None:
            value = hash_as_sent(self.call.args)
            object.__setattr__(self, "_sent_hash", value)
        return value

    @property
    def scope(self) -> Scope:
        """The tenant and dedup scope of the call."""
        return self.call.effective_scope


@dataclass(frozen=True, slots=True)
class StageResult:
    """A stage's report and, when it decided, its match."""

    report: StageReport
    match: Match | None = None


class FunnelStage(Protocol):
    """One stage of the funnel."""

    def check(self, proposal: Proposal, candidates: Sequence[CallRecord]) -> StageResult:
        """Compare the proposal with candidates that share its exact signature."""
        ...


class FunnelHooks(Protocol):
    """Work a stage does around the locked decision: before it, and after claims and purges."""

    def prepare(self, proposal: Proposal) -> None:
        """Do the slow work that needs no lock (embedding), before the scope is locked."""
        ...

    def claimed(self, proposal: Proposal, record: CallRecord) -> None:
        """A claim for ``proposal`` was stored as ``record``."""
        ...

    def purged(self) -> None:
        """The ledger deleted calls."""
        ...


def top_scored(scores: list[tuple[CallRecord, float]]) -> tuple[tuple[str, float], ...]:
    ranked = sorted(scores, key=lambda pair: -pair[1])[:_TOP_SCORES]
    return tuple((record.call_id, round(score, 6)) for record, score in ranked)


def best_scored(scores: list[tuple[CallRecord, float]]) -> tuple[CallRecord, float] | None:
    # Candidates arrive newest first, so on a tie the newest call wins.
    best: tuple[CallRecord, float] | None = None
    for record, score in scores:
        if best is None or score > best[1]:
            best = (record, score)
    return best


class ExactStage:
    """Whole canonical arguments are equal."""

    def check(self, proposal: Proposal, candidates: Sequence[CallRecord]) -> StageResult:
        """Match the newest candidate whose canonical args hash is identical."""
        for record in candidates:
            if record.args_hash == proposal.canonical.args_hash:
                report = StageReport(Stage.EXACT, 1.0, 1.0, True, ((record.call_id, 1.0),))
                return StageResult(report, Match(record, Stage.EXACT, 1.0))
        return StageResult(StageReport(Stage.EXACT, 0.0 if candidates else None, 1.0, False))


def leaf_texts(record: CallRecord) -> dict[str, str]:
    return {leaf.path: leaf.text for leaf in record.semantic_leaves}


class EquivalentStage:
    """Every value is equal, or one value spelt two ways ("Seattle" and "Seattle, WA"), or a
    list of names in another order."""

    def __init__(self, pack: LanguagePack) -> None:
        self._pack = pack

    def check(self, proposal: Proposal, candidates: Sequence[CallRecord]) -> StageResult:
        """Match the newest candidate whose free text is identical and whose exact values
        differ in spelling only."""
        canonical = proposal.canonical
        texts = {leaf.path: leaf.text for leaf in canonical.semantic_leaves}
        budget = SpellingBudget()
        for record in candidates:
            if record.args_hash == canonical.args_hash or leaf_texts(record) != texts:
                continue
            paths = self._pack.equivalent_leaves(
                canonical.exact_leaves,
                record.exact_leaves,
                proposal.policy.exact_fields,
                proposal.call.tool,
                budget,
            )
            if paths:
                detail = "the same values, spelt otherwise in " + ", ".join(paths)
                report = StageReport(
                    Stage.EQUIVALENT, 1.0, 1.0, True, ((record.call_id, 1.0),), detail
                )
                return StageResult(report, Match(record, Stage.EQUIVALENT, 1.0))
        return StageResult(StageReport(Stage.EQUIVALENT, None, 1.0, False))


class FuzzyStage:
    """Every semantic leaf is a near-identical string whose every change the verifier
    accounts for (whitespace, case, typos)."""

    def __init__(self, verifiers: Verifiers) -> None:
        self._verifiers = verifiers

    def check(self, proposal: Proposal, candidates: Sequence[CallRecord]) -> StageResult:
        """Score each candidate by its weakest leaf's rapidfuzz ratio (0..100).

        A leaf that needs more than ``max_fuzzy_edits`` character edits scores 0: in a long
        text 97% similar can still hide "approved" turned into "denied".
        """
        threshold = proposal.policy.min_fuzzy_ratio
        max_edits = proposal.policy.max_fuzzy_edits
        leaves = proposal.canonical.semantic_leaves
        if not leaves or not candidates:
            return StageResult(StageReport(Stage.FUZZY, None, threshold, False))
        processed = [default_process(leaf.text) for leaf in leaves]
        scores: list[tuple[CallRecord, float]] = []
        for record in candidates:
            texts = leaf_texts(record)
            weakest = 100.0
            for leaf, mine in zip(leaves, processed, strict=True):
                theirs = texts.get(leaf.path)
                ratio = 0.0
                if theirs is not None:
                    other = default_process(theirs)
                    if Indel.distance(mine, other, score_cutoff=max_edits) <= max_edits:
                        ratio = fuzz.ratio(mine, other)
                weakest = min(weakest, ratio)
            scores.append((record, weakest))
        # A swapped word or a dropped "not" is a few characters: a pair is a near-identical
        # string only when the verifier accounts for its every change (a typo, a short form,
        # the same words); any other goes on to the semantic stage and its verifier. Only
        # the best few that would match are verified, so the verifier's work stays small.
        verifier = self._verifiers.for_policy(proposal.policy)
        near = sorted((pair for pair in scores if pair[1] >= threshold), key=lambda p: -p[1])
        ruled_out: dict[str, str] = {}
        for record, score in near[: verified_candidates(len(leaves))]:
            verdict = verify_leaves(verifier, leaves, record.semantic_leaves)
            if verdict.kind is VerdictKind.CONFIRMED:
                report = StageReport(
                    Stage.FUZZY, round(score, 4), threshold, True, top_scored(scores)
                )
                return StageResult(report, Match(record, Stage.FUZZY, score / 100.0))
            how = "ruled out" if verdict.kind is VerdictKind.DIFFERENT else "did not confirm"
            why = verdict.reason or "a change no reason accounts for"
            ruled_out[record.call_id] = f"the verifier {how} {record.call_id}: {why}"
        shown = [(r, 0.0 if r.call_id in ruled_out or s >= threshold else s) for r, s in scores]
        best = best_scored(shown)
        assert best is not None
        detail = None
        if ruled_out:
            detail = next(iter(ruled_out.values()))
        report = StageReport(
            Stage.FUZZY, round(best[1], 4), threshold, False, top_scored(shown), detail
        )
        return StageResult(report)


def run_funnel(
    stages: Sequence[FunnelStage], proposal: Proposal, candidates: Sequence[CallRecord]
) -> tuple[Match | None, tuple[StageReport, ...]]:
    """Run the stages in order and stop at the first that matches."""
    if not candidates:
        detail = "no stored call in this scope and window shares the exact fields"
        return None, (StageReport(Stage.EXACT, None, 1.0, False, detail=detail),)
    reports: list[StageReport] = []
    for stage in stages:
        result = stage.check(proposal, candidates)
        reports.append(result.report)
        if result.match is not None:
            return result.match, tuple(reports)
    return None, tuple(reports)
