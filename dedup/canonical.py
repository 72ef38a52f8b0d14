"""Canonical form of tool-call arguments.

Two calls whose canonical forms are equal are the same call. The walk sorts keys,
normalises strings and numbers, strips volatile fields, and splits the leaves into
*exact* leaves (ids, amounts, dates, recipients, enums: compared for equality) and
*semantic* leaves (free text: compared by meaning). The exact signature hashes the
exact leaves plus the numbers found inside free text, so a call whose critical
arguments differ can never be a candidate match.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from tooldedup.dedup.critical import critical_tokens
from tooldedup.dedup.errors import InvalidInput
from tooldedup.dedup.policy import DEFAULT_VOLATILE_FIELDS, CompareMode, ToolPolicy
from tooldedup.dedup.records import CanonicalCall, SemanticLeaf

__all__ = [
    "LONG_TEXT_CHARS",
    "MAX_DEPTH",
    "PROSE_FIELD_NAMES",
    "VALUE_FIELD_NAMES",
    "canonical_json",
    "canonicalize",
    "has_layout",
    "intent_key",
    "is_prose",
    "normalize_text",
    "stable_hash",
    "validate_json",
]

MAX_DEPTH = 32
LONG_TEXT_CHARS = 800
PROSE_FIELD_NAMES = frozenset(
    {
        "subject", "title", "body", "message", "text", "content", "description",
        "summary", "note", "notes", "comment", "reason", "prompt", "caption",
    }
)  # fmt: skip
VALUE_FIELD_NAMES = frozenset(
    {
        "id", "ids", "uuid", "key", "url", "uri", "path", "file", "filename", "email", "to",
        "cc", "bcc", "from", "recipient", "recipients", "date", "time", "datetime", "amount",
        "currency", "sku", "phone", "account", "iban", "status",
    }
)  # fmt: skip
_WS = re.compile(r"\s+")
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
_URL = re.compile(r"[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)
_PATHLIKE = re.compile(r"(?:[~.]?/|[A-Za-z]:\\)\S*")
_ENUM_WORD = re.compile(r"[^\W\d_]+(?:[ _-][^\W\d_]+){0,3}")
_WORD = re.compile("[^\\W\\d_]+(?:['\u2019-][^\\W\\d_]+)*")
_PUNCT = "\"'\u201c\u201d\u2018\u2019()[]{}.,;:!?\u00bf\u00a1\u2026-"


def normalize_text(text: str) -> str:
    """NFC, trimmed, with every run of inner whitespace collapsed to one space."""
    return _WS.sub(" ", unicodedata.normalize("NFC", text)).strip()


def canonical_json(value: Any) -> str:
    """Compact, key-sorted JSON: the one text form hashes are taken of."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def stable_hash(text: str) -> str:
    """A 128-bit hex digest of ``text``."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def is_prose(text: str) -> bool:
    """Whether a normalised string reads as natural language rather than a value."""
    tokens = text.split(" ")
    if len(tokens) < 4 or _URL.match(text) or _PATHLIKE.match(text):
        return False
    words = sum(1 for t in tokens if _WORD.fullmatch(t.strip(_PUNCT)))
    return words * 2 >= len(tokens) + 1


def _is_enum_like(text: str) -> bool:
    if not _ENUM_WORD.fullmatch(text):
        return False
    # Mixed case inside a word ("aGVsbG8", "camelCase") marks an identifier: keep its case.
    return all(w.islower() or w.isupper() or w.istitle() for w in re.split(r"[ _-]", text))


def has_layout(text: str) -> bool:
    """Whether whitespace inside ``text`` carries meaning: indented lines, or a path."""
    stripped = text.strip()
    if "\n" in stripped:
        lines = stripped.splitlines()[1:]
        return any(line[:1] in (" ", "\t") for line in lines if line.strip())
    return bool(_PATHLIKE.match(stripped))


def _name_kind(name: str | None) -> bool | None:
    """True for a prose field name, False for a value field name, None when unsure."""
    # "email_body" and "messageText" hold prose as surely as "body" and "text".
    if name is None:
        return None
    last = re.split(r"[_\-. ]", re.sub(r"([a-z])([A-Z])", r"\1_\2", name))[-1].lower()
    if last in PROSE_FIELD_NAMES:
        return True
    if last in VALUE_FIELD_NAMES:
        return False
    return None


def _exact_string(text: str) -> str:
    if _EMAIL.fullmatch(text) or _is_enum_like(text):
        return text.lower()
    return text


def _check_string(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput("strings must be valid Unicode (no unpaired surrogates)") from None


def _matches(paths: tuple[str, ...], pattern_path: str, name: str | None) -> bool:
    return pattern_path in paths or (name is not None and name in paths)


@dataclass
class _Walk:
    policy: ToolPolicy
    volatile_names: frozenset[str]
    exact: list[tuple[str, str]] = field(default_factory=list)
    semantic: list[SemanticLeaf] = field(default_factory=list)

    def is_volatile(self, pattern_path: str, name: str) -> bool:
        return name.lower() in self.volatile_names or pattern_path in self.policy.volatile_fields

    def walk(
        self, value: Any, path: str, pattern: str, name: str | None, depth: int, sem: bool | None
    ) -> tuple[Any, Any]:
        """Return (canonical value, skeleton value) for one node."""
        if depth > MAX_DEPTH:
            raise InvalidInput(f"args nest deeper than {MAX_DEPTH} levels")
        policy = self.policy
        if _matches(policy.semantic_fields, pattern, name):
            sem = True
        elif _matches(policy.exact_fields, pattern, name):
            sem = False
        if isinstance(value, dict):
            return self._walk_dict(value, path, pattern, depth, sem)
        if isinstance(value, list):
            items = [
                self.walk(v, f"{path}[{i}]", f"{pattern}[]", name, depth + 1, sem)
                for i, v in enumerate(value)
            ]
            if _matches(policy.unordered_fields, pattern, name):
                items.sort(key=lambda pair: canonical_json(pair[0]))
            return [c for c, _ in items], [s for _, s in items]
        if isinstance(value, str):
            return self._walk_string(value, path, name, sem)
        canonical: Any = _scalar(value)
        self.exact.append((path, canonical_json(canonical)))
        return canonical, canonical

    def _walk_dict(
        self, value: dict[Any, Any], path: str, pattern: str, depth: int, sem: bool | None
    ) -> tuple[Any, Any]:
        canonical: dict[str, Any] = {}
        skeleton: dict[str, Any] = {}
        for raw_key in sorted(value, key=str):
            if not isinstance(raw_key, str):
                raise InvalidInput("object keys must be strings")
            _check_string(raw_key)
            key = unicodedata.normalize("NFC", raw_key)
            child_pattern = f"{pattern}.{key}" if pattern else key
            if self.is_volatile(child_pattern, key):
                continue
            if key in canonical:
                raise InvalidInput(f"keys collide after Unicode normalisation: {key!r}")
            child_path = f"{path}.{key}" if path else key
            canonical[key], skeleton[key] = self.walk(
                value[raw_key], child_path, child_pattern, key, depth + 1, sem
            )
        return canonical, skeleton

    def _walk_string(
        self, value: str, path: str, name: str | None, sem: bool | None
    ) -> tuple[Any, Any]:
        _check_string(value)
        raw = unicodedata.normalize("NFC", value)
        layout = has_layout(raw)
        text = normalize_text(raw)
        if sem is None:
            by_name = _name_kind(name)
            # Indented multi-line text (code, YAML) and paths are values, whatever the name.
            sem = False if layout else is_prose(text) if by_name is None else by_name
        if sem and text:
            self.semantic.append(SemanticLeaf(path, text))
            if len(text) > LONG_TEXT_CHARS:
                # The model reads only the first ~256 tokens: the end is compared on its own.
                self.semantic.append(SemanticLeaf(f"{path}#end", text[-LONG_TEXT_CHARS:]))
            return text, {"~text": list(critical_tokens(text))}
        # Whitespace is part of the value in code, file contents and paths.
        exact = raw.strip() if layout else _exact_string(text)
        self.exact.append((path, canonical_json(exact)))
        return exact, exact


def validate_json(value: Any, what: str, depth: int = 1) -> None:
    """Reject what the ledger could not store and return: deep nesting, NaN, bad Unicode."""
    if depth > MAX_DEPTH:
        raise InvalidInput(f"{what} nests deeper than {MAX_DEPTH} levels")
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidInput(f"{what}: object keys must be strings")
            _check_string(key)
            validate_json(item, what, depth + 1)
    elif isinstance(value, list):
        for item in value:
            validate_json(item, what, depth + 1)
    elif isinstance(value, str):
        _check_string(value)
    elif isinstance(value, float) and not math.isfinite(value):
        raise InvalidInput(f"{what}: numbers must be finite (no NaN or Infinity)")
    elif value is not None and not isinstance(value, bool | int | float):
        raise InvalidInput(f"{what}: unsupported value of type {type(value).__name__}")


def _scalar(value: Any) -> Any:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidInput("numbers must be finite (no NaN or Infinity)")
        # 1200.0 and 1200 are the same amount; beyond 2**53 floats are not exact integers.
        if value.is_integer() and abs(value) <= 2**53:
            return int(value)
        return value
    raise InvalidInput(f"unsupported value of type {type(value).__name__}")


def canonicalize(args: dict[str, Any], policy: ToolPolicy) -> CanonicalCall:
    """The canonical form of ``args`` under ``policy``."""
    if not isinstance(args, dict):
        raise InvalidInput("args must be a JSON object")
    volatile = DEFAULT_VOLATILE_FIELDS | {
        v.lower() for v in policy.volatile_fields if "." not in v and "[" not in v
    }
    walk = _Walk(policy, volatile)
    canonical, skeleton = walk.walk(args, "", "", None, 1, None)
    args_json = canonical_json(canonical)
    if policy.mode is CompareMode.WHOLE:
        # What semantic caches do: the whole call is one text and nothing is compared exactly.
        return CanonicalCall(
            args=canonical,
            args_json=args_json,
            args_hash=stable_hash(args_json),
            exact_signature=stable_hash("whole"),
            exact_leaves=(),
            semantic_leaves=(SemanticLeaf("$", args_json),) if canonical else (),
        )
    return CanonicalCall(
        args=canonical,
        args_json=args_json,
        args_hash=stable_hash(args_json),
        exact_signature=stable_hash(canonical_json(skeleton)),
        exact_leaves=tuple(walk.exact),
        semantic_leaves=tuple(walk.semantic),
    )


def intent_key(
    scope: str, tool: str, canonical: CanonicalCall, run_id: str | None, step: str | None
) -> str:
    """The key of an intent: scope, tool and canonical args, plus run and step when given."""
    parts = [scope, tool, canonical.args_hash]
    if run_id is not None or step is not None:
        parts.append(f"{run_id or ''}:{step or ''}")
    return "ik_" + stable_hash(canonical_json(parts))
