"""What a field holds, by its name and its value: attempt ids and stamps, code, categories.

These rules decide how the canonical walk treats a leaf when the tool's policy does not say:
- an attempt identifier (a request or trace id) or a retry counter is dropped, because every
  retry gets a new one, unless it is the call's substance: the tool's name names it
  (``delete_trace`` and ``trace_id``), or it is all the call has;
- MCP's ``_meta`` at the top level of the arguments is protocol metadata, always dropped;
- a timestamp-like field is dropped only when its value is the moment of the attempt itself;
- a command, query, code or JSON string is compared exactly, never by meaning;
- only a category value (a status, a priority, a currency code) has its case folded.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from typing import Any

__all__ = [
    "ATTEMPT_ID_FIELDS",
    "ATTEMPT_STAMP_FIELDS",
    "ATTEMPT_STAMP_TOLERANCE_SECONDS",
    "CATEGORY_FIELD_NAMES",
    "CODE_FIELD_NAMES",
    "PROSE_FIELD_NAMES",
    "RETRY_NOISE_FIELDS",
    "SECRET_FIELD_NAMES",
    "VALUE_FIELD_NAMES",
    "is_attempt_id_name",
    "is_attempt_label_name",
    "is_attempt_noise",
    "is_attempt_stamp",
    "is_category_name",
    "is_code_name",
    "is_path_name",
    "is_secret_name",
    "last_word",
    "name_kind",
    "name_words",
    "reads_as_code",
    "tool_names_field",
]

# Names compare without case or separators: "requestId", "request-id" and "REQUEST_ID" agree.
ATTEMPT_ID_FIELDS: frozenset[str] = frozenset(
    {
        "requestid", "traceid", "spanid", "parentspanid", "correlationid", "idempotencykey",
        "toolcallid", "attemptid", "messageuuid", "xrequestid", "traceparent",
    }
)  # fmt: skip
# How many times the call was tried: a retry counts one more.
RETRY_NOISE_FIELDS: frozenset[str] = frozenset(
    {"retrycount", "retry", "retries", "attempt", "attemptnumber"}
)
ATTEMPT_STAMP_FIELDS: frozenset[str] = frozenset(
    {
        "timestamp", "ts", "clientts", "clienttimestamp", "clienttime", "requesttime",
        "requesttimestamp", "requestedat", "sentat", "senttime", "issuedat", "iat", "now",
    }
)  # fmt: skip
# A stamp within two minutes of the moment the check arrives is the attempt's own clock
# reading: synchronised hosts differ by milliseconds, and a client stamps a call just before
# it sends it. Two minutes still leaves any real scheduled time (a meeting, a reminder, a
# transfer date) an exact field, unless it is scheduled for this very minute.
ATTEMPT_STAMP_TOLERANCE_SECONDS = 120.0
CODE_FIELD_NAMES: frozenset[str] = frozenset(
    {
        "cmd", "command", "commands", "query", "queries", "sql", "script", "code", "expression",
        "expr", "pattern", "regex", "regexp", "selector", "xpath", "jsonpath", "jq", "shell",
        "bash", "snippet", "program", "formula", "cron", "glob",
    }
)  # fmt: skip
CATEGORY_FIELD_NAMES: frozenset[str] = frozenset(
    {
        "status", "state", "priority", "severity", "level", "type", "kind", "category",
        "currency", "mode", "method", "visibility", "role", "tier", "plan", "unit", "units",
        "format", "sort", "direction", "language", "lang", "gender", "color", "colour", "size",
        "urgency", "importance", "stage", "phase", "frequency", "interval", "environment", "env",
    }
)  # fmt: skip

SECRET_FIELD_NAMES: frozenset[str] = frozenset(
    {
        "password", "passwd", "passphrase", "secret", "token", "key", "pin", "otp", "totp",
        "credential", "credentials", "salt", "signature", "hash", "cookie", "auth",
        "authorization", "bearer", "apikey",
    }
)  # fmt: skip

_PATH_WORDS = frozenset(
    {"path", "paths", "file", "files", "filename", "filepath", "dir", "directory", "folder",
     "branch", "ref", "tag", "url", "uri"}
)  # fmt: skip

_SPLIT = re.compile(r"[_\-. ]+")
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")


def _squash(name: str) -> str:
    return _SPLIT.sub("", name).lower()


def name_words(name: str) -> list[str]:
    """The words of a field name, lower case: "startDate" and "start_date" are start, date."""
    return [w for w in _SPLIT.split(_CAMEL.sub(r"\1_\2", name).lower()) if w]


def last_word(name: str) -> str:
    """The last word of a field name: "email_body", "messageText" and "body" all end in "body"."""
    return _SPLIT.split(_CAMEL.sub(r"\1_\2", name))[-1].lower()


def is_attempt_id_name(name: str) -> bool:
    """Whether ``name`` holds an identifier of one attempt (a retry gets a fresh one)."""
    return _squash(name) in ATTEMPT_ID_FIELDS


def is_attempt_label_name(name: str) -> bool:
    """Whether ``name`` holds an attempt id or a retry counter, whatever its value."""
    return is_attempt_id_name(name) or _squash(name) in RETRY_NOISE_FIELDS


def is_attempt_noise(name: str, value: Any, received_at: float | None) -> bool:
    """Whether ``name`` holds what changes from one attempt of a call to the next: an attempt
    id, a retry counter, or a stamp of the attempt's own moment (see ``is_attempt_stamp``)."""
    return is_attempt_label_name(name) or is_attempt_stamp(name, value, received_at)


