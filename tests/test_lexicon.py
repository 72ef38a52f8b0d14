"""The lexicon's word alignment and its tables of words of meaning, against their references."""

from __future__ import annotations

import difflib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tooldedup.dedup.english import accounting
from tooldedup.dedup.english.lexicon import MEANING, align

# A few words, so that the sides repeat words and tie for the longest match often.
_WORDS = st.lists(st.sampled_from(["a", "b", "c", "send", "the", "not", ","]), max_size=40)


@settings(max_examples=400, deadline=None)
@given(old=_WORDS, new=_WORDS)
def test_align_gives_difflibs_opcodes(old: list[str], new: list[str]) -> None:
    # The verifier's reasons name spans by these opcodes: the compiled matcher must make the
    # very alignment the standard library makes, ties and all.
    expected = difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes()
    assert list(align(old, new)) == [tuple(op) for op in expected]


@pytest.mark.parametrize(
    ("word", "senses"),
    [
        ("let's", (("pronoun", "we"),)),
        ("let\u2019s", (("pronoun", "we"),)),
        ("i\u2019ll", (("pronoun", "i"), ("modal", "will"))),
        ("every", (("quantifier", "all"),)),
        ("invoice", ()),
        ("let\u2019\u2019s", ()),
    ],
)
def test_a_words_senses_whichever_apostrophe_it_is_written_with(
    word: str, senses: tuple[tuple[str, str], ...]
) -> None:
    assert accounting._sense_of(word) == senses


@given(word=st.sampled_from(sorted(MEANING)), curly=st.lists(st.booleans(), min_size=4))
def test_senses_read_the_table_under_either_apostrophe(word: str, curly: list[bool]) -> None:
    marks = iter(curly)
    written = "".join(("\u2019" if next(marks, False) else "'") if c == "'" else c for c in word)
    assert accounting._sense_of(written) == MEANING[word]
    assert accounting._sense_of(written + "x") == MEANING.get(word + "x", ())
