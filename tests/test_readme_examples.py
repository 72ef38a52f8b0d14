"""The README's client example, run as written against a real `tooldedup serve`."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from tooldedup_client import Decision, Tooldedup

from tests.server import serve

pytestmark = pytest.mark.slow
README = Path(__file__).parent.parent / "README.md"


def _block(heading: str) -> str:
    """The first ```python block under ``heading``."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index(heading) :]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found is not None, heading
    return found.group(1)


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory, model_cache: Path) -> Iterator[str]:
    with serve(tmp_path_factory.mktemp("readme") / "ledger.db", model_cache) as client:
        yield str(client.base_url)


def test_the_guard_example(base_url: str) -> None:
    session = "readme-" + uuid.uuid4().hex[:8]
    code = _block("### Python: `Tooldedup` and `guard`")
    code = code.replace("http://127.0.0.1:8000", base_url).replace('"s1"', repr(session))
    namespace: dict[str, object] = {}
    exec(compile(code, "README.md", "exec"), namespace)
    client = namespace["td"]
    assert isinstance(client, Tooldedup)
    client.close()
    with Tooldedup(base_url) as td:
        args = {"to": "bob@example.com", "subject": "Q3", "body": "Hi Bob"}
        again = td.check("send_email", args, session_id=session, dry_run=True)
    assert again.decision is Decision.DUPLICATE
    assert again.match is not None
    assert again.match.result == {"message_id": "m-42"}