# The last words that say a field holds an identifier or a count of something, not what:
# "request_id" identifies a request, "attempt_number" counts attempts.
_ID_SUFFIXES = frozenset({"id", "ids", "uuid", "guid", "key", "number", "count"})
_TOOL_SPLIT = re.compile(r"[^a-z0-9]+")
_ACRONYM = re.compile(r"([A-Z]+)([A-Z][a-z])")


def _singular(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _words(name: str) -> list[str]:
    """Lower-case singular words of a name, split at any separator and at camelCase."""
    spaced = _CAMEL.sub(r"\1_\2", _ACRONYM.sub(r"\1_\2", name)).lower()
    return [_singular(w) for w in _TOOL_SPLIT.split(spaced) if w]


def tool_names_field(tool: str | None, name: str) -> bool:
    """Whether the tool's name names what field ``name`` identifies: then it is the action's
    target, not an attempt's label (``approve_request`` and ``request_id``, ``retry_tool_call``
    and ``tool_call_id``, ``configure_retries`` and ``retries``).

    The field's words without an id suffix (``id``, ``uuid``, ``key``, ``number``...) must all
    be among the tool name's words, split at ``_ - . /`` and camelCase, in singular form.
    """
    if not tool:
        return False
    words = _words(name)
    while words and words[-1] in _ID_SUFFIXES:
        words.pop()
    return bool(words) and set(words) <= set(_words(tool))


def is_code_name(name: str | None) -> bool:
    """Whether ``name`` holds a command, query, code or pattern."""
    return name is not None and (last_word(name) in CODE_FIELD_NAMES or _squash(name) == "sql")


def is_path_name(name: str | None) -> bool:
    """Whether ``name`` holds a file, path, branch or ref, compared exactly as sent."""
    return name is not None and last_word(name) in _PATH_WORDS


def is_secret_name(name: str | None) -> bool:
    """Whether ``name`` holds a secret, compared exactly as sent (case, every character)."""
    return name is not None and last_word(name) in SECRET_FIELD_NAMES


def is_category_name(name: str | None) -> bool:
    """Whether ``name`` holds a category, whose values compare without case."""
    return name is not None and last_word(name) in CATEGORY_FIELD_NAMES


def _epoch_seconds(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    if isinstance(value, str):
        text = value.strip()
        try:
            number = float(text)
        except ValueError:
            return None
    else:
        number = float(value)
    if not math.isfinite(number) or number <= 0:
        return None
    # Seconds, milliseconds or microseconds since 1970, told apart by magnitude.
    for scale in (1.0, 1e3, 1e6):
        seconds = number / scale
        if 1e9 <= seconds < 1e10:
            return seconds
    return None


def _iso(text: str) -> dt.datetime | None:
    if not 10 <= len(text) <= 40 or not text[:4].isdigit():
        return None
    try:
        return dt.datetime.fromisoformat(text)
    except ValueError:
        return None


def _near(seconds: float, received_at: float) -> bool:
    return abs(seconds - received_at) <= ATTEMPT_STAMP_TOLERANCE_SECONDS


def _local_clock(moment: dt.datetime, received_at: float) -> bool:
    """A time without a zone is read as UTC. Guessing the zone would drop real scheduled
    times a whole number of hours from now; a byte-for-byte replay of a local-time stamp is
    still found, by the hash of what was sent."""
    return _near(moment.replace(tzinfo=dt.UTC).timestamp(), received_at)


def is_attempt_stamp(name: str, value: Any, received_at: float | None) -> bool:
    """Whether a timestamp-like field holds the attempt's own clock reading, to be dropped.

    Only a value within ``ATTEMPT_STAMP_TOLERANCE_SECONDS`` of the check's arrival counts
    (for a time without a zone, of the arrival on any zone's clock); any other time (a
    meeting, a due date) is an argument like any other.
    """
    if received_at is None or _squash(name) not in ATTEMPT_STAMP_FIELDS:
        return False
    if isinstance(value, str) and (moment := _iso(value.strip())) is not None:
        if moment.tzinfo is not None:
            return _near(moment.timestamp(), received_at)
        return _local_clock(moment, received_at)
    seconds = _epoch_seconds(value)
    return seconds is not None and _near(seconds, received_at)


_SHELL_WORDS = frozenset(
    """kubectl git docker podman rm rmdir ls cp mv mkdir chmod chown chgrp sudo su curl wget ssh
    scp rsync tar zip unzip grep egrep sed awk find cat echo printf kill pkill killall
    systemctl service journalctl psql mysql sqlite3 mongo mongosh redis-cli npm npx yarn pnpm
    pip pip3 python python3 node deno make cmake bash sh zsh fish aws gcloud az terraform
    helm ansible apt apt-get yum dnf brew go cargo rustc java javac mvn gradle dd mkfs mount
    umount shutdown reboot crontab touch ln head tail openssl export cd ping nc iptables ufw
    uv poetry pytest ffmpeg gsutil az oc eksctl vault consul nomad heroku flyctl""".split()
)
_STOP_WORDS = frozenset(
    """the a an to for of is are was be please and with my your our that this it me you we
    i can could would should will if when then so do does did have has had been about""".split()
)
_SHELL_SYNTAX = re.compile(r"(?:^|\s)--?[A-Za-z]|[|;`]|&&|\$\(|\$\{|(?:^|\s)[<>]{1,2}\s*\S")
_SQL_START = re.compile(
    r"^\s*(?:select|insert|update|delete|create|drop|alter|truncate|grant|revoke|merge|with|"
    r"upsert|replace|explain)\b",
    re.IGNORECASE,
)
_SQL_SHAPE = re.compile(
    r"^\s*(?:select\b.+\bfrom\b|insert\s+into\b|update\s+\S+\s+set\b|delete\s+from\b|"
    r"(?:create|drop|alter|truncate)\s+(?:table|index|view|database|schema|user|role|"
    r"function|trigger|sequence|extension|type)\b|grant\b|revoke\b|merge\s+into\b|"
    r"with\s+\w+\s+as\s*\(|explain\b)",
    re.IGNORECASE | re.DOTALL,
)
_SQL_MARKS = re.compile(r"[=*;'\"()]|\bwhere\b|\bjoin\b|\bgroup\s+by\b|\border\s+by\b", re.I)
_CODE = re.compile(
    r"\b(?:def|function|fn|func|lambda|class)\s+\w+\s*[(:]"
    r"|(?<!\w)\w+\([^()\n]*\)\s*(?:;|\{|=>)"
    r"|=>|==|!=|&&|\|\||::"
    r"|^\s*(?:import\s+[\w.{*]|from\s+[\w.]+\s+import\b|#include\b|package\s+\w)"
    r"|\b(?:const|let|var)\s+\w+\s*="
    r"|\$\{|\$\(",
    re.MULTILINE,
)


def _reads_as_json(text: str) -> bool:
    if text[:1] not in "{[" or text[-1:] not in "}]":
        return False
    try:
        return isinstance(json.loads(text), dict | list)
    except ValueError:
        return False


def _reads_as_shell(text: str) -> bool:
    tokens = text.split()
    if len(tokens) < 2:
        return False
    first = tokens[0].lstrip("$").strip() or (tokens[1] if tokens[0] == "$" else "")
    if first.rsplit("/", 1)[-1] not in _SHELL_WORDS:
        return False
    # "make sure the report is attached" starts with a command name too; prose has
    # articles and pronouns, a command line has flags, pipes or none of those words.
    words = {t.lower().strip(".,!?") for t in tokens[1:]}
    return bool(_SHELL_SYNTAX.search(text)) or not words & _STOP_WORDS


def _reads_as_sql(text: str) -> bool:
    if not _SQL_START.match(text) or not _SQL_SHAPE.match(text):
        return False
    keyword = text.split(None, 1)[0]
    return keyword.isupper() or bool(_SQL_MARKS.search(text))


def reads_as_code(text: str) -> bool:
    """Whether a string reads as a shell command, SQL, code or JSON, whatever its field name."""
    stripped = text.strip()
    if not stripped:
        return False
    return (
        _reads_as_json(stripped)
        or _reads_as_sql(stripped)
        or _reads_as_shell(stripped)
        or bool(_CODE.search(stripped))
    )


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


def name_kind(name: str | None) -> bool | None:
    """True for a prose field name, False for a value field name, None when unsure."""
    # "email_body" and "messageText" hold prose as surely as "body" and "text".
    if name is None:
        return None
    last = last_word(name)
    if last in PROSE_FIELD_NAMES:
        return True
    if last in VALUE_FIELD_NAMES:
        return False
    return None
