"""Policies: validation ranges, zero as a real value, the TOML file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tooldedup.dedup.errors import InvalidInput
from tooldedup.dedup.policy import (
    BorderlineAction,
    CompareMode,
    CosineBand,
    PolicySet,
    ToolPolicy,
    load_policy_file,
    policy_from_mapping,
    policy_to_mapping,
)
from tooldedup.dedup.records import SideEffect


@pytest.mark.parametrize(
    ("data", "ok"),
    [
        ({"min_cosine_duplicate": 1.0, "min_cosine_borderline": 1.0}, True),
        ({"min_cosine_duplicate": -1.0, "min_cosine_borderline": -1.0}, True),
        ({"min_cosine_duplicate": 0, "min_cosine_borderline": 0}, True),
        ({"min_cosine_duplicate": 1.01}, False),
        ({"min_cosine_borderline": -1.01}, False),
        ({"min_cosine_duplicate": 0.5}, False),  # below the default borderline 0.85
        ({"min_fuzzy_ratio": 0}, True),
        ({"min_fuzzy_ratio": 100}, True),
        ({"min_fuzzy_ratio": 100.5}, False),
        ({"window_seconds": 0}, False),
        ({"lease_seconds": -1}, False),
        ({"max_candidates": 0}, False),
        ({"max_candidates": 1.5}, False),
        ({"min_cosine_duplicate": True}, False),
        ({"min_cosine_duplicate": "0.9"}, False),
        ({"side_effect": "read"}, True),
        ({"side_effect": "nope"}, False),
        ({"mode": "whole"}, True),
        ({"exact_fields": "body"}, False),
        ({"exact_fields": ["items[].sku", "message.text"]}, True),
        ({"exact_fields": [""]}, False),
        ({"exact_fields": ["a..b"]}, False),
        # Attempt noise a tool keeps: MCP's metadata, a retry counter.
        ({"exact_fields": ["_meta", "retryCount"]}, True),
        ({"exact_fields": [".attempt"]}, False),
        ({"unknown": 1}, False),
    ],
)
def test_validation(data: dict[str, Any], ok: bool) -> None:
    if ok:
        policy_from_mapping(data)
    else:
        with pytest.raises(InvalidInput):
            policy_from_mapping(data)


def test_zero_threshold_is_kept() -> None:
    policy = policy_from_mapping({"min_cosine_duplicate": 0.0, "min_cosine_borderline": 0.0})
    assert policy.min_cosine_duplicate == 0.0
    base = ToolPolicy(min_cosine_duplicate=0.95, min_cosine_borderline=0.0)
    assert policy_from_mapping({}, base).min_cosine_borderline == 0.0


def test_mapping_roundtrip() -> None:
    policy = ToolPolicy(
        side_effect=SideEffect.IRREVERSIBLE,
        semantic_fields=("body",),
        borderline_action=BorderlineAction.PROCEED,
        mode=CompareMode.WHOLE,
    )
    assert policy_from_mapping(policy_to_mapping(policy)) == policy


def test_unknown_tools_get_defaults() -> None:
    policies = PolicySet(ToolPolicy(), {"search": ToolPolicy(side_effect=SideEffect.READ)})
    assert policies.for_tool("search").side_effect is SideEffect.READ
    assert policies.for_tool("anything").side_effect is SideEffect.WRITE


def test_policy_file(tmp_path: Path) -> None:
    path = tmp_path / "policy.toml"
    path.write_text(
        "[defaults]\nwindow_seconds = 3600\n\n"
        '[tools.send_email]\nside_effect = "irreversible"\nsemantic_fields = ["body"]\n'
    )
    defaults, tools = load_policy_file(path)
    assert defaults.window_seconds == 3600
    email = policy_from_mapping(tools["send_email"], defaults)
    assert email.window_seconds == 3600
    assert email.semantic_fields == ("body",)


@pytest.mark.parametrize(
    "text",
    [
        "[defaults\n",
        "[other]\nx = 1\n",
        "tools = 3\n",
        "[defaults]\nmin_cosine_duplicate = 7\n",
        '[tools.a]\nmode = "sideways"\n',
    ],
)
def test_bad_policy_files(tmp_path: Path, text: str) -> None:
    path = tmp_path / "policy.toml"
    path.write_text(text)
    with pytest.raises(InvalidInput):
        load_policy_file(path)


@pytest.mark.parametrize(
    ("cosine", "band", "matches_if_duplicate_action", "matches_if_proceed_action"),
    [
        (0.95, CosineBand.DUPLICATE, True, True),
        (0.90, CosineBand.DUPLICATE, True, True),
        (0.8999, CosineBand.BORDERLINE, True, False),
        (0.85, CosineBand.BORDERLINE, True, False),
        (0.8499, CosineBand.BELOW, False, False),
        (-1.0, CosineBand.BELOW, False, False),
    ],
)
def test_one_rule_classifies_a_cosine(
    cosine: float,
    band: CosineBand,
    matches_if_duplicate_action: bool,
    matches_if_proceed_action: bool,
) -> None:
    duplicate = ToolPolicy()
    proceed = ToolPolicy(borderline_action=BorderlineAction.PROCEED)
    assert duplicate.band(cosine) is band
    assert duplicate.matches_at(cosine) is matches_if_duplicate_action
    assert proceed.matches_at(cosine) is matches_if_proceed_action


@pytest.mark.parametrize(
    ("cosine", "band"),
    [
        (0.90, CosineBand.DUPLICATE),
        (0.85, CosineBand.BORDERLINE),
        (0.8499, CosineBand.CONFIRMABLE),
        (0.75, CosineBand.CONFIRMABLE),
        (0.7499, CosineBand.BELOW),
    ],
)
def test_a_confirmed_floor_under_the_borderline_band(cosine: float, band: CosineBand) -> None:
    policy = ToolPolicy(min_cosine_confirmed=0.75)
    assert policy.band(cosine) is band
    # Unconfirmed, nothing under the borderline band matches.
    assert policy.matches_at(cosine) is (band in (CosineBand.DUPLICATE, CosineBand.BORDERLINE))
    # At or above the borderline floor, the band is empty.
    assert ToolPolicy(min_cosine_confirmed=0.9).band(0.8) is CosineBand.BELOW


def test_zero_is_a_real_threshold() -> None:
    policy = ToolPolicy(min_cosine_duplicate=0.0, min_cosine_borderline=0.0)
    assert policy.band(0.0) is CosineBand.DUPLICATE
    assert policy.band(-0.01) is CosineBand.BELOW
