"""`guard`: put a Python function behind tooldedup, as a decorator or as a context manager.

Run it against `make run`:  .venv/bin/python docs/examples/guard.py
"""

import os
import uuid
from typing import Any

from tooldedup_client import Tooldedup, session_scope

URL = os.environ.get("TOOLDEDUP_URL", "http://127.0.0.1:8000")
SESSION = "guard-" + uuid.uuid4().hex[:8]  # a new session per run: each run starts afresh

td = Tooldedup(URL)
sent: list[str] = []
tickets: list[str] = []


@td.guard("send_email", session_id=SESSION)
def send_email(to: str, subject: str, body: str) -> dict[str, Any]:
    sent.append(to)  # your real tool
    return {"message_id": f"m-{len(sent)}"}


# Checked: proceed, so it runs and its result is stored.
print("first:", send_email("bob@example.com", "Q3", "Hi Bob"))
# The same call, its arguments by name in another order: duplicate, the stored result.
print("again:", send_email(to="bob@example.com", body="Hi Bob", subject="Q3"))

# The context manager: the caller runs the tool when the guard says so. With no
# session_id= on the guard, the session comes from session_scope().
tickets_guard = td.guard("create_ticket")
with session_scope(SESSION):
    for title in ("Printer on fire", "Printer on fire"):
        with tickets_guard.attempt({"title": title, "queue": "facilities"}) as attempt:
            if attempt.should_run:
                tickets.append(title)
                attempt.succeeded({"ticket": f"T-{len(tickets)}"})
                print("created:", f"T-{len(tickets)}")
            else:
                print("replayed:", attempt.result)

td.close()
print(f"session: {SESSION}")
print(f"send_email ran {len(sent)} time(s)")
print(f"create_ticket ran {len(tickets)} time(s)")
