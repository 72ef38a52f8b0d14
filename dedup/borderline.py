"""Borderline matches: the judge decides inline, labels in the background, or the policy acts."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace

from tooldedup.dedup.funnel import Proposal
from tooldedup.dedup.judge import GuardedJudge, JudgeRequest
from tooldedup.dedup.ledger.base import Ledger
from tooldedup.dedup.policy import BorderlineAction, UnsureAction
from tooldedup.dedup.records import Decision, JudgeMode, JudgeReport, Match, Stage

__all__ = ["BorderlineResolver", "judge_request"]

logger = logging.getLogger(__name__)


def judge_request(proposal: Proposal, match: Match) -> JudgeRequest:
    """What the judge is shown for a proposal and its match."""
    return JudgeRequest.for_pair(
        proposal.call.tool,
        proposal.policy,
        proposal.canonical,
        match.call.args,
        match.score,
        proposal.scope.tenant,
    )


class BorderlineResolver:
    """Turns a borderline match into an answer, and runs shadow judge calls off the request."""

    def __init__(
        self, judge: GuardedJudge | None, ledger: Ledger, clock: Callable[[], float] = time.time
    ) -> None:
        self._judge = judge
        self._ledger = ledger
        self._clock = clock
        self._shadow = ThreadPoolExecutor(max_workers=2, thread_name_prefix="tooldedup-judge")
        self._shadow_jobs: list[Future[None]] = []
        self._shadow_lock = threading.Lock()

    def resolve(
        self, proposal: Proposal, match: Match, base: Decision
    ) -> tuple[Match | None, Decision]:
        """Ask the judge inline when configured; otherwise the policy's borderline action.

        A match the agent would be asked about (the verifier unsure, or ``borderline_action
        = "ask"``), for a caller that does not handle ``ask``, takes ``unsure_action``:
        proceed, duplicate, or the judge inline.
        """
        policy = proposal.policy
        unsure = match.hold is not None or policy.borderline_action is BorderlineAction.ASK
        mode = policy.judge_mode
        if unsure and policy.unsure_action is UnsureAction.JUDGE and mode is JudgeMode.OFF:
            mode = JudgeMode.INLINE
        base = replace(base, borderline=True)
        report: JudgeReport | None = None
        if mode is not JudgeMode.OFF and self._judge is None:
            report = JudgeReport(mode.value, "not_configured")
        elif mode is JudgeMode.SHADOW:
            report = JudgeReport(mode.value, "shadow", detail="verdict recorded as a label")
        elif mode is JudgeMode.INLINE and self._judge is not None:
            outcome = self._judge.ask(judge_request(proposal, match))
            verdict = outcome.verdict
            report = JudgeReport(
                mode.value,
                outcome.kind.value,
                None if verdict is None else verdict.duplicate,
                None if verdict is None else verdict.confidence,
                None if verdict is None else verdict.reason,
                outcome.detail,
                outcome.cached,
            )
            if verdict is not None:
                judged = Match(match.call, Stage.JUDGE, match.score) if verdict.duplicate else None
                return judged, replace(base, judge=report, notes=("borderline: judge decided",))
        action = policy.borderline_action
        notes = (f"borderline semantic match: policy action is {action.value}",)
        if unsure:
            # Without a verdict, a duplicate only where the operator said so: a swapped
            # ordinal or an unaccounted change may be another request.
            fallback = policy.unsure_action
            action = (
                BorderlineAction.DUPLICATE
                if fallback is UnsureAction.DUPLICATE
                else BorderlineAction.PROCEED
            )
            why = "borderline_action is ask" if match.hold is None else f"held ({match.hold})"
            notes = (f"{why}; the caller does not handle ask, so unsure_action: {action.value}",)
        base = replace(base, judge=report, notes=notes)
        return (None if action is BorderlineAction.PROCEED else match), base

    def label_later(self, proposal: Proposal, decision: Decision) -> None:
        """Ask the judge in the background and store its verdict as a label (shadow mode)."""
        assert decision.match is not None
        assert self._judge is not None
        request = judge_request(proposal, decision.match)
        job = self._shadow.submit(
            self._label_by_judge, proposal.scope.tenant, decision.check_id, request
        )
        with self._shadow_lock:
            self._shadow_jobs = [j for j in self._shadow_jobs if not j.done()] + [job]

    def _label_by_judge(self, tenant: str, check_id: str, request: JudgeRequest) -> None:
        assert self._judge is not None
        try:
            verdict = self._judge.ask(request).verdict
            if verdict is not None:
                label = "duplicate" if verdict.duplicate else "distinct"
                note = f"judge (confidence {verdict.confidence:.2f}): {verdict.reason}"
                self._ledger.add_feedback(tenant, check_id, label, note, "judge", self._clock())
        except Exception:  # a background label must never take the service down
            logger.exception("shadow judge call for %s failed", check_id)

    def drain(self, timeout: float | None = None) -> None:
        """Wait for shadow judge calls under way (tests and shutdown)."""
        with self._shadow_lock:
            jobs = list(self._shadow_jobs)
        for job in jobs:
            job.result(timeout)

    def close(self) -> None:
        """Drop queued shadow judge calls, wait for running ones, stop the judge's threads."""
        self._shadow.shutdown(wait=True, cancel_futures=True)
        if self._judge is not None:
            self._judge.close()
