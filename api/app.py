"""The FastAPI application, built by ``create_app(settings)``."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Header, Query, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST

from tooldedup.api.access import (
    ADMINS,
    AGENTS,
    CALL_READERS,
    EVERYONE,
    AccessMiddleware,
    RateLimiter,
    allow,
)
from tooldedup.api.admin_routes import admin_router
from tooldedup.api.dispatch import CheckDispatcher, is_light
from tooldedup.api.errors import install_error_handlers
from tooldedup.api.fairness import ScopeGate
from tooldedup.api.metrics import Metrics
from tooldedup.api.middleware import JsonBodyMiddleware
from tooldedup.api.review_routes import PAGE_PATHS, review_router
from tooldedup.api.schemas import (
    AskOut,
    CallOut,
    CheckRequest,
    CheckResponse,
    CompleteRequest,
    ErrorBody,
    FeedbackOut,
    FeedbackRequest,
    LeaseRequest,
    MatchOut,
    ObservedOut,
    PolicyBody,
    SessionCalls,
)
from tooldedup.api.settings import Settings
from tooldedup.api.version import VERSION
from tooldedup.calibration.review import Reviewer
from tooldedup.dedup.access import KeyRing, Principal
from tooldedup.dedup.errors import Forbidden, InvalidInput, StoreBusy, StoreUnavailable
from tooldedup.dedup.explain import explain_data
from tooldedup.dedup.ledger import SqlLedger
from tooldedup.dedup.policy import policy_from_mapping, policy_to_mapping
from tooldedup.dedup.protocols import Embedder, PairScorer
from tooldedup.dedup.records import (
    DEFAULT_TENANT,
    CallStatus,
    Decision,
    FailureClass,
    Match,
    Outcome,
    ToolCall,
)
from tooldedup.index.wiring import build_service
from tooldedup.index.word_vectors import WordVectors

__all__ = ["create_app"]

logger = logging.getLogger(__name__)
_WARM_UP = "warm up the embedding model once at start"
_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (400, 401, 403, 404, 409, 413, 422, 429)
}
Agent = Annotated[Principal, Depends(allow(AGENTS))]
CallReader = Annotated[Principal, Depends(allow(CALL_READERS))]
Anyone = Annotated[Principal, Depends(allow(EVERYONE))]
Admin = Annotated[Principal, Depends(allow(ADMINS))]


class _Health:
    """What /healthz reports; written by the maintenance thread only."""

    store_up = True


def _store_answers(ledger: SqlLedger, was_up: bool) -> bool:
    """Whether the store answers: busy (no free connection, a lock held) still counts."""
    try:
        ledger.ping()
    except StoreBusy:
        return True
    except StoreUnavailable as exc:
        if was_up:
            logger.warning("store unavailable: %s", exc.message)
        return False
    return True


def _tool_name(raw: str) -> str:
    tool = raw.strip()
    if not tool or len(tool) > 256:
        raise InvalidInput("tool must be 1 to 256 characters")
    if "\x00" in tool:
        raise InvalidInput("tool must not contain NUL (U+0000)")
    return tool


# An expiry is a whole second: the asks of one second share it.
@functools.lru_cache(maxsize=64)
def _iso(ts: int) -> str:
    """Whole seconds since the epoch as an ISO 8601 UTC time, ``2026-12-06T10:12:00Z``."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


def _handles_ask(body: CheckRequest, header: str | None) -> bool:
    """Whether the caller said it handles ``ask``: in the body, or in the header."""
    named = {*body.answers, *(part.strip() for part in (header or "").split(","))}
    return "ask" in named


def _observed_out(decision: Decision) -> ObservedOut | None:
    observed = decision.observed
    if observed is None:
        return None
    return ObservedOut(
        decision=observed.kind.value,  # type: ignore[arg-type]  # never proceed
        match=None if observed.match is None else _match_out(observed.match),
    )


def _match_out(match: Match | None) -> MatchOut | None:
    if match is None:
        return None
    call = match.call
    return MatchOut(
        call_id=call.call_id,
        tool=call.tool,
        args=call.sent_args,
        stage=match.stage.value,
        score=round(match.score, 6),
        status=call.status.value,
        failure_class=None if call.failure_class is None else call.failure_class.value,
        result=call.result,
        error=call.error,
    )


