"""Deterministic agent tool calls: stored calls, exact and semantic re-issues, and misses.

Free text is built from clauses, each with several phrasings of the same meaning. A stored
call uses one phrasing per clause; a semantic re-issue swaps at least two clauses for other
phrasings of the same content, so it is a real paraphrase that the exact and fuzzy stages
miss. Numbers, days and dates sit in slot values shared by every phrasing, so a paraphrase
keeps the call's exact signature.
"""

from __future__ import annotations

import itertools
import random
import uuid
from dataclasses import dataclass
from typing import Any

__all__ = [
    "TOOLS",
    "Layout",
    "Pool",
    "PoolItem",
    "exact_reissue",
    "miss_call",
    "stored_call",
    "with_text",
]

Args = dict[str, Any]

_NAMES = (
    "Bob", "Alice", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan", "Judy",
    "Mallory", "Niaj", "Olivia", "Peggy", "Rupert", "Sybil", "Trent", "Victor", "Walter",
    "Yasmin", "Zoe", "Liam", "Noah", "Emma", "Ava", "Mia", "Lucas", "Leo", "Chloe", "Ines",
)  # fmt: skip
_DOCS = (
    "Q3 report", "budget draft", "onboarding checklist", "contract renewal", "design review",
    "launch plan", "security audit", "hiring plan", "roadmap update", "incident summary",
    "vendor proposal", "pricing sheet", "release notes", "travel policy", "board deck",
    "customer survey results", "migration runbook", "training schedule", "sales forecast",
    "quarterly OKRs", "API changelog", "support escalation notes", "data retention policy",
    "office move plan",
)  # fmt: skip
_PARTS = (
    "login page", "checkout flow", "search index", "billing service", "mobile app",
    "export job", "notification emails", "admin dashboard", "payment webhook", "report builder",
    "user settings", "file uploads", "password reset", "invoice generator", "audit log",
)  # fmt: skip
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
_REASONS = (
    "the item arrived damaged", "the order was charged twice", "the parcel never arrived",
    "the wrong size was shipped", "the customer cancelled before shipping",
    "the product stopped working after a week", "the discount code was not applied",
)  # fmt: skip

