"""What a sentence does: a request, a thank-you, a report that it was done, a question.

"Please cancel order FX-2093" and "We've cancelled order FX-2093" share every content word and
embed alike; their acts differ, and so do the calls.
"""

from __future__ import annotations

import re

from tooldedup.dedup.english.lexicon import (
    CACHED_TEXT_CHARS,
    NEGATIONS,
    QUANTIFIERS,
    STOP,
    plain_words,
    root,
)
from tooldedup.dedup.short_cache import ShortTextCache

__all__ = ["act_changed", "forget_acts", "text_act"]

_THANKS = re.compile(r"\b(?:thanks?|thank you|appreciated?|grateful|cheers)\b")
_ASKS = (
    r"^(?:please|pls|kindly|could|can|would|will|do you|are you|is it)\b"
    r"|\b(?:please|could you|can you|would you|will you|let me know|send me|i need)\b"
    r"|\b(?:are you able to|is (?:someone|somebody|anyone|anybody) able to"
    r"|can (?:someone|somebody|anyone)|could (?:someone|somebody|anyone))\b"
    r"|\b(?:let's|let us|don't forget|do not forget|remember to|make sure)\b"
)
# A whole text that asks: any question counts, as well as the words of a request.
_REQUEST = re.compile(r"\?|" + _ASKS)
# A sentence that asks by its words; "API down?" is a question, not a request.
_SENTENCE_REQUEST = re.compile(_ASKS)
_PARTICIPLE = (
    r"(?:[a-z]+(?<!e)ed|paid|made|sent|done|sold|bought|put|set|shut|cut|given|taken|written"
    r"|told|kept|left|got|brought|held|gone|seen|signed off)"
)
# A sentence that reports the act done: "We've cancelled order FX-2093" is no "Please cancel",
# and neither is "Order FX-2093 has been cancelled".
_REPORT = re.compile(
    r"^(?:[^,]{0,60},\s*)?(?:we've|i've|we have|i have|we|i)\s+(?:already\s+|just\s+)?"
    + _PARTICIPLE
    + r"\b|\b(?:has|have|had) been\s+(?:already\s+|just\s+)?"
    + _PARTICIPLE
    + r"\b"
)
# "Laura's KTN was added to her bookings" tells what "Please add Laura's KTN" asks, but only
# as the sentence's own subject and verb: "Refund the fee that was charged twice", "Confirm the
# payment was received" and "Retry if the card was declined" still ask.
_SUBORDINATE = (
    r"that|which|who|whom|whose|if|whether|why|how|when|where|since|because|as|once|after"
    r"|before|until|unless|though|although|while|let|tell|ask|ensure|verify|confirm|inform"
    r"|notify|remind|say|mention|show|check|double-check|sanity-check|see"
)
_PASSIVE_REPORT = re.compile(
    r"^(?:(?:hi|hey|hello|update|fyi|note|status|done|ok|okay)\b[^,:]{0,30}[,:]\s*"
    r"|[^,:]{0,40}:\s*)?"
    # "I was charged twice" is what happened to the writer, not a report of the act.
    r"(?!(?:i|we|you)\s)"
    # Subject words may carry a price or a count: "Elif's $2,500 bonus was included".
    r"(?:(?!(?:"
    + _SUBORDINATE
    + r")\b)[$\u00a3\u20ac#]?[\w'\u2019]+(?:[-./,][\w'\u2019]+)*\s+){1,8}"
    r"(?:was|were)\s+(?:already\s+|just\s+|also\s+|now\s+|successfully\s+)?"
    # Words in -ed that describe rather than report: "Laura was interested in the plan".
    r"(?!(?:interested|concerned|worried|pleased|surprised|excited|confused|disappointed"
    r"|tired|married|based|located|supposed|allowed|expected|required|needed)\b)"
    + _PARTICIPLE
    + r"\b"
)
# A request with no word of asking: a sentence that opens (after a name or a greeting) with a
# verb of action and its object. The object word keeps out nouns that open a sentence as well
# ("Refund for order 1182 was issued", "Return label attached").
_IMPERATIVE = re.compile(
    r"^(?:(?:hi|hey|hello)\b[^,]{0,30},\s*|[a-z]+,\s*)?"
    r"(?:add|approve|arrange|assign|book|call|cancel|change|check|close|confirm|create|delete"
    r"|disable|drain|email|enable|extend|file|fix|forward|include|issue|mark|move|notify|open"
    r"|order|page|pay|post|process|publish|put|raise|rebook|record|redirect|refund|reissue"
    r"|release|remove|renew|reply|replace|request|reschedule|restart|restore|return|reverse"
    r"|revoke|roll|rotate|run|schedule|send|set|ship|sign|submit|switch|tell|test|transfer"
    r"|update|upgrade|upload|use|waive|invite|share|archive|block|unblock|freeze|unfreeze|lock"
    r"|unlock|grant|print|collect|deliver|drop|hold|load|pick|reserve|resend|restock|leave"
    r"|take|bring|mail|keep|give|kill|silence|pause|resume|promote|ack|acknowledge|reset"
    r"|escalate|reopen|deploy|investigate|verify|review|install|apply|purge|scale|start|stop)"
    r"\s+(?:the|a|an|my|our|your|his|her|their|its|this|that|these|those|all|both|every|each"
    r"|it|them|him|me|us|one|two|three|[a-z]+'s)\b"
)
# A full stop inside a number ("4.6.0", "$1.5") or after a title ("Mr. Okafor") ends no
# sentence.
_SENTENCE = re.compile(
    r"(?:[^.!?;]|(?<=\d)\.(?=\d)|(?<=\bmr)\.|(?<=\bmrs)\.|(?<=\bms)\.|(?<=\bdr)\.)+[.!?;]*",
    re.IGNORECASE,
)
# A dash between spaces ends a clause as a full stop does: "Late penalty waived - Marcus was
# out sick" tells what "Should the late penalty be waived? Marcus was out sick" asks.
_DASH = re.compile(r"\s[-\u2013\u2014]\s")
# A sentence's clauses: after a comma or a colon, or at a dash.
_CLAUSE = re.compile(r"[,:]\s+|" + _DASH.pattern)
_PRESENTING = re.compile(r"\bplease (?:find|see)\b")
# A yes/no question about a fact ("Did you file it?", "Is the store closed?", "Should I book
# it?") asks, where the same words without it tell or request.
_QUERY = re.compile(
    r"^(?:(?:hi|hey|hello|so|and|but)\b[^a-z]*(?:[a-z]+\b[^a-z]*){0,3}"
    # A name or a greeting first: "Halvard, did you book the van?", "Good morning, has …".
    r"|(?:[a-z]+\s){0,2}[a-z]+,\s*"
    # After a heading ("Big news: is Leo moving …?") or a clause ("…, so should we …?").
    r"|[^?]{0,40}:\s*|[^?]{0,80},\s*(?:so|and|but)\s+)?"
    r"(?:is|are|was|were|did|does|has|have|had|should|shall)\b"
)
# Acts that cannot stand for each other, sentence against sentence.
_CONFLICTS = (
    frozenset({"request", "thanks"}),
    frozenset({"request", "report"}),
    frozenset({"question", "request"}),
    frozenset({"question", "statement"}),
    frozenset({"question", "report"}),
    frozenset({"question", "thanks"}),
    # A request without "please": "Call me when you land, and thanks" still asks, so only a
    # report or a question of the same words stands against it.
    frozenset({"command", "report"}),
    frozenset({"command", "question"}),
)
# Content-word overlap (by root, act words aside) at which two sentences say the same thing
# but for their act. Rewordings move content between sentences ("I've attached the contract.
# Please sign it." / "Please sign the attached contract.": 0.67), so the bar sits above them.
_MIN_SENTENCE_OVERLAP = 0.75
# Words that mark the act, not the content: "Don't forget to return the books" and "Thanks
# for returning the books" are about the same books.
_ACT_WORDS = frozenset(
    "please pls kindly thanks thank appreciate appreciated grateful cheers remember forget "
    "let us make sure know".split()
)


