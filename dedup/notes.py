"""Notes for the model: one short paragraph on what it already did and how to go on.

Deterministic (the same call, record and clock give the same words), bounded in length
whatever the args hold, and showing nothing beyond a few short values the agent itself
wrote or the tool returned; keys that name a secret are never shown.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from datetime import UTC, datetime
from itertools import islice
from typing import Any

from tooldedup.dedup.records import CallRecord, CallStatus, DecisionKind, FailureClass

__all__ = ["MAX_NOTE_CHARS", "ask_note", "repeat_note"]

MAX_NOTE_CHARS = 800
_MAX_VALUE_CHARS = 60
_MAX_SHOWN = 2
# Whether a field's name names a secret: the language pack's reading, handed in.
Secret = Callable[[str], bool]

_ENDINGS = {
    DecisionKind.DUPLICATE: "It was not run again; use that result instead of calling it again.",
    DecisionKind.IN_PROGRESS: (
        "It was not started again; wait for it to finish instead of calling it again."
    ),
    DecisionKind.RECONCILE: (
        "It was not run again; find out whether it took effect before trying again."
    ),
}


def repeat_note(
    tool: str, earlier: CallRecord, kind: DecisionKind, now: float, secret: Secret
) -> str:
    """What a ``duplicate``, ``in_progress`` or ``reconcile`` answer tells the model."""
    ending = _ENDINGS.get(kind, "It was not run again.")
    return _bounded(f"{_already(tool, earlier, now, secret)} {ending}")


def ask_note(
    tool: str,
    earlier: CallRecord,
    now: float,
    confirm_token: str | None,
    secret: Secret,
    differing: tuple[str, ...] = (),
) -> str:
    """What an ``ask`` tells the model: the earlier call, and how to confirm this one."""
    differs = ""
    if differing:
        shown = ", ".join(_clip(path, 40) for path in differing[:3])
        differs = f" (it differs in {shown})"
    how = "send the same call again, confirmed"
    if confirm_token is not None:
        how = f'send the same call again with confirm_token "{confirm_token}"'
    ask = (
        f"This call may be the same request again{differs}, so it has not run. If you do"
        f" mean to do it again, {how}; if not, do not call it again."
    )
    # The token is never cut off: the paragraph before it is.
    already = _already(tool, earlier, now, secret)
    return f"{_bounded(already, MAX_NOTE_CHARS - len(ask) - 1)} {ask}"


def _already(tool: str, earlier: CallRecord, now: float, secret: Secret) -> str:
    shown = _shown(earlier.sent_args, secret)
    what = f"{_clip(tool, 80)}({shown})" if shown else _clip(tool, 80)
    return (
        f"You already called {what} at {_when(earlier.created_at, now)}; {_how(earlier, secret)}."
    )


def _how(record: CallRecord, secret: Secret) -> str:
    if record.status is CallStatus.PENDING:
        return "it is still running"
    if record.status is CallStatus.SUCCEEDED:
        shown = _shown(_readable(record.result), secret)
        return f"it succeeded with {shown}" if shown else "it succeeded"
    if record.status is CallStatus.FAILED and record.failure_class is FailureClass.POISON:
        shown = _shown(record.error, secret)
        return f"it failed for good ({shown})" if shown else "it failed for good"
    if record.status is CallStatus.FAILED and record.failure_class is FailureClass.RETRYABLE:
        return "it failed and may be tried again"
    return "whether it took effect is not known"


def _readable(result: Any) -> Any:
    """A stored result as the model last read it: its ``content`` text (an MCP result's
    first text block), else the result with its flags left out (they say little)."""
    if not isinstance(result, dict):
        return result
    content = result.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        if texts and isinstance(texts[0], str):
            return texts[0]
    return {key: value for key, value in result.items() if not isinstance(value, bool)}


def _shown(value: Any, secret: Secret) -> str:
    """A few short values: ``key="value"`` for an object's scalar fields, or the value."""
    if isinstance(value, dict):
        picked = (
            f"{_scalar_key(str(key))}={_scalar(item)}"
            for key, item in value.items()
            if _is_scalar(item) and not secret(str(key)) and len(str(item)) <= _MAX_VALUE_CHARS
        )
        # The first few only: a call of ten thousand fields costs no more than one of two.
        return ", ".join(islice(picked, _MAX_SHOWN))
    if _is_scalar(value) and value is not None:
        return _scalar(value)
    return ""


def _scalar_key(key: str) -> str:
    clipped = _clip(key, 40)
    plain = clipped.isidentifier() or clipped.replace("-", "_").isidentifier()
    return clipped if plain else json.dumps(clipped)


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        # JSON quoting escapes newlines and control characters.
        text = json.dumps(_clip(value, _MAX_VALUE_CHARS), ensure_ascii=False)
        # A lone surrogate cannot be sent as UTF-8: such a value is shown escaped.
        return text if text.isprintable() and _encodes(text) else json.dumps(value[:40])
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return json.dumps(value)


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _bounded(text: str, limit: int = MAX_NOTE_CHARS) -> str:
    return _clip(text, max(1, limit))


def _when(ts: float, now: float) -> str:
    at = datetime.fromtimestamp(ts, UTC)
    same_day = at.date() == datetime.fromtimestamp(now, UTC).date()
    clock = at.strftime("%H:%M UTC") if same_day else at.strftime("%Y-%m-%d %H:%M UTC")
    return f"{clock} ({_ago(max(0.0, now - ts))})"


def _ago(seconds: float) -> str:
    for size, unit in ((86_400, "day"), (3600, "hour"), (60, "minute"), (1, "second")):
        if seconds >= size:
            n = int(seconds // size)
            return f"{n} {unit}{'' if n == 1 else 's'} ago"
    return "just now"
