"""Canonical form of tool-call arguments.

Two calls whose canonical forms are equal are the same call. The walk sorts keys,
normalises strings and numbers, strips attempt identifiers and attempt stamps, and splits
the leaves into *exact* leaves (ids, amounts, dates, recipients, commands, categories:
compared for equality) and *semantic* leaves (free text: compared by meaning). The exact
signature hashes the exact leaves plus the critical tokens found inside free text, so a call
whose critical arguments differ can never be a candidate match. A long free text is several
semantic leaves, one per window; a free text the reader does not read (another script,
unknown tokens, another language, too long) is an exact leaf, with the reason kept.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from tooldedup.dedup.errors import InvalidInput
from tooldedup.dedup.paths import pinned
from tooldedup.dedup.policy import CompareMode, ToolPolicy
from tooldedup.dedup.protocols import LanguagePack, TextReader
from tooldedup.dedup.records import (
    DEFAULT_TENANT,
    CanonicalCall,
    FieldReading,
    Scope,
    SemanticLeaf,
    ValueKind,
)

__all__ = [
    "MAX_DEPTH",
    "MAX_TEXT_CHARS",
    "MAX_WINDOWS",
    "PROTOCOL_META_FIELD",
    "WINDOW_WORDS",
    "Canonicalizer",
    "canonical_json",
    "has_layout",
    "intent_key",
    "is_email",
    "is_enum_like",
    "is_prose",
    "key_path",
    "normalize_text",
    "scalar",
    "sent_hash",
    "stable_hash",
    "text_windows",
    "too_long",
    "validate_json",
    "window_field",
]

MAX_DEPTH = 32
# A long text is compared window by window, every window by meaning: the model reads 256
# tokens, and 120 words of English are about 160 of them. A text of more windows than
# MAX_WINDOWS (or more characters than they hold) is not read: it is compared exactly.
WINDOW_WORDS = 120
MAX_WINDOWS = 8
MAX_TEXT_CHARS = MAX_WINDOWS * 1500
# Reserved by the MCP specification for protocol metadata (a progress token, a trace context)
# at the top level of a tool call's arguments: never a tool's own argument.
PROTOCOL_META_FIELD = "_meta"
_WS = re.compile(r"\s+")
# Keys that can stand in a dotted path as they are; any other key is quoted, so that
# {"a": {"b": 1}} and {"a.b": 1} never share a path.
_PLAIN_KEY = re.compile(r"[A-Za-z0-9_$@:-]+")
# Invisible format characters (zero-width space and joiners, BOM, soft hyphen) say nothing.
_INVISIBLE = re.compile("[\u00ad\u180e\u200b-\u200f\u2060-\u2064\ufeff]")
# Unambiguous (no run can be split two ways), so a hostile value cannot make it backtrack.
_EMAIL = re.compile(r"[^@\s]+@[^@\s.]+(?:\.[^@\s.]+)+")
_MAX_EMAIL = 254
_URL = re.compile(r"[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)
_PATHLIKE = re.compile(r"(?:[~.]?/|[A-Za-z]:\\)\S*")
_ENUM_WORD = re.compile(r"[^\W\d_]+(?:[ _-][^\W\d_]+){0,3}")
_WORD = re.compile("[^\\W\\d_]+(?:['\u2019-][^\\W\\d_]+)*")
_PUNCT = "\"'\u201c\u201d\u2018\u2019()[]{}.,;:!?\u00bf\u00a1\u2026-"
# A word that ends a sentence: a window ends after one where it can.
_SENTENCE_END = re.compile("[.!?\u2026][\"'\u201d\u2019)\\]]*$")
_WINDOW = re.compile(r"#w\d+$")


def normalize_text(text: str) -> str:
    """NFC, trimmed, with every run of inner whitespace collapsed to one space."""
    return _WS.sub(" ", unicodedata.normalize("NFC", text)).strip()


def key_path(path: str, key: str) -> str:
    """The path of ``key`` under ``path``: ``a.b`` for plain keys, ``a["b.c"]`` otherwise."""
    if _PLAIN_KEY.fullmatch(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


# Built once: ``json.dumps`` with any setting not its default builds an encoder per call, which
# cost more than encoding a small call's args (a check encodes eight or so).
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_json(value: Any) -> str:
    """Compact, key-sorted JSON: the one text form hashes are taken of."""
    return _CANONICAL.encode(value)


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


def is_email(text: str) -> bool:
    """Whether a string is one email address."""
    return len(text) <= _MAX_EMAIL and _EMAIL.fullmatch(text) is not None


def is_enum_like(text: str) -> bool:
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


def _exact_string(text: str, reading: FieldReading) -> str:
    """Case is kept in ids, names, files, branches and secrets; only categories fold it."""
    if reading.secret:
        return text
    if is_email(text):
        return text.lower()
    # A unit keeps its case: "Mg" (megagram) is not "mg".
    if reading.category and is_enum_like(text) and reading.value_kind is not ValueKind.UNIT:
        return text.lower()
    return text


def _code_text(raw: str) -> str:
    """A command or query as written: case kept, and whitespace too where it can matter.

    Indented or multi-line text and paths keep every character. A one-line command has
    its runs of whitespace collapsed outside quotes, as a shell or SQL parser would read
    them; an unclosed quote keeps the rest as written. One linear pass, whatever the input.
    """
    stripped = raw.strip()
    if "\n" in stripped or has_layout(stripped):
        return stripped
    out: list[str] = []
    quote: str | None = None
    escaped = False
    for char in stripped:
        if quote is not None:
            out.append(char)
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = None
        elif char.isspace():
            if out and out[-1] != " ":
                out.append(" ")
        else:
            out.append(char)
            if char in "\"'":
                quote = char
    return "".join(out)


def _check_string(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput("strings must be valid Unicode (no unpaired surrogates)") from None


def _matches(paths: tuple[str, ...], pattern_path: str, name: str | None) -> bool:
    return pattern_path in paths or (name is not None and name in paths)


@dataclass
class _Walk:
    pack: LanguagePack
    policy: ToolPolicy
    volatile_names: frozenset[str]
    received_at: float | None
    exact: list[tuple[str, str]] = field(default_factory=list)
    semantic: list[SemanticLeaf] = field(default_factory=list)
    # Says which free texts the model and the rules read; without one, every text is read.
    reader: TextReader | None = None
    unread: list[tuple[str, str]] = field(default_factory=list)
    tool: str | None = None
    # The arguments as sent, and whether they hold a leaf that is not attempt noise (worked
    # out when a field of attempt noise first asks).
    root: Any = None
    substance: bool | None = None

    def is_volatile(self, pattern_path: str, name: str, value: Any) -> bool:
        policy = self.policy
        # What the policy names as compared is never dropped, whatever the defaults say.
        if _matches(policy.exact_fields, pattern_path, name) or _matches(
            policy.semantic_fields, pattern_path, name
        ):
            return False
        if self._always_dropped(pattern_path, name):
            return True
        if not self._attempt_noise(name, value):
            return False
        # An attempt id, stamp or retry counter beside nothing else is what the call is
        # about ({"trace_id": ...} to delete_trace): it is dropped only beside an argument.
        if self.substance is None:
            self.substance = self._has_substance(self.root, "", 1)
        return self.substance

    def _always_dropped(self, pattern_path: str, name: str) -> bool:
        """The policy's volatile fields, and MCP's protocol metadata."""
        return (
            name.lower() in self.volatile_names
            or pattern_path in self.policy.volatile_fields
            or pattern_path == PROTOCOL_META_FIELD
        )

    def _attempt_noise(self, name: str, value: Any) -> bool:
        """An attempt's own label, count or stamp, unless the tool's name names it: the
        request of ``approve_request`` is its target."""
        return self.pack.attempt_noise(name, value, self.received_at, self.tool)

    def _has_substance(self, value: Any, pattern: str, depth: int) -> bool:
        """Whether ``value`` holds a leaf that no rule drops: an argument of the call."""
        if depth > MAX_DEPTH:
            return True  # the walk refuses it
        if isinstance(value, list):
            return any(self._has_substance(v, f"{pattern}[]", depth + 1) for v in value)
        if not isinstance(value, dict):
            return True
        policy = self.policy
        for raw_key, item in value.items():
            if not isinstance(raw_key, str):
                return True  # the walk refuses it
            key = _INVISIBLE.sub("", unicodedata.normalize("NFKC", raw_key))
            child = key_path(pattern, key)
            kept = _matches(policy.exact_fields, child, key) or _matches(
                policy.semantic_fields, child, key
            )
            noise = self._always_dropped(child, key) or self._attempt_noise(key, item)
            if (kept or not noise) and self._has_substance(item, child, depth + 1):
                return True
        return False

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
            skeleton = [s for _, s in items]
            # A set of tags in another order meets its first order as a candidate; the
            # funnel then tests the pair (dedup/english/lists.py), with the tool's name.
            if (
                self.pack.field(name).unordered
                and not path.endswith("]")
                and all(isinstance(s, str) for s in skeleton)
                and not pinned(f"{pattern}[]", policy.exact_fields)
            ):
                skeleton.sort()
            return [c for c, _ in items], skeleton
        if isinstance(value, str):
            by_policy = pinned(pattern, policy.exact_fields)
            return self._walk_string(value, path, name, sem, by_policy)
        canonical: Any = scalar(value)
        self.exact.append((path, canonical_json(canonical)))
        return canonical, canonical

    def _read(self, text: str) -> tuple[list[str], str | None]:
        """The windows of a free text, and why it is not read (None when it is)."""
        reason = too_long(text)
        if reason is not None:
            return [], reason
        windows = text_windows(text)
        if self.reader is not None:
            for i, window in enumerate(windows):
                reason = self.reader.unread(window)
                if reason is not None:
                    where = f" (window {i + 1} of {len(windows)})" if len(windows) > 1 else ""
                    return windows, reason + where
        return windows, None

    def _walk_dict(
        self, value: dict[Any, Any], path: str, pattern: str, depth: int, sem: bool | None
    ) -> tuple[Any, Any]:
        canonical: dict[str, Any] = {}
        skeleton: dict[str, Any] = {}
        for raw_key in sorted(value, key=str):
            if not isinstance(raw_key, str):
                raise InvalidInput("object keys must be strings")
            _check_string(raw_key)
            key = _INVISIBLE.sub("", unicodedata.normalize("NFKC", raw_key))
            child_pattern = key_path(pattern, key)
            if self.is_volatile(child_pattern, key, value[raw_key]):
                continue
            if key in canonical:
                raise InvalidInput(f"keys collide after Unicode normalisation: {key!r}")
            child_path = key_path(path, key)
            canonical[key], skeleton[key] = self.walk(
                value[raw_key], child_path, child_pattern, key, depth + 1, sem
            )
        return canonical, skeleton

    def _walk_string(
        self, value: str, path: str, name: str | None, sem: bool | None, by_policy: bool
    ) -> tuple[Any, Any]:
        _check_string(value)
        # As written, for commands, files and secrets: "x²" is not "x2" in a file name.
        raw = unicodedata.normalize("NFC", value)
        # Elsewhere compatibility forms (fullwidth digits, ligatures) compare as their plain
        # forms, and invisible format characters say nothing.
        text = normalize_text(_INVISIBLE.sub("", unicodedata.normalize("NFKC", value)))
        # Code, commands, queries, JSON and paths keep their whitespace and case, and are
        # never compared by meaning, unless the policy names the field as free text.
        reading = self.pack.field(name)
        code = sem is not True and (
            has_layout(raw) or reading.code or self.pack.reads_as_code(text)
        )
        kind = reading.value_kind
        if code:
            sem = False
        elif sem is None:
            # A place, a date or a unit is a value however many words it has ("New York
            # City, NY").
            by_name = False if kind is not None else reading.prose
            sem = is_prose(text) if by_name is None else by_name
        if sem and text:
            # A date, time or amount written another way is the same fact: one spelling.
            text = self.pack.normalize_facts(text)
            windows, reason = self._read(text)
            if reason is None:
                if len(windows) == 1:
                    self.semantic.append(SemanticLeaf(path, text))
                else:
                    # Every window is a leaf of its own, and every one must match.
                    self.semantic.extend(
                        SemanticLeaf(f"{path}#w{i}", window) for i, window in enumerate(windows)
                    )
                return text, {"~text": list(self.pack.critical_tokens(text))}
            # Not read, so compared exactly (in its canonical form: NFKC, whitespace), and
            # the text itself is in the signature: only the same text is ever a candidate.
            self.unread.append((path, reason))
            self.exact.append((path, canonical_json(text)))
            return text, {"~unread": text}
        if code:
            exact = _code_text(raw)
        elif reading.secret or reading.path:
            exact = raw.strip()
        else:
            exact = _exact_string(text, reading)
        self.exact.append((path, canonical_json(exact)))
        # The signature holds what two spellings of one value share ("Seattle" for
        # "Seattle, WA", "louvre" for "Louvre Museum"), so that they meet as candidates;
        # the funnel then tests the pair.
        if by_policy:
            return exact, exact
        if kind is None or code:
            return exact, self.pack.label_key(name, exact)
        return exact, self.pack.value_key(kind, exact)


def too_long(text: str) -> str | None:
    """Why a normalised free text is too long to be read by windows, or None."""
    if len(text) > MAX_TEXT_CHARS:
        return (
            f"longer than {MAX_WINDOWS} windows: {len(text):,} characters, the windows hold"
            f" {MAX_TEXT_CHARS:,}"
        )
    words = text.count(" ") + 1
    # Windows end at a sentence end in their second half, so a text of fewer words than
    # MAX_WINDOWS full windows can still need more of them.
    if words > MAX_WINDOWS * WINDOW_WORDS or len(_cuts(text.split(" "))) + 1 > MAX_WINDOWS:
        return f"longer than {MAX_WINDOWS} windows of up to {WINDOW_WORDS} words: {words} words"
    return None


def text_windows(text: str) -> list[str]:
    """A normalised free text cut into windows of at most ``WINDOW_WORDS`` words, at a
    sentence end where one falls in a window's second half; a short text is one window.

    The windows cover every word once, in order. A change early in a long text changes an
    early window, which must match as surely as the others.
    """
    words = text.split(" ")
    if len(words) <= WINDOW_WORDS:
        return [text]
    starts = [0, *_cuts(words)]
    ends = [*starts[1:], len(words)]
    return [" ".join(words[start:end]) for start, end in zip(starts, ends, strict=True)]


def _cuts(words: list[str]) -> list[int]:
    """Where windows of ``words`` start, after the first (one pass, whatever the input)."""
    cuts: list[int] = []
    start = 0
    while len(words) - start > WINDOW_WORDS:
        end = start + WINDOW_WORDS
        for i in range(end - 1, start + WINDOW_WORDS // 2 - 1, -1):
            if _SENTENCE_END.search(words[i]):
                end = i + 1
                break
        cuts.append(end)
        start = end
    return cuts


def window_field(path: str) -> str:
    """The path of the field a leaf belongs to: ``body`` for the window ``body#w2``."""
    # Most paths are no window's: the test for "#" is cheaper than the regex.
    return _WINDOW.sub("", path) if "#" in path else path


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


