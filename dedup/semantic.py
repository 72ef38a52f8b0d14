"""The semantic stage: cosine of each free-text leaf through a vector index, then the verifier."""

from __future__ import annotations

from collections.abc import Sequence

from tooldedup.dedup.canonical import canonical_json, stable_hash
from tooldedup.dedup.funnel import Proposal, StageResult, leaf_texts, top_scored
from tooldedup.dedup.policy import CompareMode, CosineBand
from tooldedup.dedup.protocols import CachingEmbedder, VectorIndex, Vectors
from tooldedup.dedup.records import CallRecord, Match, Stage, StageReport
from tooldedup.dedup.verifier import (
    Verdict,
    VerdictKind,
    Verifiers,
    verified_candidates,
    verify_leaves,
)

__all__ = ["SemanticStage", "group_key", "vector_key"]


def vector_key(record: CallRecord) -> int:
    """A call's key in the vector index: from its call id, which no store ever reuses.

    Not the row id: SQLite hands out a purged row's id again, and another process's loaded
    group would then score a new call against the old call's vector.
    """
    return int(stable_hash(record.call_id)[:15], 16)  # 60 bits: faiss keys are int64


def group_key(proposal: Proposal, path: str) -> str:
    """The vector group of one semantic leaf: tenant, scope, tool, exact signature, path."""
    scope = proposal.scope
    parts = [scope.tenant, scope.name, proposal.call.tool, proposal.canonical.exact_signature, path]
    return stable_hash(canonical_json(parts))


