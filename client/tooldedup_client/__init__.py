"""tooldedup's light client: the HTTP API as typed calls, and ``guard`` for tools.

Only httpx is required. The MCP proxy and the framework hooks need their extras:
``tooldedup-client[mcp]``, ``[openai-agents]``, ``[langchain]``.
"""

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version

from tooldedup_client.client import AsyncTooldedup, Tooldedup
from tooldedup_client.errors import (
    CheckTooLarge,
    ConfirmTokenRejected,
    Conflict,
    Forbidden,
    IdempotencyKeyReused,
    InProgress,
    InvalidInput,
    LeaseLost,
    NotFound,
    RateLimited,
    Reconcile,
    ServiceUnavailable,
    StoreUnavailable,
    TenantCallLimit,
    TooldedupError,
    Unauthorized,
)
from tooldedup_client.guard import (
    CONFIRM_ARG,
    Attempt,
    Guard,
    ReplayedFailure,
    current_session,
    default_classify,
    for_the_model,
    session_scope,
)
from tooldedup_client.records import (
    Ask,
    Call,
    CheckResult,
    Decision,
    FailureClass,
    Feedback,
    Match,
    Observed,
    Status,
)

try:
    __version__ = _version("tooldedup-client")
except PackageNotFoundError:  # imported from a checkout that was never installed
    __version__ = "0+unknown"

__all__ = [
    "CONFIRM_ARG",
    "Ask",
    "AsyncTooldedup",
    "Attempt",
    "Call",
    "CheckResult",
    "CheckTooLarge",
    "ConfirmTokenRejected",
    "Conflict",
    "Decision",
    "FailureClass",
    "Feedback",
    "Forbidden",
    "Guard",
    "IdempotencyKeyReused",
    "InProgress",
    "InvalidInput",
    "LeaseLost",
    "Match",
    "NotFound",
    "Observed",
    "RateLimited",
    "Reconcile",
    "ReplayedFailure",
    "ServiceUnavailable",
    "Status",
    "StoreUnavailable",
    "TenantCallLimit",
    "Tooldedup",
    "TooldedupError",
    "Unauthorized",
    "__version__",
    "current_session",
    "default_classify",
    "for_the_model",
    "session_scope",
]
