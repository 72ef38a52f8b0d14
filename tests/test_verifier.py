"""The verdict memo in front of a verifier."""

from __future__ import annotations

import pytest

from tooldedup.dedup.verifier import RememberedVerifier, Verdict, VerdictKind


class _Counting:
    """A verifier that says ``different`` unless the texts are equal, and counts its reads."""

    def __init__(self) -> None:
        self.reads: list[tuple[str, str]] = []

    def compare(self, stored: str, proposed: str) -> Verdict:
        self.reads.append((stored, proposed))
        if stored == proposed:
            return Verdict(VerdictKind.CONFIRMED, "same words", final=True)
        return Verdict(VerdictKind.DIFFERENT, f"{stored} → {proposed}")


@pytest.mark.parametrize(
    ("pairs", "reads"),
    [
        ([("a b", "a c"), ("a b", "a c")], 1),  # the same pair again: remembered
        ([("a b", "a c"), ("a c", "a b")], 2),  # the other way round is another pair
        ([("a b", "a c"), ("a b", "a d"), ("a b", "a c")], 2),
        ([("x" * 9, "y"), ("x" * 9, "y")], 2),  # over max_chars: read each time
    ],
)
def test_each_pair_is_read_once_while_remembered(pairs: list[tuple[str, str]], reads: int) -> None:
    inner = _Counting()
    remembered = RememberedVerifier(inner, maxsize=8, max_chars=8)
    verdicts = [remembered.compare(stored, proposed) for stored, proposed in pairs]
    assert verdicts == [inner.compare(stored, proposed) for stored, proposed in pairs]
    assert len(inner.reads) == reads + len(pairs)


def test_only_the_last_pairs_are_kept() -> None:
    inner = _Counting()
    remembered = RememberedVerifier(inner, maxsize=2, max_chars=64)
    for proposed in ("b", "c", "d", "b"):
        remembered.compare("a", proposed)
    assert [proposed for _, proposed in inner.reads] == ["b", "c", "d", "b"]
