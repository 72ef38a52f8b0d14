"""The layers: core without HTTP or model code, nothing below the HTTP edge imports it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tooldedup.dedup.english import EnglishPack

ROOT = Path(__file__).resolve().parent.parent
BARE = ("dedup", "index", "api", "calibration")


def _imports(folder: str) -> list[tuple[str, str]]:
    found = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found += [(str(path.relative_to(ROOT)), alias.name) for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.append((str(path.relative_to(ROOT)), node.module))
    return found


def _under(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


@pytest.mark.parametrize(
    ("folder", "forbidden"),
    [
        ("dedup", ("tooldedup.api", "tooldedup.index", "tooldedup.calibration", "fastapi")),
        ("dedup", ("onnxruntime", "faiss", "torch", "sentence_transformers", "tokenizers")),
        ("index", ("tooldedup.api", "tooldedup.calibration", "fastapi")),
        ("calibration", ("tooldedup.api", "fastapi")),
    ],
)
def test_lower_layers_never_reach_up(folder: str, forbidden: tuple[str, ...]) -> None:
    bad = [(f, m) for f, m in _imports(folder) if any(_under(m, p) for p in forbidden)]
    assert bad == []


@pytest.mark.parametrize("folder", ["dedup", "index", "api", "calibration", "tests", "benchmarks"])
def test_no_bare_top_level_imports(folder: str) -> None:
    bad = [(f, m) for f, m in _imports(folder) if any(_under(m, p) for p in BARE)]
    assert bad == []


@pytest.mark.parametrize(
    ("module", "absent"),
    [
        ("tooldedup.api.cli", ("onnxruntime", "faiss", "torch", "scipy", "matplotlib")),
        ("tooldedup.api", ("onnxruntime", "faiss", "torch")),
        ("tooldedup.index.settings", ("onnxruntime", "faiss", "torch")),
        ("tooldedup.calibration", ("scipy", "matplotlib", "torch")),
    ],
)
def test_light_imports_stay_light(module: str, absent: tuple[str, ...]) -> None:
    probe = f"import sys, {module}; print(sorted(m for m in {absent!r} if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == "[]"


PACK = "tooldedup.dedup.english"


def _core_files() -> list[Path]:
    return [p for p in sorted((ROOT / "dedup").rglob("*.py")) if "english" not in p.parts]


def test_core_never_imports_the_language_pack() -> None:
    bad = [
        (f, m)
        for f, m in _imports("dedup")
        if not f.startswith("dedup/english/") and _under(m, PACK)
    ]
    assert bad == []


def _word_lists(path: Path) -> list[tuple[int, int]]:
    """(line, size) of each literal set, list or tuple of five or more lowercase words."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Set | ast.List | ast.Tuple):
            words = [
                e.value
                for e in node.elts
                if isinstance(e, ast.Constant)
                and isinstance(e.value, str)
                and e.value.isalpha()
                and e.value.islower()
            ]
            if len(words) >= 5:
                found.append((node.lineno, len(words)))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "split"
            and isinstance(node.func.value, ast.Constant)
            and isinstance(node.func.value.value, str)
            and len(node.func.value.value.split()) >= 5
        ):
            found.append((node.lineno, len(node.func.value.value.split())))
    return found


def test_core_holds_no_word_list() -> None:
    """Words live in the language pack; the core holds none (a set of five words is a list)."""
    lists = {str(p.relative_to(ROOT)): _word_lists(p) for p in _core_files()}
    assert {path: found for path, found in lists.items() if found} == {}


def test_the_pack_holds_word_lists() -> None:
    """The detector above finds the lists where they are, so its silence on the core counts."""
    assert any(_word_lists(p) for p in sorted((ROOT / "dedup" / "english").glob("*.py")))


def test_the_pack_says_which_languages_it_covers() -> None:
    assert EnglishPack().languages == ("en",)
