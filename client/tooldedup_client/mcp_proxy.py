"""``tooldedup-mcp``: an MCP proxy that checks every tool call with tooldedup first.

    tooldedup-mcp --service http://127.0.0.1:8000 --session ID -- <upstream command…>
    tooldedup-mcp --service … --session ID --upstream-url http://host/mcp --transport http

Built on fastmcp's ``create_proxy``, which forwards tools, resources, prompts, sampling,
elicitation, roots, logging and progress; ``DedupMiddleware.on_call_tool`` does the rest.
A repeat answers with the service's note beside the stored result. A call the service asks
about answers with the note as the tool's result (an error result only for a tool with an
output schema); every listed write tool takes an optional ``confirm_token``, which runs the
call when the model sends it again with the token given (the proxy strips it before calling
upstream).
Needs ``pip install 'tooldedup-client[mcp]'``.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import json
import logging
import os
import sys
from collections.abc import Coroutine, Sequence
from typing import Any

import mcp.types as mt
from fastmcp.client.transports import StdioTransport
from fastmcp.server import create_proxy
from fastmcp.server.dependencies import get_http_headers
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools.base import Tool, ToolResult
from pydantic import ValidationError

from tooldedup_client.client import AsyncTooldedup
from tooldedup_client.errors import ConfirmTokenRejected, InvalidInput, ServiceUnavailable
from tooldedup_client.guard import CONFIRM_ARG
from tooldedup_client.records import Decision, FailureClass, Status

__all__ = ["DedupMiddleware", "main"]

logger = logging.getLogger(__name__)

SESSION_META_KEY = "tooldedup/session"
SESSION_HEADER = "x-tooldedup-session"


async def _shielded(report: Coroutine[Any, Any, None]) -> None:
    """Run a report to its end even if the call is being cancelled."""
    task = asyncio.ensure_future(report)
    try:
        await asyncio.shield(task)
    except asyncio.CancelledError:
        await task  # the report still finishes before the cancellation goes on
        raise


def _text_result(text: str, *, is_error: bool = True) -> ToolResult:
    return ToolResult(content=[mt.TextContent(type="text", text=text)], is_error=is_error)


def _stored(result: ToolResult) -> dict[str, Any]:
    """The upstream's ``CallToolResult`` as JSON, exactly as it goes on the wire."""
    wire = result.to_mcp_result()
    if not isinstance(wire, mt.CallToolResult):
        content = wire[0] if isinstance(wire, tuple) else wire
        structured = wire[1] if isinstance(wire, tuple) else None
        wire = mt.CallToolResult(content=content, structured_content=structured)
    return dict(wire.model_dump(mode="json", by_alias=True, exclude_none=True))


def _replayed(stored: Any, note: str | None = None) -> ToolResult:
    """A stored ``CallToolResult`` back as a result, its content unchanged (anything else
    stored for this call, by another client or by hand, comes back as its JSON text); the
    service's note for the model goes first, as a text block of its own."""
    try:
        result = ToolResult.from_mcp_result(mt.CallToolResult.model_validate(stored))
    except ValidationError:
        text = stored if isinstance(stored, str) else json.dumps(stored)
        result = ToolResult(content=[mt.TextContent(type="text", text=text)])
    if note is None:
        return result
    told = mt.TextContent(type="text", text=note)
    return result.model_copy(update={"content": [told, *result.content]})


def _with_confirm(tool: Tool) -> Tool:
    """``tool`` as listed, with an optional ``confirm_token`` argument (unless it has one)."""
    properties = dict(tool.parameters.get("properties") or {})
    if CONFIRM_ARG in properties or (tool.annotations and tool.annotations.read_only_hint):
        return tool
    properties[CONFIRM_ARG] = {
        "type": "string",
        "description": "only when tooldedup asked to confirm this call: the token it gave",
    }
    return tool.model_copy(update={"parameters": {**tool.parameters, "properties": properties}})


def _own_confirm(tool: Tool | None) -> bool:
    """Whether the upstream tool itself takes an argument named ``confirm_token``."""
    properties = (getattr(tool, "parameters", None) or {}).get("properties") or {}
    return CONFIRM_ARG in properties


def _read_only(tool: Tool | None) -> bool:
    annotations = getattr(tool, "annotations", None)
    if annotations is None:
        return False
    hint = getattr(annotations, "read_only_hint", None)
    if hint is None:
        hint = getattr(annotations, "readOnlyHint", None)
    return bool(hint)


