"""What a verifier concludes about two free texts, and how a call's leaves add up to one verdict.

The rules that read the texts live in a language pack (``dedup/english/``); the core only
asks the pack's verifier and combines its verdicts:
- ``different`` when the change flips the act;
- ``unsure`` when it cannot tell, so that only a judge may merge;
- ``confirmed`` when every change is accounted for as a rewording, each for a stated reason;
- ``no_objection`` otherwise, leaving the answer to the thresholds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Protocol

from tooldedup.dedup.policy import ToolPolicy
from tooldedup.dedup.records import SemanticLeaf
from tooldedup.dedup.short_cache import ShortTextCache

__all__ = [
    "RememberedVerifier",
    "Verdict",
    "VerdictKind",
    "Verifier",
    "Verifiers",
    "verified_candidates",
    "verify_leaves",
]


# A stage verifies at most this many candidates, and fewer for a call of many free-text
# leaves: the pair model costs milliseconds per leaf read, and a match ruled out so many
# times over is not worth the work.
_MAX_VERIFIED = 8
_MAX_VERIFIED_LEAVES = 16


def verified_candidates(leaves: int) -> int:
    """How many candidates a stage verifies for a call of ``leaves`` free-text leaves."""
    return max(1, min(_MAX_VERIFIED, _MAX_VERIFIED_LEAVES // max(1, leaves)))


class VerdictKind(StrEnum):
    """What the verifier concluded about two texts."""

    DIFFERENT = "different"
    UNSURE = "unsure"
    CONFIRMED = "confirmed"
    NO_OBJECTION = "no_objection"


@dataclass(frozen=True, slots=True)
class Verdict:
    """A conclusion and the change behind it."""

    kind: VerdictKind
    reason: str | None = None
    # A confirmation no later reader may overturn: the same words, or only typos.
    final: bool = False
    # Whether a pair model may confirm it: never a rewording in which a small word of
    # meaning changed.
    confirmable: bool = True
    # A negation came or went ("renew" / "do not renew" reworded): a confirmation of such a
    # pair makes a duplicate only at or above the borderline band.
    negation_changed: bool = False


class Verifier(Protocol):
    """Compares a stored free text with a proposed one."""

    def compare(self, stored: str, proposed: str) -> Verdict:
        """Whether the proposed text asks for the same thing as the stored one."""
        ...


class RememberedVerifier:
    """A verifier whose verdicts on recent pairs of short texts are remembered.

    A verdict depends on the two texts alone, and the same pair comes back: a retried
    re-issue is compared again with each candidate of its session, and an agent in a loop
    sends one rewording many times. Texts over ``max_chars`` are compared each time, so the
    memo stays small whatever callers send.
    """

    def __init__(self, inner: Verifier, *, maxsize: int = 4096, max_chars: int = 4096) -> None:
        self._compare = ShortTextCache(inner.compare, maxsize=maxsize, max_chars=max_chars)

    def compare(self, stored: str, proposed: str) -> Verdict:
        """The inner verifier's verdict, from the memo where it is kept."""
        return self._compare(stored, proposed)


@dataclass(frozen=True, slots=True)
class Verifiers:
    """The rules alone, and the rules read with the pair model when it is loaded: each
    tool's policy (``pair_model``) picks one."""

    rules: Verifier
    with_pair_model: Verifier | None = None

    def for_policy(self, policy: ToolPolicy) -> Verifier:
        """The verifier ``policy`` asks for; the rules when the pair model is not loaded."""
        if policy.pair_model and self.with_pair_model is not None:
            return self.with_pair_model
        return self.rules


def verify_leaves(
    verifier: Verifier, mine: Sequence[SemanticLeaf], theirs: Sequence[SemanticLeaf]
) -> Verdict:
    """One verdict for a proposal's free-text leaves against a stored call's, by path.

    Any ``different`` leaf rules the pair out; any ``unsure`` leaf holds it; it is
    ``confirmed`` only when every leaf is.
    """
    stored = {leaf.path: leaf.text for leaf in theirs}
    verdicts = []
    for leaf in mine:
        if leaf.path in stored:
            verdict = verifier.compare(stored[leaf.path], leaf.text)
            # One objection settles it: the leaves after it are not read.
            if verdict.kind is VerdictKind.DIFFERENT:
                return verdict
            verdicts.append(verdict)
    for verdict in verdicts:
        if verdict.kind is VerdictKind.UNSURE:
            return verdict
    if verdicts and all(v.kind is VerdictKind.CONFIRMED for v in verdicts):
        return replace(verdicts[0], negation_changed=any(v.negation_changed for v in verdicts))
    return Verdict(VerdictKind.NO_OBJECTION)
