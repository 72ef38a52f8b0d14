"""One phrase put for another in an otherwise unchanged text, and what may excuse it.

"Put Kofi on forklift 2" against "Put Kofi on reach truck 2" changes one thing; a rewording
changes many words, or a phrase for a short form of it ("PO", "purchase order"), a negation
for a negative word ("not safe", "unsafe") or a verb for a phrasal verb ("enroll", "sign
up") or a light verb ("tell", "let me know").
"""

from __future__ import annotations

from difflib import SequenceMatcher

from tooldedup.dedup.lexicon import NEGATIONS, NEGATIVE_WORDS, STOP

__all__ = ["Phrase", "excused", "phrase_swap"]

_MAX_PHRASE_WORDS = 3
# A phrasal verb or a manner is a way of saying a verb: "pick up" for "get", "talk through"
# for "discuss", "give a ride" for "drive".
_PARTICLES = frozenset("up down out off over through back away along around about ride".split())
# Light verbs and wishes carry a request in two words as one verb does: "let me know" for
# "tell", "I'd prefer" for "give me", "I want" for "I'd like".
_LIGHT = frozenset("let make give take get go have keep want like prefer need".split())
# Short forms are at most this long ("hmrc", "t&cs").
_MAX_SHORT_FORM = 5

Phrase = tuple[tuple[str, ...], tuple[str, ...]]


def phrase_swap(old: list[str], new: list[str]) -> Phrase | None:
    """The one phrase of two or three content words (against one to three) put for another,
    all other content words in place; None for anything else (one word for one word is a
    swap, and more than one change a rewording)."""
    content_old = [w for w in old if w not in STOP]
    content_new = [w for w in new if w not in STOP]
    changed = [
        op
        for op in SequenceMatcher(a=content_old, b=content_new, autojunk=False).get_opcodes()
        if op[0] != "equal"
    ]
    if len(changed) != 1 or changed[0][0] != "replace":
        return None
    _, i1, i2, j1, j2 = changed[0]
    sizes = (i2 - i1, j2 - j1)
    if sizes == (1, 1) or max(sizes) > _MAX_PHRASE_WORDS:
        return None
    return tuple(content_old[i1:i2]), tuple(content_new[j1:j2])


def excused(phrase: Phrase) -> bool:
    """Whether the swap may be a rewording whatever the cosine says: a short form, a
    negation either side, a phrasal or a light verb."""
    before, after = phrase
    both = before + after
    if any(w in NEGATIONS or w in NEGATIVE_WORDS for w in both):
        return True
    if any(w in _PARTICLES or w in _LIGHT for w in both):
        return True
    return _short_form(before, after) or _short_form(after, before)


def _short_form(short: tuple[str, ...], long: tuple[str, ...]) -> bool:
    """ "po" for "purchase order", "t cs" for "terms conditions", "copay" for "co payment":
    the long side's initials in the short side's letters, in order, or one word split."""
    joined = "".join(short)
    if joined == "".join(long):
        return True
    if len(joined) > _MAX_SHORT_FORM or len(long) < 2:
        return False
    letters = iter(joined)
    return all(word[0] in letters for word in long)
