"""Negations: a "not" that came or went over a word both texts keep, and what it refuses.

"Approve the refund" and "Do not approve the refund" share every content word and embed alike;
"Please renew the licence" and "The licence should not be renewed this year" reword around a
new "not". The verifier (``dedup/verifier.py``) asks these checks which it is: a flip, a
negation in a sentence rewritten around it (held), or one thing refused in two words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from tooldedup.dedup.english.lexicon import NEGATIONS, NEGATIVE_WORDS, STOP, align, root, words

__all__ = [
    "MAX_ALIGNED_WORDS",
    "Pair",
    "negates",
    "negation_came_or_went",
    "negation_changed",
    "negation_flip",
    "refusal_moved",
    "reworded_negation",
]

# Alignment is quadratic in the worst case: longer texts are read by their bags of words.
MAX_ALIGNED_WORDS = 150


@dataclass(frozen=True, slots=True)
class Pair:
    """Two texts as written and as words: what each check reads."""

    stored: str
    proposed: str
    old: list[str]
    new: list[str]
    # "a negation was added" (or removed), or None: several rules read it.
    negation: str | None = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "negation", negation_came_or_went(self.old, self.new))


# Words between a negation and what it negates: "do not ever delete" still negates "delete",
# "don't go ahead and approve" negates "approve", and "won't be able to attend" "attend".
_ADVERBS = frozenset(
    "ever again always really even once any more longer further go ahead able".split()
)
_NOT_CONTENT = STOP | NEGATIONS
_SKIPPED = _NOT_CONTENT | _ADVERBS
# Words after a negation it may govern, adverbs among them.
_NEGATION_REACH = 8
# Words on either side of an edit that adds or drops a negation in place ("do not").
_MAX_NEGATION_EDIT = 4
# Words either side of a word within which another negation refuses it too.
_NEAR = 4
# "Y instead of X" says what "from X to Y" and "replace X with Y" say, and nothing else does.
_REPLACEMENT = re.compile(r"\b(?:instead of|rather than)\b")
_SWITCHING = re.compile(r"\b(?:from|replace|replacing)\b|->|→")
_ARROW = re.compile(
    r"(?:^|[:,;(])\s*(?:(?:the|a|an|my|our|your|their)\s+)?([^\W_]+)[^:,;()\n]{0,40}?\s*(?:->|→)"
)
_SWITCH = re.compile(
    r"\b(?:from|replace|replacing)\s+(?:(?:the|a|an|my|our|your|their|his|her)\s+)?"
    r"([^\W_]+)[^.;!?]{0,60}?\b(?:to|with|for)\b"
)


def negation_flip(pair: Pair) -> str | None:
    negation = pair.negation
    if negation is None:
        # Another negating word elsewhere ("… unless it is paid", "… without a review") can
        # even the count; a bare "do not" put before a word both texts keep still flips.
        return _bare_refusal(pair)
    if not _negated_kept(pair) or not _negation_in_place(pair):
        return None
    return negation


def reworded_negation(pair: Pair) -> str | None:
    """A negation over a word both texts keep, in a sentence rewritten around it: a flip as
    often as a rewording ("Please renew the licence" / "The licence should not be renewed
    this year"), so only a judge may merge it."""
    negation = pair.negation
    if negation is None or not _negated_kept(pair):
        return None
    return f"{negation} in a reworded sentence"


def _bare_refusal(pair: Pair) -> str | None:
    """A "do not" put before (or taken from) a word both texts keep in place, the other text
    not refusing that word: "Approve the expense report" / "Do not approve the expense
    report unless receipts are attached"."""
    if max(len(pair.old), len(pair.new)) > MAX_ALIGNED_WORDS:
        return None
    # Most texts say no "not" at all: they need no alignment here.
    if NEGATIONS.isdisjoint(pair.old) and NEGATIONS.isdisjoint(pair.new):
        return None
    opcodes = align(pair.old, pair.new)
    for (tag, i1, i2, j1, j2), following in pairwise(opcodes):
        if tag not in ("insert", "delete") or following[0] != "equal":
            continue
        block, other, at = (
            (pair.new[j1:j2], pair.old, following[1])
            if tag == "insert"
            else (pair.old[i1:i2], pair.new, following[3])
        )
        if not any(w in NEGATIONS for w in block) or not all(w in _SKIPPED for w in block):
            continue
        if other[at] in _SKIPPED:
            continue
        # The other text refuses the same word in its own words ("contrast is unnecessary").
        if any(map(_negating, other[max(0, at - _NEAR) : at + _NEAR + 1])):
            continue
        return f"a negation was {'added' if tag == 'insert' else 'removed'}"
    return None


def _negation_in_place(pair: Pair) -> bool:
    """Whether a negation came or went among words left in place: "do not" put before
    "approve the refund", "unclear" for "clear". A sentence rewritten around its negation
    ("… at 13:00? That way the rollbacks don't overlap" for "To keep the rollbacks from
    overlapping, … at 13:00?") rewords; a flip keeps the words around the negation, or at
    least the one it negates."""
    if max(len(pair.old), len(pair.new)) > MAX_ALIGNED_WORDS:
        # Alignment is quadratic; past the bound the flip stands as the counts say.
        return True
    opcodes = align(pair.old, pair.new)
    kept_old = {i for tag, i1, i2, _, _ in opcodes if tag == "equal" for i in range(i1, i2)}
    kept_new = {j for tag, _, _, j1, j2 in opcodes if tag == "equal" for j in range(j1, j2)}
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            continue
        before = _negations_in(pair.old[i1:i2])
        after = _negations_in(pair.new[j1:j2])
        if before % 2 == after % 2:
            continue
        if max(i2 - i1, j2 - j1) <= _MAX_NEGATION_EDIT:
            return True
        for side, start, stop, kept in (
            (pair.old, i1, i2, kept_old),
            (pair.new, j1, j2, kept_new),
        ):
            for at in range(start, stop):
                if side[at] in NEGATIONS and _governed_at(side, at) in kept:
                    return True
    return False


def _governed(words: list[str], at: int) -> str | None:
    """The word the negation at ``at`` governs: the first content word of the next four,
    adverbs skipped ("do not ever approve", "don't go ahead with the transfer"), else the
    verb it stands on ("don't go")."""
    found = _governed_at(words, at)
    return None if found is None else words[found]


def _governed_at(words: list[str], at: int) -> int | None:
    """Where the word the negation at ``at`` governs stands (see ``_governed``)."""
    following = [
        i for i in range(at + 1, min(len(words), at + 1 + _NEGATION_REACH))
        if words[i] not in _ADVERBS
    ][:4]  # fmt: skip
    content = [i for i in following if words[i] not in _SKIPPED]
    if content:
        return content[0]
    bare = [i for i in range(at + 1, min(len(words), at + 3)) if words[i] not in _NOT_CONTENT]
    return bare[0] if bare else None


def _refusals(words: list[str]) -> tuple[dict[str, str], set[int]]:
    """The words a text's negations govern, by root, and the positions they reach."""
    refused: dict[str, str] = {}
    reached: set[int] = set()
    for i, word in enumerate(words):
        if word in NEGATIONS:
            governed = _governed(words, i)
            if governed is not None:
                refused[root(governed)] = governed
            reached.update(range(i + 1, i + 1 + _NEGATION_REACH))
    return refused, reached


def refusal_moved(pair: Pair) -> str | None:
    # One thing refused on each side, and each side says plainly, outside any negation,
    # what the other refuses: "home, not the office" against "the office rather than home";
    # "200, not 240" against "240 rather than 200". "Use the blue one, not the red one" and
    # "Don't use the red one, use the blue one" refuse one thing in two words.
    (before, reached_old), (after, reached_new) = _refusals(pair.old), _refusals(pair.new)
    if len(before) != 1 or len(after) != 1 or before.keys() == after.keys():
        return None
    plain_old = {root(w) for i, w in enumerate(pair.old) if i not in reached_old}
    plain_new = {root(w) for i, w in enumerate(pair.new) if i not in reached_new}
    if before.keys() <= plain_new and after.keys() <= plain_old:
        return f"what is refused changed: not {min(before.values())} → not {min(after.values())}"
    return None


def _negated_kept(pair: Pair) -> bool:
    """Whether a word a negation governs in one text appears un-negated in the other:
    "do not approve the refund, under any circumstances" still says "approve", and
    "unclear" still says "clear". A negation whose word was reworded too ("has not worked"
    for "has been broken") is a rewording, not a flip. So is "an SUV instead of the compact
    car" against "switch from the compact car to an SUV": the other text names the word as
    what is replaced."""
    sides = (
        (pair.old, pair.new, pair.stored, pair.proposed),
        (pair.new, pair.old, pair.proposed, pair.stored),
    )
    for with_neg, other, negating, other_text in sides:
        plain = {root(w) for w in other}
        lowered = negating.lower()
        if _REPLACEMENT.search(lowered) and not _SWITCHING.search(lowered):
            plain -= {root(w) for w in _replaced(other_text)}
        for i, word in enumerate(with_neg):
            positive = NEGATIVE_WORDS.get(word)
            if positive:
                governed: str | None = positive
            elif word in NEGATIONS or positive == "":
                governed = _governed(with_neg, i)
            else:
                continue
            if governed is not None and root(governed) in plain:
                return True
    return False


def _replaced(text: str) -> list[str]:
    """What a text switches away from: X in "from X to Y", "replace X with Y", "X -> Y"."""
    lowered = text.lower()
    return [m.group(1) for pattern in (_SWITCH, _ARROW) for m in pattern.finditer(lowered)]


def negates(words: list[str], at: int) -> bool:
    """Whether a negation before ``at`` governs the word there, or one just before it."""
    for k in range(max(0, at - _NEGATION_REACH), at):
        if _negating(words[k]):
            governed = _governed_at(words, k) if words[k] in NEGATIONS else k
            if governed is not None and at - 3 <= governed <= at:
                return True
    return False


# A negation, or a word that carries one: tested for every word of both texts at every compare.
_NEGATING = NEGATIONS | NEGATIVE_WORDS.keys()


def _negating(word: str) -> bool:
    return word in _NEGATING


def _negations_in(words: Sequence[str]) -> int:
    return len([w for w in words if w in _NEGATING])


def negation_came_or_went(old: list[str], new: list[str]) -> str | None:
    before = _negations_in(old)
    after = _negations_in(new)
    if before % 2 == after % 2:
        return None
    return f"a negation was {'added' if after > before else 'removed'}"


def negation_changed(stored: str, proposed: str) -> bool:
    """Whether one text says "not" (or a word that carries one) where the other does not.

    Under the borderline band a confirmation needs more than the pair model's word: it reads
    a text reworded around a new "not" as the same request ("We will be able to deliver the
    sofa to your flat on Thursday morning" / "Sadly the sofa won't reach your flat on Thursday
    morning": logit 5.7, and no rule objects), so such a match is never confirmed there.
    """
    return negation_came_or_went(words(stored), words(proposed)) is not None