# Each family: a tuple of clauses, each clause a tuple of phrasings of the same meaning.
_Family = tuple[tuple[str, ...], ...]
_EMAIL: tuple[_Family, ...] = (
    (
        ("Hi {name}, the {doc} is attached.", "Hello {name}, I have attached the {doc}.",
         "Hi {name}, attached is the {doc}.", "Dear {name}, please find the {doc} attached."),
        ("Let me know if you have any questions.", "Tell me if anything is unclear.",
         "Reach out if you have questions.", "Feel free to ask if something is unclear."),
        ("Thanks for your patience.", "Thank you for waiting.", "Thanks for bearing with me.",
         "Sorry it took a while."),
    ),
    (
        ("Hi {name}, could you review the {doc} before {day}?",
         "Hello {name}, can you take a look at the {doc} before {day}?",
         "{name}, would you mind reviewing the {doc} before {day}?",
         "Hi {name}, please go over the {doc} before {day}."),
        ("Your comments would help a lot.", "Your feedback would be really useful.",
         "I would value your input.", "Any notes you have would help."),
        ("Thanks in advance.", "Many thanks.", "Thank you so much.", "Thanks a lot."),
    ),
    (
        ("Hi {name}, a quick reminder about the {doc}.",
         "Hello {name}, just a reminder about the {doc}.",
         "{name}, a friendly reminder regarding the {doc}.",
         "Hi {name}, reminding you about the {doc}."),
        ("It is due on {day}.", "The deadline is {day}.", "We need it by {day}.",
         "It has to be done by {day}."),
        ("Let me know if you need any help.", "Tell me if you need any help.",
         "Reach out if you need any help.", "Ask me if you need any help."),
    ),
    (
        ("Hi {name}, I have updated the {doc} with your suggestions.",
         "Hello {name}, the {doc} now includes your suggestions.",
         "{name}, I revised the {doc} based on your suggestions.",
         "Hi {name}, your suggestions are now in the {doc}."),
        ("Please have another look when you can.", "Could you check it again when you have time?",
         "Take another look when you get a chance.", "Please review it once more when possible."),
        ("Thanks for the detailed feedback.", "Thank you for the thorough notes.",
         "I appreciate the careful review.", "Thanks for the helpful comments."),
    ),
)  # fmt: skip
_TICKET: tuple[_Family, ...] = (
    (
        ("The {part} fails for some users.", "Some users see errors in the {part}.",
         "The {part} is broken for a subset of users.",
         "A number of users hit failures in the {part}."),
        ("It started after the last deploy.", "This began with the latest release.",
         "It appeared right after the most recent deployment.",
         "The problem showed up after the last rollout."),
        ("Please investigate and fix it.", "Please look into it and fix it.",
         "Could someone investigate and resolve it?", "Please dig in and get it fixed."),
    ),
    (
        ("The {part} is very slow.", "The {part} has become really slow.",
         "Performance of the {part} is poor.", "The {part} takes far too long to respond."),
        ("Customers are complaining about it.", "Users keep reporting it.",
         "We are getting complaints from customers.", "Several customers raised it."),
        ("We should profile it and speed it up.", "It needs profiling and optimising.",
         "Let us profile it and make it faster.", "Someone should profile and tune it."),
    ),
)  # fmt: skip
_MESSAGE: tuple[_Family, ...] = (
    (
        ("Heads up: the {part} is down.", "FYI, the {part} is currently down.",
         "Attention: the {part} is not working right now.", "Warning: the {part} is unavailable."),
        ("We are working on a fix.", "A fix is in progress.", "The team is fixing it.",
         "We are on it."),
        ("Updates to follow in this channel.", "More updates will come here.",
         "I will post updates here.", "Watch this channel for updates."),
    ),
    (
        ("The {doc} is ready for review.", "The {doc} can now be reviewed.",
         "Reviews are welcome on the {doc}.", "The {doc} is up for review."),
        ("Please leave comments by {day}.", "Add your comments before {day}.",
         "Comments are due by {day}.", "Send feedback by {day}."),
        ("Thanks everyone.", "Thank you all.", "Thanks, team.", "Much appreciated, everyone."),
    ),
)  # fmt: skip
_REFUND: tuple[_Family, ...] = (
    (
        ("Refund requested because {reason}.", "The customer wants a refund since {reason}.",
         "Issuing a refund as {reason}.", "A refund is due because {reason}."),
        ("The customer has been informed.", "We already told the customer.",
         "The customer knows about it.", "The customer was notified."),
    ),
)  # fmt: skip
_FAMILIES: dict[str, tuple[_Family, ...]] = {
    "send_email": _EMAIL,
    "create_ticket": _TICKET,
    "post_message": _MESSAGE,
    "refund_order": _REFUND,
}
_TEXT_FIELD = {
    "send_email": "body",
    "create_ticket": "description",
    "post_message": "text",
    "refund_order": "reason",
}
TOOLS = tuple(_FAMILIES)


@dataclass(frozen=True, slots=True)
class PoolItem:
    """The free-text content of one call: tool, family, slot values and phrasing choice."""

    tool: str
    family: int
    slots: tuple[tuple[str, str], ...]
    choice: tuple[int, ...]

    def text(self, choice: tuple[int, ...] | None = None) -> str:
        """The free text with ``choice`` (default: the stored phrasing)."""
        clauses = _FAMILIES[self.tool][self.family]
        picked = self.choice if choice is None else choice
        values = dict(self.slots)
        return " ".join(c[i].format(**values) for c, i in zip(clauses, picked, strict=True))

    def paraphrases(self) -> list[tuple[int, ...]]:
        """Every phrasing choice that differs from the stored one in exactly two clauses."""
        clauses = _FAMILIES[self.tool][self.family]
        options = itertools.product(*(range(len(c)) for c in clauses))
        need = min(2, len(clauses))
        return [
            o for o in options if sum(a != b for a, b in zip(o, self.choice, strict=True)) == need
        ]

    def semantic_args(self) -> Args:
        """The free-text fields of the call."""
        values = dict(self.slots)
        field = _TEXT_FIELD[self.tool]
        if self.tool == "send_email":
            return {"subject": values["doc"].capitalize(), field: self.text()}
        if self.tool == "create_ticket":
            title = f"Problem with the {values.get('part', values.get('doc', 'service'))}"
            return {"title": title, field: self.text()}
        return {field: self.text()}


