"""Small protocols for the parts the core does not implement itself, and what it hands them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from tooldedup.dedup.policy import ToolPolicy
from tooldedup.dedup.records import FieldReading, ValueKind
from tooldedup.dedup.verifier import Verifier

__all__ = [
    "CachingEmbedder",
    "Embedder",
    "LanguagePack",
    "PairScorer",
    "SpellingBudget",
    "TextReader",
    "VectorIndex",
    "Vectors",
]

Vectors = npt.NDArray[np.float32]


class Embedder(Protocol):
    """Turns texts into L2-normalised vectors, one row per text."""

    @property
    def model_id(self) -> str:
        """A name that changes whenever the vectors would change."""
        ...

    @property
    def dims(self) -> int:
        """The size of each vector."""
        ...

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` in one model call; rows are unit length."""
        ...


class CachingEmbedder(Embedder, Protocol):
    """An embedder that keeps vectors in memory, and those of stored calls in a shared store."""

    def embed_new(self, texts: Sequence[str]) -> Vectors:
        """Vectors for the texts a check compares, which the shared store seldom holds: from
        memory or the model, without asking the store."""
        ...

    def persist(self, texts: Sequence[str]) -> None:
        """Store these texts' vectors now (a claimed call's: other replicas will need them)."""
        ...

    def keep(self, texts: Sequence[str]) -> None:
        """Store in the background those of these texts' vectors this process computed and
        the store lacks (a stored call's, embedded again to load its group)."""
        ...


class VectorIndex(Protocol):
    """Inner-product search over small groups of vectors (one group per candidate set)."""

    def has(self, group: str) -> bool:
        """Whether ``group`` is loaded."""
        ...

    def load(self, group: str, keys: Sequence[int], vectors: Vectors) -> None:
        """Replace ``group`` with these keyed vectors."""
        ...

    def add(self, group: str, key: int, vector: Vectors) -> None:
        """Add one vector to ``group`` if the group is loaded."""
        ...

    def search(self, group: str, query: Vectors, keys: Sequence[int]) -> dict[int, float]:
        """Cosine of ``query`` against each of ``keys`` held in ``group``."""
        ...

    def clear(self) -> None:
        """Forget every group."""
        ...


class PairScorer(Protocol):
    """Reads two texts together and scores whether they ask for the same thing."""

    @property
    def model_id(self) -> str:
        """A name that changes whenever the scores would change."""
        ...

    def score(self, first: str, second: str) -> float | None:
        """A logit, the same in either order (above 0: likely one request); None: too long."""
        ...


class TextReader(Protocol):
    """Says whether the model and the verifier's rules read a text, or why they do not.

    A text they do not read cannot be compared by meaning: two of them score alike however
    much they differ (unknown tokens all look the same to the model), and the rules that catch
    a flipped word know English only. Such a text is compared exactly instead.
    """

    def unread(self, text: str) -> str | None:
        """Why ``text`` is not read (a sentence for explain), or None when it is."""
        ...


@dataclass
class SpellingBudget:
    """How many pairs of values one check may still compare for spelling."""

    remaining: int = 4096

    def spend(self) -> bool:
        """Take one comparison; False once none is left."""
        self.remaining -= 1
        return self.remaining >= 0


Leaves = Sequence[tuple[str, str]]


class LanguagePack(Protocol):
    """Everything that reads words: field names, facts and critical tokens in free text, one
    value's spellings, and the verifier's rules. The core receives one and never imports it."""

    @property
    def languages(self) -> tuple[str, ...]:
        """The ISO 639-1 codes of the languages the rules cover."""
        ...

    def field(self, name: str | None) -> FieldReading:
        """How a field of this name is read."""
        ...

    def attempt_noise(
        self, name: str, value: Any, received_at: float | None, tool: str | None
    ) -> bool:
        """Whether the field is an attempt's own id, stamp or retry count, not an argument."""
        ...

    def reads_as_code(self, text: str) -> bool:
        """Whether a value reads as JSON, SQL, a shell command or code."""
        ...

    def normalize_facts(self, text: str) -> str:
        """Free text with each date, time, amount and count written one way."""
        ...

    def critical_tokens(self, text: str) -> tuple[str, ...]:
        """The tokens that no rewording may change (numbers, dates, addresses) of a free
        text in canonical form: its facts as ``normalize_facts`` writes them."""
        ...

    def value_key(self, kind: ValueKind, text: str) -> str:
        """What two spellings of one value of this kind share."""
        ...

    def label_key(self, name: str | None, text: str) -> str:
        """What two spellings of one name or label share, by the field's name."""
        ...

    def equivalent_leaves(
        self,
        mine: Leaves,
        theirs: Leaves,
        exact_fields: Sequence[str],
        tool: str | None,
        budget: SpellingBudget,
    ) -> tuple[str, ...] | None:
        """The paths whose values differ in spelling only, or None if any value differs."""
        ...

    def spelt_alike(
        self,
        mine: Leaves,
        theirs: Leaves,
        exact_fields: Sequence[str],
        tool: str | None,
        budget: SpellingBudget,
    ) -> frozenset[str]:
        """The paths whose values are one value spelt two ways."""
        ...

    def legacy_args_hash(
        self, args: dict[str, Any], policy: ToolPolicy, kept: dict[str, Any]
    ) -> str | None:
        """The args hash release 0.1 gave these args, when it stands for the same intent."""
        ...

    def verifier(self, word_cosine: Callable[[str, str], float] | None = None) -> Verifier:
        """The rule verifier, with the embedder's word cosines when given."""
        ...
