"""Small protocols for the parts the core does not implement itself."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

__all__ = ["CachingEmbedder", "Embedder", "PairScorer", "TextReader", "VectorIndex", "Vectors"]

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
    """An embedder that keeps vectors; new ones reach its shared store in the background."""

    def persist(self, texts: Sequence[str]) -> None:
        """Store these texts' vectors now (a claimed call's: other replicas will need them)."""
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
