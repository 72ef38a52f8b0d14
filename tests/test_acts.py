"""What a sentence does: requests, reports, thanks and questions told apart."""

from __future__ import annotations

import pytest

from tooldedup.dedup.acts import act_changed


def _changed(a: str, b: str) -> str | None:
    return act_changed(a, b) or act_changed(b, a)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Please cancel order FX-2093", "Order FX-2093 has been cancelled"),
        (
            "Please add Laura's KTN to her United bookings",
            "Laura's KTN was added to her United bookings",
        ),
        (
            "Replace the battery in the hallway smoke detector",
            "We've replaced the battery in the hallway smoke detector",
        ),
        ("Ops, move the read traffic to replica 3", "The read traffic was moved to replica 3"),
        ("Book the room for Friday", "Should I book the room for Friday?"),
        (
            "Wound dressing on left heel changed at 10:30. Next change due Thursday.",
            "Wound dressing on left heel to be changed at 10:30. Next change due Thursday.",
        ),
        ("Collection booked with Kestrel Freight", "Collection to be booked with Kestrel Freight"),
    ],
)
def test_a_request_against_its_report_or_question(first: str, second: str) -> None:
    assert _changed(first, second) is not None


@pytest.mark.parametrize(
    ("first", "second"),
    [
        # A passive inside the request: a relative clause, a "that", an "if", a reason.
        (
            "Refund the fee that was charged twice on my account.",
            "Please refund the fee that was charged twice on my account.",
        ),
        (
            "Confirm the payment for invoice 4471 was received.",
            "Please confirm the payment for invoice 4471 was received.",
        ),
        (
            "Notify the customer that their order was shipped today.",
            "Please notify the customer that their order was shipped today.",
        ),
        (
            "Retry the card payment if it was declined.",
            "Please retry the card payment if it was declined.",
        ),
        (
            "Rebook Laura on the next flight since her flight was cancelled.",
            "Please rebook Laura on the next flight since her flight was cancelled.",
        ),
        ("Cancel the orders that have been duplicated.", "Cancel the duplicated orders."),
        (
            "Reopen ticket 8812, it was closed by mistake.",
            "Please reopen ticket 8812, it was closed by mistake.",
        ),
        (
            "I was charged twice for order 1182, refund one charge.",
            "I was charged twice for order 1182, please refund one charge.",
        ),
        (
            "Laura was interested in the premium plan, send her the brochure.",
            "Please send Laura the brochure, she was interested in the premium plan.",
        ),
        # Nouns that open a sentence are no command.
        (
            "Refund for order 1182 was issued to the card on file",
            "We issued the refund for order 1182 to the card on file",
        ),
        (
            "Return label was sent to the customer by email",
            "We've sent the return label to the customer by email",
        ),
        ("Call me when you land", "Call me when you land, and thanks"),
        ("The form needs to be signed by Friday", "The form must be signed by Friday"),
        (
            "Felix wants SSO enabled before the rollout",
            "Felix asked for SSO to be enabled before the rollout",
        ),
        ("Invoice 42 is to be paid by Friday", "Invoice 42 has to be paid by Friday"),
    ],
)
def test_the_same_request_worded_otherwise(first: str, second: str) -> None:
    assert _changed(first, second) is None
