"""Confirm tokens of ``ask`` answers: made at the ask, checked and spent at the confirmation.

A token is a capability: the ledger keeps only its hash. It is bound to the tenant, scope,
session, tool and args of the call asked about, single-use and short-lived.
"""

from __future__ import annotations

import hashlib
import logging
import re
import secrets
from collections.abc import Callable

from tooldedup.dedup.canonical import sent_hash, window_field
from tooldedup.dedup.errors import ConfirmTokenRejected, InvalidInput
from tooldedup.dedup.funnel import Proposal, leaf_texts
from tooldedup.dedup.ledger.base import AskRecord, Ledger
from tooldedup.dedup.notes import ask_note, repeat_note
from tooldedup.dedup.policy import BorderlineAction, ToolPolicy
from tooldedup.dedup.records import CallRecord, Decision, DecisionKind, Match, Scope, ToolCall

__all__ = [
    "CONFIRM_TOKEN_PATTERN",
    "AskBook",
    "ask_notes",
    "bound_hashes",
    "differing_fields",
    "model_note",
    "token_hash",
]

logger = logging.getLogger(__name__)

CONFIRM_TOKEN_PATTERN = r"^cfm_[0-9a-f]{40}$"
_TOKEN = re.compile(CONFIRM_TOKEN_PATTERN)


def token_hash(token: str) -> str:
    """What the ledger stores of a token."""
    return hashlib.sha256(token.encode("ascii")).hexdigest()


class AskBook:
    """Hands out confirm tokens and accepts each once, for the call it was made for."""

    def __init__(self, ledger: Ledger) -> None:
        self._ledger = ledger

    def make(
        self,
        call: ToolCall,
        scope: Scope,
        hashes: tuple[str, str],
        check_id: str,
        match: Match,
        now: float,
        ttl_seconds: float,
    ) -> tuple[str, AskRecord]:
        """A new ask for ``call``: its token, and the record to store (with the check's log
        line, in one write).

        ``hashes`` are the call's canonical args hash and the hash of its args as sent.
        """
        token = "cfm_" + secrets.token_hex(20)
        expires_at = now + ttl_seconds
        return (
            token,
            AskRecord(
                token_hash=token_hash(token),
                check_id=check_id,
                tenant=scope.tenant,
                scope=scope.name,
                session_id=call.session_id,
                tool=call.tool,
                args_hash=hashes[0],
                sent_hash=hashes[1],
                matched_call_id=match.call.call_id,
                created_at=now,
                expires_at=expires_at,
            ),
        )

    def accept(
        self, call: ToolCall, scope: Scope, hashes: tuple[str, str], now: float
    ) -> AskRecord:
        """The ask ``call.confirm_token`` answers, if the token may confirm ``call`` now.

        Raises ``InvalidInput`` for a token that is not one at all, and
        ``ConfirmTokenRejected`` for one that is unknown (or another tenant's), used,
        expired, or made for another session, scope, tool or args. It is not spent here:
        ``spend`` does that with the claim, so a check that claims nothing keeps it.
        """
        token = call.confirm_token
        if token is None or not _TOKEN.fullmatch(token):
            raise InvalidInput("confirm_token is not a token an ask handed out (cfm_ + 40 hex)")
        ask = self._ledger.find_ask(scope.tenant, token_hash(token))
        if ask is None:
            raise ConfirmTokenRejected("no ask handed out this confirm_token", "unknown")
        if ask.used_at is not None:
            raise ConfirmTokenRejected(
                f"this confirm_token was already used (by check {ask.used_by})", "used"
            )
        if now >= ask.expires_at:
            raise ConfirmTokenRejected(
                "this confirm_token has expired: send the call without it to be asked again",
                "expired",
            )
        if (ask.session_id, ask.scope) != (call.session_id, scope.name):
            raise ConfirmTokenRejected(
                "this confirm_token was handed out to another session", "mismatch"
            )
        if ask.tool != call.tool or (ask.args_hash != hashes[0] and ask.sent_hash != hashes[1]):
            raise ConfirmTokenRejected(
                "this confirm_token was handed out for another tool or other args", "mismatch"
            )
        return ask

    def spend(self, hashed: str, check_id: str, now: float) -> None:
        """Mark the token (by hash) used by ``check_id``; raise if another check spent it
        first."""
        if not self._ledger.use_ask(hashed, check_id, now):
            raise ConfirmTokenRejected("this confirm_token was already used", "used")

    def give_back(self, hashed: str, check_id: str) -> None:
        """Unspend a token whose claim was not stored: its retry may confirm again. Best
        effort: a store that cannot take this write did not take the claim either."""
        try:
            self._ledger.unuse_ask(hashed, check_id)
        except Exception:
            logger.warning("could not give back confirm token of %s", check_id, exc_info=True)


def bound_hashes(proposal: Proposal) -> tuple[str, str]:
    """What a confirm token is bound to: the canonical args, and the args as sent."""
    return proposal.canonical.args_hash, sent_hash(proposal.call.args)


def ask_notes(match: Match, policy: ToolPolicy) -> tuple[str, ...]:
    """Why the caller is asked, for ``explain``."""
    if match.hold is not None:
        return (f"the verifier could not account for a change ({match.hold}): the caller is asked",)
    if match.borderline and policy.borderline_action is BorderlineAction.ASK:
        return ("borderline semantic match: policy action is ask",)
    return ("the verifier did not confirm this match (ask_unconfirmed): the caller is asked",)


def differing_fields(proposal: Proposal, earlier: CallRecord) -> tuple[str, ...]:
    """The fields whose values differ from the earlier call's (a long text's windows as
    its one field)."""
    theirs = leaf_texts(earlier)
    paths = {
        window_field(leaf.path)
        for leaf in proposal.canonical.semantic_leaves
        if theirs.get(leaf.path) != leaf.text
    }
    exact = dict(earlier.exact_leaves)
    paths |= {path for path, value in proposal.canonical.exact_leaves if exact.get(path) != value}
    return tuple(sorted(paths))


def model_note(
    proposal: Proposal, decision: Decision, now: float, secret: Callable[[str], bool]
) -> str | None:
    """The note for the model, where its answer has one and the policy wants it."""
    match, tool = decision.match, proposal.call.tool
    if match is None:
        return None
    if decision.kind is DecisionKind.ASK:
        token = None if decision.ask is None else decision.ask.confirm_token
        differing = differing_fields(proposal, match.call)
        return ask_note(tool, match.call, now, token, secret, differing)
    if decision.kind is DecisionKind.PROCEED or not proposal.policy.model_notes:
        return None
    return repeat_note(tool, match.call, decision.kind, now, secret)
