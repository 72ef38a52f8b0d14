"""The English language pack: the one object the core receives to read English words."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tooldedup.dedup.english.critical import fact_tokens
from tooldedup.dedup.english.equivalence import equivalent_leaves, spelt_alike
from tooldedup.dedup.english.facts import normalize_facts
from tooldedup.dedup.english.fields import (
    is_attempt_label_name,
    is_attempt_stamp,
    is_category_name,
    is_code_name,
    is_path_name,
    is_secret_name,
    name_kind,
    reads_as_code,
    tool_names_field,
)
from tooldedup.dedup.english.labels import label_form
from tooldedup.dedup.english.legacy import legacy_args_hash
from tooldedup.dedup.english.lexicon import CACHED_TEXT_CHARS
from tooldedup.dedup.english.lists import is_set
from tooldedup.dedup.english.rule_verifier import RuleVerifier
from tooldedup.dedup.english.values import value_key, value_kind
from tooldedup.dedup.policy import ToolPolicy
from tooldedup.dedup.protocols import SpellingBudget
from tooldedup.dedup.records import FieldReading, ValueKind
from tooldedup.dedup.short_cache import ShortTextCache
from tooldedup.dedup.verifier import RememberedVerifier, Verifier

__all__ = ["LANGUAGES", "EnglishPack"]

LANGUAGES = ("en",)
_CACHED_FIELDS = 4096
_CACHED_TEXTS = 4096
_CACHED_NAME_CHARS = 256
# A verdict is kept for two texts of up to 1 KiB each: 4096 pairs hold at most 8 MiB of
# characters whatever callers send (a re-issue's text is rarely longer).
_CACHED_PAIR_CHARS = 1024


class EnglishPack:
    """English field names, facts, spellings and verifier rules, behind ``LanguagePack``."""

    def __init__(self) -> None:
        # Field and tool names recur in every call: each is read once, if it is short (a
        # memo of long names would keep whatever a caller sends).
        self._fields = ShortTextCache(
            _read_field, maxsize=_CACHED_FIELDS, max_chars=_CACHED_NAME_CHARS
        )
        self._unnamed = _read_field(None)
        self._label_names = ShortTextCache(
            is_attempt_label_name, maxsize=_CACHED_FIELDS, max_chars=_CACHED_NAME_CHARS
        )
        self._named_by_tool = ShortTextCache(
            tool_names_field, maxsize=_CACHED_FIELDS, max_chars=_CACHED_NAME_CHARS
        )
        # A retried text is canonicalized again at every check, and its facts and tokens
        # are the same each time.
        self._facts = ShortTextCache(
            normalize_facts, maxsize=_CACHED_TEXTS, max_chars=CACHED_TEXT_CHARS
        )
        self._tokens = ShortTextCache(
            fact_tokens, maxsize=_CACHED_TEXTS, max_chars=CACHED_TEXT_CHARS
        )

    @property
    def languages(self) -> tuple[str, ...]:
        """The ISO 639-1 codes of the languages the rules cover."""
        return LANGUAGES

    def field(self, name: str | None) -> FieldReading:
        """How a field of this name is read."""
        return self._unnamed if name is None else self._fields(name)

    def attempt_noise(
        self, name: str, value: Any, received_at: float | None, tool: str | None
    ) -> bool:
        """An attempt's own label, count or stamp, unless the tool's name names it: the
        request of ``approve_request`` is its target."""
        noise = self._label_names(name) or is_attempt_stamp(name, value, received_at)
        return noise and not (tool is not None and self._named_by_tool(tool, name))

    def reads_as_code(self, text: str) -> bool:
        """Whether a value reads as JSON, SQL, a shell command or code."""
        return reads_as_code(text)

    def normalize_facts(self, text: str) -> str:
        """Free text with each date, time, amount and count written one way."""
        return self._facts(text)

    def critical_tokens(self, text: str) -> tuple[str, ...]:
        """The tokens of a free text in canonical form (its facts written one way, as
        ``normalize_facts`` writes them) that no rewording may change."""
        return self._tokens(text)

    def value_key(self, kind: ValueKind, text: str) -> str:
        """What two spellings of one value of this kind share."""
        return value_key(kind, text)

    def label_key(self, name: str | None, text: str) -> str:
        """What two spellings of one name or label share, by the field's name."""
        return label_form(name, text).key

    def equivalent_leaves(
        self,
        mine: Sequence[tuple[str, str]],
        theirs: Sequence[tuple[str, str]],
        exact_fields: Sequence[str],
        tool: str | None,
        budget: SpellingBudget,
    ) -> tuple[str, ...] | None:
        """The paths whose values differ in spelling only, or None if any value differs."""
        return equivalent_leaves(mine, theirs, exact_fields, tool, budget)

    def spelt_alike(
        self,
        mine: Sequence[tuple[str, str]],
        theirs: Sequence[tuple[str, str]],
        exact_fields: Sequence[str],
        tool: str | None,
        budget: SpellingBudget,
    ) -> frozenset[str]:
        """The paths whose values are one value spelt two ways."""
        return spelt_alike(mine, theirs, exact_fields, tool, budget)

    def legacy_args_hash(
        self, args: dict[str, Any], policy: ToolPolicy, kept: dict[str, Any]
    ) -> str | None:
        """The args hash release 0.1 gave these args, when it stands for the same intent."""
        return legacy_args_hash(args, policy, kept)

    def verifier(self, word_cosine: Callable[[str, str], float] | None = None) -> Verifier:
        """The rule verifier, with the embedder's word cosines when given; its verdicts on
        recent pairs of texts are remembered."""
        return RememberedVerifier(
            RuleVerifier(word_cosine), maxsize=_CACHED_TEXTS, max_chars=_CACHED_PAIR_CHARS
        )


def _read_field(name: str | None) -> FieldReading:
    kind = value_kind(name)
    return FieldReading(
        prose=name_kind(name),
        value_kind=kind,
        code=is_code_name(name),
        path=is_path_name(name),
        secret=is_secret_name(name),
        category=is_category_name(name),
        unordered=is_set(name),
    )
