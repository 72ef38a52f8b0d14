"""Per-tool dedup policies and the TOML file they come from."""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from tooldedup.dedup.errors import InvalidInput
from tooldedup.dedup.records import JudgeMode, SideEffect

__all__ = [
    "BorderlineAction",
    "CompareMode",
    "CosineBand",
    "Enforcement",
    "PolicySet",
    "ToolPolicy",
    "UnsureAction",
    "cosine_band",
    "load_policy_file",
    "policy_from_mapping",
    "policy_to_mapping",
]


class BorderlineAction(StrEnum):
    """What a borderline semantic match becomes when no judge decides."""

    DUPLICATE = "duplicate"
    PROCEED = "proceed"
    # Ask the caller's agent (callers that handle ``ask``; others get ``unsure_action``).
    ASK = "ask"


class UnsureAction(StrEnum):
    """What a caller that does not handle ``ask`` gets where the agent would be asked."""

    PROCEED = "proceed"
    DUPLICATE = "duplicate"
    JUDGE = "judge"


class Enforcement(StrEnum):
    """Whether answers are enforced, or every check proceeds and the would-be answer is
    only recorded (to label and calibrate before enforcing)."""

    ENFORCE = "enforce"
    OBSERVE = "observe"


class CompareMode(StrEnum):
    """Whether to compare field by field or embed the whole call as semantic caches do."""

    FIELDS = "fields"
    WHOLE = "whole"


class CosineBand(StrEnum):
    """Where a cosine falls against a policy's thresholds."""

    DUPLICATE = "duplicate"
    BORDERLINE = "borderline"
    # Under the borderline band: a duplicate only when the verifier confirms it.
    CONFIRMABLE = "confirmable"
    BELOW = "below"


def cosine_band(
    cosine: float,
    *,
    min_cosine_duplicate: float,
    min_cosine_borderline: float,
    min_cosine_confirmed: float | None = None,
) -> CosineBand:
    """Classify a cosine: the one rule the funnel and calibration share."""
    if cosine >= min_cosine_duplicate:
        return CosineBand.DUPLICATE
    if cosine >= min_cosine_borderline:
        return CosineBand.BORDERLINE
    if min_cosine_confirmed is not None and cosine >= min_cosine_confirmed:
        return CosineBand.CONFIRMABLE
    return CosineBand.BELOW


_PATH_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.[]$:@")


def _check_paths(name: str, paths: tuple[str, ...]) -> None:
    for path in paths:
        if not isinstance(path, str) or not path or len(path) > 256:
            raise InvalidInput(f"{name}: each path must be a non-empty string of <= 256 chars")
        if not set(path) <= _PATH_CHARS or ".." in path or path.startswith("."):
            raise InvalidInput(f"{name}: {path!r} is not a path like 'body' or 'items[].sku'")


def _check_range(name: str, value: float, low: float, high: float) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise InvalidInput(f"{name} must be a number")
    if not low <= value <= high:
        raise InvalidInput(f"{name} must be in [{low}, {high}], got {value}")


