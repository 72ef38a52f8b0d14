"""The matching funnel: exact, fuzzy and semantic stages run in order; the first match wins."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from rapidfuzz import fuzz
from rapidfuzz.distance import Indel
from rapidfuzz.utils import default_process

from tooldedup.dedup.canonical import canonical_json, stable_hash
from tooldedup.dedup.critical import bare_ordinals
from tooldedup.dedup.policy import CosineBand, ToolPolicy
from tooldedup.dedup.protocols import Embedder, VectorIndex, Vectors
from tooldedup.dedup.records import CallRecord, CanonicalCall, Match, Stage, StageReport, ToolCall

__all__ = [
    "ExactStage",
    "FunnelHooks",
    "FunnelStage",
    "FuzzyStage",
    "Proposal",
    "SemanticStage",
    "StageResult",
    "run_funnel",
]

_TOP_SCORES = 5


@dataclass(frozen=True, slots=True)
class Proposal:
    """A call under check: what was sent, its canonical form and the policy that applies."""

    call: ToolCall
    canonical: CanonicalCall
    policy: ToolPolicy

    @property
    def scope(self) -> str:
        """The dedup scope of the call."""
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


def _top(scores: list[tuple[CallRecord, float]]) -> tuple[tuple[str, float], ...]:
    ranked = sorted(scores, key=lambda pair: -pair[1])[:_TOP_SCORES]
    return tuple((record.call_id, round(score, 6)) for record, score in ranked)


def _best(scores: list[tuple[CallRecord, float]]) -> tuple[CallRecord, float] | None:
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


def _leaf_texts(record: CallRecord) -> dict[str, str]:
    return {leaf.path: leaf.text for leaf in record.semantic_leaves}


def ordinal_swap(proposal: Proposal, record: CallRecord) -> str | None:
    """Where a free-text leaf swaps one bare ordinal for another ("first" for "second").

    Cosine barely moves on such a swap, and bare ordinals are not critical tokens (a
    paraphrase may add "first, ..."), so a swap holds the match for a verifier.
    """
    theirs = _leaf_texts(record)
    for leaf in proposal.canonical.semantic_leaves:
        other = theirs.get(leaf.path)
        if other is None:
            continue
        mine, their = bare_ordinals(leaf.text), bare_ordinals(other)
        if mine and their and mine != their:
            return f"{leaf.path}: {', '.join(their)} became {', '.join(mine)}"
    return None


class FuzzyStage:
    """Every semantic leaf is a near-identical string (whitespace, case, typos)."""

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
            texts = _leaf_texts(record)
            # A swapped ordinal is a few characters; it is the semantic stage's to hold.
            weakest = 0.0 if ordinal_swap(proposal, record) else 100.0
            for leaf, mine in zip(leaves, processed, strict=True):
                theirs = texts.get(leaf.path)
                ratio = 0.0
                if theirs is not None:
                    other = default_process(theirs)
                    if Indel.distance(mine, other, score_cutoff=max_edits) <= max_edits:
                        ratio = fuzz.ratio(mine, other)
                weakest = min(weakest, ratio)
            scores.append((record, weakest))
        best = _best(scores)
        assert best is not None
        record, score = best
        matched = score >= threshold
        report = StageReport(Stage.FUZZY, round(score, 4), threshold, matched, _top(scores))
        return StageResult(report, Match(record, Stage.FUZZY, score / 100.0) if matched else None)


def group_key(proposal: Proposal, path: str) -> str:
    """The vector group of one semantic leaf: scope, tool, exact signature and path."""
    parts = [proposal.scope, proposal.call.tool, proposal.canonical.exact_signature, path]
    return stable_hash(canonical_json(parts))


class SemanticStage:
    """Cosine similarity of each free-text leaf, through a vector index."""

    def __init__(self, embedder: Embedder, index: VectorIndex) -> None:
        self._embedder = embedder
        self._index = index

    def check(self, proposal: Proposal, candidates: Sequence[CallRecord]) -> StageResult:
        """Score each candidate by its weakest leaf's cosine and compare with the thresholds."""
        policy = proposal.policy
        leaves = proposal.canonical.semantic_leaves
        if not leaves or not candidates:
            return StageResult(
                StageReport(Stage.SEMANTIC, None, policy.min_cosine_duplicate, False)
            )
        groups = [group_key(proposal, leaf.path) for leaf in leaves]
        texts = [leaf.text for leaf in leaves]
        stored = [self._candidate_texts(leaf.path, candidates) for leaf in leaves]
        # One embed call covers the proposal and every group that must be (re)loaded: a
        # group another process added calls to, or one evicted or purged since, is rebuilt
        # from the candidates, whose vectors come from the embedding cache.
        loads = [
            (group, pairs)
            for group, pairs in zip(groups, stored, strict=True)
            if not self._index.has(group)
        ]
        vectors = self._embedder.embed(texts + [t for _, pairs in loads for _, t in pairs])
        self._load(loads, vectors[len(leaves) :])
        keys = [record.row_id for record in candidates]
        weakest = dict.fromkeys(keys, 1.0)
        for group, pairs, vector in zip(groups, stored, vectors, strict=False):
            cosines = self._index.search(group, vector, keys)
            if any(key not in cosines for key, _ in pairs):
                self._load([(group, pairs)], self._embedder.embed([t for _, t in pairs]))
                cosines = self._index.search(group, vector, keys)
            for key in keys:
                weakest[key] = min(weakest[key], cosines.get(key, -1.0))
        scores = [(record, weakest[record.row_id]) for record in candidates]
        holds = {r.row_id: h for r in candidates if (h := ordinal_swap(proposal, r)) is not None}
        clean = _best([(r, s) for r, s in scores if r.row_id not in holds])
        held = _best([(r, s) for r, s in scores if r.row_id in holds])
        best = clean
        if best is None or (held is not None and policy.band(best[1]) is CosineBand.BELOW):
            best = held
        assert best is not None
        record, score = best
        hold = holds.get(record.row_id)
        band = policy.band(score)
        duplicate = band is CosineBand.DUPLICATE and hold is None
        borderline = band is not CosineBand.BELOW and not duplicate
        detail = None
        if hold is not None and borderline:
            detail = f"held for a verifier: bare ordinal swapped ({hold})"
        elif borderline:
            detail = f"borderline: at or above min_cosine_borderline {policy.min_cosine_borderline}"
        report = StageReport(
            Stage.SEMANTIC,
            round(score, 6),
            policy.min_cosine_duplicate,
            duplicate,
            _top(scores),
            detail,
        )
        if duplicate or borderline:
            return StageResult(report, Match(record, Stage.SEMANTIC, score, borderline, hold))
        return StageResult(report)

    def _load(self, loads: list[tuple[str, list[tuple[int, str]]]], vectors: Vectors) -> None:
        offset = 0
        for group, pairs in loads:
            self._index.load(group, [k for k, _ in pairs], vectors[offset : offset + len(pairs)])
            offset += len(pairs)

    @staticmethod
    def _candidate_texts(path: str, candidates: Sequence[CallRecord]) -> list[tuple[int, str]]:
        pairs = [(r.row_id, _leaf_texts(r).get(path)) for r in candidates]
        return [(key, text) for key, text in pairs if text is not None]

    def prepare(self, proposal: Proposal) -> None:
        """Embed the proposal's leaves in one batch, outside any lock others wait on."""
        leaves = proposal.canonical.semantic_leaves
        if leaves:
            self._embedder.embed([leaf.text for leaf in leaves])

    def purged(self) -> None:
        """Drop every loaded group, after the ledger deleted calls."""
        self._index.clear()

    def claimed(self, proposal: Proposal, record: CallRecord) -> None:
        """Embed a newly claimed call's leaves now and add them to loaded groups.

        Embedding at claim time (a cache hit when this check already embedded them) means
        a later group load never waits on the model.
        """
        leaves = proposal.canonical.semantic_leaves
        if not leaves:
            return
        vectors = self._embedder.embed([leaf.text for leaf in leaves])
        for leaf, vector in zip(leaves, vectors, strict=True):
            self._index.add(group_key(proposal, leaf.path), record.row_id, vector)


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
