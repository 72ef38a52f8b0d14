"""Changes that keep a text's words and move them: spans or values that traded places, and
pronouns that swapped who does what.

A bag of words, and a bag of numbers, stays the same when "Leo brings wine, Ada brings
dessert" becomes "Leo brings dessert, Ada brings wine"; the order tells them apart.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from cydifflib import SequenceMatcher

from tooldedup.dedup.english.critical import DAY_WORDS, MONTH_ABBREV, slot_values
from tooldedup.dedup.english.lexicon import (
    ANTONYM_STEMS,
    CACHED_TEXT_CHARS,
    DIRECTION,
    FIRST_PERSON,
    JOINERS,
    SECOND_PERSON,
    STOP,
    align,
    root,
    stem,
)
from tooldedup.dedup.short_cache import ShortTextCache

__all__ = [
    "Replacements",
    "Trade",
    "direction_flipped",
    "forget_moves",
    "item_added",
    "mutual_swap",
    "opposites_in_place",
    "person_swapped",
    "persons_changed",
    "replacements",
    "timed",
    "traded",
    "values_moved",
]

_MAX_TRADED_SPAN = 40
_ARTICLES = frozenset({"a", "an", "the"})
_MAX_SHARED_EDGE = 2
# What may stand between two spans that trade places without a change: the items of a list
# ("the report and the slides") or the two sides of "is" ("attached is the report").
_FILLERS = frozenset({"a", "an", "the", "as", "well", "is", "are", "was", "were"})
# One direction put for the other, word for word: "calls to Brazil" / "calls from Brazil",
# "referred by Dr. Singh" / "referred to Dr. Singh".
_OPPOSITE_DIRECTIONS = frozenset(
    {("to", "from"), ("from", "to"), ("into", "from"), ("onto", "off"), ("off", "onto")}
    | {("by", "to"), ("to", "by")}
)
_PARTICLES = frozenset({"on", "off", "in", "out", "up", "down"})
# Verbs whose particle says which way they go: "turn off", "log in", "move-out", "leave on".
_SWITCHERS = frozenset(
    "turn turned turning turns switch switched switching switches log logged logging logs"
    " check checked checking checks opt opted sign signed clock clocked plug plugged power"
    " powered toggle toggled move moved moving keep kept leave left lock locked roll rolled"
    " phase phased scale scaled ramp ramped dial dialed".split()
)
_TIME_BOUNDS = frozenset({"by", "from", "until"})
_TIMES = frozenset(
    "next end eod eow close noon midday midnight lunch tonight morning afternoon evening"
    " then now weekend christmas easter deadline launch".split()
)
_CLOCK = frozenset({"am", "pm", "a", "p", "o'clock", "oclock", "h", "hrs", "utc", "cet", "gmt"})
_QUARTER = re.compile(r"q[1-4]")
_SIDES = frozenset({"front", "back"})
# Opposites that only word-for-word tell apart, because both often stand elsewhere in one
# text: "Turn off the flag until Legal signs off on it" / "Turn on the flag until …",
# "Lena on call until Friday" / "… from Friday", "in by Friday" / "in after Friday",
# "move-out" / "move-in".
_IN_PLACE = frozenset(
    {(a, b) for a, b in ANTONYM_STEMS}
    | {(b, a) for a, b in ANTONYM_STEMS}
    | {("until", "from"), ("from", "until"), ("until", "after"), ("after", "until")}
    | {("by", "from"), ("from", "by"), ("by", "after"), ("after", "by")}
    | {("in", "out"), ("out", "in")}
)


Trade = tuple[str, str, str]


def traded(old: list[str], new: list[str]) -> Trade | str | None:
    """Two spans that traded places around other words: "Leo brings wine, Ada brings
    dessert" against "Leo brings dessert, Ada brings wine", or "you owe Marcus" against
    "Marcus owes you", or "from Lisbon to Porto" against "from Porto to Lisbon". A list
    reordered ("Ingrid and Tomas") is no trade: the answer is then empty, and None when the
    texts are not one trade apart. A trade is (what, one span, the other)."""
    # An article comes and goes with the span it stands before: "the carpet runner …
    # with luxury vinyl plank" against "the luxury vinyl plank … with a carpet runner".
    old, new = [w for w in old if w not in _ARTICLES], [w for w in new if w not in _ARTICLES]
    a, b = [_role(w) for w in old], [_role(w) for w in new]
    if a == b or sorted(a) != sorted(b):
        return None
    start = 0
    while a[start] == b[start]:
        start += 1
    end = 0
    while a[-1 - end] == b[-1 - end]:
        end += 1
    # The words both spans share may sit outside the first difference: "from Harlow Ltd to
    # Harlow Ireland Ltd" against "from Harlow Ireland Ltd to Harlow Ltd" differ only after
    # "Harlow", so the window widens by a few words on each side.
    for before in range(start, max(-1, start - _MAX_SHARED_EDGE - 1), -1):
        for after in range(end, max(-1, end - _MAX_SHARED_EDGE - 1), -1):
            found = _trade_in(old, a, b, before, len(a) - after)
            if found is not None:
                return found
    return None


# "he" and "she" stand for the people named around them: "Remind Diego that he owes Leila"
# against "Remind Leila that she owes Diego" is Diego and Leila trading places, and so is
# "Let Maria know her proposal beat Tom's" against "Let Tom know his proposal beat Maria's".
_PERSON = frozenset("he him his himself she her hers herself".split())
_POSSESSIVE = re.compile(r"['\u2019]s$")


def _role_of(word: str) -> str:
    return "#person" if word in _PERSON else stem(_POSSESSIVE.sub("", word))


# Every word of both texts is read for its role at every compare; words of a usual length
# are remembered (a word may be of any length).
_role = ShortTextCache(_role_of, maxsize=8192, max_chars=64)


def _trade_in(
    old: list[str], a: list[str], b: list[str], start: int, stop: int
) -> Trade | str | None:
    """A trade of two spans within ``a[start:stop]`` and ``b[start:stop]``."""
    left, right = a[start:stop], b[start:stop]
    size = len(left)
    if size > _MAX_TRADED_SPAN:
        return None
    for first in range(1, size):
        for last in range(1, size - first):
            between = left[first : size - last]
            if (
                left[:first] == right[size - first :]
                and left[size - last :] == right[:last]
                and between == right[last : size - first]
            ):
                if all(w in JOINERS or w in _FILLERS for w in between):
                    return ""
                moved = old[start : start + first], old[start + size - last : start + size]
                what = "the direction was reversed" if DIRECTION & set(left) else "traded places"
                return what, " ".join(moved[0]), " ".join(moved[1])
    return None


@dataclass(frozen=True, slots=True)
class Replacements:
    """The word-for-word replacements between two texts, from one alignment."""

    # In the order of the texts, so that the reason named is the same on every run.
    pairs: tuple[tuple[str, str], ...]
    singles: tuple[tuple[str, str], ...]
    only_replaced: bool
    # Every word put in another's place in an edit of equal length, with where it stands in
    # each text: (old word, new word, its place in the old text, in the new).
    placed: tuple[tuple[str, str, int, int], ...] = ()


def replacements(old: list[str], new: list[str]) -> Replacements:
    """Align two texts once; keep what was put in whose place."""
    pairs: dict[tuple[str, str], None] = {}
    singles: list[tuple[str, str]] = []
    placed: list[tuple[str, str, int, int]] = []
    only_replaced = True
    for tag, i1, i2, j1, j2 in align(old, new):
        if tag == "equal":
            continue
        if tag != "replace" or i2 - i1 != j2 - j1:
            only_replaced = False
            continue
        pairs.update(dict.fromkeys(zip(old[i1:i2], new[j1:j2], strict=True)))
        placed.extend(
            (old[i], new[j], i, j) for i, j in zip(range(i1, i2), range(j1, j2), strict=True)
        )
        if i2 - i1 == 1:
            singles.append((old[i1], new[j1]))
    return Replacements(tuple(pairs), tuple(singles), only_replaced, tuple(placed))


def mutual_swap(replaced: Replacements) -> Trade | None:
    """Two words each put in the other's place ("the grey covers I received for the navy
    ones" against "the navy covers I received for the grey ones")."""
    if not replaced.only_replaced:
        return None
    pairs = set(replaced.pairs)
    for before, after in replaced.pairs:
        if (after, before) in pairs and before not in STOP:
            return "traded places", before, after
    return None


