"""Confirm tokens of ``ask`` answers: made at the ask, checked and spent at the confirmation.

A token is stateless and signed, so that an ask writes nothing but its log line:

    cfm_ <check id: 32> <expiry: 8> <args MAC: 16> <sent MAC: 16> <token MAC: 16>

in lowercase hex: the ask's check id without ``chk_``, its expiry in seconds since the
epoch, and three HMAC-SHA256 tags keyed with the store's secret, each cut to 64 bits. All
three cover the tenant, scope, session, tool, check id and expiry. The args MAC adds the
call's canonical args hash, the sent MAC the hash of its args as sent: a confirmation is
bound if either verifies, as either finds the call. The token MAC adds the other two, so
no digit of a token can change, not even one of the MAC that did not have to verify.

The confirmation that claims records the token spent under the ask's check id, where a
second spender loses.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from tooldedup.dedup.canonical import canonical_json, stable_hash, window_field
from tooldedup.dedup.errors import ConfirmTokenRejected, InvalidInput
from tooldedup.dedup.funnel import Proposal, leaf_texts
from tooldedup.dedup.ledger.base import Ledger, SpentToken
from tooldedup.dedup.notes import ask_note, repeat_note
from tooldedup.dedup.policy import BorderlineAction, ToolPolicy
from tooldedup.dedup.records import (
    AskTicket,
    CallRecord,
    Decision,
    DecisionKind,
    Match,
    Scope,
    ToolCall,
)

__all__ = [
    "CONFIRM_TOKEN_PATTERN",
    "AskBook",
    "ask_notes",
    "bound_hashes",
    "differing_fields",
    "model_note",
]

logger = logging.getLogger(__name__)

CONFIRM_TOKEN_PATTERN = r"^cfm_[0-9a-f]{88}$"
_TOKEN = re.compile(CONFIRM_TOKEN_PATTERN)
# A token of the development builds that kept each in an asks table: refused as unknown, so
# that the caller checks again without it and is asked again.
_STORED_TOKEN = re.compile(r"^cfm_[0-9a-f]{40}$")
_CHECK_ID = re.compile(r"^chk_[0-9a-f]{32}$")
_CHECK_DIGITS, _EXPIRY_DIGITS, _MAC_DIGITS = 32, 8, 16
_VERSION = "cfm1"


@dataclass(frozen=True, slots=True)
class _Token:
    """A well-formed token's fields (none of them verified yet)."""

    check_id: str
    expires_at: int
    args_mac: str
    sent_mac: str
    token_mac: str

    @classmethod
    def read(cls, token: str) -> _Token:
        """The fields of a token that matches the pattern."""
        at = 4 + _CHECK_DIGITS + _EXPIRY_DIGITS
        macs = [token[at + n * _MAC_DIGITS : at + (n + 1) * _MAC_DIGITS] for n in range(3)]
        return cls(
            "chk_" + token[4 : 4 + _CHECK_DIGITS],
            int(token[4 + _CHECK_DIGITS : at], 16),
            *macs,
        )

    def text(self) -> str:
        """The token, written out."""
        return (
            f"cfm_{self.check_id[4:]}{self.expires_at:0{_EXPIRY_DIGITS}x}"
            f"{self.args_mac}{self.sent_mac}{self.token_mac}"
        )


