"""The verifier's word lists: negations, antonyms, function words, and how a text becomes words.

A rewording and a flip differ in a few words; these lists name the words that carry the
difference ("not", "unclear", "increase"/"decrease"; the small words of meaning in ``MEANING``:
"must"/"may", "and"/"or", "this"/"next", "we"/"they") and the few that carry none
(``FILLERS``: "please", "hi", "the").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from cydifflib import SequenceMatcher

from tooldedup.dedup.english.gates import Gate
from tooldedup.dedup.short_cache import ShortTextCache

__all__ = [
    "ANTONYM_STEMS",
    "CACHED_TEXT_CHARS",
    "DIRECTION",
    "FILLERS",
    "FIRST_PERSON",
    "JOINERS",
    "MEANING",
    "NEGATIONS",
    "NEGATIVE_WORDS",
    "QUANTIFIERS",
    "RETRY_LABELS",
    "SECOND_PERSON",
    "SHORT_FORMS",
    "STOP",
    "URGENCY",
    "Sense",
    "align",
    "forget_words",
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
        # A weekday in the plural is every one of them: "on Tuesdays" is "every Tuesday".
        (r"(?:on )?(monday|tuesday|wednesday|thursday|friday|saturday|sunday)s", r"every \1"),
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
# The modal or "is" of a negated bound stays ("must not arrive later than" is "must arrive
# by", as "must arrive no later than" is); "do" is only the negation's support.
_NEGATED_AUX = (
    r"(?:(?:do|does|did) not|(should|must|can|could|will|would|shall|is|are|was|were|need|may)"
    r" not|never) ((?:[a-z']+ ){0,2}?)(?:any )?"
)
_BOUND = r"(?:no|not|never) (?:any )?"
_BOUNDS = tuple(
    (re.compile(rf"\b{pattern}\b"), word)
    for pattern, word in (
        (rf"{_NEGATED_AUX}later than", r"\1 \2by"),
        (rf"{_NEGATED_AUX}(?:earlier|sooner) than", r"\1 \2from"),
        (rf"{_NEGATED_AUX}more than", r"\1 \2at most"),
        (rf"{_NEGATED_AUX}(?:less|fewer) than", r"\1 \2at least"),
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


def _rewrite(text: str, rules: Sequence[tuple[re.Pattern[str], str]], gate: Gate) -> str:
    """``rules`` applied in order; most texts hold none of them, and are passed by the gate."""
    if not gate.opens(text):
        return text
    for pattern, replacement in rules:
        text = pattern.sub(replacement, text)
    return text


_CONTRACTIONS_GATE = Gate([pattern for pattern, _ in _CONTRACTIONS])
_BOUNDS_GATE = Gate([pattern for pattern, _ in _BOUNDS])
_ABSORBED_GATE = Gate([pattern for pattern, _ in _ABSORBED])


def _fold_bounds(lowered: str) -> str:
    """A lower-cased text with its bounds in one spelling each ("no later than" is "by")."""
    lowered = _rewrite(lowered, _CONTRACTIONS, _CONTRACTIONS_GATE)
    return _up_to(_rewrite(lowered, _BOUNDS, _BOUNDS_GATE))


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


def forget_words() -> None:
    """Empty the cache of words read (a benchmark measures the rules from cold)."""
    _read_words.cache_clear()


def words(text: str) -> list[str]:
    """A text's words with contractions split and negations folded into one spelling."""
    return list(_read_words(text))


# Texts up to this long are remembered by the caches that read text (4096 texts of 4 KiB at
# most, whatever a caller sends).
CACHED_TEXT_CHARS = 4096


def _words_of(text: str) -> tuple[str, ...]:
    lowered = _fold_bounds(_GROUPED.sub("", _country(text).lower()))
    return tuple(_WORD.findall(_rewrite(lowered, _ABSORBED, _ABSORBED_GATE)))


# Every rule reads both texts' words, and a retried text comes back at every check: each
# text is read once (a copy is handed out, so no caller changes the cached words).
_read_words = ShortTextCache(_words_of, maxsize=4096, max_chars=CACHED_TEXT_CHARS)


