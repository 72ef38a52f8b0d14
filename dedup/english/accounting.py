"""Each change between two texts, accounted for as a rewording or named as a change of meaning.

The texts are aligned word by word. A changed span is a rewording only for a stated reason: a
typo, another form of the word, a short form, one negation or one number spelt two ways, a
synonym, polite words and articles (``FILLERS``), "could you" for "please", a pronoun for
someone the other text names too, a retry's urgency or label (``URGENCY``: "right away";
``RETRY_LABELS``: "Retry:"), a word said twice over. Being a small word is no reason: a span
that puts one meaning-carrying word (``MEANING``: modals, prepositions, conjunctions,
quantifiers, deictics, comparatives, personal pronouns) for another is a change of meaning
wherever it stands ("must"/"may", "we"/"they", "he"/"she"), and one that adds or drops such a
word is one in a text whose every other change is accounted for ("Delete only the old
files"). So is a span that adds or drops a content word no reason accounts for, its other
words kept, where the action's target stands: the word names whom or what the action is for
("to Ana's lawyer" / "to Ana", "the backup folder" / "the folder"). Where the texts are
otherwise reworded, such a word drifts with them, and the thresholds decide.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from rapidfuzz.distance import OSA

from tooldedup.dedup.english.critical import one_unit_or_day
from tooldedup.dedup.english.lexicon import (
    ANTONYM_STEMS,
    CACHED_TEXT_CHARS,
    FILLERS,
    MEANING,
    NEGATIONS,
    NEGATIVE_WORDS,
    RETRY_LABELS,
    SHORT_FORMS,
    STOP,
    URGENCY,
    Sense,
    align,
    root,
    stem,
)
from tooldedup.dedup.english.moves import timed

__all__ = ["Change", "Ledger", "account", "forget_sides", "same_number", "same_word", "typo"]

# Words a text may drop without a change: the copula of a note ("Is the API down?" / "API
# down?", "I am on my way" / "On my way"), and "do" that only carries a "not".
_COPULAS = frozenset({"am", "is", "are", "be"})
_BE = _COPULAS | {"was", "were", "been", "being"}
_DO = frozenset({"do", "does", "did"})
# A request opener: "could you" asks what "please" asks.
_OPENERS = frozenset({"can", "could", "would", "will"})
# Meaning words that may come or go alone: "to" of an infinitive ("refuse to apologize"),
# "that" of a clause ("Tell Grace that she …" / "Tell Grace she …").
_GRAMMATICAL = frozenset({("preposition", "to"), ("deictic", "that")})
# Changes no reason accounts for, beside a meaning word put for another, past which the
# texts are a rewording: its small words drift with the words around them ("Leave the bag
# with the concierge" / "give the bag to the concierge"), and the thresholds decide. One
# is a word and the preposition it takes ("enroll Maya in" / "sign up Maya for").
_REWORDED = 1
# How far back from a word its phrase's preposition or verb may stand: "to the team lead",
# "Invite the design team leads".
_TARGET_REACH = 5
# Prepositions no other text puts for another (so not ``MEANING``'s), which open a target
# all the same: "the account of the former employee", "Remind Ana about the team lead's".
_OF = frozenset({"of", "about"})
# "AM" and "PM" after a time: no copula.
_CLOCK = frozenset({"am", "pm"})
# Words that open a noun phrase, besides a possessive ("Ana's"): a word before one is a verb.
_DETERMINERS = frozenset(
    "a an the my your his her our their its this that these those all every each both".split()
)
# Words that open a greeting or a thank-you.
_GREETINGS = frozenset("hi hello hey dear thanks thank thx cheers".split())
# Prepositions a time may go without: "Thursday at 10:30" is "on Thursday at 10:30".
_OF_TIME = frozenset({"on", "at", "in"})
# Words of a span this long or shorter stand in one place.
_PLACE = 3
_OPPOSITES = frozenset(ANTONYM_STEMS) | {(b, a) for a, b in ANTONYM_STEMS}
# "I'm away" and "I'll be away": the same person, now or soon.
_NOW = ("'m", "'re")
_NOW_OR_SOON = frozenset(
    frozenset(pair) for pair in (("i'm", "i'll"), ("we're", "we'll"), ("you're", "you'll"))
)
# The reasons, in the order a confirmation names them.
_REASONS = (
    "typos",
    "forms of one word",
    "short forms",
    "spellings of one negation",
    "spellings of one number",
    "synonyms",
    "words of one meaning",
    "politeness words",
    "words of urgency",
    "retry markers",
    "repeated words",
    "prepositions of a time",
    "pronouns for people both texts name",
    "dropped copulas",
    "small words of grammar",
)


@dataclass(frozen=True, slots=True)
class Change:
    """One changed span: why it rewords, and what meaning it moves."""

    # Why the span's other words reword ("typos", "synonyms"); None when nothing does.
    reasons: frozenset[str] | None
    # A meaning-carrying word put for another: "a modal changed: must → may".
    replaced: str | None = None
    # One added or dropped: "a quantifier was added: only".
    added: str | None = None
    # Content words added or dropped, the span's other words kept, which nothing accounts
    # for: "a content word was dropped: lawyer" ("to Ana's lawyer" / "to Ana").
    content: str | None = None


@dataclass(frozen=True, slots=True)
class Ledger:
    """Every change between two texts, each with its accounting."""

    changes: tuple[Change, ...]

    @property
    def meaning(self) -> str | None:
        """The change of meaning: a meaning word put for another, unless the texts are a
        rewording; one added or dropped where every other change is accounted for; content
        words added or dropped where they are the one change nothing accounts for."""
        unaccounted = [c for c in self.changes if c.reasons is None]
        for change in self.changes:
            others = sum(1 for c in unaccounted if c is not change)
            if change.replaced is not None and others <= _REWORDED:
                return change.replaced
        if not unaccounted:
            for change in self.changes:
                if change.added is not None:
                    return change.added
        if len(unaccounted) == 1 and unaccounted[0].content is not None:
            # A minimal pair: "Email the draft to the team lead" / "… to the team". Where
            # other spans are reworded too, the added word drifts with them.
            return unaccounted[0].content
        return None

    @property
    def drift(self) -> str | None:
        """A meaning word put for another, counted or not (in a rewording, it is not)."""
        return next((c.replaced for c in self.changes if c.replaced is not None), None)

    @property
    def accounted(self) -> bool:
        """Whether every change is a rewording, for a stated reason."""
        return all(
            c.reasons is not None and c.replaced is None and c.added is None for c in self.changes
        )

    @property
    def reason(self) -> str:
        """What the changes were, for an accounted ledger: "only typos and synonyms changed"."""
        found = {r for change in self.changes for r in change.reasons or ()}
        named = [r for r in _REASONS if r in found] or ["small words of grammar"]
        listed = named[0] if len(named) == 1 else f"{', '.join(named[:-1])} and {named[-1]}"
        return f"only {listed} changed"


def _spellings(word: str) -> list[str]:
    """A word with each apostrophe written either way: "let's" and "let\u2019s"."""
    spelt = [""]
    for char in word:
        ways = ("'", "\u2019") if char == "'" else (char,)
        spelt = [s + c for s in spelt for c in ways]
    return spelt


# ``MEANING`` under every spelling of its apostrophes: read for each word at every compare.
_SENSES = {spelt: senses for word, senses in MEANING.items() for spelt in _spellings(word)}


def _sense_of(word: str) -> tuple[Sense, ...]:
    return _SENSES.get(word, ())


def _openers(words: Sequence[str]) -> set[int]:
    """Where a request opener stands: "could you", "can you", "would you", "will you"."""
    return {
        at
        for i, word in enumerate(words[:-1])
        if word in _OPENERS and words[i + 1] == "you"
        for at in (i, i + 1)
    }


# Each text is read for them at every compare: only where a phrase's first word stands.
_URGENT_BY_FIRST = {
    first: [phrase for phrase in URGENCY if phrase[0] == first]
    for first in {phrase[0] for phrase in URGENCY}
}


def _marked(words: Sequence[str]) -> dict[int, str]:
    """Where a retry's marker stands, with its reason: a label where the text opens ("Retry:
    send the invoice"), never a word of a name ("the retry queue"); how soon, unless a noun
    phrase goes on after it ("the immediately affected customers")."""
    found: dict[int, str] = {}
    if words and words[0] in RETRY_LABELS:
        found[0] = "retry markers"
    for i, word in enumerate(words):
        for phrase in _URGENT_BY_FIRST.get(word, ()):
            stop = i + len(phrase)
            if tuple(words[i:stop]) == phrase and (stop == len(words) or not _plain(words[stop])):
                found.update(dict.fromkeys(range(i, stop), "words of urgency"))
    return found


def _plain(word: str) -> bool:
    """A content word: no word of meaning, of politeness or of grammar."""
    return not _sense_of(word) and word not in FILLERS and word not in STOP


def _determiner(word: str) -> bool:
    """A word that opens a noun phrase: "the", "my", "all", a possessive ("Ana's")."""
    if word in _DETERMINERS:
        return True
    return word.replace("\u2019", "'").endswith("'s") and not _sense_of(word)


def _referents(words: Sequence[str]) -> set[str]:
    return {value for w in words for kind, value in _sense_of(w) if kind == "pronoun"}


# A meaning word as a span holds it: what it says, as written, and where it stands.
_Meant = tuple[Sense, str, int]
# A span's words in one text, then in the other.
_Spans = tuple[tuple[str, ...], tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class _Side:
    """One text of the pair, as the accounting reads it."""

    words: Sequence[str]
    openers: set[int]
    referents: set[str]
    # A retry's markers: "away" of "right away" is no preposition of a direction.
    markers: dict[int, str]
    # Whether any word opens a noun phrase: a note's style writes none at all.
    determined: bool

    @classmethod
    def of(cls, words: Sequence[str]) -> _Side:
        determined = any(map(_determiner, words))
        return cls(words, _openers(words), _referents(words), _marked(words), determined)

    def senses(self, start: int, stop: int) -> list[_Meant]:
        return [
            (sense, self.words[i], i)
            for i in range(start, stop)
            if i not in self.openers and i not in self.markers
            for sense in _sense_of(self.words[i])
        ]

    def rest(self, start: int, stop: int, other: Sequence[str]) -> tuple[list[int], set[str]]:
        """Where the span's words stand that no meaning class, politeness or grammar
        accounts for, and the reasons for those set aside."""
        kept: list[int] = []
        reasons: set[str] = set()
        for i in range(start, stop):
            word = self.words[i]
            if i in self.openers or word in FILLERS:
                reasons.add("politeness words")
            elif i in self.markers:
                reasons.add(self.markers[i])
            elif _sense_of(word):
                continue
            elif word in _COPULAS and _BE.isdisjoint(other):
                reasons.add("dropped copulas")
            elif word in _DO and i + 1 < len(self.words) and self.words[i + 1] in NEGATIONS:
                reasons.add("spellings of one negation")
            else:
                kept.append(i)
        return kept, reasons

    def targeted(self, at: int) -> bool:
        """Whether the content word at ``at`` stands in what an action is done to or for: a
        noun phrase that opens with a determiner or a possessive, after a preposition ("to
        Ana's lawyer", "for the kids' teacher") or a verb ("Delete the backup folder"); in a
        note that writes no determiner, any after a preposition ("to team lead"). A
        heading's words ("Sprint 31 planning session", "Hi Anika"), a thank-you's ("Thanks
        for your help") and words of grammar ("so", "has") name no target of an action."""
        if self.words[at] in STOP:
            return False
        determined = False
        for i in range(at - 1, max(-1, at - 1 - _TARGET_REACH), -1):
            word = self.words[i]
            kinds = {kind for kind, _ in _sense_of(word)}
            if ("preposition" in kinds or word in _OF) and i not in self.markers:
                # A note's style writes no determiner at all: "Email draft to team lead".
                telegraphic = not determined and not self.determined
                return (determined or telegraphic) and not self._thanked(i)
            if _determiner(word):
                determined = True
            elif word in _CLOCK and i > 0 and self.words[i - 1][:1].isdigit():
                continue  # "the 9 AM standup meeting"
            elif kinds or word in STOP or word in FILLERS or i in self.openers:
                return False
            elif determined:
                # A word before a determiner: the verb whose object the phrase is.
                return True
        return False

    def _thanked(self, at: int) -> bool:
        """Whether the preposition at ``at`` says what a thank-you is for ("Thanks so much
        for your help"), not what an action is done to ("Thanks, send it to the team")."""
        for word in reversed(self.words[max(0, at - 4) : at]):
            if word in _GREETINGS:
                return True
            if _plain(word):
                return False
        return False

    def alone(
        self, meant: list[_Meant], other: _Side, spans: _Spans, respelt: bool
    ) -> tuple[list[_Meant], set[str]]:
        """The meaning words added or dropped, once those that may come or go alone are set
        aside: "to" and "that", a pronoun for someone the other text names, a modal that is
        part of a negation spelt another way ("won't" / "refuse to"), "'ll" for "'m" ("I'll
        be away" / "I'm away"), a greeting's or a thank-you's ("Hi all", "Many thanks"), and
        "on", "at" or "in" before a time ("Fire drill Thursday" / "… on Thursday")."""
        kept, reasons = [], set()
        for (kind, value), word, at in meant:
            if (kind, value) in _GRAMMATICAL:
                reasons.add("small words of grammar")
            elif kind == "pronoun" and value in other.referents:
                reasons.add("pronouns for people both texts name")
            elif kind == "modal" and respelt and _next(self.words, at) in NEGATIONS:
                reasons.add("spellings of one negation")
            elif kind == "modal" and "'" in word and _now_or_soon(word, spans[1]):
                reasons.add("forms of one word")
            elif _courtesy(spans[0]):
                reasons.add("politeness words")
            elif kind == "preposition" and value in _OF_TIME and timed(self.words, at):
                reasons.add("prepositions of a time")
            else:
                kept.append(((kind, value), word, at))
        return kept, reasons


# A stored text's words come back at every compare that meets it: each is read once, if
# short (a word may be of any length: the memo keeps texts of 4 KiB at most).
@lru_cache(maxsize=1024)
def _side(words: tuple[str, ...]) -> _Side:
    return _Side.of(words)


def _side_of(words: Sequence[str]) -> _Side:
    kept = tuple(words)
    return _side(kept) if sum(map(len, kept)) <= CACHED_TEXT_CHARS else _Side.of(kept)


def forget_sides() -> None:
    """Empty the memo of texts read for accounting (a benchmark measures the rules from cold)."""
    _side.cache_clear()


def _next(words: Sequence[str], at: int) -> str:
    return words[at + 1] if at + 1 < len(words) else ""


def _now_or_soon(word: str, others: Sequence[str]) -> bool:
    person = word.replace("\u2019", "'").partition("'")[0]
    return any(o.replace("\u2019", "'") in {person + end for end in _NOW} for o in others)


def _courtesy(span: Sequence[str]) -> bool:
    """A greeting or a thank-you and its small words: "Hi all", "Hi there", "Many thanks",
    "…, and thanks", "Thanks for this!"."""
    return not _GREETINGS.isdisjoint(span) and all(w in FILLERS or _sense_of(w) for w in span)


def _named(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"


def _opposites(first: str, second: str) -> bool:
    return (stem(first), stem(second)) in _OPPOSITES


class _Accountant:
    """Accounts for the changes of one pair of texts."""

    def __init__(
        self,
        old: Sequence[str],
        new: Sequence[str],
        synonym: Callable[[str, str], bool],
        negation_moved: bool,
    ) -> None:
        self._old, self._new = _side_of(old), _side_of(new)
        self._synonym = synonym
        self._negation_moved = negation_moved

    def change(self, i1: int, i2: int, j1: int, j2: int) -> Change:
        old, new = self._old, self._new
        span_old, span_new = old.words[i1:i2], new.words[j1:j2]
        at_old, reasons = old.rest(i1, i2, span_new)
        at_new, more = new.rest(j1, j2, span_old)
        rest_old, rest_new = [old.words[i] for i in at_old], [new.words[j] for j in at_new]
        reasons |= more
        rest_reasons = self._rest(rest_old, rest_new, i1, j1)
        # A "not" put in or left out, which the negation rules found governing nothing.
        negated = _negated(rest_old, rest_new) if rest_reasons is None else None
        if negated is not None:
            rest_reasons = set()
        # Content words added or dropped, the span's other words kept, account for nothing
        # unless they only say again what their neighbours say ("appointment appointment").
        content = None
        if rest_reasons is None and (kept := _kept(rest_old, rest_new)) is not None:
            pure = i1 == i2 or j1 == j2
            lost = len(rest_old) > len(rest_new)
            longer, where = (old, at_old) if lost else (new, at_new)
            extra = [where[k] for k in kept[1]]
            if pure and (_repeated(old.words, i1, i2) or _repeated(new.words, j1, j2)):
                rest_reasons = {*kept[0], "repeated words"}
            elif (target := next((i for i in extra if longer.targeted(i)), None)) is not None:
                how = "dropped" if lost else "added"
                content = f"a content word was {how}: {longer.words[target]}"
        respelt = rest_reasons is not None and "spellings of one negation" in rest_reasons
        before, after = old.senses(i1, i2), new.senses(j1, j2)
        common = _common(before, after)
        if {w for s, w, _ in before if s in common} != {w for s, w, _ in after if s in common}:
            # "every" for "all", "but" for "and".
            reasons.add("words of one meaning")
        gone, came = _minus(before, common), _minus(after, common)
        words = (tuple(span_old), tuple(span_new))
        for (kind, _), first, at in gone:
            for (other_kind, _), second, other_at in came:
                if kind != other_kind or not _in_place(at - i1, other_at - j1, words):
                    continue
                if self._negation_moved and _opposites(first, second):
                    # "Don't leave the heater on" / "Turn the heater off": the negation rules
                    # weigh an opposite that a negation came or went with.
                    continue
                total = None if rest_reasons is None else frozenset(reasons | rest_reasons)
                replaced = f"{_named(kind)} changed: {first} → {second}"
                return Change(total, replaced=replaced, content=content)
        if self._negation_moved:
            gone, came = (
                [m for m in gone if not any(_opposites(m[1], c[1]) for c in came)],
                [m for m in came if not any(_opposites(g[1], m[1]) for g in gone)],
            )
        gone, dropped = old.alone(gone, new, words, respelt)
        came, added = new.alone(came, old, words[::-1], respelt)
        total = (
            None if rest_reasons is None else frozenset(reasons | rest_reasons | dropped | added)
        )
        if gone or came:
            (kind, _), word, _ = (gone or came)[0]
            how = "dropped" if gone else "added"
            return Change(total, added=f"{_named(kind)} was {how}: {word}", content=content)
        return Change(total, added=negated, content=content)

    def _rest(self, before: list[str], after: list[str], i1: int, j1: int) -> set[str] | None:
        """Why the span's remaining words reword, word for word; None when they do not."""
        if len(before) != len(after):
            return None
        reasons = set()
        for a, b in zip(before, after, strict=True):
            reason = _reason(a, b) or self._refused(a, b, i1, j1)
            if reason is None and self._synonym(a, b):
                reason = "synonyms"
            if reason is None:
                return None
            reasons.add(reason)
        return reasons

    def _refused(self, before: str, after: str, i1: int, j1: int) -> str | None:
        """One verb refused in two forms: "do not merge" / "hold off on merging"."""
        old, new = self._old.words, self._new.words
        refused = i1 > 0 and j1 > 0 and old[i1 - 1] in NEGATIONS and new[j1 - 1] in NEGATIONS
        return "forms of one word" if refused and root(before) == root(after) else None


def _negated(before: list[str], after: list[str]) -> str | None:
    """The negation a span added or dropped, when its words left are negations alone, one
    more or fewer on a side."""
    if not all(w in NEGATIONS for w in before + after) or len(before) % 2 == len(after) % 2:
        return None
    how = "added" if len(after) > len(before) else "dropped"
    return f"a negation was {how}: {(after or before)[0]}"


def _kept(before: list[str], after: list[str]) -> tuple[frozenset[str], list[int]] | None:
    """Where the content words stand (in the longer side) that one side adds, when each word
    of the other is kept, in order, as itself or another form of it ("Ana's" / "Ana"), with
    the reasons for those; None when the sides are the same length or some word is not kept
    (a rewording)."""
    if len(before) == len(after) or any(w in NEGATIONS for w in before + after):
        # A negation that came or went is the negation rules'.
        return None
    short, long = (before, after) if len(before) < len(after) else (after, before)
    reasons: set[str] = set()
    extra: list[int] = []
    at = 0
    for word in short:
        while at < len(long) and (reason := _kept_as(word, long[at])) is None:
            extra.append(at)
            at += 1
        if at == len(long):
            return None
        if reason:
            reasons.add(reason)
        at += 1
    return frozenset(reasons), extra + list(range(at, len(long)))


def _kept_as(word: str, other: str) -> str | None:
    """Why ``other`` keeps ``word``: "" for the word itself, else a reason (None: it does not)."""
    if word == other:
        return ""
    if _possessive(word) == _possessive(other):
        return "forms of one word"
    return _reason(word, other)


def _possessive(word: str) -> str:
    return word.replace("\u2019", "'").removesuffix("'s")


def _repeated(words: Sequence[str], start: int, stop: int) -> bool:
    """Whether a span only says again the words right before or after it ("the report the
    report", "appointment appointment")."""
    span = list(words[start:stop])
    size = len(span)
    return size > 0 and span in (
        list(words[max(0, start - size) : start]),
        list(words[stop : stop + size]),
    )


def _common(before: list[_Meant], after: list[_Meant]) -> Counter[Sense]:
    """What the meaning words of both sides of a span say alike, with how often."""
    if not before or not after:
        return Counter()  # most spans hold no meaning word on one side
    return Counter(s for s, _, _ in before) & Counter(s for s, _, _ in after)


def _minus(meant: list[_Meant], common: Counter[Sense]) -> list[_Meant]:
    if not common:
        return list(meant)
    left = Counter(common)
    kept = []
    for item in meant:
        if left[item[0]] > 0:
            left[item[0]] -= 1
        else:
            kept.append(item)
    return kept


def _in_place(at: int, other_at: int, words: _Spans) -> bool:
    """Whether two words of a span stand in one place: in a short span, or at one offset of
    a span of equal length. Across a long span a rewording moves its small words about."""
    before, after = words
    if max(len(before), len(after)) <= _PLACE:
        return True
    return len(before) == len(after) and at == other_at


def account(
    old: Sequence[str],
    new: Sequence[str],
    synonym: Callable[[str, str], bool],
    *,
    negation_moved: bool = False,
) -> Ledger:
    """Align two texts' words and account for each changed span (see the module's text).

    ``synonym`` tells whether one word put for another says the same thing;
    ``negation_moved``, whether a negation came or went, which may reverse an opposite back.
    """
    accountant = _Accountant(old, new, synonym, negation_moved)
    return Ledger(tuple(accountant.change(*op[1:]) for op in align(old, new) if op[0] != "equal"))


def _reason(before: str, after: str) -> str | None:
    """Why one word put for another is no other word, if it is not."""
    if same_number(before, after):
        return "spellings of one number"
    if typo(before, after):
        return "typos"
    if _short_form(before, after):
        return "short forms"
    if _one_negation(before, after):
        return "spellings of one negation"
    if _inflected(before, after) or frozenset((before, after)) in _NOW_OR_SOON:
        return "forms of one word"
    return None


def same_word(before: str, after: str) -> bool:
    """A typo, another form of the word, a short form, or one negation put for another."""
    return _reason(before, after) not in (None, "spellings of one number")


def _number(word: str) -> str:
    return word.lstrip("0") or "0"


def same_number(a: str, b: str) -> bool:
    """One number spelt two ways: "09" and "9"."""
    return a[:1].isdigit() and b[:1].isdigit() and _number(a) == _number(b)


def _inflected(before: str, after: str) -> bool:
    # "moves" and "moving" are one verb; "train" and "training", "payment" and "payments",
    # or "call" and "called" (a request become a report) are not one word.
    ends = {before.endswith("ing"), after.endswith("ing")}
    inflected = ends == {True, False} and any(w.endswith("s") for w in (before, after))
    return inflected and root(before) == root(after)


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


def typo(before: str, after: str) -> bool:
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
