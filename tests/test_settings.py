"""``--db``: which store a value names, and values that name none."""

from __future__ import annotations

from pathlib import Path

import pytest

from tooldedup.index.settings import parse_db


@pytest.mark.parametrize(
    ("value", "path", "url"),
    [
        ("tooldedup.db", Path("tooldedup.db"), None),
        ("/var/lib/td/x.db", Path("/var/lib/td/x.db"), None),
        ("sqlite:///rel.db", Path("rel.db"), None),
        ("sqlite:////abs/x.db", Path("/abs/x.db"), None),
        ("postgresql://u@h:5432/db", None, "postgresql://u@h:5432/db"),
        ("postgres://u@h/db", None, "postgres://u@h/db"),
        ("PostgreSQL://u@/db?host=/tmp", None, "PostgreSQL://u@/db?host=/tmp"),
        ("  x.db  ", Path("x.db"), None),
    ],
)
def test_db_values(value: str, path: Path | None, url: str | None) -> None:
    assert parse_db(value) == (path, url)


@pytest.mark.parametrize(
    "value", ["", "   ", "sqlite://", "sqlite:///", "mysql://h/db", "redis://x"]
)
def test_db_values_that_name_no_store(value: str) -> None:
    with pytest.raises(ValueError, match=r"--db|SQLite URL"):
        parse_db(value)
