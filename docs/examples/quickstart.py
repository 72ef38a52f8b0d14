"""Quickstart: ask tooldedup before a side-effecting call, report what it did, and see a
retry answered with the stored result instead of a second email.

Run it against `make run`:  .venv/bin/python docs/examples/quickstart.py
"""

import os
import uuid
from typing import Any

from tooldedup_client import Decision, Status, Tooldedup

URL = os.environ.get("TOOLDEDUP_URL", "http://127.0.0.1:8000")
SESSION = "quickstart-" + uuid.uuid4().hex[:8]  # a new session per run: each run starts afresh

sent: list[str] = []  # what really went out


def send_email(to: str, subject: str, body: str, request_id: str = "") -> dict[str, Any]:
    """The tool: a side effect that must not happen twice."""
    sent.append(to)
    return {"message_id": f"m-{len(sent)}"}


def run_once(td: Tooldedup, args: dict[str, Any]) -> Any:
    """Check first; run and complete on `proceed`, replay the stored result on `duplicate`."""
    check = td.check("send_email", args, session_id=SESSION)
    stage = f" ({check.match.stage} match)" if check.match is not None else ""
    print(f"check: {check.decision}{stage}")
    if check.decision is Decision.PROCEED and check.call_id is not None:
        result = send_email(**args)
        td.complete(check.call_id, Status.SUCCEEDED, result=result)  # stored for repeats
        return result
    if check.decision is Decision.DUPLICATE and check.match is not None:
        return check.match.result  # the first run's result; the email is not sent again
    raise RuntimeError(f"not run: the same call is {check.decision}")


with Tooldedup(URL) as td:
    first = run_once(
        td,
        {
            "to": "bob@example.com",
            "subject": "Q3 report",
            "request_id": "r-1",
            "body": "Hi Bob, the Q3 report is attached. Let me know if you have any questions.",
        },
    )
    print("result:", first)

    # The agent retries: keys reordered, a fresh request_id, a doubled space.
    retry = run_once(
        td,
        {
            "request_id": "r-2",
            "subject": "Q3 report",
            "to": "bob@example.com",
            "body": "Hi Bob, the Q3 report is attached.  Let me know if you have any questions.",
        },
    )
    print("result:", retry)

    # The model re-issues the call with the body reworded.
    reworded = run_once(
        td,
        {
            "to": "bob@example.com",
            "subject": "Q3 report",
            "body": "Hello Bob, I have attached the Q3 report. Tell me if anything is unclear.",
        },
    )
    print("result:", reworded)

print(f"session: {SESSION}")
print(f"send_email ran {len(sent)} time(s)")
