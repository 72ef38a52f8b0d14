"""The documentation: the site builds strictly, every page is in its navigation, and the
README stays a first screen plus links."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
README = ROOT / "README.md"


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    assert (tmp_path / "index.html").exists()


def _nav_pages() -> set[str]:
    # The nav lists "Title: page.md"; mkdocs.yml may hold Python tags, so no YAML loader.
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = text[text.index("\nnav:") :]
    return {line.rsplit(":", 1)[1].strip() for line in nav.splitlines() if line.endswith(".md")}


@pytest.mark.parametrize("page", sorted(p.name for p in (ROOT / "docs").glob("*.md")))
def test_every_page_is_in_the_navigation(page: str) -> None:
    assert page in _nav_pages()


def test_the_readme_is_a_first_screen_plus_links() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.encode()) < 20_000
    first = "\n".join(text.splitlines()[:40])
    assert "make run" in first
    assert "make test" in first
    assert "<RUN_TIME>" not in text
    assert "<TEST_TIME>" not in text
