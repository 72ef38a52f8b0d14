"""What a sentence does: requests, reports, thanks and questions told apart."""

from __future__ import annotations

import pytest

from tooldedup.dedup.english.acts import act_changed


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
        # 0.10: a name or a greeting before the question, a price in the passive's subject,
        # and verbs of action added to the bare command.
        (
            "Halvard, please book a box van for Thursday to take the monitors to Stafford.",
            "Halvard, did you book a box van for Thursday to take the monitors to Stafford?",
        ),
        (
            "Good morning, please mark Ethan in Class 3C as absent today.",
            "Good morning, has Ethan in Class 3C been marked as absent today?",
        ),
        (
            "Please include Elif Kaya's $2,500 referral bonus in the April 30 payroll run.",
            "Elif Kaya's $2,500 referral bonus was included in the April 30 payroll run.",
        ),
        (
            "Leave the bag with the concierge at the front desk.",
            "The bag was left with the concierge at the front desk.",
        ),
        # 0.11: a passive whose subject runs to eight words, a quantifier put for "these",
        # a thing to be done after "for" that wants nothing.
        (
            "Prior authorization for home oxygen submitted to Beacon Mutual today.",
            "Prior authorization for home oxygen to be submitted to Beacon Mutual today.",
        ),
        (
            "Called for a taxi at 6, luggage to be collected at 5",
            "Called for a taxi at 6, luggage collected at 5",
        ),
        (
            "Approve the £45 tail-lift surcharge from Ferrow Transport.",
            "The £45 tail-lift surcharge from Ferrow Transport was approved.",
        ),
        ("Please process these changes.", "Both changes have been processed."),
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
        (
            "Ask the landlord for the boiler to be serviced",
            "Ask the landlord to get the boiler serviced",
        ),
        (
            "Please double-check that the new laptops for the Oslo team were imaged",
            "Double-check the new laptops for the Oslo team were imaged",
        ),
        (
            "Felix wants SSO enabled before the rollout, and the CRM import finished by Friday",
            "Felix asked for SSO to be enabled before the rollout, and for the CRM import to be"
            " finished by Friday",
        ),
        ("Invoice 42 is to be paid by Friday", "Invoice 42 has to be paid by Friday"),
        # A person's own act in the simple past is no report that a thing was done.
        (
            "Please reassign Chidi's Q3 review to Helen Marsh, since Chidi moved to Helen's team.",
            "Chidi Okafor moved to Helen's team, so please reassign his Q3 review to Helen Marsh.",
        ),
        (
            "Please reverse the last of the three Cityline Taxis charges on my card from Oct 30.",
            "Of the three charges Cityline Taxis put on my card on Oct 30, reverse the last.",
        ),
        # What happened, then what to do about it; a request put as whether one is able to;
        # a checklist's note, which tells what to do as often as what was done.
        (
            "Customer's $49 charge was duplicated, refund it.",
            "Refund the customer's $49 charge, which was duplicated.",
        ),
        (
            "Jan's £1,200 expense claim was rejected by mistake, approve it.",
            "Approve Jan's £1,200 expense claim, it was rejected by mistake.",
        ),
        (
            "Ravi, are you able to approve the PTO request for Mina?",
            "Ravi, approve the PTO request for Mina.",
        ),
        (
            "Ops, is someone able to restart the queue worker on prod?",
            "Ops, someone please restart the queue worker on prod.",
        ),
        ("Forms signed by Friday.", "Sign the forms by Friday."),
        # A full stop in a version number or after a title ends no sentence.
        (
            "For the 4.6.0 release, please draft the release notes by June 14.",
            "Please have the 4.6.0 release notes drafted by June 14.",
        ),
        (
            "Hi Mr. Okafor, please add Mia to the Saturday class and send me the invoice.",
            "Mr. Okafor, could you add Mia to the Saturday class and send me the invoice?",
        ),
        (
            "Payment terms changed to net 45 for Tessaro",
            "We changed payment terms to net 45 for Tessaro",
        ),
    ],
)
def test_the_same_request_worded_otherwise(first: str, second: str) -> None:
    assert _changed(first, second) is None
