"""A schema-based fuzzer (schemathesis) against the live OpenAPI spec finds no 5xx."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.server import serve


def test_schemathesis_finds_no_server_errors(tmp_path: Path, model_cache: Path) -> None:
    with serve(tmp_path / "ledger.db", model_cache) as client:
        spec = f"{client.base_url}/openapi.json"
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "schemathesis.cli",
                "run",
                spec,
                "--checks",
                "not_a_server_error",
                "--max-examples",
                "60",
                "--seed",
                "1",
            ],
            capture_output=True,
            text=True,
            timeout=480,
            cwd=tmp_path,  # schemathesis keeps a cache folder in its working directory
        )
    assert result.returncode == 0, result.stdout[-4000:]
    # Warnings (feedback on random check ids is mostly a 404) are fine; failures are not.
    summary = re.search(r"(\d+) generated, (\d+) passed", result.stdout)
    assert summary is not None, result.stdout[-4000:]
    assert summary.group(1) == summary.group(2)
    assert int(summary.group(1)) > 500
