"""What a sentence does: a request, a thank-you, a report that it was done, a question.

"Please cancel order FX-2093" and "We've cancelled order FX-2093" share every content word and
embed alike; their acts differ, and so do the calls.
"""

from __future__ import annotations

import re

from tooldedup.dedup.lexicon import STOP, root, words

__all__ = ["act_changed", "text_act"]

_THANKS = re.compile(r"\b(?:thanks?|thank you|appreciated?|grateful|cheers)\b")


_REQUEST = re.compile(
    r"\?|^(?:please|pls|kindly|could|can|would|will|do you|are you|is it)\b"
    r"|\b(?:please|could you|can you|would you|will you|let me know|send me|i need)\b"
    r"|\b(?:let's|let us|don't forget|do not forget|remember to|make sure)\b"
)


# A sentence that reports the act done: "We've cancelled order FX-2093" is no "Please cancel".
_REPORT = re.compile(
    r"^(?:(?:hi|hey|hello|ok|okay|update|fyi)\b[^a-z]*)?"
    r"(?:(?:we've|i've|we have|i have|it's been|has been)\s+(?:already\s+|just\s+)?"
    r"|(?:we|i)\s+(?:already|just)\s+)[a-z]+(?:ed|en|t)\b"
)


_SENTENCE = re.compile(r"[^.!?;]+[.!?;]*")


# A yes/no question about a fact ("Did you file it?", "Is the store closed?") asks, where
# the same words without it tell or request.
_QUERY = re.compile(
    r"^(?:(?:hi|hey|hello|so|and|but)\b[^a-z]*(?:[a-z]+\b[^a-z]*){0,3})?"
    r"(?:is|are|was|were|did|does|has|have|had)\b"
)


# A question against the same sentence told asks for more overlap: rewordings turn a
# request into a question often ("Please approve it" / "Could you approve it?").
_MIN_QUESTION_OVERLAP = 0.75


# Content-word overlap (by stem) at which two sentences say the same thing but for their act.
_MIN_SENTENCE_OVERLAP = 0.6


def text_act(text: str) -> str:
    """``thanks`` or ``request`` when a text is purely one of them, else ``other``."""
    lowered = text.lower().strip()
    thanks, request = bool(_THANKS.search(lowered)), bool(_REQUEST.search(lowered))
    if thanks != request:
        return "thanks" if thanks else "request"
    return "other"


def _sentence_act(sentence: str) -> str:
    lowered = sentence.lower().strip()
    if lowered.endswith("?") and _QUERY.search(lowered):
        return "question"
    thanks, request = bool(_THANKS.search(lowered)), bool(_REQUEST.search(lowered))
    if thanks != request:
        return "thanks" if thanks else "request"
    return "report" if _REPORT.search(lowered) and not thanks else "statement"


def act_changed(stored: str, proposed: str) -> str | None:
    """A sentence whose words stay but whose act changes: a request against a thank-you or
    against a report that it was done ("Please cancel order FX-2093" / "We've cancelled
    order FX-2093")."""
    theirs = [(s, _sentence_act(s), _content(s)) for s in _SENTENCE.findall(proposed)]
    for sentence in _SENTENCE.findall(stored):
        act, mine = _sentence_act(sentence), _content(sentence)
        if not mine:
            continue
        for _, other_act, other_words in theirs:
            if act == other_act:
                continue
            if "question" in (act, other_act):
                needed = _MIN_QUESTION_OVERLAP
            elif {act, other_act} in ({"request", "thanks"}, {"request", "report"}):
                needed = _MIN_SENTENCE_OVERLAP
            else:
                continue
            if len(mine & other_words) / len(mine | other_words) >= needed:
                return f"a {act} became a {other_act}"
    return None


def _content(sentence: str) -> set[str]:
    # Numbers are the exact signature's, and would make any two sentences about them alike.
    return {
        root(w) for w in words(sentence) if w not in STOP and "'" not in w and not w[:1].isdigit()
    }