@dataclass(frozen=True, slots=True)
class ToolPolicy:
    """How one tool's calls are canonicalised and matched."""

    side_effect: SideEffect = SideEffect.WRITE
    exact_fields: tuple[str, ...] = ()
    semantic_fields: tuple[str, ...] = ()
    volatile_fields: tuple[str, ...] = ()
    unordered_fields: tuple[str, ...] = ()
    min_fuzzy_ratio: float = 97.0
    max_fuzzy_edits: int = 10
    min_cosine_duplicate: float = 0.90
    min_cosine_borderline: float = 0.85
    # Under the borderline band and down to here, a match is a duplicate only when the
    # verifier confirms it (the rules see only rewordings, or the pair model reads the same
    # request at ``min_logit_confirm``) and no negation came or went. At or above
    # ``min_cosine_borderline`` the band is empty, as by default (1.0): the pair model
    # confirms reworded reversals too readily for it to be on by default.
    min_cosine_confirmed: float = 1.0
    window_seconds: float = 86_400.0
    lease_seconds: float = 300.0
    borderline_action: BorderlineAction = BorderlineAction.DUPLICATE
    mode: CompareMode = CompareMode.FIELDS
    max_candidates: int = 1000
    judge_mode: JudgeMode = JudgeMode.OFF
    # The pair model reads every fuzzy or semantic match the rules let through, both texts
    # together: it keeps apart most reworded different requests the rules miss, for about
    # 5 ms a read. Off by default, as it does not fit the latency of 0.1 (docs/benchmarks.md).
    pair_model: bool = False
    # The per-check budget: each free-text leaf costs one model call (about 1.5 ms), and
    # each (leaf, candidate) pair one comparison.
    max_text_leaves: int = 64
    max_text_chars: int = 65_536
    max_comparisons: int = 20_000
    unsure_action: UnsureAction = UnsureAction.PROCEED
    enforcement: Enforcement = Enforcement.ENFORCE
    # How long an ``ask``'s confirm token stays good.
    ask_ttl_seconds: float = 600.0
    # Whether duplicate, in-progress and ask answers carry a note for the model.
    model_notes: bool = True
    # Also ask (callers that handle it) about a semantic match the verifier did not
    # confirm but only did not object to; other callers still get ``duplicate``.
    ask_unconfirmed: bool = False

    def __post_init__(self) -> None:
        _check_range("min_fuzzy_ratio", self.min_fuzzy_ratio, 0.0, 100.0)
        _check_range("min_cosine_duplicate", self.min_cosine_duplicate, -1.0, 1.0)
        _check_range("min_cosine_borderline", self.min_cosine_borderline, -1.0, 1.0)
        if self.min_cosine_borderline > self.min_cosine_duplicate:
            raise InvalidInput("min_cosine_borderline must not exceed min_cosine_duplicate")
        _check_range("min_cosine_confirmed", self.min_cosine_confirmed, -1.0, 1.0)
        _check_range("window_seconds", self.window_seconds, 1e-3, 10 * 365 * 86_400.0)
        _check_range("lease_seconds", self.lease_seconds, 1e-3, 7 * 86_400.0)
        _check_range("max_candidates", self.max_candidates, 1, 100_000)
        _check_range("max_fuzzy_edits", self.max_fuzzy_edits, 0, 100_000)
        _check_range("max_text_leaves", self.max_text_leaves, 0, 10_000)
        _check_range("max_text_chars", self.max_text_chars, 0, 1 << 20)
        _check_range("max_comparisons", self.max_comparisons, 1, 10_000_000)
        _check_range("ask_ttl_seconds", self.ask_ttl_seconds, 1.0, 86_400.0)
        for name in sorted(_BOOL_FIELDS):
            if not isinstance(getattr(self, name), bool):
                raise InvalidInput(f"{name} must be true or false")
        for name in ("exact_fields", "semantic_fields", "volatile_fields", "unordered_fields"):
            _check_paths(name, getattr(self, name))
        both = set(self.exact_fields) & set(self.semantic_fields)
        if both:
            raise InvalidInput(f"fields cannot be both exact and semantic: {sorted(both)}")

    def candidate_limit(self, text_leaves: int) -> int:
        """How many candidates a check with ``text_leaves`` free-text leaves may compare."""
        return max(1, min(self.max_candidates, self.max_comparisons // max(1, text_leaves)))

    def band(self, cosine: float) -> CosineBand:
        """Where ``cosine`` falls against this policy's thresholds."""
        return cosine_band(
            cosine,
            min_cosine_duplicate=self.min_cosine_duplicate,
            min_cosine_borderline=self.min_cosine_borderline,
            min_cosine_confirmed=self.min_cosine_confirmed,
        )

    def matches_at(self, cosine: float) -> bool:
        """Whether a semantic match at ``cosine`` is answered as the same intent, no judge."""
        band = self.band(cosine)
        if band is CosineBand.BORDERLINE:
            return self.borderline_action is BorderlineAction.DUPLICATE
        return band is CosineBand.DUPLICATE


_TUPLE_FIELDS = ("exact_fields", "semantic_fields", "volatile_fields", "unordered_fields")
_ENUM_FIELDS: dict[str, type[StrEnum]] = {
    "side_effect": SideEffect,
    "borderline_action": BorderlineAction,
    "mode": CompareMode,
    "judge_mode": JudgeMode,
    "unsure_action": UnsureAction,
    "enforcement": Enforcement,
}
_BOOL_FIELDS = frozenset({"pair_model", "model_notes", "ask_unconfirmed"})
_FIELD_NAMES = frozenset(f.name for f in fields(ToolPolicy))
_INT_FIELDS = frozenset(
    {"max_candidates", "max_fuzzy_edits", "max_text_leaves", "max_text_chars", "max_comparisons"}
)


def policy_from_mapping(data: Mapping[str, Any], base: ToolPolicy | None = None) -> ToolPolicy:
    """Build a policy from plain data, filling unspecified settings from ``base``."""
    unknown = set(data) - _FIELD_NAMES
    if unknown:
        raise InvalidInput(f"unknown policy settings: {sorted(unknown)}")
    values: dict[str, Any] = {}
    for key, value in data.items():
        if key in _TUPLE_FIELDS:
            if not isinstance(value, list | tuple):
                raise InvalidInput(f"{key} must be a list of paths")
            values[key] = tuple(value)
        elif key in _ENUM_FIELDS:
            enum = _ENUM_FIELDS[key]
            try:
                values[key] = enum(value)
            except ValueError:
                allowed = ", ".join(m.value for m in enum)
                raise InvalidInput(f"{key} must be one of: {allowed}") from None
        elif key in _BOOL_FIELDS:
            if not isinstance(value, bool):
                raise InvalidInput(f"{key} must be true or false")
            values[key] = value
        elif key in _INT_FIELDS:
            if isinstance(value, bool) or not isinstance(value, int):
                raise InvalidInput(f"{key} must be an integer")
            values[key] = value
        else:
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise InvalidInput(f"{key} must be a number")
            values[key] = float(value)
    return replace(base or ToolPolicy(), **values)


def policy_to_mapping(policy: ToolPolicy) -> dict[str, Any]:
    """Plain data for a policy, suitable for JSON or TOML."""
    data = asdict(policy)
    for key in _TUPLE_FIELDS:
        data[key] = list(data[key])
    for key in _ENUM_FIELDS:
        data[key] = str(data[key])
    return data


@dataclass(frozen=True, slots=True)
class PolicySet:
    """Default settings plus per-tool overrides."""

    defaults: ToolPolicy = field(default_factory=ToolPolicy)
    tools: Mapping[str, ToolPolicy] = field(default_factory=dict)

    @classmethod
    def build(cls, defaults: ToolPolicy, tools: Mapping[str, Mapping[str, Any]]) -> PolicySet:
        """Defaults plus per-tool overrides; each tool inherits what it does not override."""
        return cls(
            defaults, {name: policy_from_mapping(data, defaults) for name, data in tools.items()}
        )

    def for_tool(self, tool: str) -> ToolPolicy:
        """The policy for ``tool``; unknown tools get the defaults (write)."""
        return self.tools.get(tool, self.defaults)

    def with_tool(self, tool: str, policy: ToolPolicy) -> PolicySet:
        """A copy with ``tool``'s policy replaced."""
        return PolicySet(self.defaults, {**self.tools, tool: policy})


def load_policy_file(path: Path) -> tuple[ToolPolicy, dict[str, dict[str, Any]]]:
    """Read a policy TOML: ``[defaults]`` and ``[tools.<name>]`` tables.

    Returns the defaults and each tool's raw overrides, so that a tool inherits
    any default the file does not override for it.
    """
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InvalidInput(f"cannot read policy file {path}: {exc}") from None
    unknown = set(data) - {"defaults", "tools"}
    if unknown:
        raise InvalidInput(f"unknown top-level tables in {path}: {sorted(unknown)}")
    defaults = policy_from_mapping(data.get("defaults", {}))
    tools = data.get("tools", {})
    if not isinstance(tools, dict) or not all(isinstance(v, dict) for v in tools.values()):
        raise InvalidInput("[tools.<name>] entries must be tables")
    for _name, overrides in tools.items():
        policy_from_mapping(overrides, defaults)
    return defaults, dict(tools)