# Personal pronouns by whom they name: "me" for "I" names the same person, "she" for "he" or
# "they" for "we" another one.
_PRONOUNS = {
    "i": "i me my mine myself i'm i'll i've i'd",
    "we": "we us our ours ourselves we're we'll we've we'd let's",
    "you": "you your yours yourself yourselves you're you'll you've you'd",
    "he": "he him his himself he's he'll he'd",
    "she": "she her hers herself she's she'll she'd",
    "they": "they them their theirs themselves they're they'll they've they'd",
    "it": "it its itself it's it'll",
}
FIRST_PERSON = frozenset(_PRONOUNS["i"].split() + _PRONOUNS["we"].split())
SECOND_PERSON = frozenset(_PRONOUNS["you"].split())
# Words that carry the meaning however small they are: one put for another of its class
# ("must"/"may", "and"/"or", "for"/"against", "this"/"next", "only"/"also") says something
# else, and so does one added to a text otherwise the same ("Delete only the old files").
# Negations are the negation rules'. Each word is in one class.
_CLASSES = {
    "modal": "must may might can could will would shall should ought",
    "preposition": "for against to from into onto out with without before after above below"
    " over under up down in on off toward towards away pro anti including excluding except"
    " until till since by at via within through across beyond behind between among inside"
    " outside per",
    "conjunction": "and or but if because although though whereas whether while once when",
    "quantifier": "all every each some any both either only also even few many several much"
    " another half",
    "deictic": "this these that those here there next last now later earlier sooner today"
    " tomorrow tonight yesterday",
    "comparative": "more less fewer greater higher lower bigger smaller larger better worse"
    " faster slower cheaper longer shorter older newer most least best worst highest lowest"
    " biggest smallest largest fastest slowest cheapest longest shortest oldest newest"
    " earliest latest",
    # "Send the reminder to Ana again" asks for a second reminder: no retry's marker.
    "repetition": "again",
}
# Words of one class that say one thing: "every" and "each" are "all", "but" is "and" with
# a contrast, "towards" is "toward".
_SAME_VALUE = {"every": "all", "each": "all", "but": "and", "towards": "toward", "till": "until"}
# A contraction's modal: "I'll" is "I will".
_CONTRACTED_MODALS = {"ll": "will", "d": "would"}
Sense = tuple[str, str]


def _senses() -> dict[str, tuple[Sense, ...]]:
    table: dict[str, tuple[Sense, ...]] = {}
    for kind, listed in _CLASSES.items():
        for word in listed.split():
            table[word] = ((kind, _SAME_VALUE.get(word, word)),)
    for referent, listed in _PRONOUNS.items():
        for word in listed.split():
            _, _, tail = word.partition("'")
            modal = _CONTRACTED_MODALS.get(tail)
            table[word] = (("pronoun", referent),) + ((("modal", modal),) if modal else ())
    return table


# What each meaning-carrying word says: its class and its value.
MEANING = _senses()
QUANTIFIERS = frozenset(_CLASSES["quantifier"].split())
# Polite words, greetings and articles: put in or left out, they change no request. A closed
# list: other small words carry meaning, or say nothing a check may lean on.
FILLERS = frozenset(
    "please pls plz kindly hi hello hey dear thanks thank thx cheers just a an the".split()
)
# Words a retry adds to the request it repeats, which change no action. How soon it asks
# ("right away", "asap"), as words; not "again" (``MEANING``): "Send the reminder again"
# asks for another.
URGENCY = frozenset(
    tuple(phrase.split())
    for phrase in (
        "right away",
        "asap",
        "immediately",
        "urgently",
        "promptly",
        "as soon as possible",
    )
)
# A retry's own label, where a text opens: "Retry: send the invoice".
RETRY_LABELS = frozenset({"retry", "retrying"})


# difflib's opcodes: ("equal" | "replace" | "insert" | "delete", i1, i2, j1, j2).
_Opcode = tuple[str, int, int, int, int]


@lru_cache(maxsize=256)
def _aligned(old: tuple[str, ...], new: tuple[str, ...]) -> tuple[_Opcode, ...]:
    return tuple(SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes())


def align(old: Sequence[str], new: Sequence[str]) -> tuple[_Opcode, ...]:
    """Two texts' words aligned (difflib's opcodes): once per pair, however many checks read
    the alignment."""
    return _aligned(tuple(old), tuple(new))