def persons_changed(old: list[str], new: list[str]) -> bool:
    """The same content words with "I" and "you" in other places: "I sent you $650" against
    "you sent me $650". Pronouns added or dropped ("I am on my way" / "on my way") reword."""

    def persons(words: list[str]) -> list[str]:
        return [
            "1" if w in FIRST_PERSON else "2"
            for w in words
            if w in FIRST_PERSON or w in SECOND_PERSON
        ]

    def within(short: list[str], long: list[str]) -> bool:
        rest = iter(long)
        return all(person in rest for person in short)

    mine, theirs = persons(old), persons(new)
    return bool(mine and theirs) and not within(mine, theirs) and not within(theirs, mine)


# Read, never changed, by ``values_moved``: each text's bindings are found once.
_read_slots = ShortTextCache(slot_values, maxsize=4096, max_chars=CACHED_TEXT_CHARS)


def forget_moves() -> None:
    """Empty the memos of texts read for lists, values and roles (for cold timings)."""
    _read_lists.cache_clear()
    _read_slots.cache_clear()
    _role.cache_clear()


def values_moved(stored: str, proposed: str) -> str | None:
    """A name both texts give a value, given another: "Ana: 4, Ben: 2" against "Ben got 4,
    Ana: 2". The bag of numbers is one, so only the bindings tell."""
    theirs = _read_slots(proposed)
    for name, values in _read_slots(stored).items():
        if name in theirs and theirs[name] != values:
            before, after = ", ".join(sorted(values)), ", ".join(sorted(theirs[name]))
            return f"values changed places: {name} {before} → {after}"
    return None