def text_act(text: str) -> str:
    """``thanks`` or ``request`` when a text is purely one of them, else ``other``."""
    return _text_acts(text)


def _text_act(text: str) -> str:
    lowered = text.lower().strip()
    thanks, request = bool(_THANKS.search(lowered)), bool(_REQUEST.search(lowered))
    if thanks != request:
        return "thanks" if thanks else "request"
    return "other"


def _sentence_act(sentence: str) -> str:
    # "Please find the report attached" hands something over, as "I've attached the report"
    # does: a formula, not a request.
    lowered = _PRESENTING.sub("", sentence.lower().strip())
    thanks, request = bool(_THANKS.search(lowered)), bool(_SENTENCE_REQUEST.search(lowered))
    if request and not thanks:
        return "request"
    if lowered.endswith("?"):
        return "question" if _QUERY.search(lowered) else "open question"
    if thanks:
        return "thanks"
    # A verb and its object first: whatever the sentence then tells ("Cancel the orders
    # that have been duplicated") is what the command is about.
    if _IMPERATIVE.search(lowered):
        return "command"
    if _REPORT.search(lowered):
        return "report"
    if _PASSIVE_REPORT.search(lowered):
        # "The $49 charge was duplicated, refund it" tells why, then asks.
        clauses = _CLAUSE.split(lowered)[1:]
        return "command" if any(_IMPERATIVE.search(c) for c in clauses) else "report"
    return "statement"


# "Dressing changed at 10:30" records it; "Dressing to be changed at 10:30" plans it. Only the
# two words put in or taken out count: "must be signed" / "needs to be signed" plan alike.
_TO_BE = re.compile(r"(\b[\w'\u2019-]+)\s+to be\s+(" + _PARTICIPLE + r")\b")


