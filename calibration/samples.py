"""Labelled samples for calibration: one score set and one label per compared pair."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tooldedup.dedup.errors import InvalidInput
from tooldedup.dedup.policy import CosineBand, cosine_band

__all__ = ["VETOES", "LabelledPair", "Sample", "load_pairs", "samples_from_log"]

# Verifier verdicts that keep a pair from matching at any threshold (without a judge).
VETOES = frozenset({"different", "unsure"})
# Stages that match whatever the cosine thresholds say.
_FIXED = ("exact", "equivalent", "fuzzy")


@dataclass(frozen=True, slots=True)
class Sample:
    """What the funnel saw for one labelled pair, and whether it was really a duplicate.

    ``fixed`` is the stage that matched without a cosine threshold (``exact``,
    ``equivalent`` or ``fuzzy``); ``cosine`` is the weakest-leaf cosine when the semantic
    stage ran. A sample with neither can never be matched: its exact fields differ, or it
    has no free text. A ``vetoed`` sample is one the verifier ruled out or held: no
    threshold makes it a match.
    """

    ref: str
    tool: str
    duplicate: bool
    fixed: str | None
    cosine: float | None
    kind: str | None = None
    source: str = "pairs"
    vetoed: bool = False
    # Pairs of one group (texts written from one entry) fall on one side of a split.
    group: str | None = None
    # The verifier confirmed the semantic match: under the borderline band, only such a
    # match is a duplicate.
    confirmed: bool = False

    @property
    def split_key(self) -> str:
        """What decides the calibration/held-out side: the group, else the pair itself."""
        return self.group or self.ref

    def predicted(self, min_cosine: float, min_cosine_confirmed: float | None = None) -> bool:
        """Whether the funnel calls this pair a duplicate at this cosine threshold, and
        under it down to ``min_cosine_confirmed`` when the verifier confirmed the match."""
        if self.fixed is not None:
            return True
        if self.cosine is None or self.vetoed:
            return False
        # A sweep has no borderline band: one threshold for both bounds.
        band = cosine_band(
            self.cosine,
            min_cosine_duplicate=min_cosine,
            min_cosine_borderline=min_cosine,
            min_cosine_confirmed=min_cosine_confirmed,
        )
        return band is CosineBand.DUPLICATE or (band is CosineBand.CONFIRMABLE and self.confirmed)


@dataclass(frozen=True, slots=True)
class LabelledPair:
    """Two calls to one tool and a human label (see calibration/data/FORMAT.md)."""

    ref: str
    tool: str
    a: dict[str, Any]
    b: dict[str, Any]
    duplicate: bool
    kind: str | None
    group: str | None = None


def _label(value: object, where: str) -> bool:
    if value not in ("duplicate", "distinct"):
        raise InvalidInput(f"{where}: label must be 'duplicate' or 'distinct'")
    return value == "duplicate"


def load_pairs(path: Path) -> list[LabelledPair]:
    """Read a labelled-pairs JSONL file."""
    pairs: list[LabelledPair] = []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InvalidInput(f"{where}: not JSON ({exc.msg})") from None
            if not isinstance(row, dict):
                raise InvalidInput(f"{where}: each line must be a JSON object")
            a, b, tool = row.get("a"), row.get("b"), row.get("tool")
            if not isinstance(a, dict) or not isinstance(b, dict) or not isinstance(tool, str):
                raise InvalidInput(f"{where}: needs 'tool' (string), 'a' and 'b' (objects)")
            ref = str(row.get("id", f"line-{number}"))
            kind, group = row.get("kind"), row.get("group")
            label = _label(row.get("label"), where)
            pairs.append(
                LabelledPair(
                    ref, tool, a, b, label, kind and str(kind), (group and str(group)) or None
                )
            )
    return pairs


def _log_entries(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as exc:
                    raise InvalidInput(f"{path}:{number}: not JSON ({exc.msg})") from None


def sample_from_entry(entry: dict[str, Any], duplicate: bool, source: str) -> Sample:
    """The scores a logged check recorded, as a sample with the given label."""
    stages = {s["stage"]: s for s in entry.get("explain", {}).get("stages", [])}
    fixed = entry.get("stage") if entry.get("stage") in _FIXED else None
    semantic = stages.get("semantic", {})
    cosine = semantic.get("score")
    return Sample(
        vetoed=semantic.get("verdict") in VETOES,
        confirmed=semantic.get("verdict") == "confirmed",
        ref=str(entry["check_id"]),
        tool=str(entry["tool"]),
        duplicate=duplicate,
        fixed=fixed,
        cosine=None if cosine is None else float(cosine),
        source=source,
    )


def samples_from_log(path: Path) -> tuple[list[Sample], list[dict[str, Any]]]:
    """Labelled samples from an exported decision log, and every write check in it."""
    samples: list[Sample] = []
    entries: list[dict[str, Any]] = []
    for entry in _log_entries(path):
        if not entry.get("explain", {}).get("stages"):
            continue  # reads: nothing was compared
        entries.append(entry)
        feedback = entry.get("feedback")
        if feedback:
            source = "judge" if feedback.get("source") == "judge" else "log"
            samples.append(sample_from_entry(entry, feedback["label"] == "duplicate", source))
    return samples, entries
