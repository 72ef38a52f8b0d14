"""One version number: both distributions, both commands, the OpenAPI schema, /healthz and
the changelog agree."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import tooldedup_client
from fastapi.testclient import TestClient

from tooldedup.api.version import VERSION

ROOT = Path(__file__).parent.parent


def _declared(pyproject: Path) -> str:
    version: str = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"]
    return version


def test_both_distributions_declare_the_installed_version() -> None:
    assert _declared(ROOT / "pyproject.toml") == VERSION
    assert _declared(ROOT / "client" / "pyproject.toml") == VERSION
    assert tooldedup_client.__version__ == VERSION


@pytest.mark.parametrize(
    ("command", "printed"),
    [
        ([sys.executable, "-m", "tooldedup.api.cli", "--version"], f"tooldedup {VERSION}"),
        (
            [sys.executable, "-m", "tooldedup_client.mcp_proxy", "--version"],
            f"tooldedup-mcp {VERSION}",
        ),
    ],
)
def test_each_command_prints_the_version(command: list[str], printed: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == printed


def test_the_api_reports_the_version(client: TestClient) -> None:
    assert client.get("/openapi.json").json()["info"]["version"] == VERSION
    assert client.get("/healthz").json()["version"] == VERSION


def test_the_changelog_has_this_release() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    released = re.findall(r"^## \[(\d+\.\d+\.\d+)\]", changelog, re.M)
    assert released[0] == VERSION
    assert len(released) == len(set(released))