# Only after a verb of wanting, maybe with its object ("asked Legal for", "pushing hard
# for"), and on through "and for": "Prior authorization for home oxygen to be submitted"
# plans, and so does "Called for a taxi at 6, luggage to be collected at 5".
_WANTED = re.compile(
    r"\b(?:ask|asks|asked|asking|call|calls|called|calling|wait|waits|waited|waiting|push"
    r"|pushed|pushing|request|requests|requested|requesting|arrange|arranged|arranging|hope"
    r"|hoped|hoping|chase|chased|chasing|email|emailed|keen|press|pressed|pressing)"
    r"(?:\s+[\w'\u2019-]+){0,2}?\s+for\b[^.,;:!?]*(?:,\s*(?:and|or)\s+for\b[^.,;:!?]*)*$"
)


def _plans(text: str) -> tuple[tuple[str, str], ...]:
    """The things a text plans ("to be changed"), each as the word before and the
    participle, and none that are only wanted ("asked for SSO to be enabled")."""
    lowered = text.lower()
    return tuple(
        (found.group(1), found.group(2))
        for found in _TO_BE.finditer(lowered)
        if not _WANTED.search(lowered[: found.start()])
    )


def _planned(stored: str, proposed: str) -> str | None:
    for mine, theirs in ((stored, proposed), (proposed, stored)):
        for before, done in _text_plans(mine):
            if re.search(
                rf"(?<![\w'\u2019-]){re.escape(before)}\s+{re.escape(done)}\b", theirs.lower()
            ):
                return "a thing to do became a thing done"
    return None


def act_changed(stored: str, proposed: str) -> str | None:
    """A sentence whose words stay but whose act changes: a request against a thank-you or
    against a report that it was done ("Please cancel order FX-2093" / "We've cancelled
    order FX-2093"), or a yes/no question against the same words told or asked for.

    A sentence the other text also says with the same act is no change."""
    # Sentences whole, then cut at dashes too: a dash can end a clause ("Late penalty waived -
    # Marcus was out sick") or sit inside a question ("Is the office open Mon - Fri?").
    found = _planned(stored, proposed) or _changed(
        _SENTENCE.findall(stored), _SENTENCE.findall(proposed)
    )
    if found is None and (_DASH.search(stored) or _DASH.search(proposed)):
        found = _changed(_clauses(stored), _clauses(proposed))
    return found


_CACHED_SENTENCE_CHARS = 400


def _reading(sentence: str) -> tuple[str, frozenset[str]]:
    return _sentence_act(sentence), frozenset(_content(sentence))


# A stored text's sentences come back at every check that meets it, and a reworded repeat
# keeps most of its sentences: each sentence is read once. Sentences of a usual length only,
# so that the memo (words and all) stays a few megabytes whatever callers send.
_sentence_readings = ShortTextCache(_reading, maxsize=4096, max_chars=_CACHED_SENTENCE_CHARS)
_text_acts = ShortTextCache(_text_act, maxsize=4096, max_chars=CACHED_TEXT_CHARS)
_text_plans = ShortTextCache(_plans, maxsize=4096, max_chars=CACHED_TEXT_CHARS)


def forget_acts() -> None:
    """Empty the caches of sentences read (a benchmark measures the rules from cold)."""
    _sentence_readings.cache_clear()
    _text_acts.cache_clear()
    _text_plans.cache_clear()


def _changed(stored: list[str], proposed: list[str]) -> str | None:
    theirs = [_sentence_readings(s) for s in proposed]
    for sentence in stored:
        act, mine = _sentence_readings(sentence)
        if not mine:
            continue
        alike = [
            other_act
            for other_act, other in theirs
            if len(mine & other) / len(mine | other) >= _MIN_SENTENCE_OVERLAP
        ]
        if act in alike:
            continue
        for other_act in alike:
            if frozenset({act, other_act}) in _CONFLICTS:
                return f"a {act} became a {other_act}"
    return None


def _clauses(text: str) -> list[str]:
    return [s for clause in _DASH.split(text) for s in _SENTENCE.findall(clause)]


# Past forms a report uses for the verb a request used: "We've paid invoice 42".
_IRREGULAR = {
    "paid": "pay", "made": "make", "sent": "send", "sold": "sell", "bought": "buy",
    "done": "do", "given": "give", "taken": "take", "written": "write", "told": "tell",
    "kept": "keep", "brought": "bring", "held": "hold", "left": "leave", "got": "get",
}  # fmt: skip


def _content(sentence: str) -> set[str]:
    # Numbers are the exact signature's, and would make any two sentences about them alike;
    # negations are the negation check's; quantifiers say how many, which the numbers and
    # the rewording carry ("Please process these changes" / "Both changes have been
    # processed"). Words as written: folding them costs a dozen passes per sentence, and
    # what a sentence is about does not depend on it.
    return {
        root(_IRREGULAR.get(w, w))
        for w in plain_words(sentence)
        if w not in STOP
        and w not in NEGATIONS
        and w not in _ACT_WORDS
        and w not in QUANTIFIERS
        and "'" not in w
        and not w[:1].isdigit()
    }
