"""tooldedup core: canonical form, policies, the matching funnel and the ledger."""

from tooldedup.dedup.canonical import canonicalize, intent_key
from tooldedup.dedup.errors import (
    Conflict,
    DedupError,
    IdempotencyKeyReused,
    InvalidInput,
    NotFound,
)
from tooldedup.dedup.funnel import (
    ExactStage,
    FunnelStage,
    FuzzyStage,
    Proposal,
    SemanticStage,
    run_funnel,
)
from tooldedup.dedup.ledger import Ledger, LogEntry, SqliteLedger
from tooldedup.dedup.policy import BorderlineAction, CompareMode, PolicySet, ToolPolicy
from tooldedup.dedup.protocols import Embedder, VectorIndex
from tooldedup.dedup.records import (
    CallRecord,
    CallStatus,
    CanonicalCall,
    Decision,
    DecisionKind,
    FailureClass,
    Match,
    Outcome,
    SemanticLeaf,
    SideEffect,
    Stage,
    StageReport,
    ToolCall,
)
from tooldedup.dedup.service import DedupService

__all__ = [
    "BorderlineAction",
    "CallRecord",
    "CallStatus",
    "CanonicalCall",
    "CompareMode",
    "Conflict",
    "Decision",
    "DecisionKind",
    "DedupError",
    "DedupService",
    "Embedder",
    "ExactStage",
    "FailureClass",
    "FunnelStage",
    "FuzzyStage",
    "IdempotencyKeyReused",
    "InvalidInput",
    "Ledger",
    "LogEntry",
    "Match",
    "NotFound",
    "Outcome",
    "PolicySet",
    "Proposal",
    "SemanticLeaf",
    "SemanticStage",
    "SideEffect",
    "SqliteLedger",
    "Stage",
    "StageReport",
    "ToolCall",
    "ToolPolicy",
    "VectorIndex",
    "canonicalize",
    "intent_key",
    "run_funnel",
]
