"""Cheap tests of whether any of some regular expressions may match a text.

Most texts hold none of the phrases a family of rewriting rules looks for, and one search of
an alternation of many patterns costs tens of microseconds. Each pattern's match must contain
one of a few literal strings (``required_literals``, read from the pattern itself); a pattern
is searched only in a text that holds one of its own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

__all__ = ["Gate", "required_literals"]

_REPEATS = frozenset({sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT})
# How many spellings a run of literals and small classes may stand for.
_MAX_SPELLINGS = 8
# Flags under which a literal of the pattern may match other characters of the text.
_LOOSE = re.IGNORECASE | re.LOCALE


def required_literals(pattern: re.Pattern[str]) -> frozenset[str] | None:
    """Strings one of which every match of ``pattern`` contains; None when none is known."""
    if pattern.flags & _LOOSE:
        return None
    return _required(sre_parse.parse(pattern.pattern, pattern.flags).data)


def _required(items: Iterable[tuple[Any, Any]]) -> frozenset[str] | None:
    """The best requirement of a sequence: each of its items must match, so any item's
    requirement is the sequence's; a run of literals (and of small classes of them: "n't"
    or "n\\u2019t") is one string of a few. The one whose shortest string is longest wins."""
    found: list[frozenset[str]] = []
    run = [""]
    for op, arg in items:
        chars = _chars(op, arg)
        if chars is not None and len(run) * len(chars) <= _MAX_SPELLINGS:
            run = [start + char for start in run for char in chars]
            continue
        if run != [""]:
            found.append(frozenset(run))
        run = [""]
        if chars is None and (inner := _item(op, arg)) is not None:
            found.append(inner)
    if run != [""]:
        found.append(frozenset(run))
    return max(found, key=lambda strings: min(map(len, strings)), default=None)


def _chars(op: Any, arg: Any) -> list[str] | None:
    """The characters one item matches, when it is a literal or a small class of them."""
    if op is sre.LITERAL:
        return [chr(arg)]
    if op is sre.IN and len(arg) <= _MAX_SPELLINGS and all(o is sre.LITERAL for o, _ in arg):
        return [chr(code) for _, code in arg]
    return None


def _item(op: Any, arg: Any) -> frozenset[str] | None:
    if op is sre.SUBPATTERN:
        _, add_flags, _, sub = arg
        return None if add_flags & _LOOSE else _required(sub.data)
    if op is sre.BRANCH:
        branches = [_required(sub.data) for sub in arg[1]]
        if any(b is None for b in branches):
            return None
        return frozenset().union(*(b for b in branches if b is not None))
    if op in _REPEATS:
        low, _, sub = arg
        return _required(sub.data) if low >= 1 else None
    # Anchors, classes, lookarounds, backreferences: nothing required that is known here.
    return None


class Gate:
    """Whether any of ``patterns`` may match a text: each pattern is searched only in a
    text that holds one of the literals it requires."""

    def __init__(self, patterns: Sequence[re.Pattern[str]]) -> None:
        self._parts = tuple((pattern, _sorted(required_literals(pattern))) for pattern in patterns)
        # Every pattern's literals at once: most texts hold none, and are passed at one look.
        each = [literals for _, literals in self._parts]
        self._any = None
        if all(literals is not None for literals in each):
            self._any = tuple(sorted({lit for literals in each for lit in literals or ()}))

    def opens(self, text: str) -> bool:
        """Whether some pattern matches ``text``."""
        if self._any is not None and not any(literal in text for literal in self._any):
            return False
        return any(
            pattern.search(text) is not None
            for pattern, literals in self._parts
            if literals is None or any(literal in text for literal in literals)
        )


def _sorted(literals: frozenset[str] | None) -> tuple[str, ...] | None:
    return None if literals is None else tuple(sorted(literals))
