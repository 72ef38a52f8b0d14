"""The dedup service: canonicalise, run the funnel inside a scope lock, claim or answer."""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace

from tooldedup.dedup.asks import AskBook, ask_notes, bound_hashes, model_note
from tooldedup.dedup.borderline import BorderlineResolver
from tooldedup.dedup.canonical import (
    Canonicalizer,
    canonical_json,
    intent_key,
    sent_hash,
    stable_hash,
    validate_json,
    window_field,
)
from tooldedup.dedup.caps import CallCaps
from tooldedup.dedup.errors import (
    AttemptTokenReused,
    CheckTooLarge,
    IdempotencyKeyReused,
    InvalidInput,
    LeaseNotHeld,
    NotFound,
    StoreUnavailable,
)
from tooldedup.dedup.explain import explain_data
from tooldedup.dedup.funnel import FunnelHooks, FunnelStage, Proposal, run_funnel
from tooldedup.dedup.judge import GuardedJudge
from tooldedup.dedup.ledger.base import (
    ClaimConflict,
    Feedback,
    KeyBinding,
    KeyKind,
    Ledger,
    LogEntry,
    Lookup,
)
from tooldedup.dedup.locks import KeyedLocks
from tooldedup.dedup.policy import BorderlineAction, Enforcement, PolicySet, ToolPolicy
from tooldedup.dedup.protocols import LanguagePack, SpellingBudget, TextReader
from tooldedup.dedup.records import (
    DEFAULT_TENANT,
    CallRecord,
    CallStatus,
    CanonicalCall,
    Decision,
    DecisionKind,
    FailureClass,
    Match,
    Observed,
    Outcome,
    SemanticLeaf,
    SideEffect,
    Stage,
    StageReport,
    ToolCall,
)
from tooldedup.dedup.tenant_policies import TenantPolicies

__all__ = ["ATTEMPT_REPEAT_SECONDS", "DedupService", "answer_for"]

# How long after a claim a check resent with its attempt token gets ``proceed`` again: a
# client's own retries of one check (10 s timeouts, a few retries) fit well inside.
ATTEMPT_REPEAT_SECONDS = 120.0

logger = logging.getLogger(__name__)
_EXPLAIN_RECENT = 20


def answer_for(record: CallRecord, now: float) -> DecisionKind:
    """What a later check that matches ``record`` is told, by the record's state."""
    if record.status is CallStatus.PENDING:
        return DecisionKind.IN_PROGRESS if now < record.lease_expires_at else DecisionKind.RECONCILE
    if record.status is CallStatus.SUCCEEDED:
        return DecisionKind.DUPLICATE
    if record.status is CallStatus.FAILED:
        if record.failure_class is FailureClass.RETRYABLE:
            return DecisionKind.PROCEED
        if record.failure_class is FailureClass.POISON:
            return DecisionKind.DUPLICATE
    return DecisionKind.RECONCILE


