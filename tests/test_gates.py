"""Literal prefilters of regular expressions: sound (never skip a text a pattern matches)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tooldedup.dedup.english import lexicon
from tooldedup.dedup.english.gates import Gate, required_literals


@pytest.mark.parametrize(
    ("pattern", "literals"),
    [
        (r"\bwithout\b", {"without"}),
        (r"\bcan['\u2019]t\b", {"can't", "can\u2019t"}),
        (r"(?:is |are )?not clear", {"not clear"}),
        (r"fill(s|ed|ing)? out", {"fill"}),
        (r"\b(monday|friday)s\b", {"monday", "friday"}),
        # The requirement whose shortest string is longest: ties go to the first.
        (r"no (?:later|sooner) than", {"later", "sooner"}),
        (r"(?:ab|cd)+e", {"ab", "cd"}),
        (r"x(?:ab)+", {"ab"}),
        # Nothing every match must hold: searched in every text.
        (r"\d+", None),
        (r"(?:a|)b?", None),
        (r"(?i)without", None),
        (r"(?=not)\w+", None),
    ],
)
def test_required_literals(pattern: str, literals: set[str] | None) -> None:
    found = required_literals(re.compile(pattern))
    assert found == (None if literals is None else frozenset(literals))


_RULES = {
    "contractions": [pattern for pattern, _ in lexicon._CONTRACTIONS],
    "bounds": [pattern for pattern, _ in lexicon._BOUNDS],
    "absorbed": [pattern for pattern, _ in lexicon._ABSORBED],
}
# Pieces of the rules' own phrases and of ordinary text: drawn together they make texts that
# match some rules, nearly match others, and hold their literals in odd places.
_PIECES = sorted(
    {
        word
        for patterns in _RULES.values()
        for p in patterns
        for word in re.findall(r"[a-z']+", p.pattern)
    }
    | {" ", ", ", "-", "\u2019", "3", "15", "the", "report", "not", "no", "than", "free"}
)


@settings(max_examples=400, deadline=None)
@given(
    rules=st.sampled_from(sorted(_RULES)), pieces=st.lists(st.sampled_from(_PIECES), max_size=12)
)
def test_a_gate_opens_exactly_where_a_pattern_matches(rules: str, pieces: list[str]) -> None:
    patterns = _RULES[rules]
    for text in ("".join(pieces), " ".join(pieces)):
        expected = any(pattern.search(text) is not None for pattern in patterns)
        assert Gate(patterns).opens(text) is expected


# Constructs the literal reading must step around, never through.
_TRICKY = [
    re.compile(p)
    for p in (
        r"(?i:not) clear",
        r"(?<=the )states\b",
        r"(?:a |)b?c",
        r"x{0,2}y[^a]z",
        r"[a-c]+ér",
        r"(?=no)\w+ longer",
        r"(ab)?\1?c",
        r"\bé(?:t|)é\b",
    )
]


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="abcxyzéNOTnotlngrs ", max_size=16), st.sampled_from(_TRICKY))
def test_a_gate_never_skips_what_a_tricky_pattern_matches(
    text: str, pattern: re.Pattern[str]
) -> None:
    assert Gate([pattern]).opens(text) is (pattern.search(text) is not None)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("I can't come, it isn't clear", ["i", "unable", "to", "come", "it", "unclear"]),
        ("no later than Friday", ["by", "friday"]),
        ("a maximum of 5 seats", ["at", "most", "5", "seats"]),
        (
            "Avoid overwriting the gluten-free menu on Tuesdays",
            ["not", "overwriting", "the", "not", "gluten", "menu", "every", "tuesday"],
        ),
        ("the report", ["the", "report"]),
    ],
)
def test_words_through_the_gates(text: str, words: list[str]) -> None:
    assert lexicon.words(text) == words
