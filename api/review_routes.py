"""The decision log and the review page: ``/v1/log``, ``/v1/log/{check_id}``,
``/v1/review/summary`` (reader or admin), the page itself at ``/ui``, and whether the page
needs a key (``/ui/access``)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from importlib import resources
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.responses import RedirectResponse
from starlette.concurrency import run_in_threadpool

from tooldedup.api.access import ACCESS_PROBE_PATH, LOG_READERS, allow, probed_principal
from tooldedup.api.schemas import (
    CallOut,
    DecisionOut,
    ErrorBody,
    LogPage,
    PageAccess,
    SummaryOut,
)
from tooldedup.calibration.review import Reviewer
from tooldedup.dedup.access import Principal
from tooldedup.dedup.errors import InvalidInput
from tooldedup.dedup.ledger.base import LogEntry, LogQuery

__all__ = ["PAGE_FILES", "PAGE_PATHS", "UI_SECURITY_HEADERS", "review_router"]

_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (401, 403, 404, 422, 429)
}
LogReader = Annotated[Principal, Depends(allow(LOG_READERS))]
Decision = Literal["proceed", "duplicate", "in_progress", "reconcile", "ask"]
# "any": every check observe mode let through; or one would-be answer.
ObservedFilter = Literal["any", "duplicate", "in_progress", "reconcile", "ask"]
Stage = Literal["exact", "equivalent", "fuzzy", "semantic", "judge", "none"]
Score = Annotated[float | None, Query(ge=-1.0, le=1.0)]
When = Annotated[datetime | None, Query()]

# The page's files: no build step, nothing inline, nothing from another origin.
PAGE_FILES = {
    "/ui": ("index.html", "text/html; charset=utf-8"),
    "/ui/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/ui/app.css": ("app.css", "text/css; charset=utf-8"),
    "/ui/icon.svg": ("icon.svg", "image/svg+xml"),
}
# What needs no key: the files (they hold no data) and the redirect to them.
PAGE_PATHS = frozenset({*PAGE_FILES, "/ui/"})
# Scripts and styles only from the page's own files; data only from this service.
UI_SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self';"
        " connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def _seconds(value: datetime | None, name: str) -> float | None:
    """Seconds since 1970 of a query time; a time with no zone is UTC, as the page shows."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    try:
        return value.timestamp()
    except (OverflowError, ValueError):
        raise InvalidInput(f"{name} is out of range") from None


def review_router(reviewer: Reviewer) -> APIRouter:
    """The log, one decision, the summary and the page, inside the caller's tenant."""
    router = APIRouter()

    @router.get("/v1/log", response_model=LogPage, responses=_ERRORS)
    async def decision_log(
        principal: LogReader,
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
        before: Annotated[str | None, Query(min_length=1, max_length=64)] = None,
        tool: Annotated[str | None, Query(min_length=1, max_length=256)] = None,
        decision: Decision | None = None,
        stage: Stage | None = None,
        min_score: Score = None,
        max_score: Score = None,
        since: When = None,
        until: When = None,
        borderline: bool | None = None,
        labelled: bool | None = None,
        observed: ObservedFilter | None = None,
    ) -> LogPage:
        """The tenant's decision log, newest first, with each entry's latest label.

        Filters combine; ``stage=none`` is an entry nothing matched; ``since``/``until``
        are ISO 8601 times; ``observed`` picks checks observe mode let through (``any``,
        or one would-be answer). An ``ask`` entry carries ``ask_ending``: confirmed,
        abandoned, expired or open. Pass ``next_before`` as ``before`` for the next page.
        """
        query = LogQuery(
            principal.tenant,
            limit,
            before,
            tool,
            decision,
            stage,
            min_score,
            max_score,
            _seconds(since, "since"),
            _seconds(until, "until"),
            borderline,
            labelled,
            observed,
        )
        page = await run_in_threadpool(reviewer.page, query)
        endings = await run_in_threadpool(reviewer.ask_endings, principal.tenant, page)
        entries = [_entry_out(entry, endings) for entry in page]
        # The cursor is a check id: a row number would tell how busy other tenants are.
        next_before = page[-1].check_id if len(page) == limit else None
        return LogPage(entries=entries, next_before=next_before)

    @router.get("/v1/log/{check_id}", response_model=DecisionOut, responses=_ERRORS)
    async def one_decision(check_id: str, principal: LogReader) -> DecisionOut:
        """One decision beside the call it matched (or, when nothing matched, the closest
        call of the tool), field by field, with the cosine of each free-text field."""
        view = await run_in_threadpool(reviewer.decision, principal.tenant, check_id)
        return DecisionOut(
            entry=dataclasses.asdict(view.entry),
            claimed=None if view.claimed is None else CallOut.of(view.claimed),
            compared_with=None if view.compared_with is None else CallOut.of(view.compared_with),
            relation=view.relation,  # type: ignore[arg-type]  # "match" or "closest"
            fields=[dataclasses.asdict(f) for f in view.fields],  # type: ignore[misc]
        )

    @router.get("/v1/review/summary", response_model=SummaryOut, responses=_ERRORS)
    async def summary(
        principal: LogReader, hours: Annotated[float, Query(gt=0, le=24 * 90)] = 24.0
    ) -> SummaryOut:
        """Checks per decision and stage over time, per tool, latency percentiles, the
        scores of labelled checks, and the labels calibration still needs per tool."""
        found = await run_in_threadpool(reviewer.summary, principal.tenant, hours)
        return SummaryOut(**dataclasses.asdict(found))

    @router.get(ACCESS_PROBE_PATH, response_model=PageAccess, include_in_schema=False)
    async def page_access(request: Request, response: Response) -> PageAccess:
        """Whether this caller, as it is, would be refused the log: never itself a 401."""
        principal = probed_principal(request)
        response.headers.update(UI_SECURITY_HEADERS)
        return PageAccess(key_needed=principal is None or principal.role not in LOG_READERS)

    @router.get("/ui/", include_in_schema=False)
    async def page_with_slash() -> RedirectResponse:
        return RedirectResponse("/ui", status_code=308)

    for path, (name, media) in PAGE_FILES.items():
        body = resources.files("tooldedup.api.ui").joinpath(name).read_bytes()
        router.add_api_route(path, _static(body, media), include_in_schema=False)
    return router


def _entry_out(entry: LogEntry, endings: dict[str, str]) -> dict[str, Any]:
    data = dataclasses.asdict(entry)
    if entry.check_id in endings:
        data["ask_ending"] = endings[entry.check_id]
    return data


def _static(body: bytes, media: str) -> Any:
    async def page() -> Response:
        return Response(body, media_type=media, headers=UI_SECURITY_HEADERS)

    return page
