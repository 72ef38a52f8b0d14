"""The verifier's word lists: negations, antonyms, function words, and how a text becomes words.

A rewording and a flip differ in a few words; these lists name the words that carry the
difference ("not", "unclear", "increase"/"decrease") and the ones that carry none.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = [
    "ANTONYM_STEMS",
    "DIRECTION",
    "FIRST_PERSON",
    "JOINERS",
    "NEGATIONS",
    "NEGATIVE_WORDS",
    "SECOND_PERSON",
    "SHORT_FORMS",
    "STOP",
    "plain_words",
    "root",
    "stem",
    "words",
]

# Contractions first, so that every negation is a word of its own.
_CONTRACTIONS = (
    (re.compile(r"\bcan['\u2019]t\b"), "can not"),
    (re.compile(r"\bwon['\u2019]t\b"), "will not"),
    (re.compile(r"\bshan['\u2019]t\b"), "shall not"),
    (re.compile(r"n['\u2019]t\b"), " not"),
    (re.compile(r"\bcannot\b"), "can not"),
)
# What a dish or a product is "free" of; "toll-free" and "hands-free" negate nothing.
_FREE_OF = (
    "gluten", "sugar", "nut", "nuts", "peanut", "dairy", "lactose", "caffeine", "alcohol",
    "fat", "egg", "soy", "wheat", "salt", "meat", "fragrance", "latex", "smoke",
)  # fmt: skip
# A negation folded into one word says the same as the phrase ("isn't clear" = "unclear").
_ABSORBED = tuple(
    (re.compile(rf"\b{pattern}\b"), word)
    for pattern, word in (
        (r"(?:is |are |was |were |be |am )?not clear", "unclear"),
        (r"do not forget(?: about)?", "remember"),
        (r"(?:is |are |was |were |be )?not possible", "impossible"),
        (r"(?:is |are |was |were |be |am )?not able to", "unable to"),
        (r"(?:is |are |was |were |be |am )?not sure", "unsure"),
        (r"(?:is |are |was |were |be )?not available", "unavailable"),
        (r"(?:is |are |was |were |be )?not correct", "incorrect"),
        (r"(?:is |are |was |were |be )?not complete", "incomplete"),
        (r"(?:is |are |was |were |be )?not valid", "invalid"),
        (r"(?:is |are |was |were |be )?not likely", "unlikely"),
        (r"(?:is |are |was |were |be )?not happy", "unhappy"),
        (r"do not hesitate to", "feel free to"),
        (r"not (?:too |very )?far", "close"),
        (r"no longer", "anymore not"),
        (r"not yet", "still not"),
        (r"can not", "unable to"),
        (r"(?:will|would|does|did|do) not (?=work|power|start|load|open|respond)", "fails to "),
        (r"whether or not", "whether"),
        # One phrase, where "in" and "out" are no opposites ("check in", "check out").
        (r"fill(s|ed|ing)? out", r"fill\1 in"),
        # Verbs and phrases that refuse as "not" does: "avoid overwriting" is "do not
        # overwrite", "no need to pick me up" is "do not pick me up".
        (r"(?:there is |there's )?no need to", "not"),
        (r"avoid(?:s|ed|ing)?", "not"),
        (r"hold(?:s|ing)? off on", "not"),
        # "nut-free", "gluten free": what a dish or a product is made without.
        (rf"({'|'.join(_FREE_OF)})[-\u2010\u2011 ]free", r"not \1"),
        (r"refrain(?:s|ed|ing)? from", "not"),
        (r"without", "not"),
        (r"unless", "if not"),
        (r"under any circumstances?", "ever"),
        (r"under no circumstances?", "never"),
        # "an exchange, not a refund" says what "an exchange instead of a refund" says.
        (r"instead of", "not"),
        (r"rather than", "not"),
    )
)
# A bound, not a refusal: "in by Friday" is "in no later than Friday" and "must not arrive
# later than Friday"; "up to 50" is "no more than 50" and "a maximum of 50". Folded before
# the negations, so that "can not" is still whole here.
_NEGATED_AUX = (
    r"(?:(?:do|does|did|should|must|can|could|will|would|shall|is|are|was|were|need|may)"
    r" not|never) ((?:[a-z']+ ){0,2}?)(?:any )?"
)
_BOUND = r"(?:no|not|never) (?:any )?"
_BOUNDS = tuple(
    (re.compile(rf"\b{pattern}\b"), word)
    for pattern, word in (
        (rf"{_NEGATED_AUX}later than", r"\1by"),
        (rf"{_NEGATED_AUX}(?:earlier|sooner) than", r"\1from"),
        (rf"{_NEGATED_AUX}more than", r"\1at most"),
        (rf"{_NEGATED_AUX}(?:less|fewer) than", r"\1at least"),
        (rf"{_BOUND}later than", "by"),
        (rf"{_BOUND}(?:earlier|sooner) than", "from"),
        (rf"{_BOUND}more than|(?:a )?maximum of|max\.?(?= \d)", "at most"),
        (rf"{_BOUND}(?:less|fewer) than|(?:a )?minimum of|min\.?(?= \d)", "at least"),
    )
)
# "up to 50" is a bound, but "round the totals up to 2 decimal places" goes one way.
_UP_TO = re.compile(r"\bup to(?= \d)")
_ROUNDING = re.compile(r"\b(?:round|rounds|rounded|rounding|scale|scaled|scaling)\b[^.;!?]*$")


def _up_to(lowered: str) -> str:
    return _UP_TO.sub(
        lambda m: (
            m.group(0)
            if _ROUNDING.search(lowered[max(0, m.start() - 80) : m.start()])
            else "at most"
        ),
        lowered,
    )


def _fold_bounds(lowered: str) -> str:
    """A lower-cased text with its bounds in one spelling each ("no later than" is "by")."""
    for pattern, replacement in _CONTRACTIONS:
        lowered = pattern.sub(replacement, lowered)
    for pattern, word in _BOUNDS:
        lowered = pattern.sub(word, lowered)
    return _up_to(lowered)


# "non" stands alone once "non-smoking" is cut into words: "smoking" against "non-smoking" is
# a flip, "not urgent" against "non-urgent" a rewording.
NEGATIONS = frozenset({"not", "no", "never", "nothing", "none", "nobody", "neither", "nor", "non"})
# Words that carry a negation inside them, with what they negate: "unclear" is "not clear",
# and "clear" against "unclear" is a flip as surely as "clear" against "not clear".
NEGATIVE_WORDS = {
    "unclear": "clear", "impossible": "possible", "unable": "", "unsure": "sure",
    "unavailable": "available", "incorrect": "correct", "incomplete": "complete",
    "invalid": "valid", "unlikely": "likely", "unhappy": "happy", "undeliverable": "deliver",
    "unfinished": "finished", "unresolved": "resolved", "unpaid": "paid", "unread": "read",
    "unknown": "known", "unsuccessful": "successful", "fail": "", "fails": "", "failed": "",
    "cannot": "", "unnecessary": "necessary", "unneeded": "needed", "wrong": "right",
    "forbidden": "", "prohibited": "", "blocked": "", "failing": "", "refuse": "",
    "refuses": "", "refused": "", "unwilling": "willing", "nondeterministic": "deterministic",
}  # fmt: skip
# Pairs that reverse an act or a direction; words compare by a crude stem.
_ANTONYMS = (
    ("increase", "decrease"), ("raise", "lower"), ("raise", "reduce"), ("up", "down"),
    ("upgrade", "downgrade"), ("high", "low"), ("highest", "lowest"), ("higher", "lower"),
    ("max", "min"), ("maximum", "minimum"), ("more", "less"), ("most", "least"),
    ("first", "last"), ("earliest", "latest"), ("oldest", "newest"), ("before", "after"),
    ("above", "below"), ("over", "under"), ("open", "close"), ("opened", "closed"),
    ("start", "stop"), ("start", "end"), ("started", "finished"), ("begin", "end"),
    ("approve", "reject"), ("approve", "deny"), ("accept", "decline"), ("accept", "reject"),
    ("allow", "deny"), ("allow", "block"), ("grant", "revoke"), ("enable", "disable"),
    ("add", "remove"), ("include", "exclude"), ("join", "leave"), ("subscribe", "unsubscribe"),
    ("buy", "sell"), ("purchase", "sell"), ("bought", "sold"), ("purchased", "sold"),
    ("deposit", "withdraw"), ("credit", "debit"), ("import", "export"),
    ("on", "off"), ("lock", "unlock"), ("mute", "unmute"), ("follow", "unfollow"),
    ("pass", "fail"), ("win", "lose"), ("success", "failure"), ("succeeded", "failed"),
    ("true", "false"), ("yes", "no"), ("positive", "negative"), ("gain", "loss"),
    ("rise", "fall"), ("arrive", "depart"), ("arrival", "departure"),
    ("incoming", "outgoing"), ("inbound", "outbound"), ("send", "receive"), ("sent", "received"),
    ("hire", "fire"), ("keep", "drop"), ("keep", "remove"), ("hold", "release"),
    ("confirm", "cancel"), ("book", "cancel"), ("schedule", "cancel"), ("publish", "unpublish"),
    ("own", "other"), ("mine", "yours"), ("internal", "external"), ("public", "private"),
    ("encrypt", "decrypt"), ("ascending", "descending"), ("asc", "desc"), ("my", "your"),
    ("legal", "illegal"), ("buyer", "seller"), ("inbox", "outbox"),
    ("pick", "drop"), ("pickup", "dropoff"),
    ("north", "south"), ("east", "west"), ("left", "right"), ("forward", "backward"),
)  # fmt: skip

# A word and its short form, where the short form is no other word ("doc" is a doctor too,
# "admin" a kind of fee): one word, as a typo is, though the pair model may still object.
SHORT_FORMS = {
    "appt": "appointment", "appts": "appointments", "info": "information", "msg": "message",
    "msgs": "messages", "dept": "department", "mgr": "manager", "qty": "quantity",
    "amt": "amount", "acct": "account", "approx": "approximately", "pls": "please",
    "plz": "please", "thx": "thanks", "govt": "government",
}  # fmt: skip


DIRECTION = frozenset({"from", "to", "into", "onto", "out", "toward", "towards"})


# Letters of any script: Cyrillic or Chinese text is words too, never "no words".
_WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)?")


# "1,200" is one number: its grouping comma goes before the text is cut into words.
_GROUPED = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")


# Words that join a list: "Ingrid and Tomas" for "Tomas and Ingrid" is the list reordered.
JOINERS = frozenset({"and", "or", "nor", "plus", "then", "also", "both", "either"})


STOP = frozenset(
    """a an the to of for in on at by with and or but is are was were be been am it its
    this that these those i you we they he she me us them my your our their just so as from
    do does did will would can could should shall may might must have has had please yet
    now still also too very here there""".split()
)


# Every check stems the same few hundred words again; the cache keeps that off the hot path.
@lru_cache(maxsize=8192)
def stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


@lru_cache(maxsize=8192)
def root(word: str) -> str:
    """A stem with a doubled last consonant made one and a final "e" dropped: "cancelled"
    and "cancel" agree, and so do "moved" and "move"."""
    word = stem(word)
    if len(word) >= 4 and word[-1] == word[-2] and word[-1] not in "aeiouy":
        return word[:-1]
    # "schedule" and "scheduled", "move" and "moved".
    if len(word) >= 4 and word.endswith("e"):
        return word[:-1]
    return word


ANTONYM_STEMS = tuple((stem(a), stem(b)) for a, b in _ANTONYMS)


def plain_words(text: str) -> list[str]:
    """A text's words as written, lower-cased: no contraction or negation is folded."""
    return _WORD.findall(_GROUPED.sub("", text.lower()))


# "US" in capitals is the country, not "us": "EU traffic" / "US traffic" is a place swapped,
# not a pronoun dropped. A text in capitals throughout ("LET US KNOW") says nothing by case.
_COUNTRY_US = re.compile(r"\bUS\b")
_COUNTRY = re.compile(
    r"\bU\.S\.(?:A\.)?|\bUSA\b|\bUnited States(?: of America)?\b|(?<=\bthe )States\b"
)


def _country(text: str) -> str:
    text = _COUNTRY.sub("usa", text)
    return _COUNTRY_US.sub("usa", text) if any(c.islower() for c in text) else text


def words(text: str) -> list[str]:
    """A text's words with contractions split and negations folded into one spelling."""
    lowered = _fold_bounds(_GROUPED.sub("", _country(text).lower()))
    for pattern, word in _ABSORBED:
        lowered = pattern.sub(word, lowered)
    return _WORD.findall(lowered)


FIRST_PERSON = frozenset(
    "i me my mine we us our ours i'm i'll i've i'd we're we'll we've we'd".split()
)


SECOND_PERSON = frozenset("you your yours you're you'll you've you'd".split())