class DedupService:
    """Decides whether a proposed tool call may run, and keeps the ledger of those that did."""

    def __init__(
        self,
        ledger: Ledger,
        policies: PolicySet,
        stages: Sequence[FunnelStage],
        *,
        canonicalizer: Canonicalizer,
        confirm_key: bytes,
        hooks: Sequence[FunnelHooks] = (),
        clock: Callable[[], float] = time.time,
        judge: GuardedJudge | None = None,
        caps: CallCaps | None = None,
    ) -> None:
        self._ledger = ledger
        # The language pack reads field names and free text; its reader says which free
        # texts are compared by meaning.
        self._canonicalizer = canonicalizer
        self._pack: LanguagePack = canonicalizer.pack
        self._borderline = BorderlineResolver(judge, ledger, clock)
        # Signs confirm tokens: the store's secret, the same in every process sharing it.
        self._asks = AskBook(ledger, confirm_key)
        self._policies = TenantPolicies(ledger, policies)
        self._stages = tuple(stages)
        self._hooks = tuple(hooks)
        self._clock = clock
        self._caps = caps
        self._locks = KeyedLocks()

    def _secret(self, name: str) -> bool:
        """Whether a field of this name holds a secret (a note never shows its value)."""
        return self._pack.field(name).secret

    @property
    def canonicalizer(self) -> Canonicalizer:
        """What makes each call's canonical form, through the language pack."""
        return self._canonicalizer

    @property
    def reader(self) -> TextReader | None:
        """What says which free texts are compared by meaning (None: all of them)."""
        return self._canonicalizer.reader

    @property
    def policies(self) -> PolicySet:
        """The default tenant's policies in force."""
        return self._policies.of(DEFAULT_TENANT)

    def policies_for(self, tenant: str) -> PolicySet:
        """``tenant``'s policies in force: the defaults, and the tools it set."""
        return self._policies.of(tenant)

    def set_policy(
        self, tenant: str, tool: str, policy: ToolPolicy, data: dict[str, object]
    ) -> None:
        """Replace one of ``tenant``'s tool policies and store it (within the operator's
        budgets, for a tenant other than the default one)."""
        self._policies.set(tenant, tool, policy, data)

    def refresh(self) -> None:
        """Take what another process may have changed: policies, and tenants' caps."""
        if self._caps is not None:
            self._caps.refresh()
        self._policies.refresh()

    def check(
        self, call: ToolCall, *, dry_run: bool = False, key_id: str | None = None
    ) -> Decision:
        """Decide whether ``call`` may run; on ``proceed`` the claim is already stored.

        ``key_id`` names the API key that sent it, for the decision log.
        """
        started = time.perf_counter()
        now = self._clock()
        policy = self.policies_for(call.tenant).for_tool(call.tool)
        canonical = self._canonicalizer.canonicalize(
            call.args, policy, received_at=now, tool=call.tool
        )
        _check_budget(canonical, policy)
        proposal = Proposal(call, canonical, policy)
        key = intent_key(proposal.scope, call.tool, canonical, call.run_id, call.step)
        if call.idempotency_key is not None and not dry_run:
            self._bind_key(proposal, call.idempotency_key, key, now, KeyKind.IDEMPOTENCY)
        if call.attempt_token is not None and not dry_run:
            self._bind_key(proposal, call.attempt_token, key, now, KeyKind.ATTEMPT)
        check_id = "chk_" + uuid.uuid4().hex
        confirmed_ask = None
        if call.confirm_token is not None:
            if dry_run:
                raise InvalidInput("a dry run cannot confirm: send confirm_token without dry_run")
            # A client's retry of a confirmation whose answer was lost spent the token
            # already: its attempt token finds that claim, which answers it again.
            since = now - policy.window_seconds
            retried = call.attempt_token is not None and (
                self._ledger.by_attempt_token(proposal.scope, call.attempt_token, since) is not None
            )
            if not retried:
                hashes = bound_hashes(proposal)
                confirmed_ask = self._asks.accept(call, proposal.scope, hashes, now)
        base = Decision(
            DecisionKind.PROCEED,
            check_id,
            key,
            None,
            None,
            dry_run=dry_run,
            unread=canonical.unread,
            confirmed_ask=confirmed_ask,
        )
        if policy.side_effect is SideEffect.READ:
            decision = replace(base, notes=("read tool: proceeds without a claim",))
        else:
            # First without any lock: an answer that claims nothing (a duplicate, a call in
            # progress) stays true whatever other checks do meanwhile, so it needs no lock.
            decision = self._decide(proposal, base, now, claim=False)
            if decision.kind is DecisionKind.PROCEED and decision.call is None and not dry_run:
                # The claim's vectors are computed before the lock, never while others wait
                # on it; an answer found by hash never needs them.
                for hook in self._hooks:
                    hook.prepare(proposal)
                # A claim: decided again under the (scope, tool) lock, which threads of this
                # process and then every process sharing the store wait on, so that of
                # concurrent checks of one intent exactly one proceeds.
                scope_tool = (proposal.scope, call.tool)
                with (
                    self._locks.hold(scope_tool),
                    self._capped(call.tenant),
                    self._ledger.serialized(*scope_tool),
                ):
                    # The clock is read again once the lock is held: waiting must not age it.
                    decision = self._decide(proposal, base, self._clock(), claim=True)
        ticket = None
        if decision.kind is DecisionKind.ASK and not dry_run:
            # The token is signed, not stored: the ask writes only its log line, as a
            # duplicate does.
            ticket = self._asks.make(
                call, proposal.scope, bound_hashes(proposal), check_id, now, policy.ask_ttl_seconds
            )
        note = model_note(proposal, decision, ticket, now, self._secret)
        latency_ms = (time.perf_counter() - started) * 1000.0
        decision = replace(decision, ask=ticket, note=note, latency_ms=latency_ms)
        try:
            self._ledger.append_log(self._entry(proposal, decision, now, key_id))
            if decision.confirmed_ask is not None and decision.call is not None:
                # The caller's word that the call asked about is another request: a label
                # for calibration, and that match does not recur for these args.
                self._ledger.add_feedback(
                    call.tenant,
                    decision.confirmed_ask,
                    "distinct",
                    f"confirmed by the caller (check {check_id})",
                    "caller",
                    now,
                    key_id,
                )
        except StoreUnavailable:
            # The claim is stored; losing its answer to a log line would make the caller
            # retry into its own claim. The log misses this line, and says so.
            logger.warning("decision %s not logged: the store is unavailable", check_id)
        except NotFound:
            # The ask's own log line is gone (purged by a short log retention, or lost): its
            # label with it. The confirmed call is claimed all the same.
            logger.warning("ask %s not in the log: not labelled", decision.confirmed_ask)
        if decision.judge is not None and decision.judge.outcome == "shadow":
            self._borderline.label_later(proposal, decision)
        return decision

    def _capped(self, tenant: str) -> AbstractContextManager[None]:
        """For a tenant with a cap, one claim of this process at a time until it commits,
        so that each counts the others' claims."""
        if self._caps is None or not self._caps.applies_to(tenant):
            return nullcontext()
        return self._locks.hold(("tenant cap", tenant))

    def _identical(self, proposal: Proposal, since: float) -> CallRecord | None:
        """The exact fast path, once no call has the canonical args (``args_match``): an
        identical call found by a hash, however many candidates share its exact fields. The
        args exactly as sent (a replay whose attempt stamp has aged past the tolerance
        since); then, among calls release 0.1 stored, the canonical form 0.1 made."""
        call, scope, step = proposal.call, proposal.scope, proposal.call.workflow_step
        # The same bytes canonicalise otherwise once a stamp has aged past the tolerance,
        # or after a policy change: a byte-for-byte replay is still that call.
        found = self._ledger.exact_match(
            scope, call.tool, Lookup.SENT, proposal.sent_hash, since, step
        )
        if found is None and self._ledger.has_legacy_calls():
            legacy = self._pack.legacy_args_hash(
                call.args, proposal.policy, proposal.canonical.args
            )
            if legacy is not None:
                found = self._ledger.exact_match(
                    scope, call.tool, Lookup.LEGACY, legacy, since, step
                )
        return found

    def _bind_key(
        self, proposal: Proposal, key: str, intent: str, now: float, kind: KeyKind
    ) -> None:
        """One explicit key (or attempt token), one intent: another tool or payload under
        it is refused.

        The same intent, or the same arguments byte for byte (a replay whose timestamps have
        aged since), is the same payload.
        """
        call = proposal.call
        # What was sent, and for which step: a replay of another step is another payload.
        sent = stable_hash(canonical_json([proposal.sent_hash, call.run_id, call.step]))
        mine = KeyBinding(call.tool, intent, sent)
        since = now - proposal.policy.window_seconds
        bound = self._ledger.reserve_key(proposal.scope, key, mine, now, since, kind)
        error, name = (
            (IdempotencyKeyReused, "idempotency key")
            if kind is KeyKind.IDEMPOTENCY
            else (AttemptTokenReused, "attempt token")
        )
        if bound.tool != mine.tool:
            raise error(f"{name} {key!r} was used for another tool in this scope")
        if mine.intent_key != bound.intent_key and mine.sent_hash != bound.sent_hash:
            raise error(f"{name} {key!r} was used for a different payload in this scope")

    def _decide(self, proposal: Proposal, base: Decision, now: float, *, claim: bool) -> Decision:
        """The funnel's answer; with ``claim``, a ``proceed`` is also stored (under the lock)."""
        call, policy = proposal.call, proposal.policy
        step = call.workflow_step
        since = now - policy.window_seconds
        if call.attempt_token is not None and not base.dry_run:
            first = self._ledger.by_attempt_token(proposal.scope, call.attempt_token, since)
            if first is not None:
                return self._repeat_attempt(proposal, base, first, now, claim)
        if call.idempotency_key is not None:
            keyed = self._ledger.by_idempotency_key(proposal.scope, call.idempotency_key, since)
            if keyed is not None:
                replayed = sent_hash(keyed.sent_args) == proposal.sent_hash and (
                    keyed.run_id,
                    keyed.step,
                ) == (call.run_id, call.step)
                if keyed.tool != call.tool or not (
                    keyed.args_hash == proposal.canonical.args_hash or replayed
                ):
                    raise IdempotencyKeyReused(
                        f"idempotency key {call.idempotency_key!r} was used for a different payload"
                        f" (call {keyed.call_id})"
                    )
                # A retried call's key answers for its newest attempt, not the failed one.
                keyed = self._ledger.latest_attempt(keyed)
                report = StageReport(Stage.EXACT, 1.0, 1.0, True, detail="idempotency key")
                return self._answer(
                    proposal, base, Match(keyed, Stage.EXACT, 1.0), (report,), now, claim, True
                )
        by_args = self._ledger.args_match(
            proposal.scope, call.tool, proposal.canonical.args_hash, since, step
        )
        ruled_out = by_args.ruled_out
        if ruled_out:
            # A label said these calls are another intent: the new claim must not share
            # their intent key, or their pending claim would still hold it.
            past = canonical_json([base.intent_key, sorted(ruled_out)])
            base = replace(base, intent_key="ik_" + stable_hash(past))
        same = by_args.call or self._identical(proposal, since)
        if same is not None and same.call_id not in ruled_out:
            report = StageReport(Stage.EXACT, 1.0, 1.0, True, ((same.call_id, 1.0),))
            return self._answer(
                proposal, base, Match(same, Stage.EXACT, 1.0), (report,), now, claim
            )
        limit = policy.candidate_limit(len(proposal.canonical.semantic_leaves))
        candidates = self._ledger.candidates(
            proposal.scope, call.tool, proposal.canonical.exact_signature, since, limit, step
        )
        if len(candidates) == limit < policy.max_candidates:
            note = f"compared the newest {limit} candidates (max_comparisons)"
            base = replace(base, notes=(*base.notes, note))
        if ruled_out:
            candidates = [c for c in candidates if c.call_id not in ruled_out]
        # The signature lets "Paris, TX" meet "Paris, France": only one value spelt two
        # ways (or a list in another order) goes on to be compared.
        exact, budget = proposal.canonical.exact_leaves, SpellingBudget()
        candidates = [
            c
            for c in candidates
            if self._pack.equivalent_leaves(
                exact, c.exact_leaves, policy.exact_fields, call.tool, budget
            )
            is not None
        ]
        match, reports = run_funnel(self._stages, proposal, candidates)
        if match is not None and self._askable(proposal, match, reports, now):
            base = replace(base, borderline=match.borderline, reports=reports)
            if call.confirm_token is not None:
                # The caller was asked about this very call and means it: it runs.
                note = f"confirmed by the caller (ask {base.confirmed_ask})"
                match, base = None, replace(base, notes=(*base.notes, note))
            elif call.handles_ask:
                ask = replace(
                    base, kind=DecisionKind.ASK, match=match, notes=ask_notes(match, policy)
                )
                if policy.enforcement is Enforcement.OBSERVE:
                    return self._observe(proposal, ask, now, claim)
                return ask
        if match is not None and match.borderline:
            match, base = self._borderline.resolve(proposal, match, base)
            if match is not None:
                # The policy or the judge took the band match: explain must show the stage
                # that made it as matched, or it contradicts the answer.
                reports = (*reports[:-1], replace(reports[-1], matched=True))
        elif match is not None and match.stage is Stage.SEMANTIC:
            # A verifier's confirmation settles a band match, which is still in the band.
            base = replace(base, borderline=match.score < policy.min_cosine_duplicate)
        if match is not None:
            return self._answer(proposal, base, match, reports, now, claim)
        base = replace(base, reports=reports)
        if not candidates:
            base = self._explain_difference(proposal, base, since)
        return self._claim(proposal, base, now, None) if claim else base

    def _repeat_attempt(
        self, proposal: Proposal, base: Decision, first: CallRecord, now: float, claim: bool
    ) -> Decision:
        """A check resent with its attempt token, after it claimed ``first``.

        While that claim is pending, the answer it got is given again: ``proceed``, with the
        same call id (the first answer was lost on the way, so the tool has not run). Once
        it is completed, the tool ran, and the check is answered like any repeat of it.
        """
        report = StageReport(Stage.EXACT, 1.0, 1.0, True, detail="attempt token")
        # Only a retry soon after the claim is a lost answer; a token resent later (kept
        # by a durable runtime, say) may meet the first run still going: in progress.
        fresh = now < first.created_at + ATTEMPT_REPEAT_SECONDS
        if first.status is CallStatus.PENDING and now < first.lease_expires_at and fresh:
            note = "a retry of this check (same attempt token): the first answer again"
            return replace(base, call=first, reports=(report,), notes=(*base.notes, note))
        match = Match(self._ledger.latest_attempt(first), Stage.EXACT, 1.0)
        return self._answer(proposal, base, match, (report,), now, claim, True)

    def drain_judge(self, timeout: float | None = None) -> None:
        """Wait for shadow judge calls under way (tests and shutdown)."""
        self._borderline.drain(timeout)

    def close(self) -> None:
        """Drop queued shadow judge calls, wait for running ones, stop the judge's threads."""
        self._borderline.close()

    def _answer(
        self,
        proposal: Proposal,
        base: Decision,
        match: Match,
        reports: tuple[StageReport, ...],
        now: float,
        claim: bool,
        keyed: bool = False,
    ) -> Decision:
        """The answer a match gives; ``keyed``: found by the caller's own key or token,
        which observe mode honours as enforce mode does."""
        kind = answer_for(match.call, now)
        decision = replace(base, kind=kind, match=match, reports=reports)
        observe = proposal.policy.enforcement is Enforcement.OBSERVE
        if kind is not DecisionKind.PROCEED and observe and not keyed:
            return self._observe(proposal, decision, now, claim)
        if kind is DecisionKind.PROCEED and claim:
            # A retryable failure: a new attempt of the same intent, linked to the last one.
            return self._claim(proposal, decision, now, match.call.call_id)
        return decision

    def _askable(
        self, proposal: Proposal, match: Match, reports: tuple[StageReport, ...], now: float
    ) -> bool:
        """Whether a match is one the agent would be asked about (when it would not run
        anyway): a band match the verifier could not account for, or one the policy says
        to ask about; with ``ask_unconfirmed``, also a semantic match the verifier only
        did not object to."""
        policy = proposal.policy
        if answer_for(match.call, now) is DecisionKind.PROCEED:
            return False
        if match.hold is not None:
            return True
        if match.borderline and policy.borderline_action is BorderlineAction.ASK:
            return True
        verdict = reports[-1].verdict if reports else None
        unconfirmed = match.stage is Stage.SEMANTIC and verdict == "no_objection"
        return policy.ask_unconfirmed and unconfirmed

    def _observe(self, proposal: Proposal, decision: Decision, now: float, claim: bool) -> Decision:
        """Observe mode: the would-be answer is kept; the call proceeds and claims as usual.

        Under its own intent key, so that it never meets the claim it would have repeated.
        """
        observed = Observed(decision.kind, decision.match)
        own = canonical_json([decision.intent_key, "observed", decision.check_id])
        note = f"observe mode: enforcement would have answered {decision.kind.value}"
        decision = replace(
            decision,
            kind=DecisionKind.PROCEED,
            match=None,
            observed=observed,
            intent_key="ik_" + stable_hash(own),
            notes=(*decision.notes, note),
        )
        return self._claim(proposal, decision, now, None) if claim else decision

    def _claim(
        self, proposal: Proposal, decision: Decision, now: float, attempt_of: str | None
    ) -> Decision:
        call, canonical, policy = proposal.call, proposal.canonical, proposal.policy
        if self._caps is not None:
            # Only a new claim counts against the cap: answers about stored calls never do.
            self._caps.admit(call.tenant)
        spent: str | None = None
        if call.confirm_token is not None and decision.confirmed_ask is not None:
            # Spent with the claim, under the scope lock: of two checks sending one token,
            # the second meets this claim and claims nothing. (A retry of a confirmation
            # that already spent it, found by its attempt token, spends nothing.)
            spent = call.confirm_token
            self._asks.spend(spent, call.tenant, decision.check_id, now)
        record = CallRecord(
            call_id="call_" + uuid.uuid4().hex,
            row_id=0,
            scope=proposal.scope.name,
            session_id=call.session_id,
            tool=call.tool,
            args=canonical.args,
            args_hash=canonical.args_hash,
            exact_signature=canonical.exact_signature,
            exact_leaves=canonical.exact_leaves,
            semantic_leaves=canonical.semantic_leaves,
            intent_key=decision.intent_key,
            idempotency_key=call.idempotency_key,
            status=CallStatus.PENDING,
            created_at=now,
            lease_expires_at=now + policy.lease_seconds,
            attempt_of=attempt_of,
            run_id=call.run_id,
            step=call.step,
            sent_args=call.args,
            attempt_token=call.attempt_token,
            tenant=call.tenant,
        )
        try:
            claimed = self._ledger.claim(record, live_since=now - policy.window_seconds)
        except BaseException:
            # No claim stored (a 503 says "send again"): the token is given back, so that
            # the retry of this confirmation runs the call instead of meeting "used".
            if spent is not None:
                self._asks.give_back(spent, decision.check_id)
            raise
        if isinstance(claimed, ClaimConflict):
            # Another process claimed the same intent first: report on that claim (and the
            # token, which ran nothing, may confirm again).
            if spent is not None:
                self._asks.give_back(spent, decision.check_id)
            holder = claimed.holder
            match = Match(holder, Stage.EXACT, 1.0)
            return replace(decision, kind=answer_for(holder, now), match=match, call=None)
        if self._caps is not None:
            self._caps.claimed(call.tenant)
        for hook in self._hooks:
            try:
                hook.claimed(proposal, claimed)
            except Exception:
                # The claim is stored: its answer must reach the caller, or its retry would
                # meet its own claim. A hook's work (vectors, index) is redone later.
                logger.warning("after claiming %s", claimed.call_id, exc_info=True)
        return replace(decision, kind=DecisionKind.PROCEED, call=claimed)

    def _explain_difference(self, proposal: Proposal, base: Decision, since: float) -> Decision:
        """Name the exact fields that set this call apart from the closest same-tool call."""
        canonical = proposal.canonical
        recent = self._ledger.recent(proposal.scope, proposal.call.tool, since, _EXPLAIN_RECENT)
        mine = _signature_fields(self._pack, canonical.exact_leaves, canonical.semantic_leaves)
        exact_fields, tool = proposal.policy.exact_fields, proposal.call.tool
        budget = SpellingBudget()
        best: tuple[int, CallRecord, tuple[str, ...]] | None = None
        for record in recent:
            theirs = _signature_fields(self._pack, record.exact_leaves, record.semantic_leaves)
            paths = mine.keys() | theirs.keys()
            # "Seattle, WA" for "Seattle" is no difference worth naming.
            paths -= self._pack.spelt_alike(
                canonical.exact_leaves, record.exact_leaves, exact_fields, tool, budget
            )
            differ = tuple(sorted(p for p in paths if mine.get(p) != theirs.get(p)))
            if differ and (best is None or len(differ) < best[0]):
                best = (len(differ), record, differ)
        if best is None:
            return base
        return replace(base, differing_fields=best[2], differing_from=best[1].call_id)

    def _entry(
        self, proposal: Proposal, decision: Decision, now: float, key_id: str | None
    ) -> LogEntry:
        """The decision log's line for this check."""
        observed = decision.observed
        match = decision.match if observed is None else observed.match
        return LogEntry(
            check_id=decision.check_id,
            ts=now,
            scope=proposal.scope.name,
            session_id=proposal.call.session_id,
            tool=proposal.call.tool,
            args=proposal.canonical.args,
            decision=decision.kind.value,
            stage=None if match is None else match.stage.value,
            score=None if match is None else match.score,
            call_id=None if decision.call is None else decision.call.call_id,
            matched_call_id=None if match is None else match.call.call_id,
            latency_ms=decision.latency_ms,
            dry_run=decision.dry_run,
            explain=explain_data(decision),
            borderline=decision.borderline,
            tenant=proposal.scope.tenant,
            key_id=key_id,
            observed=None if observed is None else observed.kind.value,
            ask_expires_at=None if decision.ask is None else decision.ask.expires_at,
        )

    def complete(self, tenant: str, call_id: str, outcome: Outcome) -> CallRecord:
        """Record the outcome of one of ``tenant``'s claimed calls."""
        if outcome.status is CallStatus.PENDING:
            raise InvalidInput("a completion cannot set status 'pending'")
        if (outcome.status is CallStatus.FAILED) != (outcome.failure_class is not None):
            raise InvalidInput("failure_class is required for, and only for, status 'failed'")
        validate_json(outcome.result, "result")
        validate_json(outcome.error, "error")
        return self._ledger.complete(tenant, call_id, outcome, self._clock())

    def extend_lease(
        self, tenant: str, call_id: str, check_id: str, seconds: float | None = None
    ) -> CallRecord:
        """Extend the lease of one of ``tenant``'s pending claims by ``seconds`` from now
        (default: its tool's ``lease_seconds``), for the check that claimed it only."""
        record = self.get(tenant, call_id)
        # The check id is answered only to the checker, unlike the call id, which a later
        # check of the same intent is shown in its match.
        entry = self._ledger.log_entry(tenant, check_id)
        if entry is None or entry.call_id != call_id or entry.decision != "proceed":
            raise LeaseNotHeld(f"check {check_id!r} did not claim call {call_id}")
        if seconds is None:
            seconds = self.policies_for(tenant).for_tool(record.tool).lease_seconds
        now = self._clock()
        return self._ledger.extend_lease(tenant, call_id, now + seconds, now)

    def get(self, tenant: str, call_id: str) -> CallRecord:
        """One of ``tenant``'s calls by id (another tenant's is not found, as if unknown)."""
        record = self._ledger.get(tenant, call_id)
        if record is None:
            raise NotFound(f"no call with id {call_id!r}")
        return record

    def session_calls(
        self, tenant: str, session_id: str, limit: int, offset: int
    ) -> list[CallRecord]:
        """One of ``tenant``'s sessions' calls, oldest first."""
        return self._ledger.session_calls(tenant, session_id, limit, offset)

    def feedback(
        self,
        tenant: str,
        check_id: str,
        label: str,
        note: str | None,
        source: str,
        key_id: str | None = None,
    ) -> Feedback:
        """Record a label on one of ``tenant``'s checks; 'distinct' stops that match from
        recurring."""
        if label not in ("duplicate", "distinct"):
            raise InvalidInput("label must be 'duplicate' or 'distinct'")
        return self._ledger.add_feedback(
            tenant, check_id, label, note, source, self._clock(), key_id
        )

    def maintain(self) -> None:
        """Storage housekeeping that must not run inside a request."""
        self._ledger.checkpoint()

    def purge(self, retention_seconds: float, log_retention_seconds: float | None = None) -> int:
        """Delete calls older than the retention period (never inside any dedup window),
        and decision log entries older than the log's own retention, if it has one."""
        now = self._clock()
        every = self._policies.every()
        keep = _longest_window(every.pop(DEFAULT_TENANT), retention_seconds)
        # A tenant's own long windows keep its own calls longer, and no one else's.
        longer = {
            tenant: now - kept
            for tenant, policies in every.items()
            if (kept := _longest_window(policies, retention_seconds)) > keep
        }
        removed = self._ledger.purge(now - keep, longer)
        if removed:
            for hook in self._hooks:
                hook.purged()
        if log_retention_seconds is not None:
            self._ledger.purge_log(now - log_retention_seconds)
        # A spent token is kept well past its expiry (a replica whose clock runs late still
        # finds it), and as long as the ask's log entry: the review page shows it confirmed.
        kept = keep if log_retention_seconds is None else log_retention_seconds
        self._ledger.purge_spent_confirm_tokens(now - kept)
        return removed


