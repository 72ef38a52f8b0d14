from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from tests.helpers import canonicalize
from tooldedup.dedup.canonical import sent_hash
from tooldedup.dedup.funnel import Proposal
from tooldedup.dedup.policy import ToolPolicy
from tooldedup.dedup.records import ToolCall

POLICY = ToolPolicy()


def _proposal(args: dict[str, Any]) -> Proposal:
    call = ToolCall(session_id="s1", tool="send_email", args=args)
    return Proposal(call, canonicalize(args, POLICY, tool="send_email"), POLICY)


@pytest.mark.parametrize(
    "args",
    [
        {"to": "bob@example.com", "body": "Hi Bob, the report is attached."},
        {"b": 1, "a": [1.5, None, True]},
        {"note": "naïve café ✓", "n": 10**30},
        {},
    ],
)
def test_a_proposal_hashes_its_args_as_sent(args: dict[str, Any]) -> None:
    proposal = _proposal(args)
    assert proposal.sent_hash == sent_hash(args)
    # Read again, the same.
    assert proposal.sent_hash == sent_hash(args)


def test_a_replaced_proposal_hashes_its_own_args() -> None:
    first = _proposal({"to": "bob@example.com", "body": "one"})
    assert first.sent_hash == sent_hash(first.call.args)
    other = {"to": "bob@example.com", "body": "two"}
    second = replace(first, call=replace(first.call, args=other))
    assert second.sent_hash == sent_hash(other) != first.sent_hash
    assert first == _proposal({"to": "bob@example.com", "body": "one"})
