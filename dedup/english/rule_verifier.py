"""The English verifier for what cosine cannot tell: it aligns two free texts and names the change.

Embeddings of "increase the limit" and "decrease the limit" sit above 0.95 cosine; so do a
request and a thank-you on one topic, and a sentence with one content word swapped. The
verifier reads the two texts side by side, word by word, and answers:
- ``different`` when the change flips the act: a negation added or removed over a word both
  texts keep, an antonym or a reversed direction, names, items or values that traded places,
  "I" and "you" swapped, a request against a thank-you, a report or a question
  (``lexicon.py``, ``negations.py``, ``moves.py``, ``acts.py`` beside this module);
- ``unsure`` when it cannot tell (a bare ordinal, one content word swapped for a word that is
  no synonym, a negation over a kept word in a sentence rewritten around it) or when a small
  word of meaning changed ("must"/"may", "and"/"or", "this"/"next", "we"/"they": see
  ``accounting.py``), so that only a judge may merge;
- ``confirmed`` when every change is accounted for as a rewording, each for a stated reason
  (a typo, a short form, a negation absorbed into a word, a synonym, politeness words), which
  settles a borderline match and is the only verdict the fuzzy stage accepts;
- ``no_objection`` otherwise, leaving the answer to the thresholds.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import replace
from enum import StrEnum

from tooldedup.dedup.english.accounting import Ledger, account, same_number, same_word, typo
from tooldedup.dedup.english.acts import act_changed, text_act
from tooldedup.dedup.english.bounds import bound_reversed
from tooldedup.dedup.english.critical import DAY_WORDS
from tooldedup.dedup.english.lexicon import (
    ANTONYM_STEMS,
    NEGATIONS,
    NEGATIVE_WORDS,
    STOP,
    align,
    root,
    stem,
    words,
)
from tooldedup.dedup.english.moves import (
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
from tooldedup.dedup.english.negations import (
    MAX_ALIGNED_WORDS,
    Pair,
    negates,
    negation_flip,
    refusal_moved,
    reworded_negation,
)
from tooldedup.dedup.english.phrases import excused, phrase_swap
from tooldedup.dedup.verifier import Verdict, VerdictKind

__all__ = ["RuleFamily", "RuleVerifier"]


class RuleFamily(StrEnum):
    """A family of rules: each can be left out, to measure what it buys and costs."""

    NEGATION_FLIP = "negation_flip"
    BOUND = "bound"
    ANTONYM = "antonym"
    VALUES_MOVED = "values_moved"
    REFUSAL_MOVED = "refusal_moved"
    THANKS_FOR_REQUEST = "thanks_for_request"
    MOVED = "moved"
    ACT = "act"
    ITEM_ADDED = "item_added"
    PERSONS = "persons"
    MEANING_WORDS = "meaning_words"
    DRIFT = "drift"
    ORDINALS = "ordinals"
    TYPOS = "typos"
    ACCOUNTED = "accounted"
    PHRASE_SWAP = "phrase_swap"
    WORD_SWAP = "word_swap"
    REWORDED_NEGATION = "reworded_negation"


_ORDINALS = frozenset({"first", "second", "third", "last"})
# A swapped word says "another thing" only inside enough unchanged context.
_MIN_SWAP_CONTEXT = 4
# Content-word overlap above which a change of act is a flip, not a rewording.
_MIN_ACT_OVERLAP = 0.2


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


def _reversed(pair: Pair) -> str | None:
    return _antonym(pair.old, pair.new)


def _values(pair: Pair) -> str | None:
    return values_moved(pair.stored, pair.proposed)


def _bound(pair: Pair) -> str | None:
    return bound_reversed(pair.stored, pair.proposed)


def _thanks_for_request(pair: Pair) -> str | None:
    acts = (text_act(pair.stored), text_act(pair.proposed))
    if {"thanks", "request"} == set(acts) and _overlap(pair.old, pair.new) >= _MIN_ACT_OVERLAP:
        return f"a {acts[0]} became a {acts[1]}"
    return None


def _item_added(pair: Pair) -> str | None:
    return item_added(pair.stored, pair.proposed)


def _act(pair: Pair) -> str | None:
    return act_changed(pair.stored, pair.proposed)


# Checks on the bags of words, cheap at any length; the others align the texts.
_BAG_CHECKS: tuple[tuple[RuleFamily, Callable[[Pair], str | None]], ...] = (
    (RuleFamily.NEGATION_FLIP, negation_flip),
    (RuleFamily.BOUND, _bound),
    (RuleFamily.ANTONYM, _reversed),
    (RuleFamily.VALUES_MOVED, _values),
    (RuleFamily.REFUSAL_MOVED, refusal_moved),
    (RuleFamily.THANKS_FOR_REQUEST, _thanks_for_request),
)


class RuleVerifier:
    """Alignment of two texts with a negation, antonym and act lexicon; no network, no model.

    ``word_cosine`` (two words in, cosine out), when given, tells a synonym from an unrelated
    word where one content word was swapped; without it such a swap is ``unsure``.
    ``without`` leaves families of rules out (``benchmarks.rule_families`` measures each that
    way); the default is all of them.
    """

    def __init__(
        self,
        word_cosine: Callable[[str, str], float] | None = None,
        *,
        min_synonym_cosine: float = 0.86,
        min_phrase_cosine: float = 0.45,
        without: Collection[RuleFamily] = (),
    ) -> None:
        for name, value in (
            ("min_synonym_cosine", min_synonym_cosine),
            ("min_phrase_cosine", min_phrase_cosine),
        ):
            if not -1.0 <= value <= 1.0:
                raise ValueError(f"{name} must be a cosine in [-1, 1]")
        self._on = frozenset(RuleFamily) - frozenset(RuleFamily(f) for f in without)
        self._bag_checks = tuple(check for family, check in _BAG_CHECKS if family in self._on)
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
        pair = Pair(stored, proposed, old, new)
        for check in self._bag_checks:
            if (reason := check(pair)) is not None:
                return Verdict(VerdictKind.DIFFERENT, reason)
        verdict = self._aligned(pair)
        if verdict.kind in (VerdictKind.NO_OBJECTION, VerdictKind.CONFIRMED):
            doubt = reworded_negation(pair) if RuleFamily.REWORDED_NEGATION in self._on else None
            if doubt is not None:
                return Verdict(VerdictKind.UNSURE, doubt)
            if pair.negation is not None:
                return replace(verdict, negation_changed=True)
        return verdict

    def _aligned(self, pair: Pair) -> Verdict:
        old, new = pair.old, pair.new
        # Word alignment is quadratic in the worst case; a long text's end is compared as a
        # leaf of its own (800 characters), which stays under the bound.
        if max(len(old), len(new)) > MAX_ALIGNED_WORDS:
            return Verdict(VerdictKind.NO_OBJECTION)
        for family, check in (
            (RuleFamily.MOVED, self._moved),
            (RuleFamily.ACT, _act),
            (RuleFamily.ITEM_ADDED, _item_added),
        ):
            if family in self._on and (reason := check(pair)) is not None:
                return Verdict(VerdictKind.DIFFERENT, reason)
        context = len([w for w in old if w not in STOP])
        # The content words, aligned alone: a few put one for another, or a rewording (None).
        swaps = _swaps(old, new)
        if swaps is not None:
            # "09" for "9" is one number spelled two ways; another number is no synonym.
            swaps = [(a, b) for a, b in swaps if not same_number(a, b)]
            if RuleFamily.PERSONS in self._on and persons_changed(old, new):
                # "I sent you the contract" against "you sent me the agreement": the synonym
                # does not make up for the people who traded places.
                return Verdict(VerdictKind.DIFFERENT, "who does what changed")
        ledger = account(
            old,
            new,
            lambda a, b: context >= _MIN_SWAP_CONTEXT and self._synonym(a, b),
            negation_moved=pair.negation is not None,
        )
        meaning = ledger.meaning if RuleFamily.MEANING_WORDS in self._on else None
        if meaning is not None:
            return Verdict(VerdictKind.UNSURE, meaning)
        verdict = self._judged(pair, swaps, ledger, context)
        drift = ledger.drift if RuleFamily.DRIFT in self._on else None
        if verdict.kind is VerdictKind.NO_OBJECTION and drift is not None:
            # A rewording in which a small word of meaning was put for another ("leave the bag
            # with the concierge" / "give the bag to the concierge"): the thresholds decide,
            # and no pair model may confirm it.
            return Verdict(VerdictKind.NO_OBJECTION, f"reworded, and {drift}", confirmable=False)
        return verdict

    def _judged(
        self, pair: Pair, swaps: list[tuple[str, str]] | None, ledger: Ledger, context: int
    ) -> Verdict:
        """The verdict once no small word of meaning changed: by the content words."""
        old, new = pair.old, pair.new
        on = self._on
        for before, after in swaps or ():
            if RuleFamily.ORDINALS in on and before in _ORDINALS and after in _ORDINALS:
                return Verdict(VerdictKind.UNSURE, f"bare ordinal swapped: {before} → {after}")
        # Only typos: a final confirmation, which no pair model may overturn (and which
        # needs no read by it).
        if (
            RuleFamily.TYPOS in on
            and len(old) == len(new)
            and all(a == b or typo(a, b) for a, b in zip(old, new, strict=True))
        ):
            return Verdict(VerdictKind.CONFIRMED, "only typos changed", final=True)
        if RuleFamily.ACCOUNTED in on and ledger.accounted:
            return Verdict(VerdictKind.CONFIRMED, ledger.reason)
        if swaps is None:
            if RuleFamily.PHRASE_SWAP not in on:
                return Verdict(VerdictKind.NO_OBJECTION)
            return self._judge_phrase(pair)
        # A typo, one verb in another form ("moves", "moving"), or one negation spelt another
        # way ("isn't refundable", "non-refundable") is no other word.
        swaps = [(a, b) for a, b in swaps if not same_word(a, b)]
        if not swaps or context < _MIN_SWAP_CONTEXT or RuleFamily.WORD_SWAP not in on:
            # What changed is no content word, or a word in a short text ("Approve the
            # refund" / "OK the refund"), a rewording as often as a new request: the
            # thresholds decide.
            return Verdict(VerdictKind.NO_OBJECTION)
        for before, after in swaps:
            # Word cosines tell close synonyms ("buy", "purchase": 0.86) and little else:
            # "send" and "forward" score below "dog" and "cat". Below the bar, the swap is
            # held for a judge rather than guessed.
            if not self._synonym(before, after):
                return Verdict(VerdictKind.UNSURE, f"one word swapped: {before} → {after}")
        return Verdict(VerdictKind.NO_OBJECTION)

    def _synonym(self, before: str, after: str) -> bool:
        """Two words of one meaning by their cosine; never two numbers or two ordinals."""
        if self._word_cosine is None or any(c.isdigit() for c in before + after):
            return False
        if before in _ORDINALS and after in _ORDINALS:
            return False
        return self._word_cosine(before, after) >= self._min_synonym_cosine

    def _moved(self, pair: Pair) -> str | None:
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
        negation_moved = pair.negation is not None
        for reason, i, j in opposites_in_place(replaced, pair.old, pair.new):
            # A negation that came or went over the opposite, or over the verb that switches,
            # reverses it back: "Don't leave the heater on" / "Turn the heater off". One
            # elsewhere leaves it standing ("No worries, switch the heater off").
            if negation_moved and (negates(pair.old, i) or negates(pair.new, j)):
                continue
            return reason
        return None

    def _judge_phrase(self, pair: Pair) -> Verdict:
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


# Each stem's opposites, with the place of the pair in the list: where several pairs
# reversed, the first listed is named, as a walk down the list would name it.
_OPPOSITE_OF: dict[str, list[tuple[int, str]]] = {}
for _at, (_x, _y) in enumerate(ANTONYM_STEMS):
    _OPPOSITE_OF.setdefault(_x, []).append((2 * _at, _y))
    _OPPOSITE_OF.setdefault(_y, []).append((2 * _at + 1, _x))


def _antonym(old: list[str], new: list[str]) -> str | None:
    # By stem, named as written: "more → less", not "more → les".
    a, b = {stem(w): w for w in reversed(old)}, {stem(w): w for w in reversed(new)}
    found = [
        (at, left, right)
        for left in a.keys() - b.keys()
        for at, right in _OPPOSITE_OF.get(left, ())
        if right in b and right not in a
    ]
    if not found:
        return None
    _, left, right = min(found)
    return f"reversed: {a[left]} → {b[right]}"


def _swaps(old: list[str], new: list[str]) -> list[tuple[str, str]] | None:
    """The one-for-one content-word substitutions between two otherwise equal texts.

    None when the texts differ by more than a few substitutions (a rewording), where word
    alignment says nothing; a list (maybe empty) when only substitutions remain.
    """
    content_old = [w for w in old if w not in STOP]
    content_new = [w for w in new if w not in STOP]
    swaps: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in align(content_old, content_new):
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
