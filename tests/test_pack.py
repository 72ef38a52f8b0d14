"""The English language pack: what the core reads words through."""

from __future__ import annotations

from pathlib import Path

import pytest

from tooldedup.dedup.english import EnglishPack
from tooldedup.dedup.english.critical import critical_tokens
from tooldedup.dedup.english.facts import normalize_facts
from tooldedup.dedup.errors import ConfigurationError
from tooldedup.dedup.protocols import Embedder
from tooldedup.index.settings import ServiceSettings
from tooldedup.index.wiring import build_service


@pytest.mark.parametrize("repeats", [1, 400])
def test_facts_and_tokens_are_the_rules_own_whatever_the_length(repeats: int) -> None:
    text = "Pay Ana $40 on March 5, 2026 at 3 PM. " * repeats
    pack = EnglishPack()
    for _ in range(2):
        assert pack.normalize_facts(text) == normalize_facts(text)
        assert pack.critical_tokens(normalize_facts(text)) == critical_tokens(text)


def test_a_long_text_is_not_remembered() -> None:
    # A caller who sends many long texts must not grow the pack's memory with them.
    pack = EnglishPack()
    for i in range(3):
        long = f"Please send report {i} to Bob now. " * 2000
        pack.critical_tokens(pack.normalize_facts(long))
    pack.normalize_facts("Pay Ana $40 on March 5, 2026")
    assert pack._facts.cache_info().currsize == 1  # type: ignore[attr-defined]
    assert pack._tokens.cache_info().currsize == 0  # type: ignore[attr-defined]


def test_the_pack_reads_field_names_once() -> None:
    pack = EnglishPack()
    assert pack.field("api_key").secret
    assert pack.field("email_body").prose is True
    assert pack.field("email_body") is pack.field("email_body")


@pytest.mark.parametrize(
    ("name", "tool", "noise"),
    [
        ("request_id", "send_email", True),
        ("request_id", "approve_request", False),  # the tool names it: its target
        ("retry_count", None, True),
        ("body", "send_email", False),
        ("x" * 300 + "_request_id", "send_email", False),  # too long to remember: read each time
        ("request_id", "approve_" + "x" * 300 + "_request", False),
    ],
)
def test_field_names_read_alike_remembered_or_not(name: str, tool: str | None, noise: bool) -> None:
    pack = EnglishPack()
    for _ in range(2):
        assert pack.attempt_noise(name, "a1b2", None, tool) is noise
    long_names = ["y" * 300 + f"_{i}" for i in range(3)]
    assert [pack.field(n).secret for n in long_names] == [False] * 3
    assert pack._fields.cache_info().currsize == 0  # type: ignore[attr-defined]


class _FrenchPack(EnglishPack):
    @property
    def languages(self) -> tuple[str, ...]:
        return ("fr",)


def test_a_pack_the_text_reader_cannot_serve_stops_the_start(
    tmp_path: Path, embedder: Embedder
) -> None:
    settings = ServiceSettings(db_path=tmp_path / "s.db", pair_model=False)
    with pytest.raises(ConfigurationError, match="detects English only"):
        build_service(settings, embedder=embedder, pack=_FrenchPack())