def _longest_window(policies: PolicySet, retention_seconds: float) -> float:
    """How long calls under ``policies`` are kept: the retention, or a longer window."""
    windows = [policies.defaults, *policies.tools.values()]
    return max(retention_seconds, *(p.window_seconds for p in windows))


def _check_budget(canonical: CanonicalCall, policy: ToolPolicy) -> None:
    leaves = canonical.semantic_leaves
    if len(leaves) > policy.max_text_leaves:
        raise CheckTooLarge(
            f"the call has {len(leaves)} free-text leaves (a long text has one per window);"
            f" the tool's policy allows {policy.max_text_leaves} (max_text_leaves)"
        )
    # Free text is free text whether it is read or compared exactly: the budget is the same.
    exact = dict(canonical.exact_leaves)
    unread = (json.loads(exact[path]) for path, _ in canonical.unread if path in exact)
    chars = sum(len(leaf.text) for leaf in leaves) + sum(len(text) for text in unread)
    if chars > policy.max_text_chars:
        raise CheckTooLarge(
            f"the call has {chars} characters of free text; the tool's policy allows"
            f" {policy.max_text_chars} (max_text_chars)"
        )


def _signature_fields(
    pack: LanguagePack,
    exact_leaves: tuple[tuple[str, str], ...],
    semantic_leaves: tuple[SemanticLeaf, ...],
) -> dict[str, str]:
    """Exact leaves, plus each free-text leaf's numbers: what the exact signature compares."""
    fields = dict(exact_leaves)
    # A long text's windows, joined again, are its field's text.
    texts: dict[str, list[str]] = {}
    for leaf in semantic_leaves:
        texts.setdefault(window_field(leaf.path), []).append(leaf.text)
    for path, parts in texts.items():
        fields[path] = "~" + stable_hash(" ".join(pack.critical_tokens(" ".join(parts))))
    return fields