def direction_flipped(replaced: Replacements) -> str | None:
    """A direction word replaced by its opposite where everything around it stays."""
    for before, after in replaced.singles:
        if (before, after) in _OPPOSITE_DIRECTIONS:
            return f"the direction was reversed: {before} → {after}"
    return None


def opposites_in_place(
    replaced: Replacements, old: list[str], new: list[str]
) -> list[tuple[str, int, int]]:
    """Words of an opposite pair put one for the other, word for word, with where they stand
    in each text ("Turn off the flag" / "Turn on the flag", "Log in to" / "Log out of"). A
    particle counts only after a verb that switches ("turn", "log", "check", "move": "based
    off" / "based on" rewords), and "by", "from" and "until" only before a time ("until
    Friday" / "from Friday"; "the quote from Ana" / "by Ana" rewords). The caller weighs the
    negations around them."""
    found = []
    for before, after, i, j in replaced.placed:
        if (stem(before), stem(after)) not in _IN_PLACE:
            continue
        if before in _PARTICLES:
            # "out front" / "in front" say where, not which way.
            if _next(old, i) in _SIDES or _next(new, j) in _SIDES:
                continue
            anchors = (_switcher(old, i), _switcher(new, j))
            if anchors == (None, None):
                continue
        else:
            anchors = (i, j)
        if {before, after} & _TIME_BOUNDS and not (timed(old, i) and timed(new, j)):
            continue
        found.append(
            (
                f"reversed in place: {before} → {after}",
                i if anchors[0] is None else anchors[0],
                j if anchors[1] is None else anchors[1],
            )
        )
    return found


def _next(words: list[str], at: int) -> str:
    return words[at + 1] if at + 1 < len(words) else ""


def _switcher(words: list[str], at: int) -> int | None:
    """Where the verb that switches stands, four words before the particle at most."""
    for k in range(at - 1, max(-1, at - 5), -1):
        if words[k] in _SWITCHERS:
            return k
    return None


def timed(words: Sequence[str], at: int) -> bool:
    """Whether a time follows the word at ``at`` ("until Friday", "by 5 pm", "by 17:00",
    "after the 14th", "from Q3"), and the word is no joint of a repetition ("day by day").
    A bare count is no time ("feedback from 120 customers")."""
    following = words[at + 1 : at + 4]
    if not following or (at > 0 and words[at - 1] == following[0]):
        return False
    if following[0] in ("the", "mid") and len(following) > 1:
        following = following[1:]
    first, then = following[0], following[1] if len(following) > 1 else ""
    if first in DAY_WORDS or first in _TIMES or _QUARTER.fullmatch(first):
        return True
    # "May 3", "Sept 14": a month that is a word as well only before its day.
    if first in MONTH_ABBREV and then[:1].isdigit():
        return True
    if not first[:1].isdigit():
        return False
    # "17:00" is two words here; "5 pm", "3pm", "14th", "2025", "9 March".
    return (
        then[:1].isdigit()
        or then in _CLOCK
        or then in DAY_WORDS
        or first.endswith(("am", "pm", "st", "nd", "rd", "th"))
        or (len(first) == 4 and first[:2] in ("19", "20"))
    )


def person_swapped(replaced: Replacements) -> str | None:
    """A first-person word put for a second-person one, word for word ("me" for "you", "my"
    for "your"): "Text me when the cake arrives" against "I'll text you when it arrives"."""
    for before, after in replaced.singles:
        people = {before in FIRST_PERSON, after in FIRST_PERSON}
        if people == {True, False} and SECOND_PERSON & {before, after}:
            return f"who does what changed: {before} → {after}"
    return None


# Words and commas: a list's items are told apart by its separators.
_LIST_TOKEN = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)?|,")
_MAX_ITEM_WORDS = 4
_MAX_JOINED_WORDS = 6
# "with" is left out: "reply to Ana with a short note" adds a manner, not an item.
_ADDING = frozenset(
    {"and", "or", "plus", "including", "except", "excluding", "other", "apart", "besides"}
)
# "…, and thanks" adds nothing to do.
_COURTESY = frozenset(
    "thanks thank regards cheers best kind much again sorry hi hello let know keep posted".split()
)


def _separator(token: str) -> bool:
    """A comma or a joiner: what stands between a list's items."""
    return token == "," or token in JOINERS