class DedupMiddleware(Middleware):
    """Check ``tools/call`` with tooldedup; forward only on ``proceed``; replay duplicates."""

    def __init__(self, client: AsyncTooldedup, session_id: str, *, fail_open: bool = False) -> None:
        self._client = client
        self._session_id = session_id
        self._fail_open = fail_open

    def _session(self, context: MiddlewareContext[mt.CallToolRequestParams]) -> str:
        """The session: ``_meta["tooldedup/session"]``, the header, or ``--session``."""
        meta: Any = None
        request = getattr(context.fastmcp_context, "request_context", None)
        if request is not None:
            meta = request.meta
        if meta is None and context.message.meta is not None:
            meta = dict(context.message.meta)
        from_meta = meta.get(SESSION_META_KEY) if isinstance(meta, dict) else None
        if isinstance(from_meta, str) and from_meta.strip():
            return from_meta.strip()
        header = get_http_headers(include={SESSION_HEADER}).get(SESSION_HEADER, "").strip()
        return header or self._session_id

    @staticmethod
    async def _tool(context: MiddlewareContext[mt.CallToolRequestParams]) -> Tool | None:
        """The called tool as the upstream lists it (None outside a server context)."""
        if context.fastmcp_context is None:
            return None
        return await context.fastmcp_context.fastmcp.get_tool(context.message.name)

    async def on_list_tools(
        self,
        context: MiddlewareContext[mt.ListToolsRequest],
        call_next: CallNext[mt.ListToolsRequest, Sequence[Tool]],
    ) -> Sequence[Tool]:
        """The upstream's tools, each write tool with an optional ``confirm_token``."""
        return [_with_confirm(tool) for tool in await call_next(context)]

    async def on_call_tool(
        self,
        context: MiddlewareContext[mt.CallToolRequestParams],
        call_next: CallNext[mt.CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        """Check, then forward, replay, or say why not."""
        params = context.message
        tool = await self._tool(context)
        if _read_only(tool):
            return await call_next(context)
        arguments = dict(params.arguments or {})
        confirm: str | None = None
        if CONFIRM_ARG in arguments and not _own_confirm(tool):
            # The upstream never sees the token: it is this proxy's argument.
            token = arguments.pop(CONFIRM_ARG)
            confirm = token if isinstance(token, str) and token else None
            params = params.model_copy(update={"arguments": arguments})
            context = context.copy(message=params)
        try:
            check = await self._client.check(
                params.name,
                params.arguments or {},
                session_id=self._session(context),
                answers=("ask",),
                confirm_token=confirm,
            )
        except ConfirmTokenRejected as exc:
            return _text_result(f"tooldedup: {params.name} was not run: {exc.message}")
        except ServiceUnavailable as exc:
            # Open only if the check surely stored nothing (see ServiceUnavailable).
            if self._fail_open and not exc.maybe_reached:
                logger.warning("tooldedup unavailable; forwarding %s unchecked", params.name)
                return await call_next(context)
            return _text_result(f"tooldedup is unavailable, so {params.name} was not run")
        match = check.match
        if check.decision is Decision.PROCEED and check.call_id is None:
            return await call_next(context)  # a read, by the service's policy: no claim
        if check.decision is Decision.ASK and check.note is not None:
            # A plain result, the model's to read like any other; but a tool with an output
            # schema must return structured content that matches it (the MCP client rejects
            # a result without it), which a question cannot, so there it is an error result.
            has_schema = tool is not None and tool.output_schema is not None
            return _text_result(check.note, is_error=has_schema)
        if check.decision is Decision.DUPLICATE and match is not None:
            stored = match.result if match.status is Status.SUCCEEDED else match.error
            if stored is not None:
                return _replayed(stored, check.note)
        if check.note is not None and check.decision is not Decision.PROCEED:
            return _text_result(check.note)
        if check.decision is not Decision.PROCEED or check.call_id is None:
            call = match.call_id if match is not None else "?"
            return _text_result(
                f"tooldedup: {params.name} was not run: the same call ({call}) is"
                f" {check.decision.value.replace('_', ' ')}"
            )
        try:
            result = await call_next(context)
        except BaseException as exc:
            # The upstream may or may not have acted: a repeat must reconcile first.
            await _shielded(self._report(check.call_id, None, exc))
            raise
        await _shielded(self._report(check.call_id, result, None))
        return result

    async def _report(
        self, call_id: str, result: ToolResult | None, exc: BaseException | None
    ) -> None:
        try:
            if result is not None and not result.is_error:
                await self._client.complete(call_id, Status.SUCCEEDED, result=_stored(result))
            elif result is not None:
                # The upstream said the call failed: it did not take effect.
                await self._client.complete(
                    call_id,
                    Status.FAILED,
                    error=_stored(result),
                    failure_class=FailureClass.RETRYABLE,
                )
            else:
                error = {"type": type(exc).__name__}
                await self._client.complete(
                    call_id, Status.FAILED, error=error, failure_class=FailureClass.AMBIGUOUS
                )
        except InvalidInput as refused:
            # Too large or too deep to store: the outcome without its content.
            note = {"unstored": refused.message[:500]}
            failed = result is None or result.is_error
            status = Status.FAILED if failed else Status.SUCCEEDED
            kind = FailureClass.AMBIGUOUS if result is None else FailureClass.RETRYABLE
            await self._client.complete(
                call_id,
                status,
                result=None if failed else note,
                error=note if failed else None,
                failure_class=kind if failed else None,
            )
        except Exception:
            logger.warning("could not report the outcome of %s", call_id, exc_info=True)


_DESCRIPTION = "An MCP proxy that checks every tool call with tooldedup before it runs."
_EPILOG = """examples:
  tooldedup-mcp --service http://127.0.0.1:8000 --session ID -- <upstream command...>
  tooldedup-mcp --service http://127.0.0.1:8000 --session ID \\
      --upstream-url http://host/mcp --transport http

needs: pip install 'tooldedup-client[mcp]'"""


def _version() -> str:
    try:
        return importlib.metadata.version("tooldedup-client")
    except importlib.metadata.PackageNotFoundError:  # run from a checkout never installed
        return "0+unknown"


def _parser() -> argparse.ArgumentParser:
    # The epilog's examples keep their line breaks; every option says its own default.
    parser = argparse.ArgumentParser(
        prog="tooldedup-mcp",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"tooldedup-mcp {_version()}",
        help="print the version of tooldedup-mcp and exit",
    )
    parser.add_argument(
        "--service", required=True, help="tooldedup's base URL, e.g. http://127.0.0.1:8000"
    )
    parser.add_argument("--session", required=True, help="the dedup session of this client")
    parser.add_argument(
        "--api-key-env",
        default=None,
        help="environment variable holding tooldedup's API key (default: no key)",
    )
    parser.add_argument(
        "--upstream-url",
        default=None,
        help="a streamable-HTTP upstream MCP server, instead of -- <upstream command>",
    )
    parser.add_argument(
        "--transport",
        choices=["stdio", "http"],
        default="stdio",
        help="how this proxy serves its own MCP client (default: %(default)s)",
    )
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on with --transport http (default: %(default)s)",
    )
    parser.add_argument(
        "--port",
        type=int,
        default=8765,
        help="port to listen on with --transport http (default: %(default)s)",
    )
    parser.add_argument(
        "--fail-open",
        action="store_true",
        help="forward calls unchecked while tooldedup is unreachable (default: refuse them)",
    )
    parser.add_argument(
        "upstream",
        nargs=argparse.REMAINDER,
        help="-- then the command (and arguments) that starts a stdio upstream MCP server",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the proxy until its client disconnects (stdio) or it is stopped (http)."""
    args = _parser().parse_args(argv)
    command = list(args.upstream)
    if command and command[0] == "--":
        command = command[1:]
    if bool(command) == bool(args.upstream_url):
        print("tooldedup-mcp: give either -- <upstream command> or --upstream-url", file=sys.stderr)
        return 2
    api_key = None
    if args.api_key_env:
        api_key = os.environ.get(args.api_key_env)
        if not api_key:
            print(f"tooldedup-mcp: ${args.api_key_env} is not set", file=sys.stderr)
            return 2
    target: Any = args.upstream_url
    if command:
        # The upstream gets this environment, but not tooldedup's key.
        hidden = {"TOOLDEDUP_API_KEY", args.api_key_env}
        env = {k: v for k, v in os.environ.items() if k not in hidden}
        target = StdioTransport(command=command[0], args=command[1:], env=env)
    client = AsyncTooldedup(args.service, api_key=api_key)
    proxy = create_proxy(target, name="tooldedup-mcp")
    proxy.add_middleware(DedupMiddleware(client, args.session, fail_open=args.fail_open))
    if args.transport == "http":
        proxy.run(transport="http", host=args.host, port=args.port, show_banner=False)
    else:
        proxy.run(transport="stdio", show_banner=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
