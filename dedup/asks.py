"""Confirm tokens of ``ask`` answers: made at the ask, checked and spent at the confirmation.

A token is stateless and signed, so that an ask writes nothing but its log line:

    cfm_ <check id: 32> <expiry: 8> <args MAC: 16> <sent MAC: 16> <token MAC: 16>

in lowercase hex: the ask's check id without ``chk_``, its expiry in seconds since the
epoch, and three 64-bit tags of keyed BLAKE2b (the MAC mode of BLAKE2, with a
personalization string) under the store's secret. All three cover the tenant, scope,
session, tool, check id and expiry. The args MAC adds the call's canonical args hash, the
sent MAC the hash of its args as sent: a confirmation is bound if either verifies, as either
finds the call. The token MAC adds the other two, so no digit of a token can change, not
even one of the MAC that did not have to verify.

The confirmation that claims records the token spent under the ask's check id, where a
second spender loses.
"""

from __future__ import annotations

import hashlib
import hmac
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
_CHECK_DIGITS, _EXPIRY_DIGITS, _MAC_DIGITS = 32, 8, 16
# The first second an expiry cannot be written in its digits (in 2106).
_END = 16**_EXPIRY_DIGITS
# BLAKE2b's personalization keeps these tags apart from any other use of the key with it;
# each MAC's purpose is one byte after the context.
_PERSON = b"tooldedup cfm2"
_ARGS, _SENT, _SEAL = b"\x01", b"\x02", b"\x03"


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


class AskBook:
    """Hands out confirm tokens and accepts each once, for the call it was made for."""

    def __init__(self, ledger: Ledger, key: bytes) -> None:
        if len(key) < 16:
            raise ValueError("a confirm token key needs at least 16 bytes")
        if len(key) > hashlib.blake2b.MAX_KEY_SIZE:
            # BLAKE2b takes keys of up to 64 bytes; a longer one is hashed first, as HMAC does.
            key = hashlib.blake2b(key).digest()
        self._ledger = ledger
        # Keyed once: each token's MACs start from a copy of this state.
        self._keyed = hashlib.blake2b(key=key, digest_size=_MAC_DIGITS // 2, person=_PERSON)

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

        ``hashes`` are the call's canonical args hash and the hash of its args as sent;
        ``check_id`` is ``chk_`` and 32 lowercase hex digits, as the service makes them.
        """
        # Whole seconds, rounded up: a token never expires before its TTL is over.
        expires_at = math.ceil(now + ttl_seconds)
        # The service makes check ids, chk_ and 32 hex digits: their length is checked here,
        # the pattern only where a token comes back.
        if (
            len(check_id) != 4 + _CHECK_DIGITS
            or not check_id.startswith("chk_")
            or not 0 <= expires_at < _END
        ):
            raise ValueError("a confirm token needs a chk_ check id and an expiry in 1970-2105")
        macs = "".join(self._macs(scope, call, check_id, expires_at, hashes))
        return AskTicket(f"cfm_{check_id[4:]}{expires_at:0{_EXPIRY_DIGITS}x}{macs}", expires_at)

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
        carried = (read.args_mac, read.sent_mac)
        args_mac, sent_mac, sealed = self._macs(
            scope, call, read.check_id, read.expires_at, hashes, carried
        )
        # Every MAC compared, each in constant time: none of them is ever worth guessing at.
        bound = [
            hmac.compare_digest(read.args_mac, args_mac),
            hmac.compare_digest(read.sent_mac, sent_mac),
        ]
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

    def _macs(
        self,
        scope: Scope,
        call: ToolCall,
        check_id: str,
        expires_at: int,
        hashes: tuple[str, str],
        sealing: tuple[str, str] | None = None,
    ) -> tuple[str, str, str]:
        """The args and sent MACs of a token for ``call`` (``hashes``: its canonical args
        hash and the hash of its args as sent), and the token MAC sealing ``sealing`` (the
        args and sent MACs a token carries; by default, these two).

        All three start from the same context: tenant, scope, session and tool, each after
        its length (so that no two can trade characters), then check id and expiry, both
        of fixed length. One byte after it names the MAC.
        """
        tenant, name, session, tool = scope.tenant, scope.name, call.session_id, call.tool
        context = (
            f"{len(tenant)}:{tenant}{len(name)}:{name}{len(session)}:{session}"
            f"{len(tool)}:{tool}{check_id}{expires_at:0{_EXPIRY_DIGITS}x}"
        )
        shared = self._keyed.copy()
        # A JSON body may hold a lone surrogate; surrogatepass encodes it, one to one.
        shared.update(context.encode("utf-8", "surrogatepass"))
        args, sent = shared.copy(), shared.copy()
        args.update(_ARGS + hashes[0].encode("ascii"))
        sent.update(_SENT + hashes[1].encode("ascii"))
        args_mac, sent_mac = args.hexdigest(), sent.hexdigest()
        sealed_args, sealed_sent = sealing if sealing is not None else (args_mac, sent_mac)
        shared.update(_SEAL + (sealed_args + sealed_sent).encode("ascii"))
        return args_mac, sent_mac, shared.hexdigest()

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
    canonical = proposal.canonical
    theirs = leaf_texts(earlier)
    paths = {
        window_field(leaf.path)
        for leaf in canonical.semantic_leaves
        if theirs.get(leaf.path) != leaf.text
    }
    if canonical.exact_leaves != earlier.exact_leaves:
        exact = dict(earlier.exact_leaves)
        paths.update(path for path, value in canonical.exact_leaves if exact.get(path) != value)
    return tuple(sorted(paths))


def model_note(
    proposal: Proposal,
    decision: Decision,
    ticket: AskTicket | None,
    now: float,
    secret: Callable[[str], bool],
) -> str | None:
    """The note for the model, where its answer has one and the policy wants it (``ticket``:
    an ask's, none for a dry run's)."""
    match, tool = decision.match, proposal.call.tool
    if match is None:
        return None
    if decision.kind is DecisionKind.ASK:
        token = None if ticket is None else ticket.confirm_token
        differing = differing_fields(proposal, match.call)
        return ask_note(tool, match.call, now, token, secret, differing)
    if decision.kind is DecisionKind.PROCEED or not proposal.policy.model_notes:
        return None
    return repeat_note(tool, match.call, decision.kind, now, secret)
