"""A local verifier for what cosine cannot tell: it aligns two free texts and names the change.

Embeddings of "increase the limit" and "decrease the limit" sit above 0.95 cosine; so do a
request and a thank-you on one topic, and a sentence with one content word swapped. The
verifier reads the two texts side by side, word by word, and answers:
- ``different`` when the change flips the act: a negation added or removed over a word both
  texts keep, an antonym or a reversed direction, names, items or values that traded places,
  "I" and "you" swapped, a request against a thank-you, a report or a question
  (``dedup/lexicon.py``, ``dedup/moves.py``, ``dedup/acts.py``);
- ``unsure`` when it cannot tell (a bare ordinal, one content word swapped for a word that is
  no synonym, a negation over a kept word in a sentence rewritten around it), so that only a
  judge may merge;
- ``confirmed`` when the texts differ only in ways that keep the meaning (case, punctuation,
  negations absorbed into a word, synonyms), which settles a borderline match;
- ``no_objection`` otherwise, leaving the answer to the thresholds.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from enum import StrEnum
from itertools import pairwise
from typing import Protocol

from rapidfuzz.distance import OSA

from tooldedup.dedup.acts import act_changed, text_act
from tooldedup.dedup.bounds import bound_reversed
from tooldedup.dedup.critical import DAY_WORDS, one_unit_or_day
from tooldedup.dedup.lexicon import (
    ANTONYM_STEMS,
    NEGATIONS,
    NEGATIVE_WORDS,
    SHORT_FORMS,
    STOP,
    root,
    stem,
    words,
)
from tooldedup.dedup.moves import (
    direction_flipped,
    item_added,
    mutual_swap,
    opposites_in_place,
    person_swapped,
    persons_changed,
    replacements,
    traded,
    values_moved,
)
from tooldedup.dedup.phrases import excused, phrase_swap
from tooldedup.dedup.records import SemanticLeaf

__all__ = [
    "RuleVerifier",
    "Verdict",
    "VerdictKind",
    "Verifier",
    "negation_changed",
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


class Verifier(Protocol):
    """Compares a stored free text with a proposed one."""

    def compare(self, stored: str, proposed: str) -> Verdict:
        """Whether the proposed text asks for the same thing as the stored one."""
        ...


_ORDINALS = frozenset({"first", "second", "third", "last"})
# A swapped word says "another thing" only inside enough unchanged context.
_MIN_SWAP_CONTEXT = 4
_MAX_ALIGNED_WORDS = 150
# Content-word overlap above which a change of act is a flip, not a rewording.
_MIN_ACT_OVERLAP = 0.2
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


def _overlap(old: list[str], new: list[str]) -> float:
    """Shared content words (by stem, negations aside), over all of them: 1 for a minimal
    pair, low for a rewording. A rewording moves negations around freely ("can't wait" for
    "excited"); a near-identical text that gains a "not" says the opposite."""
    a = {stem(NEGATIVE_WORDS.get(w, w)) for w in old if w not in STOP | NEGATIONS}
    b = {stem(NEGATIVE_WORDS.get(w, w)) for w in new if w not in STOP | NEGATIONS}
    # A negative word stands for its root plus a negation: "unclear" overlaps "clear".
    a.discard("")
    b.discard("")
    return len(a & b) / len(a | b) if a | b else 1.0


@dataclass(frozen=True, slots=True)
class _Pair:
    """Two texts as written and as words: what each check reads."""

    stored: str
    proposed: str
    old: list[str]
    new: list[str]


def _negation_flip(pair: _Pair) -> str | None:
    negation = _negation(pair.old, pair.new)
    if negation is None:
        # Another negating word elsewhere ("… unless it is paid", "… without a review") can
        # even the count; a bare "do not" put before a word both texts keep still flips.
        return _bare_refusal(pair)
    if not _negated_kept(pair) or not _negation_in_place(pair):
        return None
    return negation


def _reworded_negation(pair: _Pair) -> str | None:
    """A negation over a word both texts keep, in a sentence rewritten around it: a flip as
    often as a rewording ("Please renew the licence" / "The licence should not be renewed
    this year"), so only a judge may merge it."""
    negation = _negation(pair.old, pair.new)
    if negation is None or not _negated_kept(pair):
        return None
    return f"{negation} in a reworded sentence"


def _bare_refusal(pair: _Pair) -> str | None:
    """A "do not" put before (or taken from) a word both texts keep in place, the other text
    not refusing that word: "Approve the expense report" / "Do not approve the expense
    report unless receipts are attached"."""
    if max(len(pair.old), len(pair.new)) > _MAX_ALIGNED_WORDS:
        return None
    # Most texts say no "not" at all: they need no alignment here.
    if NEGATIONS.isdisjoint(pair.old) and NEGATIONS.isdisjoint(pair.new):
        return None
    opcodes = SequenceMatcher(a=pair.old, b=pair.new, autojunk=False).get_opcodes()
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


def _negation_in_place(pair: _Pair) -> bool:
    """Whether a negation came or went among words left in place: "do not" put before
    "approve the refund", "unclear" for "clear". A sentence rewritten around its negation
    ("… at 13:00? That way the rollbacks don't overlap" for "To keep the rollbacks from
    overlapping, … at 13:00?") rewords; a flip keeps the words around the negation, or at
    least the one it negates."""
    if max(len(pair.old), len(pair.new)) > _MAX_ALIGNED_WORDS:
        # Alignment is quadratic; past the bound the flip stands as the counts say.
        return True
    matcher = SequenceMatcher(a=pair.old, b=pair.new, autojunk=False)
    opcodes = matcher.get_opcodes()
    kept_old = {i for tag, i1, i2, _, _ in opcodes if tag == "equal" for i in range(i1, i2)}
    kept_new = {j for tag, _, _, j1, j2 in opcodes if tag == "equal" for j in range(j1, j2)}
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            continue
        before = sum(map(_negating, pair.old[i1:i2]))
        after = sum(map(_negating, pair.new[j1:j2]))
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


def _refusal_moved(pair: _Pair) -> str | None:
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


def _reversed(pair: _Pair) -> str | None:
    return _antonym(pair.old, pair.new)


def _values(pair: _Pair) -> str | None:
    return values_moved(pair.stored, pair.proposed)


def _numbers_traded(pair: _Pair) -> str | None:
    # The same words around numbers that traded places: "from 12% to 1%" is not "from 1% to
    # 12%", though the bag of numbers is one.
    if _template(pair.old) == _template(pair.new) and _numbers(pair.old) != _numbers(pair.new):
        return "numbers traded places"
    return None


def _bound(pair: _Pair) -> str | None:
    return bound_reversed(pair.stored, pair.proposed)


def _thanks_for_request(pair: _Pair) -> str | None:
    acts = (text_act(pair.stored), text_act(pair.proposed))
    if {"thanks", "request"} == set(acts) and _overlap(pair.old, pair.new) >= _MIN_ACT_OVERLAP:
        return f"a {acts[0]} became a {acts[1]}"
    return None


def _item_added(pair: _Pair) -> str | None:
    return item_added(pair.stored, pair.proposed)


def _act(pair: _Pair) -> str | None:
    return act_changed(pair.stored, pair.proposed)


# Checks on the bags of words, cheap at any length; the others align the texts.
_BAG_CHECKS: tuple[Callable[[_Pair], str | None], ...] = (
    _negation_flip,
    _bound,
    _reversed,
    _values,
    _numbers_traded,
    _refusal_moved,
    _thanks_for_request,
)


class RuleVerifier:
    """Alignment of two texts with a negation, antonym and act lexicon; no network, no model.

    ``word_cosine`` (two words in, cosine out), when given, tells a synonym from an unrelated
    word where one content word was swapped; without it such a swap is ``unsure``.
    """

    def __init__(
        self,
        word_cosine: Callable[[str, str], float] | None = None,
        *,
        min_synonym_cosine: float = 0.86,
        min_phrase_cosine: float = 0.45,
    ) -> None:
        for name, value in (
            ("min_synonym_cosine", min_synonym_cosine),
            ("min_phrase_cosine", min_phrase_cosine),
        ):
            if not -1.0 <= value <= 1.0:
                raise ValueError(f"{name} must be a cosine in [-1, 1]")
        self._word_cosine = word_cosine
        self._min_synonym_cosine = min_synonym_cosine
        self._min_phrase_cosine = min_phrase_cosine

    def compare(self, stored: str, proposed: str) -> Verdict:
        """Name the change from ``stored`` to ``proposed`` that flips the act, if any."""
        old, new = words(stored), words(proposed)
        if old == new:
            # No words at all ("👍" against "👎") confirm nothing.
            if not old:
                return Verdict(VerdictKind.NO_OBJECTION)
            return Verdict(VerdictKind.CONFIRMED, "same words", final=True)
        pair = _Pair(stored, proposed, old, new)
        for check in _BAG_CHECKS:
            if (reason := check(pair)) is not None:
                return Verdict(VerdictKind.DIFFERENT, reason)
        verdict = self._aligned(pair)
        if verdict.kind in (VerdictKind.NO_OBJECTION, VerdictKind.CONFIRMED):
            doubt = _reworded_negation(pair)
            if doubt is not None:
                return Verdict(VerdictKind.UNSURE, doubt)
        return verdict

    def _aligned(self, pair: _Pair) -> Verdict:
        old, new = pair.old, pair.new
        # Word alignment is quadratic in the worst case; a long text's end is compared as a
        # leaf of its own (800 characters), which stays under the bound.
        if max(len(old), len(new)) > _MAX_ALIGNED_WORDS:
            return Verdict(VerdictKind.NO_OBJECTION)
        for check in (self._moved, _act, _item_added):
            if (reason := check(pair)) is not None:
                return Verdict(VerdictKind.DIFFERENT, reason)
        swaps = _swaps(old, new)
        if swaps is None:
            return self._judge_phrase(pair)
        context = len([w for w in old if w not in STOP])
        typos_only = len(old) == len(new) and all(
            a == b or _typo(a, b) for a, b in zip(old, new, strict=True)
        )
        return self._judge_swaps(swaps, context, persons_changed(old, new), typos_only)

    def _moved(self, pair: _Pair) -> str | None:
        """Spans or words that traded places, or a direction reversed, from one alignment."""
        replaced = replacements(pair.old, pair.new)
        trade = traded(pair.old, pair.new)
        if trade is None:
            trade = mutual_swap(replaced)
        if trade and not (trade[0] == "traded places" and self._interchangeable(*trade[1:])):
            return f"{trade[0]}: {trade[1]} ↔ {trade[2]}"
        flipped = direction_flipped(replaced) or person_swapped(replaced)
        if flipped is not None:
            return flipped
        negation_moved = _negation(pair.old, pair.new) is not None
        for reason, i, j in opposites_in_place(replaced, pair.old, pair.new):
            # A negation that came or went over the opposite, or over the verb that switches,
            # reverses it back: "Don't leave the heater on" / "Turn the heater off". One
            # elsewhere leaves it standing ("No worries, switch the heater off").
            if negation_moved and (_negates(pair.old, i) or _negates(pair.new, j)):
                continue
            return reason
        return None

    def _judge_phrase(self, pair: _Pair) -> Verdict:
        """One phrase put for another in a text otherwise kept ("forklift 2" / "reach truck
        2"): unrelated phrases are held as unrelated words are, unless the pair is a short
        form, a negation or a phrasal verb (see ``phrases``)."""
        phrase = phrase_swap(pair.old, pair.new)
        if phrase is None or excused(phrase, pair.stored, pair.proposed):
            return Verdict(VerdictKind.NO_OBJECTION)
        if len([w for w in pair.old if w not in STOP]) < _MIN_SWAP_CONTEXT:
            return Verdict(VerdictKind.NO_OBJECTION)
        before, after = (" ".join(side) for side in phrase)
        cosine = -1.0 if self._word_cosine is None else self._word_cosine(before, after)
        if cosine < self._min_phrase_cosine:
            return Verdict(VerdictKind.UNSURE, f"one phrase swapped: {before} → {after}")
        return Verdict(VerdictKind.NO_OBJECTION)

    def _interchangeable(self, first: str, second: str) -> bool:
        """Two spans that say one thing: trading them rewords.

        Never numbers, and never across a direction (``traded`` names those), however
        alike their embeddings ("Milan", "Turin")."""
        if self._word_cosine is None or any(c.isdigit() for c in first + second):
            return False
        # Days and months are values, however alike ("monday and wednesday", "tuesday and
        # thursday": 0.88), as numbers are.
        if not DAY_WORDS.isdisjoint(f"{first} {second}".split()):
            return False
        # Places, days and regions sit at 0.6 to 0.8 ("Milan", "Turin": 0.61; "dark mode",
        # "light mode": 0.78): only synonyms trade places without changing the request.
        return self._word_cosine(first, second) >= self._min_synonym_cosine

    def _judge_swaps(
        self,
        swaps: Sequence[tuple[str, str]],
        context: int,
        persons_changed: bool,
        typos_only: bool,
    ) -> Verdict:
        # "09" for "9" is one number spelled two ways.
        swaps = [(a, b) for a, b in swaps if not _same_number(a, b)]
        for before, after in swaps:
            # The bag of numbers can stay the same while they trade places ("240 instead of
            # 200" for "200 instead of 240"): a number that moved is never a rewording.
            if any(c.isdigit() for c in before + after):
                return Verdict(VerdictKind.DIFFERENT, f"a number moved: {before} → {after}")
            if before in _ORDINALS and after in _ORDINALS:
                return Verdict(VerdictKind.UNSURE, f"bare ordinal swapped: {before} → {after}")
        if persons_changed:
            # "I sent you the contract" against "you sent me the agreement": the synonym
            # does not make up for the people who traded places.
            return Verdict(VerdictKind.DIFFERENT, "who does what changed")
        # A typo, one verb in another form ("moves", "moving"), or one negation spelt another
        # way ("isn't refundable", "non-refundable") is no other word.
        swaps = [(a, b) for a, b in swaps if not _same_word(a, b)]
        if typos_only:
            return Verdict(VerdictKind.CONFIRMED, "only typos changed", final=True)
        if not swaps:
            return Verdict(
                VerdictKind.CONFIRMED, "only function words, typos or short forms changed"
            )
        if context < _MIN_SWAP_CONTEXT:
            # "Approve the refund" and "OK the refund": in a short text a swapped word is
            # a rewording as often as a new request; the thresholds decide.
            return Verdict(VerdictKind.NO_OBJECTION)
        for before, after in swaps:
            # Word cosines tell close synonyms ("buy", "purchase": 0.86) and little else:
            # "send" and "forward" score below "dog" and "cat". Below the bar, the swap is
            # held for a judge rather than guessed.
            cosine = -1.0 if self._word_cosine is None else self._word_cosine(before, after)
            if cosine < self._min_synonym_cosine:
                return Verdict(VerdictKind.UNSURE, f"one word swapped: {before} → {after}")
        return Verdict(VerdictKind.CONFIRMED, "only synonyms swapped")


def _template(words: list[str]) -> list[str]:
    return ["#" if w[:1].isdigit() else w for w in words]


def _number(word: str) -> str:
    return word.lstrip("0") or "0"


def _same_number(a: str, b: str) -> bool:
    return a[:1].isdigit() and b[:1].isdigit() and _number(a) == _number(b)


def _numbers(words: list[str]) -> list[str]:
    """Numbers in order, spelled alike: "09" is "9"."""
    return [_number(w) for w in words if w[:1].isdigit()]


def _negated_kept(pair: _Pair) -> bool:
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


# "I'm away" and "I'll be away": the same person, now or soon.
_NOW_OR_SOON = frozenset(
    frozenset(pair) for pair in (("i'm", "i'll"), ("we're", "we'll"), ("you're", "you'll"))
)


def _negates(words: list[str], at: int) -> bool:
    """Whether a negation before ``at`` governs the word there, or one just before it."""
    for k in range(max(0, at - _NEGATION_REACH), at):
        if _negating(words[k]):
            governed = _governed_at(words, k) if words[k] in NEGATIONS else k
            if governed is not None and at - 3 <= governed <= at:
                return True
    return False


def _negating(word: str) -> bool:
    return word in NEGATIONS or word in NEGATIVE_WORDS


def _same_word(before: str, after: str) -> bool:
    """A typo, another form of the word, or one negation put for another."""
    if _one_negation(before, after) or frozenset((before, after)) in _NOW_OR_SOON:
        return True
    if _short_form(before, after):
        return True
    # "moves" and "moving" are one verb; "train" and "training", "payment" and "payments",
    # or "call" and "called" (a request become a report) are not one word.
    ends = {before.endswith("ing"), after.endswith("ing")}
    inflected = ends == {True, False} and any(w.endswith("s") for w in (before, after))
    return (inflected and root(before) == root(after)) or _typo(before, after)


def _short_form(before: str, after: str) -> bool:
    """A word and its short form: "appt" and "appointment", "min" and "minutes", "Wed" and
    "Wednesday"."""
    return SHORT_FORMS.get(before, before) == SHORT_FORMS.get(after, after) or one_unit_or_day(
        before, after
    )


def _one_negation(before: str, after: str) -> bool:
    """Two spellings of one "not": "not"/"non", "not"/"failed" ("didn't arrive", "failed to
    arrive"), never two negative words of their own ("unpaid", "unread")."""
    first, second = NEGATIVE_WORDS.get(before), NEGATIVE_WORDS.get(after)
    if before in NEGATIONS or after in NEGATIONS:
        return {before, after} <= NEGATIONS or "" in (first, second)
    return first is not None and first == second


def _typo(before: str, after: str) -> bool:
    """A misspelling: a long word one or two edits (or swapped neighbours) away, keeping
    its first letter, and its last unless letters were swapped ("employer" is no typo of
    "employee", nor "Mason" of "Jason")."""
    shorter = min(len(before), len(after))
    allowed = 1 if shorter < 8 else 2
    if shorter < 5 or before[0] != after[0]:
        return False
    if before[-1] != after[-1] and sorted(before) != sorted(after):
        return False
    return OSA.distance(before, after, score_cutoff=allowed) <= allowed


def _negation(old: list[str], new: list[str]) -> str | None:
    before = sum(map(_negating, old))
    after = sum(map(_negating, new))
    if before % 2 == after % 2:
        return None
    return f"a negation was {'added' if after > before else 'removed'}"


def _antonym(old: list[str], new: list[str]) -> str | None:
    a, b = {stem(w) for w in old}, {stem(w) for w in new}
    for x, y in ANTONYM_STEMS:
        for left, right in ((x, y), (y, x)):
            if left in a and right in b and left not in b and right not in a:
                return f"reversed: {left} → {right}"
    return None


def _swaps(old: list[str], new: list[str]) -> list[tuple[str, str]] | None:
    """The one-for-one content-word substitutions between two otherwise equal texts.

    None when the texts differ by more than a few substitutions (a rewording), where word
    alignment says nothing; a list (maybe empty) when only substitutions remain.
    """
    content_old = [w for w in old if w not in STOP]
    content_new = [w for w in new if w not in STOP]
    matcher = SequenceMatcher(a=content_old, b=content_new, autojunk=False)
    swaps: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if tag != "replace" or i2 - i1 != 1 or j2 - j1 != 1:
            return None
        before, after = content_old[i1], content_new[j1]
        # "do not merge" and "hold off on merging" refuse one verb.
        refused = i1 > 0 and j1 > 0 and content_old[i1 - 1] in NEGATIONS
        if refused and content_new[j1 - 1] in NEGATIONS and root(before) == root(after):
            continue
        swaps.append((before, after))
    return swaps if len(swaps) <= 2 else None


def negation_changed(stored: str, proposed: str) -> bool:
    """Whether one text says "not" (or a word that carries one) where the other does not.

    Under the borderline band a confirmation needs more than the pair model's word: it reads
    a text reworded around a new "not" as the same request ("We will be able to deliver the
    sofa to your flat on Thursday morning" / "Sadly the sofa won't reach your flat on Thursday
    morning": logit 5.7, and no rule objects), so such a match is never confirmed there.
    """
    return _negation(words(stored), words(proposed)) is not None


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
        return verdicts[0]
    return Verdict(VerdictKind.NO_OBJECTION)
