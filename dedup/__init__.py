"""tooldedup core: canonical form, policies, the matching funnel and the ledger."""

from dedup.canonical import canonicalize, intent_key
from dedup.errors import Conflict, DedupError, IdempotencyKeyReused, InvalidInput, NotFound
from dedup.funnel import ExactStage, FunnelStage, FuzzyStage, Proposal, SemanticStage, run_funnel
from dedup.ledger import Ledger, LogEntry, SqliteLedger
from dedup.policy import BorderlineAction, CompareMode, PolicySet, ToolPolicy
from dedup.protocols import Embedder, VectorIndex
from dedup.records import (
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
from dedup.service import DedupService

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
