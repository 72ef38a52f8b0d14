"""One phrase put for another in an otherwise unchanged text, and what may excuse it.

"Put Kofi on forklift 2" against "Put Kofi on reach truck 2" changes one thing; a rewording
changes many words, or a phrase for a short form of it ("PO", "purchase order"), a negation
for a negative word ("not safe", "unsafe") or a verb for a phrasal verb ("enroll", "sign
up") or a light verb ("tell", "let me know").
"""

from __future__ import annotations

import re

from tooldedup.dedup.english.lexicon import (
    ANTONYM_STEMS,
    NEGATIONS,
    NEGATIVE_WORDS,
    STOP,
    align,
    stem,
    words,
)

__all__ = ["Phrase", "excused", "phrase_swap"]

_MAX_PHRASE_WORDS = 3
# A phrasal verb or a manner is a way of saying a verb: "pick up" for "get", "talk through"
# for "discuss", "give a ride" for "drive".
_PARTICLES = frozenset(
    "up down out off over through back away along around about ride aside together into onto"
    " apart ahead across".split()
)
# Light verbs and wishes carry a request in two words as one verb does: "let me know" for
# "tell", "I'd prefer" for "give me", "I want" for "I'd like".
_LIGHT = frozenset("let make give take get go have keep want like prefer need".split())

# A short form written in capitals: "ETA", "WFH", "Q&A", "T&Cs", "PO".
_CAPITALS = re.compile(r"\b[A-Z][A-Z0-9]*(?:&[A-Z][a-z]?)*[A-Z0-9]?(?:s|['\u2019]s)?\b")
# Verbs with an opposite: said as a phrasal verb, they may hide a reversal.
_OPPOSABLE = frozenset(w for pair in ANTONYM_STEMS for w in pair)

Phrase = tuple[tuple[str, ...], tuple[str, ...]]


def phrase_swap(old: list[str], new: list[str]) -> Phrase | None:
    """The one phrase of two or three content words (against one to three) put for another,
    all other content words in place; None for anything else (one word for one word is a
    swap, and more than one change a rewording)."""
    content_old = [w for w in old if w not in STOP]
    content_new = [w for w in new if w not in STOP]
    changed = [op for op in align(content_old, content_new) if op[0] != "equal"]
    if len(changed) != 1 or changed[0][0] != "replace":
        return None
    _, i1, i2, j1, j2 = changed[0]
    sizes = (i2 - i1, j2 - j1)
    if sizes == (1, 1) or max(sizes) > _MAX_PHRASE_WORDS:
        return None
    return tuple(content_old[i1:i2]), tuple(content_new[j1:j2])


def excused(phrase: Phrase, stored: str = "", proposed: str = "") -> bool:
    """Whether the swap may be a rewording whatever the cosine says: a short form, a
    negation either side, a phrasal or a light verb for a verb with no opposite.

    ``stored`` and ``proposed`` are the texts as written: a short form is one written in
    capitals there ("ETA", "Q&A"), or one word split ("copay", "co-payment")."""
    before, after = phrase
    both = before + after
    if any(w in NEGATIONS or w in NEGATIVE_WORDS for w in both):
        return True
    phrasal = [any(w in _PARTICLES or w in _LIGHT for w in side) for side in phrase]
    if any(phrasal):
        # "call off" for "book", "turn down" for "approve": a verb of the opposites list
        # said as a phrasal verb is where a reversal hides.
        plain = [side for side, hides in zip(phrase, phrasal, strict=True) if not hides]
        return not any(stem(w) in _OPPOSABLE for side in plain for w in side)
    if _joined(before, after) or _joined(after, before):
        return True
    if _acronym(before, stored, after, proposed) or _acronym(after, proposed, before, stored):
        return True
    return _initials(before, after, proposed) or _initials(after, before, stored)


def _joined(short: tuple[str, ...], long: tuple[str, ...]) -> bool:
    """One word written split, clipped in the joining ("copay" for "co payment"), or
    clipped ("prod" for "production environment", "retro" for "sprint retrospective")."""
    joined = "".join(long)
    if "".join(short) == joined:
        return True
    if len(short) == 1 and len(short[0]) >= 4 and any(w.startswith(short[0]) for w in long):
        return True
    return (
        len(short) == 1
        and len(long) == 2
        and short[0].startswith(long[0])
        and len(short[0]) - len(long[0]) >= 3
        and joined.startswith(short[0])
    )


def _acronym(side: tuple[str, ...], text: str, other: tuple[str, ...], other_text: str) -> bool:
    """Whether every word of a side of at most two words comes from a short form written in
    capitals in its text ("Q&A" is "q" and "a"), and the other side has none ("SSH" for
    "AWS access" is one thing for another)."""
    if len(side) > 2 or not _capitalised(other_text).isdisjoint(other):
        return False
    written = _capitalised(text)
    return all(w in written for w in side)


def _capitalised(text: str) -> set[str]:
    """The words of the short forms a text writes in capitals."""
    return {w for m in _CAPITALS.finditer(text) if len(m.group(0)) > 1 for w in words(m.group(0))}


def _initials(short: tuple[str, ...], long: tuple[str, ...], text: str) -> bool:
    """A short form in lower case that is the initials of the long side as written there,
    small words included: "eod" for "end of day", "wfh" for "working from home" (but "cab"
    is no "city bus")."""
    if len(short) != 1 or len(long) < 2:
        return False
    gap = r"[^\w]+(?:[\w'\u2019]+[^\w]+){0,2}?"
    span = re.search(r"\b" + gap.join(map(re.escape, long)) + r"\b", text.lower())
    if span is None:
        return False
    return "".join(w[0] for w in words(span.group(0))) == short[0]
