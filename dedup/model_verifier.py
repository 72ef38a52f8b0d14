"""The rules first, then a pair model that reads both texts together: what neither sees alone."""

from __future__ import annotations

import math
from functools import lru_cache

from tooldedup.dedup.protocols import PairScorer
from tooldedup.dedup.verifier import Verdict, VerdictKind, Verifier

__all__ = ["ModelVerifier"]

# A check that claims runs its funnel twice, the second time under a lock: the second read
# of a pair comes from here.
_CACHED_SCORES = 4096


class ModelVerifier:
    """A rule verifier whose verdicts the pair model may overturn, short of a final one.

    A rule's ``different`` and its final confirmations (the same words, only typos) stand.
    Any other pair under ``min_logit_same`` is ``different``. With ``min_logit_confirm`` set
    (None: never), a pair the rules had no objection to is ``confirmed`` at or above it, so a
    borderline match needs no judge; a rule's doubt (``unsure``), and a rewording in which a
    small word of meaning changed, are never confirmed: the model may confirm a rewording,
    never excuse a change of meaning. A pair longer than the model reads whole is left to the
    rules.
    """

    def __init__(
        self,
        rules: Verifier,
        scorer: PairScorer,
        *,
        min_logit_same: float = -2.5,
        min_logit_confirm: float | None = None,
    ) -> None:
        for name, value in (
            ("min_logit_same", min_logit_same),
            ("min_logit_confirm", min_logit_confirm),
        ):
            if value is not None and not math.isfinite(value):
                raise ValueError(f"{name} must be a finite logit")
        if min_logit_confirm is not None and min_logit_confirm < min_logit_same:
            raise ValueError("min_logit_confirm must not be under min_logit_same")
        self._rules = rules
        self._scorer = scorer
        self._score = lru_cache(maxsize=_CACHED_SCORES)(scorer.score)
        self._min_logit_same = min_logit_same
        self._min_logit_confirm = min_logit_confirm

    @property
    def model_id(self) -> str:
        """The pair model's id."""
        return self._scorer.model_id

    def compare(self, stored: str, proposed: str) -> Verdict:
        """The rules' verdict, unless the pair model overturns it."""
        verdict = self._rules.compare(stored, proposed)
        if verdict.kind is VerdictKind.DIFFERENT or verdict.final:
            return verdict
        logit = self._score(stored, proposed)
        if logit is None:
            return verdict
        if logit < self._min_logit_same:
            return Verdict(
                VerdictKind.DIFFERENT,
                f"the pair model reads another request (logit {logit:.2f} <"
                f" min_logit_same {self._min_logit_same:g})",
            )
        confirm = self._min_logit_confirm
        if (
            verdict.kind is VerdictKind.NO_OBJECTION
            and verdict.confirmable
            and confirm is not None
            and logit >= confirm
        ):
            return Verdict(
                VerdictKind.CONFIRMED,
                f"the pair model reads the same request (logit {logit:.2f} >="
                f" min_logit_confirm {confirm:g})",
                negation_changed=verdict.negation_changed,
            )
        return verdict
