"""tooldedup's light client: the HTTP API as typed calls, and ``guard`` for tools.

Only httpx is required. The MCP proxy and the framework hooks need their extras:
``tooldedup-client[mcp]``, ``[openai-agents]``, ``[langchain]``.
"""

from tooldedup_client.client import AsyncTooldedup, Tooldedup
from tooldedup_client.errors import (
    CheckTooLarge,
    Conflict,
    IdempotencyKeyReused,
    InProgress,
    InvalidInput,
    NotFound,
    Reconcile,
    ServiceUnavailable,
    StoreUnavailable,
    TooldedupError,
    Unauthorized,
)
from tooldedup_client.guard import (
    Attempt,
    Guard,
    ReplayedFailure,
    current_session,
    default_classify,
    session_scope,
)
from tooldedup_client.records import (
    Call,
    CheckResult,
    Decision,
    FailureClass,
    Feedback,
    Match,
    Status,
)

__all__ = [
    "AsyncTooldedup",
    "Attempt",
    "Call",
    "CheckResult",
    "CheckTooLarge",
    "Conflict",
    "Decision",
    "FailureClass",
    "Feedback",
    "Guard",
    "IdempotencyKeyReused",
    "InProgress",
    "InvalidInput",
    "Match",
    "NotFound",
    "Reconcile",
    "ReplayedFailure",
    "ServiceUnavailable",
    "Status",
    "StoreUnavailable",
    "Tooldedup",
    "TooldedupError",
    "Unauthorized",
    "current_session",
    "default_classify",
    "session_scope",
]