def _joined(block: list[str]) -> bool:
    """Whether an inserted block opens with a word that adds or takes out ("and", "or",
    "including", "except", "other than"), after a comma maybe."""
    words = [w for w in block if w != ","]
    return block[0] in (",", *_ADDING) and bool(words) and words[0] in _ADDING


def item_added(stored: str, proposed: str) -> str | None:
    """One item put inside a list, every other word in place: "VPN, GitHub and AWS" against
    "VPN, GitHub, Slack and AWS", or "drinks and plates" against "drinks, plates and ice".
    A word added at either end ("Invoice" / "Invoice payment", a greeting, a name after a
    comma) is no list item. Words compare by their root: the list's head turns plural as it
    grows ("from the prod-admin group" / "from the prod-admin and billing-admin groups")."""
    first, second = _list_read(stored), _list_read(proposed)
    if len(first[0]) == len(second[0]):
        return None
    (_, short), (written_long, long) = sorted((first, second), key=_written_size)
    # "the grill and 2 coolers" / "the grill, 2 coolers and the kayak": a separator put for
    # a joiner is the list growing, not another change.
    changes = [
        op for op in SequenceMatcher(a=short, b=long, autojunk=False).get_opcodes()
        if op[0] != "equal" and not all(map(_separator, short[op[1] : op[2]] + long[op[3] : op[4]]))
    ]  # fmt: skip
    if len(changes) != 1 or changes[0][0] != "insert":
        return _list_grown(short, long, written_long)
    _, at, _, start, end = changes[0]
    # An insertion that may slide along equal words slides right: "payments service" /
    # "payments service and ledger service" inserts "and ledger service".
    while at < len(short) and long[start] == short[at]:
        start, end, at = start + 1, end + 1, at + 1
    block = long[start:end]
    items = [w for w in block if not _separator(w)]
    named = " ".join(w for w in written_long[start:end] if not _separator(w))
    if at == 0 or not items or all(w in STOP or w in _COURTESY for w in items):
        return None
    # "… to lb-ap-2" against "… to lb-ap-2 and page the network team": one more thing to do,
    # to include or to leave out, joined on at any place after the first word ("…, and let
    # me know" asks for nothing more).
    if _joined(block) and len(items) <= _MAX_JOINED_WORDS:
        return f"an item was added: {named}"
    if at == len(short) or len(items) > _MAX_ITEM_WORDS:
        return None
    # ", Slack" before "and AWS", or "Slack," after "VPN,": a separator on both sides.
    opens = block[0] == "," and (short[at] == "," or short[at] in JOINERS)
    closes = block[-1] == "," and short[at - 1] == ","
    if opens or closes:
        return f"an item was added to a list: {named}"
    return None


def _list_stem(token: str) -> str:
    return token if token in _ADDING or _separator(token) else root(token)


_ListTokens = tuple[list[str], list[str]]


def _list_tokens(text: str) -> _ListTokens:
    """A text's words and commas as written (lowercased), and by their root."""
    written = _LIST_TOKEN.findall(text.lower())
    return written, [_list_stem(t) for t in written]


def _list_read(text: str) -> _ListTokens:
    # Copies: the memo's lists are shared by every caller.
    written, stems = _read_lists(text)
    return list(written), list(stems)


def _written_size(side: _ListTokens) -> int:
    return len(side[0])


# A stored text comes back at every check it is compared in: it is read for lists once.
_read_lists = ShortTextCache(_list_tokens, maxsize=4096, max_chars=CACHED_TEXT_CHARS)


def _list_grown(short: list[str], long: list[str], written: list[str]) -> str | None:
    """One item more in a list joined by "and" or "or", wherever the alignment put it:
    "drinks and plates" / "drinks, plates and ice" aligns "plates" with "ice"."""
    size = len(long) - len(short)
    if not 2 <= size <= _MAX_ITEM_WORDS + 1:
        return None
    # A comma for "and" is the same list: compare the texts with every separator alike.
    plain_short = ["," if _separator(t) else t for t in short]
    plain_long = ["," if _separator(t) else t for t in long]
    for at in range(1, len(long) - size + 1):
        if plain_long[:at] + plain_long[at + size :] != plain_short:
            continue
        block = plain_long[at : at + size]
        # The item, with a separator at one end at least and none inside.
        start, end = 0, len(block)
        while start < end and block[start] == ",":
            start += 1
        while end > start and block[end - 1] == ",":
            end -= 1
        item = block[start:end]
        content = [w for w in item if w not in STOP and w not in _COURTESY]
        # The list was one already: an "and" or "or" stands where the item went.
        listed = any(t in JOINERS for t in short[max(0, at - 2) : at + 2])
        if content and "," not in item and len(item) < size and listed:
            named = written[at + start : at + end]
            return f"an item was added to a list: {' '.join(named)}"
    return None