class SemanticStage:
    """Cosine similarity of each free-text leaf, through a vector index."""

    def __init__(self, embedder: CachingEmbedder, index: VectorIndex, verifiers: Verifiers) -> None:
        self._embedder = embedder
        self._index = index
        self._verifiers = verifiers

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
        keys = [vector_key(record) for record in candidates]
        stored = [_candidate_texts(leaf.path, candidates, keys) for leaf in leaves]
        # A group another process added calls to, or one evicted or purged since, is rebuilt
        # from the candidates, whose vectors come from the embedding cache and its store.
        loads = [
            (group, pairs)
            for group, pairs in zip(groups, stored, strict=True)
            if not self._index.has(group)
        ]
        loaded = [t for _, pairs in loads for _, t in pairs]
        if loads:
            # A group of no texts is loaded too (empty): a claim then adds to it.
            self._load(loads, self._embedder.embed(loaded))
        if loaded:
            # Stored calls' texts: any the model had to embed again go back to the store.
            self._embedder.keep(loaded)
        # The check's own texts from memory or the model: most checks that get here end as
        # duplicates, which would pay a store lookup each for a vector seldom there. After
        # the loads: a text of the check that a loaded call holds is in memory now.
        vectors = self._embedder.embed_new(texts)
        weakest = dict.fromkeys(keys, 1.0)
        for group, pairs, vector in zip(groups, stored, vectors, strict=True):
            cosines = self._index.search(group, vector, keys)
            if any(key not in cosines for key, _ in pairs):
                again = [t for _, t in pairs]
                self._load([(group, pairs)], self._embedder.embed(again))
                self._embedder.keep(again)
                cosines = self._index.search(group, vector, keys)
            for key in keys:
                weakest[key] = min(weakest[key], cosines.get(key, -1.0))
        scores = [(record, weakest[key]) for record, key in zip(candidates, keys, strict=True)]
        return self._decide(proposal, scores)

    def _decide(self, proposal: Proposal, scores: list[tuple[CallRecord, float]]) -> StageResult:
        """The best candidate the verifier does not rule out, answered by its band.

        A verdict of ``different`` drops a candidate; ``unsure`` holds a match for a judge;
        ``confirmed`` settles a borderline match as a duplicate, and is the only verdict that
        makes a match under the borderline band (``min_cosine_confirmed``) one. The whole-call
        mode stands for a semantic cache, which has no verifier.
        """
        policy = proposal.policy
        leaves = proposal.canonical.semantic_leaves
        ranked = sorted(scores, key=lambda pair: -pair[1])
        ruled_out: tuple[str, str] | None = None
        verifier = self._verifiers.for_policy(policy)
        for record, score in ranked[: verified_candidates(len(leaves))]:
            band = policy.band(score)
            if band is CosineBand.BELOW:
                break
            verdict = Verdict(VerdictKind.NO_OBJECTION)
            if policy.mode is not CompareMode.WHOLE:
                verdict = verify_leaves(verifier, leaves, record.semantic_leaves)
            if verdict.kind is VerdictKind.DIFFERENT:
                if ruled_out is None:
                    ruled_out = (record.call_id, verdict.reason or "")
                continue
            if band is CosineBand.CONFIRMABLE and (
                verdict.kind is not VerdictKind.CONFIRMED or verdict.negation_changed
            ):
                continue
            hold = verdict.reason if verdict.kind is VerdictKind.UNSURE else None
            confirmed = verdict.kind is VerdictKind.CONFIRMED
            duplicate = hold is None and (band is CosineBand.DUPLICATE or confirmed)
            report = StageReport(
                Stage.SEMANTIC,
                round(score, 6),
                policy.min_cosine_duplicate,
                duplicate,
                top_scored(scores),
                _detail(policy.min_cosine_borderline, band, verdict),
                verdict.kind.value,
            )
            return StageResult(report, Match(record, Stage.SEMANTIC, score, not duplicate, hold))
        detail = None
        if ruled_out is not None:
            detail = f"the verifier ruled out {ruled_out[0]}: {ruled_out[1]}"
        report = StageReport(
            Stage.SEMANTIC,
            round(ranked[0][1], 6),
            policy.min_cosine_duplicate,
            False,
            top_scored(scores),
            detail,
            None if ruled_out is None else VerdictKind.DIFFERENT.value,
        )
        return StageResult(report)

    def _load(self, loads: list[tuple[str, list[tuple[int, str]]]], vectors: Vectors) -> None:
        offset = 0
        for group, pairs in loads:
            self._index.load(group, [k for k, _ in pairs], vectors[offset : offset + len(pairs)])
            offset += len(pairs)

    def prepare(self, proposal: Proposal) -> None:
        """Embed the proposal's leaves in one batch, outside any lock others wait on."""
        leaves = proposal.canonical.semantic_leaves
        if leaves:
            # A claim with no candidates has not embedded its texts yet: they may be in the
            # store (another replica claimed the same text in another session). A check that
            # had candidates read them from memory or the model in the semantic stage.
            self._embedder.embed([leaf.text for leaf in leaves])

    def purged(self) -> None:
        """Drop every loaded group, after the ledger deleted calls."""
        self._index.clear()

    def claimed(self, proposal: Proposal, record: CallRecord) -> None:
        """Store a newly claimed call's vectors and add them to loaded groups.

        Stored with the claim (they were embedded before it), so a later group load, here or
        in another replica, never waits on the model.
        """
        leaves = proposal.canonical.semantic_leaves
        if not leaves:
            return
        texts = [leaf.text for leaf in leaves]
        vectors = self._embedder.embed(texts)
        self._embedder.persist(texts)
        for leaf, vector in zip(leaves, vectors, strict=True):
            self._index.add(group_key(proposal, leaf.path), vector_key(record), vector)


def _candidate_texts(
    path: str, candidates: Sequence[CallRecord], keys: Sequence[int]
) -> list[tuple[int, str]]:
    pairs = [(key, leaf_texts(r).get(path)) for r, key in zip(candidates, keys, strict=True)]
    return [(key, text) for key, text in pairs if text is not None]


def _detail(min_cosine_borderline: float, band: CosineBand, verdict: Verdict) -> str | None:
    if verdict.kind is VerdictKind.UNSURE:
        return f"held for a verifier: {verdict.reason}"
    if band is CosineBand.BORDERLINE and verdict.kind is VerdictKind.CONFIRMED:
        return f"borderline, confirmed by the verifier: {verdict.reason}"
    if band is CosineBand.CONFIRMABLE:
        return (
            f"under min_cosine_borderline {min_cosine_borderline}, confirmed by the verifier:"
            f" {verdict.reason}"
        )
    if band is CosineBand.BORDERLINE:
        return f"borderline: at or above min_cosine_borderline {min_cosine_borderline}"
    if verdict.kind is VerdictKind.CONFIRMED:
        return f"confirmed by the verifier: {verdict.reason}"
    return None