class AskBook:
    """Hands out confirm tokens and accepts each once, for the call it was made for."""

    def __init__(self, ledger: Ledger, key: bytes) -> None:
        if len(key) < 16:
            raise ValueError("a confirm token key needs at least 16 bytes")
        self._ledger = ledger
        # Keyed once: each MAC starts from a copy of this state.
        self._keyed = hmac.new(key, digestmod=hashlib.sha256)

    def make(
        self,
        call: ToolCall,
        scope: Scope,
        hashes: tuple[str, str],
        check_id: str,
        now: float,
        ttl_seconds: float,
    ) -> AskTicket:
        """The token of a new ask about ``call`` (its check is ``check_id``); nothing is
        stored but the check's log line.

        ``hashes`` are the call's canonical args hash and the hash of its args as sent.
        """
        # Whole seconds, rounded up: a token never expires before its TTL is over.
        expires_at = math.ceil(now + ttl_seconds)
        if not _CHECK_ID.fullmatch(check_id) or not 0 <= expires_at < 16**_EXPIRY_DIGITS:
            raise ValueError("a confirm token needs a chk_ check id and an expiry in 1970-2105")
        context = _context(scope, call, check_id, expires_at)
        args_mac, sent_mac = self._bound_macs(context, hashes)
        token_mac = self._token_mac(context, args_mac, sent_mac)
        token = _Token(check_id, expires_at, args_mac, sent_mac, token_mac)
        return AskTicket(token.text(), expires_at)

    def accept(self, call: ToolCall, scope: Scope, hashes: tuple[str, str], now: float) -> str:
        """The check id of the ask ``call.confirm_token`` answers, if the token may confirm
        ``call`` now.

        Raises ``InvalidInput`` for a token that is not one at all, and
        ``ConfirmTokenRejected`` for one that is unknown (forged, altered, or another
        tenant's), made for another session, scope, tool or args, expired, or used. It is
        not spent here: ``spend`` does that with the claim, so a check that claims nothing
        keeps it.
        """
        token = call.confirm_token
        if token is not None and _STORED_TOKEN.fullmatch(token):
            raise ConfirmTokenRejected(
                "this confirm_token is of a kind no longer accepted: send the call without it"
                " to be asked again",
                "unknown",
            )
        if token is None or not _TOKEN.fullmatch(token):
            raise InvalidInput("confirm_token is not a token an ask handed out (cfm_ + 88 hex)")
        read = _Token.read(token)
        context = _context(scope, call, read.check_id, read.expires_at)
        args_mac, sent_mac = self._bound_macs(context, hashes)
        # Every MAC compared, each in constant time: none of them is ever worth guessing at.
        bound = [
            hmac.compare_digest(read.args_mac, args_mac),
            hmac.compare_digest(read.sent_mac, sent_mac),
        ]
        sealed = self._token_mac(context, read.args_mac, read.sent_mac)
        intact = hmac.compare_digest(read.token_mac, sealed)
        if not (intact and any(bound)):
            raise self._refusal(call, scope, read.check_id, hashes[0], now)
        # Only a signed expiry is read: an altered one fails the MACs above.
        if now >= read.expires_at:
            raise _expired()
        spender = self._ledger.confirm_token_spent_by(scope.tenant, read.check_id)
        if spender is not None:
            raise ConfirmTokenRejected(
                f"this confirm_token was already used (by check {spender})", "used"
            )
        return read.check_id

    def spend(self, token: str, tenant: str, check_id: str, now: float) -> None:
        """Record the accepted ``token`` spent by ``check_id``; raise if another check spent
        it first."""
        read = _Token.read(token)
        spent = SpentToken(read.check_id, tenant, check_id, now, read.expires_at)
        if not self._ledger.spend_confirm_token(spent):
            raise ConfirmTokenRejected("this confirm_token was already used", "used")

    def give_back(self, token: str, check_id: str) -> None:
        """Unspend a token whose claim was not stored: its retry may confirm again. Best
        effort: a store that cannot take this write did not take the claim either."""
        try:
            self._ledger.unspend_confirm_token(_Token.read(token).check_id, check_id)
        except Exception:
            logger.warning("could not give back confirm token of %s", check_id, exc_info=True)

    def _bound_macs(self, context: str, hashes: tuple[str, str]) -> tuple[str, str]:
        """The args and sent MACs of a token (``context``: see ``_context``; ``hashes``: the
        call's canonical args hash, and the hash of its args as sent)."""
        return self._mac(context, "args", hashes[0]), self._mac(context, "sent", hashes[1])

    def _token_mac(self, context: str, args_mac: str, sent_mac: str) -> str:
        """The MAC that seals a token's other fields, its args and sent MACs among them."""
        return self._mac(context, "token", args_mac + sent_mac)

    def _mac(self, context: str, purpose: str, value: str) -> str:
        """HMAC-SHA256 of the context and one value (named by ``purpose``), cut to 64 bits."""
        # The JSON list [version, purpose, *context, value], all ASCII: one encoding per
        # tuple, whatever the strings hold.
        message = f"{_PREFIXES[purpose]}{context},{_quoted(value)}]"
        mac = self._keyed.copy()
        mac.update(message.encode("ascii"))
        return mac.hexdigest()[:_MAC_DIGITS]

    def _refusal(
        self, call: ToolCall, scope: Scope, ask_check_id: str, args_hash: str, now: float
    ) -> ConfirmTokenRejected:
        """Why a token whose MACs do not verify is refused, told from its ask's log line as
        a stored token was (expired, used, then made for another call): read only here, on
        the way to an error, never for a token that verifies."""
        asked = self._ledger.log_entry(scope.tenant, ask_check_id)
        if asked is None or asked.decision != DecisionKind.ASK.value or asked.dry_run:
            return ConfirmTokenRejected("no ask handed out this confirm_token", "unknown")
        if asked.ask_expires_at is not None and now >= asked.ask_expires_at:
            return _expired()
        if self._ledger.confirm_token_spent_by(scope.tenant, ask_check_id) is not None:
            return ConfirmTokenRejected("this confirm_token was already used", "used")
        if (asked.session_id, asked.scope) != (call.session_id, scope.name):
            return ConfirmTokenRejected(
                "this confirm_token was handed out to another session", "mismatch"
            )
        if asked.tool != call.tool or stable_hash(canonical_json(asked.args)) != args_hash:
            return ConfirmTokenRejected(
                "this confirm_token was handed out for another tool or other args", "mismatch"
            )
        # The ask was about this very call, so the token was altered (its expiry, say) or
        # made up around a real check id.
        return ConfirmTokenRejected("no ask handed out this confirm_token", "unknown")


def _json(value: str | int) -> str:
    return json.dumps(value, ensure_ascii=True)


def _quoted(value: str) -> str:
    """``value`` as a JSON string: a hash or MAC (hex digits) needs no escaping."""
    return f'"{value}"' if value.isascii() and value.isalnum() else _json(value)


# Built once: ``json.dumps`` with a setting not its default builds an encoder per call.
_COMPACT = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"))
# The signed list's opening, [version, purpose, …, of each kind of MAC.
_PREFIXES = {
    purpose: f"[{_json(_VERSION)},{_json(purpose)}," for purpose in ("args", "sent", "token")
}


def _context(scope: Scope, call: ToolCall, check_id: str, expires_at: int) -> str:
    """What every MAC of a token covers: tenant, scope, session, tool, check id, expiry (the
    middle of the signed JSON list, encoded once for the token's MACs)."""
    fields = [scope.tenant, scope.name, call.session_id, call.tool, check_id, expires_at]
    return _COMPACT.encode(fields)[1:-1]


def _expired() -> ConfirmTokenRejected:
    return ConfirmTokenRejected(
        "this confirm_token has expired: send the call without it to be asked again", "expired"
    )


def bound_hashes(proposal: Proposal) -> tuple[str, str]:
    """What a confirm token is bound to: the canonical args, and the args as sent."""
    return proposal.canonical.args_hash, proposal.sent_hash


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