def scalar(value: Any) -> Any:
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


class Canonicalizer:
    """Makes the canonical form of a call's arguments, reading words through a language pack."""

    def __init__(self, pack: LanguagePack, reader: TextReader | None = None) -> None:
        self._pack = pack
        # Which free texts are read; without a reader, every free text is.
        self._reader = reader

    @property
    def pack(self) -> LanguagePack:
        """The language pack that reads field names and free text."""
        return self._pack

    @property
    def reader(self) -> TextReader | None:
        """What says which free texts are compared by meaning (None: all of them)."""
        return self._reader

    def canonicalize(
        self,
        args: dict[str, Any],
        policy: ToolPolicy,
        *,
        received_at: float | None = None,
        tool: str | None = None,
    ) -> CanonicalCall:
        """The canonical form of ``args`` under ``policy``.

        ``received_at`` (seconds since 1970) is when the check arrived: a timestamp-like
        field within a small tolerance of it is the attempt's own stamp and is dropped.
        Without it, every timestamp is an argument. ``tool`` is the tool's name: an attempt
        id it names (``request_id`` to ``approve_request``) is the call's target, compared
        exactly. A free text the reader does not read is compared exactly, and the reason is
        listed in ``unread``.
        """
        if not isinstance(args, dict):
            raise InvalidInput("args must be a JSON object")
        volatile = frozenset(v.lower() for v in policy.volatile_fields if _PLAIN_KEY.fullmatch(v))
        walk = _Walk(
            self._pack, policy, volatile, received_at, tool=tool, root=args, reader=self._reader
        )
        canonical, skeleton = walk.walk(args, "", "", None, 1, None)
        args_json = canonical_json(canonical)
        if policy.mode is CompareMode.WHOLE:
            # What semantic caches do: the whole call is one text, nothing compared exactly.
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
            unread=tuple(walk.unread),
        )


def sent_hash(args: dict[str, Any]) -> str:
    """The hash of arguments exactly as sent (keys sorted): a byte-for-byte replay has it."""
    return stable_hash(canonical_json(args))


def intent_key(
    scope: Scope, tool: str, canonical: CanonicalCall, run_id: str | None, step: str | None
) -> str:
    """The key of an intent: tenant, scope, tool and canonical args, plus run and step when
    given. The default tenant's keys are those of a store from before tenants: a claim
    stored then still holds its intent."""
    where: str | list[str] = scope.name
    if scope.tenant != DEFAULT_TENANT:
        # A list, never a joined string: no scope name can spell another tenant's key.
        where = [scope.tenant, scope.name]
    parts: list[str | list[str] | None] = [where, tool, canonical.args_hash]
    if run_id is not None or step is not None:
        # Two elements, never one joined string: ("r:1", "2") is not ("r", "1:2").
        parts += [run_id, step]
    return "ik_" + stable_hash(canonical_json(parts))