def create_app(
    settings: Settings,
    *,
    embedder: Embedder | None = None,
    pair_scorer: PairScorer | None = None,
    word_vectors: WordVectors | None = None,
    clock: Callable[[], float] = time.time,
) -> FastAPI:
    """Build the service and its routes; pass the models (and the single-word table) to
    share them between apps."""
    built = build_service(
        settings,
        embedder=embedder,
        pair_scorer=pair_scorer,
        word_vectors=word_vectors,
        clock=clock,
    )
    service, cached = built.service, built.embedder
    # The first model call is slow (allocation, kernel selection): pay it before serving.
    cached.embed([_WARM_UP])
    metrics = Metrics()
    metrics.model_calls.set_function(lambda: cached.model_calls)
    gate = ScopeGate()
    # A check that waits on nothing remote may run on the loop's thread when it is alone.
    dispatcher = CheckDispatcher(
        inline=settings.postgres_url is None and settings.judge_base_url is None
    )
    health = _Health()
    ring = KeyRing(built.keys, settings.api_key, cache_seconds=settings.key_cache_seconds)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        stop = threading.Event()

        def maintain_until_stopped() -> None:
            next_purge = next_round = next_warning = 0.0
            while not stop.is_set():
                try:
                    if time.monotonic() >= next_round:
                        next_round = time.monotonic() + settings.refresh_interval_seconds
                        health.store_up = _store_answers(built.ledger, health.store_up)
                        if health.store_up:
                            # Policies set through another worker or replica reach this one.
                            service.refresh()
                            if time.monotonic() >= next_purge:
                                # The next purge is due a full interval later, even after a
                                # failed one: a purge never runs back to back with itself.
                                next_purge = time.monotonic() + settings.purge_interval_seconds
                                with dispatcher.held_off():
                                    removed = service.purge(
                                        settings.retention_seconds, settings.log_retention_seconds
                                    )
                                if removed:
                                    logger.info("purged %d calls past retention", removed)
                    if health.store_up:
                        with dispatcher.held_off():
                            service.maintain()
                except Exception as exc:
                    # Never the end of the thread: health, policies and purges go on. Said
                    # at most once a round, not at every checkpoint.
                    if time.monotonic() >= next_warning:
                        next_warning = time.monotonic() + settings.refresh_interval_seconds
                        if isinstance(exc, StoreUnavailable):
                            logger.warning("maintenance skipped a round: %s", exc.message)
                        else:
                            logger.exception("maintenance failed; it goes on")
                stop.wait(settings.checkpoint_interval_seconds)

        # A thread of our own, joined before the ledger closes: closing a SQLite
        # connection while another thread is inside it would crash the process.
        purger = threading.Thread(target=maintain_until_stopped, name="tooldedup-maintenance")
        purger.start()
        try:
            yield
        finally:
            stop.set()
            purger.join()
            built.close()

    app = FastAPI(
        title="tooldedup",
        version=VERSION,
        summary="Stops AI agents from running the same side-effecting tool call twice.",
        lifespan=lifespan,
    )
    app.state.service = service
    app.state.embedder = cached
    app.state.dispatcher = dispatcher
    install_error_handlers(app)

    @app.post("/v1/check", response_model=CheckResponse, responses=_ERRORS)
    async def check(
        body: CheckRequest,
        principal: Agent,
        idempotency_key_header: Annotated[
            str | None, Header(alias="Idempotency-Key", max_length=256)
        ] = None,
        answers_header: Annotated[
            str | None, Header(alias="X-Tooldedup-Answers", max_length=256)
        ] = None,
    ) -> Response:
        """Decide whether a tool call may run; ``proceed`` means a claim is already stored."""
        key = None if body.idempotency_key is None else body.idempotency_key.strip()
        if idempotency_key_header is not None:
            header_key = idempotency_key_header.strip()
            if not header_key:
                raise InvalidInput("Idempotency-Key header must not be blank")
            if key is not None and key != header_key:
                raise InvalidInput("Idempotency-Key header and body idempotency_key differ")
            key = header_key
        call = ToolCall(
            session_id=body.session_id,
            tool=body.tool,
            args=body.args,
            scope=body.scope,
            run_id=body.run_id,
            step=None if body.step is None else str(body.step),
            idempotency_key=key,
            attempt_token=body.attempt_token,
            tenant=principal.tenant,
            handles_ask=_handles_ask(body, answers_header),
            confirm_token=body.confirm_token,
        )
        with metrics.in_progress.track_inprogress():
            async with gate.hold(call.effective_scope):
                # Read only where a check may run on the loop (not with workers, PostgreSQL
                # or a judge).
                light = (
                    dispatcher.inline
                    and is_light(body.args)
                    and not service.policies_for(principal.tenant).for_tool(body.tool).pair_model
                )
                decision = await dispatcher.run(
                    light, service.check, call, dry_run=body.dry_run, key_id=principal.key_id
                )
        metrics.observe(decision)
        answer = CheckResponse(
            decision=decision.kind.value,
            call_id=decision.call_id,
            check_id=decision.check_id,
            idempotency_key=key if key is not None else decision.intent_key,
            match=_match_out(decision.match),
            explain=explain_data(decision),
            note=decision.note,
            ask=None
            if decision.ask is None
            else AskOut(
                confirm_token=decision.ask.confirm_token, expires_at=_iso(decision.ask.expires_at)
            ),
            observed=_observed_out(decision),
        )
        # Built and checked above: the route's response model would only check it again.
        return Response(answer.model_dump_json(), media_type="application/json")

    @app.post("/v1/calls/{call_id}/complete", response_model=CallOut, responses=_ERRORS)
    def complete(call_id: str, body: CompleteRequest, principal: Agent) -> CallOut:
        """Report the outcome of a call that was run."""
        outcome = Outcome(
            status=CallStatus(body.status),
            result=body.result,
            error=body.error,
            failure_class=None if body.failure_class is None else FailureClass(body.failure_class),
        )
        return CallOut.of(service.complete(principal.tenant, call_id, outcome))

    @app.post("/v1/calls/{call_id}/lease", response_model=CallOut, responses=_ERRORS)
    def extend_lease(call_id: str, body: LeaseRequest, principal: Agent) -> CallOut:
        """Keep a pending claim alive while its tool runs: for the check that claimed it."""
        record = service.extend_lease(principal.tenant, call_id, body.check_id, body.seconds)
        return CallOut.of(record)

    @app.post("/v1/feedback", response_model=FeedbackOut, status_code=201, responses=_ERRORS)
    def feedback(body: FeedbackRequest, principal: Agent) -> FeedbackOut:
        """Label a check for calibration; 'distinct' on a match also stops it recurring."""
        stored = service.feedback(
            principal.tenant, body.check_id, body.label, body.note, body.source, principal.key_id
        )
        return FeedbackOut(**dataclasses.asdict(stored))

    @app.get("/v1/calls/{call_id}", response_model=CallOut, responses=_ERRORS)
    def get_call(call_id: str, principal: CallReader) -> CallOut:
        """One call and its state."""
        return CallOut.of(service.get(principal.tenant, call_id))

    @app.get("/v1/sessions/{session_id}/calls", response_model=SessionCalls, responses=_ERRORS)
    def session_calls(
        session_id: str,
        principal: CallReader,
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
        offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0,
    ) -> SessionCalls:
        """A session's calls, oldest first."""
        records = service.session_calls(principal.tenant, session_id, limit, offset)
        return SessionCalls(session_id=session_id, calls=[CallOut.of(r) for r in records])

    # ``:path`` lets a tool name hold "/" (as "%2F" or plain), as MCP tool names may.
    @app.get("/v1/tools/{tool:path}/policy", responses=_ERRORS)
    def get_policy(tool: str, principal: Anyone) -> dict[str, Any]:
        """The policy in force for ``tool``."""
        tool = _tool_name(tool)
        policies = service.policies_for(principal.tenant)
        custom = tool in policies.tools
        data = policy_to_mapping(policies.for_tool(tool))
        return {"tool": tool, "custom": custom, "policy": data}

    @app.put("/v1/tools/{tool:path}/policy", responses=_ERRORS)
    def put_policy(tool: str, body: PolicyBody, principal: Admin) -> dict[str, Any]:
        """Set ``tool``'s policy; settings left out take the defaults."""
        tool = _tool_name(tool)
        data = body.model_dump(exclude_none=True)
        policy = policy_from_mapping(data, service.policies_for(principal.tenant).defaults)
        service.set_policy(principal.tenant, tool, policy, data)
        return {"tool": tool, "custom": True, "policy": policy_to_mapping(policy)}

    # Both run on the event loop, never queued behind checks in the thread pool.
    @app.get("/healthz", responses={503: {"description": "the store is unreachable"}})
    async def healthz() -> JSONResponse:
        """The service answers; 503 while its store is unreachable (checked every round
        of the maintenance thread, so this never waits on the database)."""
        store = "up" if health.store_up else "down"
        body: dict[str, str | None] = {"status": "ok" if health.store_up else "degraded"}
        body["store"] = store
        body["model"] = cached.model_id
        body["pair_model"] = built.pair_model
        body["version"] = VERSION
        return JSONResponse(body, status_code=200 if health.store_up else 503)

    @app.get("/metrics")
    async def prometheus_metrics(principal: Admin) -> Response:
        """Prometheus text exposition: every tenant's traffic, so for the operator only (an
        admin of the default tenant)."""
        if principal.tenant != DEFAULT_TENANT:
            raise Forbidden("metrics cover every tenant: they need the default tenant's admin")
        return Response(metrics.render(), media_type=CONTENT_TYPE_LATEST)

    app.include_router(admin_router(service, built.keys, ring, settings.default_rate))
    reviewer = Reviewer(
        built.ledger, cached, service.policies_for, service.canonicalizer, clock=clock
    )
    app.include_router(review_router(reviewer))
    app.add_middleware(JsonBodyMiddleware, max_bytes=settings.max_body_bytes)
    # Added last, so it runs first: an unauthenticated caller learns nothing from the body.
    app.add_middleware(
        AccessMiddleware,
        ring=ring,
        limiter=RateLimiter(),
        # The page's files hold no data: every read and label it makes sends the key.
        open_paths=frozenset({"/healthz", *PAGE_PATHS}),
        default_rate=settings.default_rate,
    )
    # Added last, so outside the other middleware: every request in flight is counted,
    # whatever answers it (refused keys and bodies too).
    app.add_middleware(dispatcher.counting)
    return app
