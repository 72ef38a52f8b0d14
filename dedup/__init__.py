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
    EquivalentStage,
    ExactStage,
    FunnelHooks,
    FunnelStage,
    FuzzyStage,
    Proposal,
    run_funnel,
)
from tooldedup.dedup.ledger import Ledger, LogEntry, SqliteLedger
from tooldedup.dedup.model_verifier import ModelVerifier
from tooldedup.dedup.policy import BorderlineAction, CompareMode, PolicySet, ToolPolicy
from tooldedup.dedup.protocols import Embedder, PairScorer, VectorIndex
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
from tooldedup.dedup.semantic import SemanticStage
from tooldedup.dedup.service import DedupService
from tooldedup.dedup.values import ValueKind
from tooldedup.dedup.verifier import RuleVerifier, Verdict, VerdictKind, Verifier

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
    "EquivalentStage",
    "ExactStage",
    "FailureClass",
    "FunnelHooks",
    "FunnelStage",
    "FuzzyStage",
    "IdempotencyKeyReused",
    "InvalidInput",
    "Ledger",
    "LogEntry",
    "Match",
    "ModelVerifier",
    "NotFound",
    "Outcome",
    "PairScorer",
    "PolicySet",
    "Proposal",
    "RuleVerifier",
    "SemanticLeaf",
    "SemanticStage",
    "SideEffect",
    "SqliteLedger",
    "Stage",
    "StageReport",
    "ToolCall",
    "ToolPolicy",
    "ValueKind",
    "VectorIndex",
    "Verdict",
    "VerdictKind",
    "Verifier",
    "canonicalize",
    "intent_key",
    "run_funnel",
]
