"""The canonical form of release 0.1, kept to find the calls 0.1 stored while they are live.

0.1 folded the case of every enum-like value and dropped ``nonce`` and timestamps outright;
it stored only that canonical form. A retry that reaches 0.2 still carries the agent's own
spelling ("IT"), so the new canonical form ("IT", case kept) cannot find the stored "it".
The service therefore also looks up, among rows 0.1 wrote, the hash 0.1 would have made.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from tooldedup.dedup.canonical import (
    MAX_DEPTH,
    canonical_json,
    has_layout,
    is_email,
    is_enum_like,
    is_prose,
    normalize_text,
    scalar,
    stable_hash,
)
from tooldedup.dedup.english.fields import name_kind
from tooldedup.dedup.errors import InvalidInput
from tooldedup.dedup.policy import CompareMode, ToolPolicy

__all__ = ["legacy_args_hash"]

_VOLATILE = frozenset(
    {
        "request_id", "trace_id", "span_id", "correlation_id", "nonce", "timestamp",
        "client_ts", "client_timestamp", "idempotency_key", "tool_call_id",
    }
)  # fmt: skip


class _Dropped(Exception):
    """0.1 would drop a field that this release keeps: 0.1's hash would merge two intents."""


def legacy_args_hash(args: dict[str, Any], policy: ToolPolicy, kept: dict[str, Any]) -> str | None:
    """The canonical args hash 0.1 stored for ``args``, or None where it must not be used.

    ``kept`` is this release's canonical form of the same args: where 0.1 would drop a field
    that it keeps (a ``nonce``, a scheduled ``timestamp``), the two releases disagree about
    the intent, and no 0.1 row may stand for this call.
    """
    if policy.mode is CompareMode.WHOLE or not isinstance(args, dict):
        return None
    volatile = _VOLATILE | {v.lower() for v in policy.volatile_fields if "." not in v}
    try:
        return stable_hash(canonical_json(_walk(args, "", None, 1, None, policy, volatile, kept)))
    except (InvalidInput, UnicodeError, _Dropped):
        return None


def _matches(paths: tuple[str, ...], pattern: str, name: str | None) -> bool:
    return pattern in paths or (name is not None and name in paths)


def _walk(
    value: Any,
    pattern: str,
    name: str | None,
    depth: int,
    sem: bool | None,
    policy: ToolPolicy,
    volatile: frozenset[str],
    kept: Any,
) -> Any:
    if depth > MAX_DEPTH:
        raise InvalidInput("too deep")
    if _matches(policy.semantic_fields, pattern, name):
        sem = True
    elif _matches(policy.exact_fields, pattern, name):
        sem = False
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        kept_dict = kept if isinstance(kept, dict) else {}
        for raw_key in sorted(value, key=str):
            key = unicodedata.normalize("NFC", str(raw_key))
            child = f"{pattern}.{key}" if pattern else key
            if key.lower() in volatile or child in policy.volatile_fields:
                if key in kept_dict:
                    raise _Dropped(key)
                continue
            out[key] = _walk(
                value[raw_key], child, key, depth + 1, sem, policy, volatile, kept_dict.get(key)
            )
        return out
    if isinstance(value, list):
        kept_list = kept if isinstance(kept, list) else []
        items = [
            _walk(v, f"{pattern}[]", name, depth + 1, sem, policy, volatile, _at(kept_list, i))
            for i, v in enumerate(value)
        ]
        if _matches(policy.unordered_fields, pattern, name):
            items.sort(key=canonical_json)
        return items
    if isinstance(value, str):
        raw = unicodedata.normalize("NFC", value)
        layout = has_layout(raw)
        text = normalize_text(raw)
        if sem is None:
            by_name = name_kind(name)
            sem = False if layout else is_prose(text) if by_name is None else by_name
        if sem:
            return text
        if layout:
            return raw.strip()
        return text.lower() if is_email(text) or is_enum_like(text) else text
    return scalar(value)


def _at(items: list[Any], index: int) -> Any:
    return items[index] if index < len(items) else None
