"""Where a leaf lies in a call's arguments: its field's name, and whether the policy pins it."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

__all__ = ["leaf_name", "pinned"]

_PATH_PART = re.compile(r'\["((?:[^"\\]|\\.)*)"\]|\[\d*\]|([^.\[\]]+)')
_INDEX = re.compile(r"\[\d+\]")


def leaf_name(path: str) -> str | None:
    """The field name a leaf's path ends in: ``b`` for ``a.b[2]``, ``b.c`` for ``a["b.c"]``."""
    names = _path_names(path)
    return names[-1] if names else None


def _path_names(path: str) -> list[str]:
    names: list[str] = []
    for match in _PATH_PART.finditer(path):
        if match[1] is not None:
            try:
                names.append(json.loads(f'"{match[1]}"'))
            except ValueError:
                return []
        elif match[2] is not None:
            names.append(match[2])
    return names


def pinned(path: str, exact_fields: Sequence[str]) -> bool:
    """Whether the policy names this leaf, or a field it lies in, as compared exactly."""
    if not exact_fields:
        return False
    pattern = _INDEX.sub("[]", path)
    names = set(_path_names(path))
    return any(
        field in names or pattern == field or pattern.startswith((f"{field}.", f"{field}["))
        for field in exact_fields
    )