def _item(rng: random.Random) -> PoolItem:
    tool = rng.choice(TOOLS)
    family = rng.randrange(len(_FAMILIES[tool]))
    slots = {
        "name": rng.choice(_NAMES),
        "doc": rng.choice(_DOCS),
        "part": rng.choice(_PARTS),
        "day": rng.choice(_DAYS),
        "reason": rng.choice(_REASONS),
    }
    clauses = _FAMILIES[tool][family]
    used = "".join(itertools.chain.from_iterable(clauses))
    kept = tuple((k, v) for k, v in sorted(slots.items()) if "{" + k + "}" in used)
    choice = tuple(rng.randrange(len(c)) for c in clauses)
    return PoolItem(tool, family, kept, choice)


class Pool:
    """``size`` distinct pool items for stored calls, then an endless supply of fresh ones."""

    def __init__(self, size: int, seed: int = 7) -> None:
        rng = random.Random(seed)
        seen: set[str] = set()
        self.items: list[PoolItem] = []
        while len(self.items) < size:
            item = _item(rng)
            if item.text() not in seen:
                seen.add(item.text())
                self.items.append(item)
        self._seen = seen
        self._fresh_rng = random.Random(seed + 1)

    def fresh(self) -> PoolItem:
        """A pool item whose text no stored call uses and no earlier ``fresh`` returned."""
        while True:
            item = _item(self._fresh_rng)
            if item.text() not in self._seen:
                self._seen.add(item.text())
                return item


@dataclass(frozen=True, slots=True)
class Layout:
    """``total`` stored calls in sessions of ``session_size`` calls each."""

    total: int
    session_size: int

    @property
    def sessions(self) -> int:
        """How many sessions hold the stored calls."""
        return max(1, self.total // self.session_size)

    def session_id(self, session: int) -> str:
        """The id of one session."""
        return f"bench-{self.session_size}-{session:07d}"


def _exact_args(tool: str, session: int, pick: int) -> Args:
    # Each session has a few contacts, channels and projects, so calls share exact fields.
    contact = pick % 6
    if tool == "send_email":
        return {"to": f"{_NAMES[contact].lower()}.s{session}@example.com"}
    if tool == "create_ticket":
        return {"project": ("payments", "growth", "platform")[pick % 3], "priority": "high"}
    if tool == "post_message":
        return {"channel": f"#team-{session % 97}-{('ops', 'dev', 'general')[pick % 3]}"}
    return {
        "order_id": f"ORD-{session:07d}-{pick:05d}",
        "amount": 20 + pick % 180,
        "currency": "USD",
    }


def stored_call(layout: Layout, pool: Pool, session: int, index: int) -> tuple[str, Args, int]:
    """The ``index``-th stored call of ``session``: tool, args and its pool item's number."""
    base = (session * 7919) % len(pool.items)
    number = (base + index) % len(pool.items)
    item = pool.items[number]
    args = {**_exact_args(item.tool, session, index), **item.semantic_args()}
    return item.tool, args, number


def exact_reissue(args: Args) -> Args:
    """The same call as an agent retries it: keys reordered and a fresh request id."""
    return {"request_id": uuid.uuid4().hex, **dict(reversed(list(args.items())))}


def miss_call(layout: Layout, pool: Pool, session: int, salt: int) -> tuple[str, Args]:
    """A new call in ``session``: a known contact or project, free text never seen before."""
    item = pool.fresh()
    args = {**_exact_args(item.tool, session, salt), **item.semantic_args()}
    return item.tool, args


def with_text(tool: str, args: Args, text: str) -> Args:
    """``args`` with the free-text field replaced."""
    return {"request_id": uuid.uuid4().hex, **args, _TEXT_FIELD[tool]: text}
