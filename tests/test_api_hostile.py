"""Hostile pairs, through HTTP: one table per class, written before the funnel is changed.

Each row sends a first call, completes it with a result, sends a second call in the same
(fresh) session, and asserts the decision. Classes 1-6 and 9 are different actions the service
must keep apart (``proceed``); classes 7, 8 and 10 are retries it should find (``duplicate``);
class 11 attacks the rule of class 9, both ways. A failing row prints the answer's ``match``
and ``explain``, so the pytest output shows what the funnel decided and why. The ``client``
fixture keeps its SQLite ledger under ``tmp_path``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.helpers import complete

Args = dict[str, Any]


def _check(client: TestClient, session_id: str, tool: str, args: Args) -> dict[str, Any]:
    body = {"session_id": session_id, "tool": tool, "args": args}
    response = client.post("/v1/check", json=body)
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


def _why(expected: str, answer: dict[str, Any]) -> str:
    """One summary line (decision, stage, score, verifier verdicts), then match and explain."""
    match = answer.get("match") or {}
    explain = answer.get("explain") or {}
    stages = explain.get("stages", [])
    scores = " ".join(f"{s['stage']}:{s['score']}/{s['threshold']}" for s in stages)
    verifier = [
        {k: s[k] for k in ("stage", "verdict", "detail") if k in s}
        for s in stages
        if "verdict" in s or "detail" in s
    ]
    extra = {k: explain[k] for k in ("differing_fields", "borderline", "notes") if k in explain}
    summary = (
        f"expected {expected}, got {answer['decision']}"
        f" stage={match.get('stage')} score={match.get('score')}"
        f" stages=[{scores}]"
        f" verifier={json.dumps(verifier, ensure_ascii=False)}"
        f" {json.dumps(extra, ensure_ascii=False)}"
    )
    return (
        f"{summary}\n"
        f"match={json.dumps(answer.get('match'), ensure_ascii=False)}\n"
        f"explain={json.dumps(explain, ensure_ascii=False)}"
    )


def _pair(
    client: TestClient,
    request: pytest.FixtureRequest,
    tool: str,
    first: Args,
    second: Args,
    expected: str,
) -> None:
    """First check, complete it, second check in the same fresh session, assert the decision."""
    session_id = f"hostile-{request.node.callspec.id}"
    claimed = _check(client, session_id, tool, first)
    assert claimed["decision"] == "proceed", _why("proceed (first call)", claimed)
    result = {"done": claimed["call_id"]}
    complete(client, claimed["call_id"], status="succeeded", result=result)
    answer = _check(client, session_id, tool, second)
    assert answer["decision"] == expected, _why(expected, answer)
    if expected == "duplicate":
        assert answer["call_id"] == claimed["call_id"], _why(expected, answer)
        assert answer["match"]["result"] == result, _why(expected, answer)
    else:
        assert answer["call_id"] != claimed["call_id"], _why(expected, answer)


# --- 1. Text the model cannot read --------------------------------------------------------

UNREADABLE = [
    pytest.param(
        "send_message",
        {"to": "somchai@example.com", "message": "กรุณาโอนเงินห้าพันบาทให้ซัพพลายเออร์ภายในวันนี้"},
        {"to": "somchai@example.com", "message": "กรุณายกเลิกการประชุมทีมในวันพรุ่งนี้เช้า"},
        "proceed",
        id="thai-unrelated",
    ),
    pytest.param(
        "create_ticket",
        {"queue": "facilities", "description": "សូមជួសជុលម៉ាស៊ីនបោះពុម្ពនៅជាន់ទីពីរ"},
        {"queue": "facilities", "description": "សូមបញ្ជាទិញក្រដាសបន្ថែមសម្រាប់ការិយាល័យ"},
        "proceed",
        id="khmer-unrelated",
    ),
    pytest.param(
        "post_comment",
        {"thread": "T-88", "body": "እባክዎን ሪፖርቱን እስከ ነገ ይላኩ"},
        {"thread": "T-88", "body": "ስብሰባው ወደ ሐሙስ ተዛውሯል"},
        "proceed",
        id="amharic-unrelated",
    ),
    pytest.param(
        "send_message",
        {"to": "wang@example.com", "message": "请帮我取消订单 8841 并在今天之内处理"},
        {"to": "wang@example.com", "message": "请帮我确认订单 8841 并在今天之内处理"},
        "proceed",
        id="cjk-cancel-confirm",
    ),
    pytest.param(
        "schedule_task",
        {"instructions": "明天上午把所有商品价格上调百分之十"},
        {"instructions": "明天上午把所有商品价格下调百分之十"},
        "proceed",
        id="cjk-raise-lower-one-char",
    ),
    pytest.param(
        "post_comment",
        {"thread": "PR-412", "body": "我同意这个合并请求"},
        {"thread": "PR-412", "body": "我不同意这个合并请求"},
        "proceed",
        id="cjk-agree-disagree-one-char",
    ),
    pytest.param(
        "create_ticket",
        {"queue": "ops-tokyo", "description": "本番サーバーの電源を入れてください"},
        {"queue": "ops-tokyo", "description": "本番サーバーの電源を切ってください"},
        "proceed",
        id="japanese-power-on-off",
    ),
    pytest.param(
        "send_message",
        {"to": "#design-review", "message": "👍"},
        {"to": "#design-review", "message": "👎"},
        "proceed",
        id="emoji-only-thumbs",
    ),
    pytest.param(
        "post_comment",
        {"thread": "launch-v2", "body": "My rating for this launch: 🔥"},
        {"thread": "launch-v2", "body": "My rating for this launch: 💩"},
        "proceed",
        id="emoji-rating-fire-poop",
    ),
    pytest.param(
        "send_message",
        {"to": "#deploys", "message": "Production deploy status: 🟢"},
        {"to": "#deploys", "message": "Production deploy status: 🔴"},
        "proceed",
        id="emoji-status-green-red",
    ),
    pytest.param(
        "send_email",
        {"to": "sam@example.com", "subject": "Re: the offer", "body": "✅✅✅"},
        {"to": "sam@example.com", "subject": "Re: the offer", "body": "❌❌❌"},
        "proceed",
        id="emoji-only-yes-no",
    ),
]


@pytest.mark.parametrize(("tool", "first", "second", "expected"), UNREADABLE)
def test_unreadable_text(
    client: TestClient,
    request: pytest.FixtureRequest,
    tool: str,
    first: Args,
    second: Args,
    expected: str,
) -> None:
    _pair(client, request, tool, first, second, expected)


# --- 2. Small words that carry the meaning ------------------------------------------------

SMALL_WORDS = [
    pytest.param(
        "post_comment",
        {"thread": "RFC-12", "body": "I vote for the proposal to move the office to Leeds"},
        {"thread": "RFC-12", "body": "I vote against the proposal to move the office to Leeds"},
        "proceed",
        id="for-against",
    ),
    pytest.param(
        "send_email",
        {
            "to": "it@example.com",
            "subject": "Access",
            "body": "Grant Priya access to the billing and payroll systems",
        },
        {
            "to": "it@example.com",
            "subject": "Access",
            "body": "Grant Priya access to the billing or payroll systems",
        },
        "proceed",
        id="and-or",
    ),
    pytest.param(
        "create_ticket",
        {"queue": "security", "description": "Contractors must use the north entrance after 6pm"},
        {"queue": "security", "description": "Contractors may use the north entrance after 6pm"},
        "proceed",
        id="must-may",
    ),
    pytest.param(
        "send_message",
        {"to": "client@acme.test", "message": "Tell the client the shipment will be late"},
        {"to": "client@acme.test", "message": "Tell the client the shipment might be late"},
        "proceed",
        id="will-might",
    ),
    pytest.param(
        "send_email",
        {
            "to": "supplier@example.com",
            "subject": "Order 7731",
            "body": "Please confirm that we will cover the shipping costs for order 7731",
        },
        {
            "to": "supplier@example.com",
            "subject": "Order 7731",
            "body": "Please confirm that they will cover the shipping costs for order 7731",
        },
        "proceed",
        id="we-they",
    ),
    pytest.param(
        "schedule_task",
        {"instructions": "Restart the payment workers now"},
        {"instructions": "Restart the payment workers later"},
        "proceed",
        id="now-later",
    ),
    pytest.param(
        "schedule_task",
        {"instructions": "Book the team lunch for this Friday at noon"},
        {"instructions": "Book the team lunch for next Friday at noon"},
        "proceed",
        id="this-next-friday",
    ),
    pytest.param(
        "send_message",
        {"to": "courier@example.com", "message": "Please leave the parcel here by the door"},
        {"to": "courier@example.com", "message": "Please leave the parcel there by the door"},
        "proceed",
        id="here-there",
    ),
    pytest.param(
        "send_email",
        {
            "to": "ap@example.com",
            "subject": "Invoice 204",
            "body": "Send invoice 204 only to the finance team",
        },
        {
            "to": "ap@example.com",
            "subject": "Invoice 204",
            "body": "Send invoice 204 also to the finance team",
        },
        "proceed",
        id="only-also",
    ),
    pytest.param(
        "create_ticket",
        {"queue": "dba", "description": "Run the database backup before the migration on Sunday"},
        {"queue": "dba", "description": "Run the database backup after the migration on Sunday"},
        "proceed",
        id="before-after",
    ),
    pytest.param(
        "post_comment",
        {"thread": "release-3.2", "body": "Ship the release with the new pricing page"},
        {"thread": "release-3.2", "body": "Ship the release without the new pricing page"},
        "proceed",
        id="with-without",
    ),
    pytest.param(
        "update_order",
        {"order": "O-77", "note": "The customer wants more sugar in every delivery"},
        {"order": "O-77", "note": "The customer wants less sugar in every delivery"},
        "proceed",
        id="more-less",
    ),
]


@pytest.mark.parametrize(("tool", "first", "second", "expected"), SMALL_WORDS)
def test_small_words(
    client: TestClient,
    request: pytest.FixtureRequest,
    tool: str,
    first: Args,
    second: Args,
    expected: str,
) -> None:
    _pair(client, request, tool, first, second, expected)


# --- 3. Roles swapped through pronouns ----------------------------------------------------

PRONOUN_ROLES = [
    pytest.param(
        "schedule_task",
        {"instructions": "Remind Diego that he owes Leila €25 for the taxi"},
        {"instructions": "Remind Leila that she owes Diego €25 for the taxi"},
        "proceed",
        id="owes-diego-leila",
    ),
    pytest.param(
        "send_message",
        {"to": "#team", "message": "Let Maria know her proposal scored higher than Tom's"},
        {"to": "#team", "message": "Let Tom know his proposal scored higher than Maria's"},
        "proceed",
        id="scored-higher-maria-tom",
    ),
    pytest.param(
        "send_email",
        {
            "to": "hr@example.com",
            "subject": "Loan",
            "body": "Ask Priya to pay back the $120 she borrowed from Omar",
        },
        {
            "to": "hr@example.com",
            "subject": "Loan",
            "body": "Ask Omar to pay back the $120 he borrowed from Priya",
        },
        "proceed",
        id="pay-back-priya-omar",
    ),
    pytest.param(
        "send_message",
        {"to": "#managers", "message": "Tell Grace that she will report to Samuel from Monday"},
        {"to": "#managers", "message": "Tell Samuel that he will report to Grace from Monday"},
        "proceed",
        id="report-to-grace-samuel",
    ),
    pytest.param(
        "create_ticket",
        {
            "queue": "oncall",
            "description": "Inform Kenji that he is replacing Aiko as on-call lead",
        },
        {
            "queue": "oncall",
            "description": "Inform Aiko that she is replacing Kenji as on-call lead",
        },
        "proceed",
        id="replacing-kenji-aiko",
    ),
    pytest.param(
        "send_message",
        {"to": "family", "message": "Tell Noah that Olivia will pick him up at 8"},
        {"to": "family", "message": "Tell Olivia that Noah will pick her up at 8"},
        "proceed",
        id="pick-up-noah-olivia",
    ),
]


@pytest.mark.parametrize(("tool", "first", "second", "expected"), PRONOUN_ROLES)
def test_pronoun_roles(
    client: TestClient,
    request: pytest.FixtureRequest,
    tool: str,
    first: Args,
    second: Args,
    expected: str,
) -> None:
    _pair(client, request, tool, first, second, expected)


# --- 4. Long texts changed early ----------------------------------------------------------

_CONTRACT_TAIL = (
    "The current agreement was signed in March 2023 and covers warehousing, last-mile delivery "
    "and returns handling for all three regional distribution centres. Over the past year the "
    "service levels have been reviewed every quarter by the operations committee, and the "
    "minutes of those reviews are attached to this message for reference. Please make sure "
    "that the notice is sent by registered mail to the address listed in clause 14, with a "
    "copy to the account manager by email, and that the legal team countersigns the letter "
    "before it leaves the building. The finance department needs a copy of the final letter "
    "so that the purchase orders for the next period can be adjusted, and procurement should "
    "update the supplier register once the counterparty acknowledges receipt. If anything in "
    "the attached schedules looks inconsistent with the signed version, raise it with Martina "
    "in legal before Thursday, because the notice period in clause 9 is sixty calendar days "
    "and we cannot afford to miss it. Keep the communication factual and polite; the "
    "relationship with their regional team has been good and several of our people work "
    "closely with them every day. Finally, file the signed letter, the proof of postage and "
    "the acknowledgement in the contracts folder on the shared drive, and close the related "
    "task in the tracker with a short note explaining what was sent, to whom, and on which "
    "date, so that the audit trail is complete for the annual review next spring."
)

_PROJECT_TAIL = (
    "This request follows the review meeting held last Tuesday with the product, finance and "
    "support leads, where the background of the case was discussed in detail. The customer "
    "has been with us for six years, holds an enterprise plan with priority support, and has "
    "opened four tickets about the same billing problem since January. Support has already "
    "confirmed that the duplicate charges were caused by the migration of the invoicing "
    "system and not by anything the customer did, and the engineering team has since fixed "
    "the underlying bug and backfilled the affected records. The account manager has spoken "
    "with the customer twice this week and promised a written answer by Friday at the "
    "latest, so please treat this as urgent and keep the account manager copied on every "
    "message. Record the decision in the billing system with a reference to the original "
    "tickets, update the customer's account notes, and send the standard confirmation email "
    "template with the amounts filled in. The finance team needs the total in their weekly "
    "report, and the support lead wants to use this case as an example in the next training "
    "session, so please write a short summary of what happened and what we decided. If you "
    "need any of the original invoices or the call notes, they are in the shared folder for "
    "the account, under the billing subfolder, together with the email thread from March."
)


def _long(first_sentence: str, tail: str) -> str:
    return f"{first_sentence} {tail}"


LONG_EARLY = [
    pytest.param(
        "send_email",
        {
            "to": "legal@example.com",
            "subject": "Logistics contract",
            "body": _long(
                "Please terminate the service contract with Acme Logistics at the end of June.",
                _CONTRACT_TAIL,
            ),
        },
        {
            "to": "legal@example.com",
            "subject": "Logistics contract",
            "body": _long(
                "Please renew the service contract with Acme Logistics at the end of June.",
                _CONTRACT_TAIL,
            ),
        },
        "proceed",
        id="long-terminate-renew",
    ),
    pytest.param(
        "send_email",
        {
            "to": "legal@example.com",
            "subject": "Logistics contract",
            "body": _long(
                "Please send the termination notice to Acme Logistics at the end of June.",
                _CONTRACT_TAIL,
            ),
        },
        {
            "to": "legal@example.com",
            "subject": "Logistics contract",
            "body": _long(
                "Please send the termination notice to Northwind Freight at the end of June.",
                _CONTRACT_TAIL,
            ),
        },
        "proceed",
        id="long-vendor-swap",
    ),
    pytest.param(
        "create_ticket",
        {
            "queue": "billing",
            "description": _long(
                "Approve the refund request from Halvorsen Retail for invoice 5512.",
                _PROJECT_TAIL,
            ),
        },
        {
            "queue": "billing",
            "description": _long(
                "Reject the refund request from Halvorsen Retail for invoice 5512.",
                _PROJECT_TAIL,
            ),
        },
        "proceed",
        id="long-approve-reject",
    ),
    pytest.param(
        "schedule_task",
        {
            "instructions": _long(
                "Do not publish the quarterly figures before the board meeting.",
                _PROJECT_TAIL,
            ),
        },
        {
            "instructions": _long(
                "Publish the quarterly figures before the board meeting.",
                _PROJECT_TAIL,
            ),
        },
        "proceed",
        id="long-do-not",
    ),
    pytest.param(
        "post_comment",
        {
            "thread": "CASE-5512",
            "body": _long(
                "Credit Halvorsen Retail with the disputed amount on their next invoice.",
                _PROJECT_TAIL,
            ),
        },
        {
            "thread": "CASE-5512",
            "body": _long(
                "Credit Lindqvist Foods with the disputed amount on their next invoice.",
                _PROJECT_TAIL,
            ),
        },
        "proceed",
        id="long-customer-swap",
    ),
]


@pytest.mark.parametrize(("tool", "first", "second", "expected"), LONG_EARLY)
def test_long_text_changed_early(
    client: TestClient,
    request: pytest.FixtureRequest,
    tool: str,
    first: Args,
    second: Args,
    expected: str,
) -> None:
    texts = [v for v in first.values() if isinstance(v, str) and len(v.split()) > 20]
    assert texts, "no long text in the row"
    assert all(len(t.split()) >= 200 for t in texts), [len(t.split()) for t in texts]
    _pair(client, request, tool, first, second, expected)


# --- 5. Other languages -------------------------------------------------------------------

OTHER_LANGUAGES = [
    pytest.param(
        "send_email",
        {
            "to": "buchhaltung@example.de",
            "subject": "Rechnung 311",
            "body": "Bitte schicken Sie die Rechnung heute an den Kunden",
        },
        {
            "to": "buchhaltung@example.de",
            "subject": "Rechnung 311",
            "body": "Bitte schicken Sie die Rechnung heute nicht an den Kunden",
        },
        "proceed",
        id="german-nicht",
    ),
    pytest.param(
        "schedule_task",
        {"instructions": "Das Backup der Kundendatenbank soll heute Nacht laufen"},
        {"instructions": "Das Backup der Kundendatenbank soll heute Nacht nicht laufen"},
        "proceed",
        id="german-nicht-backup",
    ),
    pytest.param(
        "post_comment",
        {"thread": "PRES-9", "body": "El comité aprueba la solicitud de presupuesto de marketing"},
        {"thread": "PRES-9", "body": "El comité rechaza la solicitud de presupuesto de marketing"},
        "proceed",
        id="spanish-aprueba-rechaza",
    ),
    pytest.param(
        "create_ticket",
        {
            "queue": "sécurité",
            "description": "Merci d'activer l'authentification à deux facteurs pour tous "
            "les comptes",
        },
        {
            "queue": "sécurité",
            "description": "Merci de désactiver l'authentification à deux facteurs pour tous "
            "les comptes",
        },
        "proceed",
        id="french-activer-desactiver",
    ),
    pytest.param(
        "send_message",
        {"to": "crediti@example.it", "message": "Aumenta il limite di credito del cliente Rossi"},
        {
            "to": "crediti@example.it",
            "message": "Diminuisci il limite di credito del cliente Rossi",
        },
        "proceed",
        id="italian-aumenta-diminuisci",
    ),
    pytest.param(
        "send_email",
        {
            "to": "compras@example.pt",
            "subject": "Proposta do fornecedor",
            "body": "Por favor, aceite a proposta do fornecedor até sexta-feira",
        },
        {
            "to": "compras@example.pt",
            "subject": "Proposta do fornecedor",
            "body": "Por favor, recuse a proposta do fornecedor até sexta-feira",
        },
        "proceed",
        id="portuguese-aceite-recuse",
    ),
    pytest.param(
        "schedule_task",
        {"instructions": "Ligue os servidores de teste às oito da manhã"},
        {"instructions": "Desligue os servidores de teste às oito da manhã"},
        "proceed",
        id="portuguese-ligue-desligue",
    ),
]


@pytest.mark.parametrize(("tool", "first", "second", "expected"), OTHER_LANGUAGES)
def test_other_languages(
    client: TestClient,
    request: pytest.FixtureRequest,
    tool: str,
    first: Args,
    second: Args,
    expected: str,
) -> None:
    _pair(client, request, tool, first, second, expected)


# --- 6. Attempt-id names that are the action's own target ---------------------------------

TARGET_IDS = [
    pytest.param(
        "approve_request",
        {"request_id": "REQ-1001", "comment": "Budget confirmed"},
        {"request_id": "REQ-1002", "comment": "Budget confirmed"},
        "proceed",
        id="approve-request-id",
    ),
    pytest.param(
        "approve_request",
        {"requestId": "REQ-2040"},
        {"requestId": "REQ-2041"},
        "proceed",
        id="approve-request-id-only-arg",
    ),
    pytest.param(
        "replay_message",
        {"message_uuid": "6f1c2a9e-3b1d-4c55-9a0e-0d6f2b7c1a11", "queue": "orders"},
        {"message_uuid": "9b3e7d40-58aa-4f0b-8c2e-5e1a7f9d2c34", "queue": "orders"},
        "proceed",
        id="replay-message-uuid",
    ),
    pytest.param(
        "delete_trace",
        {"trace_id": "4bf92f3577b34da6a3ce929d0e0e4736"},
        {"trace_id": "a3ce929d0e0e47364bf92f3577b34da6"},
        "proceed",
        id="delete-trace-id-only-arg",
    ),
    pytest.param(
        "cancel_span",
        {"span_id": "00f067aa0ba902b7", "reason": "stuck in export"},
        {"span_id": "b7ad6b7169203331", "reason": "stuck in export"},
        "proceed",
        id="cancel-span-id",
    ),
    pytest.param(
        "retry_tool_call",
        {"tool_call_id": "call_8Kx2mQ"},
        {"tool_call_id": "call_Z41pLe"},
        "proceed",
        id="retry-tool-call-id-only-arg",
    ),
    pytest.param(
        "close_incident",
        {"correlation_id": "INC-2291", "resolution": "fixed by rollback"},
        {"correlation_id": "INC-2292", "resolution": "fixed by rollback"},
        # The tool does not name it and another argument stays: an attempt id, so a retry.
        # A policy that lists it in exact_fields keeps it.
        "duplicate",
        id="close-incident-correlation-id-is-noise",
    ),
    pytest.param(
        "resume_attempt",
        {"attempt_id": "att-3"},
        {"attempt_id": "att-4"},
        "proceed",
        id="resume-attempt-id-only-arg",
    ),
]


@pytest.mark.parametrize(("tool", "first", "second", "expected"), TARGET_IDS)
def test_attempt_id_names_as_targets(
    client: TestClient,
    request: pytest.FixtureRequest,
    tool: str,
    first: Args,
    second: Args,
    expected: str,
) -> None:
    _pair(client, request, tool, first, second, expected)


# --- 7. Retry noise -----------------------------------------------------------------------

_TICKET = {
    "queue": "support",
    "title": "Printer on floor 3 jams",
    "description": "The printer next to the kitchen on floor 3 jams on every double-sided job",
}
_MAIL = {
    "to": "dana@example.com",
    "subject": "Offsite agenda",
    "body": "Hi Dana, the agenda for the offsite is attached. See you on Thursday.",
}

RETRY_NOISE = [
    pytest.param(
        "send_email",
        _MAIL,
        {**_MAIL, "_meta": {"progressToken": 3}},
        "duplicate",
        id="mcp-meta-added",
    ),
    pytest.param(
        "send_email",
        {**_MAIL, "_meta": {"progressToken": 3}},
        {**_MAIL, "_meta": {"progressToken": 4}},
        "duplicate",
        id="mcp-meta-changed",
    ),
    pytest.param(
        "create_ticket",
        _TICKET,
        {**_TICKET, "retry_count": 1},
        "duplicate",
        id="retry-count-added",
    ),
    pytest.param(
        "create_ticket",
        {**_TICKET, "retry_count": 1},
        {**_TICKET, "retry_count": 2},
        "duplicate",
        id="retry-count-changed",
    ),
    pytest.param(
        "post_comment",
        {"thread": "PR-88", "body": "LGTM once the migration test passes"},
        {"thread": "PR-88", "body": "LGTM once the migration test passes", "retry": True},
        "duplicate",
        id="retry-flag-added",
    ),
    pytest.param(
        "send_message",
        {"to": "#ops", "message": "Rotating the TLS certificates at 14:00", "attempt": 1},
        {"to": "#ops", "message": "Rotating the TLS certificates at 14:00", "attempt": 2},
        "duplicate",
        id="attempt-changed",
    ),
    pytest.param(
        "schedule_task",
        {"instructions": "Archive last month's support tickets"},
        {"instructions": "Archive last month's support tickets", "attempt_number": 2},
        "duplicate",
        id="attempt-number-added",
    ),
]


@pytest.mark.parametrize(("tool", "first", "second", "expected"), RETRY_NOISE)
def test_retry_noise(
    client: TestClient,
    request: pytest.FixtureRequest,
    tool: str,
    first: Args,
    second: Args,
    expected: str,
) -> None:
    _pair(client, request, tool, first, second, expected)


# --- 8. Facts in prose written another way ------------------------------------------------

PROSE_FACTS = [
    pytest.param(
        "schedule_task",
        {"instructions": "Send the rent reminder to all tenants on 2026-03-05"},
        {"instructions": "Send the rent reminder to all tenants on March 5, 2026"},
        "duplicate",
        id="iso-date-vs-month-name",
    ),
    pytest.param(
        "send_message",
        {"to": "#audit", "message": "The external audit starts on the 5th of March 2026"},
        {"to": "#audit", "message": "The external audit starts on 2026-03-05"},
        "duplicate",
        id="ordinal-date-vs-iso",
    ),
    pytest.param(
        "post_comment",
        {"thread": "AUD-7", "body": "Kick-off with the auditors on 5 March 2026"},
        {"thread": "AUD-7", "body": "Kick-off with the auditors on March 5, 2026"},
        "duplicate",
        id="day-month-vs-month-day",
    ),
    pytest.param(
        "send_email",
        {
            "to": "auditors@example.com",
            "subject": "Call",
            "body": "Our call with the auditors is at 3 PM on Thursday",
        },
        {
            "to": "auditors@example.com",
            "subject": "Call",
            "body": "Our call with the auditors is at 15:00 on Thursday",
        },
        "duplicate",
        id="3pm-vs-1500",
    ),
    pytest.param(
        "create_ticket",
        {"queue": "facilities", "description": "Unlock the loading dock at 9:30 AM tomorrow"},
        {"queue": "facilities", "description": "Unlock the loading dock at 09:30 tomorrow"},
        "duplicate",
        id="930am-vs-0930",
    ),
    pytest.param(
        "send_message",
        {"to": "finance@example.com", "message": "Reimburse Sam $40 for the team lunch"},
        {"to": "finance@example.com", "message": "Reimburse Sam 40 dollars for the team lunch"},
        "duplicate",
        id="dollar-sign-vs-dollars",
    ),
    pytest.param(
        "send_email",
        {
            "to": "refunds@example.com",
            "subject": "Refund",
            "body": "Refund 40 USD to the customer for order 9912",
        },
        {
            "to": "refunds@example.com",
            "subject": "Refund",
            "body": "Refund 40 US dollars to the customer for order 9912",
        },
        "duplicate",
        id="usd-vs-us-dollars",
    ),
]


@pytest.mark.parametrize(("tool", "first", "second", "expected"), PROSE_FACTS)
def test_prose_facts(
    client: TestClient,
    request: pytest.FixtureRequest,
    tool: str,
    first: Args,
    second: Args,
    expected: str,
) -> None:
    _pair(client, request, tool, first, second, expected)


# --- 9. A content word that changes whom or what the action targets -----------------------

# One word added or dropped in a text otherwise the same: a possessive that hands the action
# to someone else ("Ana's lawyer" / "Ana"), a noun that narrows the target ("the backup
# folder" / "the folder"), or a head noun added after it ("the team" / "the team lead").
TARGET_WORDS = [
    pytest.param(
        "send_email",
        {
            "to": "ana@example.com",
            "subject": "Contract",
            "body": "Send the signed contract to Ana's lawyer",
        },
        {"to": "ana@example.com", "subject": "Contract", "body": "Send the signed contract to Ana"},
        "proceed",
        id="possessive-dropped-lawyer",
    ),
    pytest.param(
        "send_message",
        {"to": "#docs", "message": "Email the draft to the team lead"},
        {"to": "#docs", "message": "Email the draft to the team"},
        "proceed",
        id="head-noun-dropped-lead",
    ),
    pytest.param(
        "schedule_task",
        {"instructions": "Delete the backup folder on the shared drive"},
        {"instructions": "Delete the folder on the shared drive"},
        "proceed",
        id="modifier-dropped-backup",
    ),
    pytest.param(
        "create_ticket",
        {"queue": "events", "description": "Book a table for the kids at the Friday dinner"},
        {
            "queue": "events",
            "description": "Book a table for the kids' teacher at the Friday dinner",
        },
        "proceed",
        id="possessive-added-teacher",
    ),
    pytest.param(
        "send_message",
        {"to": "ap@example.com", "message": "Forward the overdue invoice to the supplier"},
        {
            "to": "ap@example.com",
            "message": "Forward the overdue invoice to the supplier's accountant",
        },
        "proceed",
        id="possessive-added-accountant",
    ),
    pytest.param(
        "schedule_task",
        {"instructions": "Archive the test reports from last week"},
        {"instructions": "Archive the reports from last week"},
        "proceed",
        id="modifier-dropped-test",
    ),
    pytest.param(
        "create_ticket",
        {"queue": "it", "description": "Disable Priya's admin access to the billing system"},
        {"queue": "it", "description": "Disable Priya's access to the billing system"},
        "proceed",
        id="modifier-dropped-admin",
    ),
    pytest.param(
        "send_message",
        {"to": "#events", "message": "Invite the design team to the launch review on Monday"},
        {"to": "#events", "message": "Invite the design team leads to the launch review on Monday"},
        "proceed",
        id="head-noun-added-leads",
    ),
    pytest.param(
        "schedule_task",
        {"instructions": "Restart the staging database at midnight"},
        {"instructions": "Restart the staging database replica at midnight"},
        "proceed",
        id="head-noun-added-replica",
    ),
    pytest.param(
        "send_email",
        {
            "to": "clinic@example.com",
            "subject": "Results",
            "body": "Call the patient's mother about the blood test results",
        },
        {
            "to": "clinic@example.com",
            "subject": "Results",
            "body": "Call the patient about the blood test results",
        },
        "proceed",
        id="possessive-dropped-mother",
    ),
    pytest.param(
        "post_comment",
        {"thread": "FIN-31", "body": "Share the budget sheet with the finance interns"},
        {"thread": "FIN-31", "body": "Share the budget sheet with the interns"},
        "proceed",
        id="modifier-dropped-finance",
    ),
    pytest.param(
        "create_ticket",
        {
            "queue": "billing",
            "description": "Refund the shipping fee to the customer for order 4410",
        },
        {"queue": "billing", "description": "Refund the fee to the customer for order 4410"},
        "proceed",
        id="modifier-dropped-shipping",
    ),
    pytest.param(
        "create_ticket",
        {"queue": "it", "description": "Lock the account of the former employee in accounting"},
        {"queue": "it", "description": "Lock the account of the employee in accounting"},
        "proceed",
        id="adjective-dropped-former",
    ),
    pytest.param(
        "schedule_task",
        {"instructions": "Restart the staging database replica at midnight"},
        {"instructions": "Restart the staging database replica at midnight again"},
        # "again" asks for the action once more: no marker of a retry, so the call proceeds.
        "proceed",
        id="again-added",
    ),
]


@pytest.mark.parametrize(("tool", "first", "second", "expected"), TARGET_WORDS)
def test_target_words(
    client: TestClient,
    request: pytest.FixtureRequest,
    tool: str,
    first: Args,
    second: Args,
    expected: str,
) -> None:
    _pair(client, request, tool, first, second, expected)


# --- 10. Retries beside them: words that add or drop nothing of the action ----------------

TARGET_RETRIES = [
    pytest.param(
        "send_message",
        {"to": "#legal", "message": "Please send the signed contract to Ana's lawyer"},
        {"to": "#legal", "message": "Send the signed contract to Ana's lawyer"},
        "duplicate",
        id="please-dropped",
    ),
    pytest.param(
        "send_message",
        {"to": "#docs", "message": "Could you email the draft to the team lead?"},
        {"to": "#docs", "message": "Email the draft to the team lead"},
        "duplicate",
        id="opener-dropped",
    ),
    pytest.param(
        "schedule_task",
        {"instructions": "Delete the backup folder on the shared drive"},
        {"instructions": "Delete backup folder on shared drive"},
        "duplicate",
        id="articles-dropped",
    ),
    pytest.param(
        "create_ticket",
        {
            "queue": "events",
            "description": "Hi, book a table for the kids at the Friday dinner. Thanks!",
        },
        {"queue": "events", "description": "Book a table for the kids at the Friday dinner"},
        "duplicate",
        id="greeting-and-thanks-dropped",
    ),
    pytest.param(
        "send_message",
        {
            "to": "ap@example.com",
            "message": "Forward the overdue invoice to the supplier's accountant",
        },
        {
            "to": "ap@example.com",
            "message": "Forward the overdue invoice to the supplier's accountant right away",
        },
        "duplicate",
        id="right-away-added",
    ),
    pytest.param(
        "create_ticket",
        {"queue": "it", "description": "Disable Priya's admin access to the billing system"},
        {"queue": "it", "description": "Disable Priya's admin access to the billing system asap"},
        "duplicate",
        id="asap-added",
    ),
    pytest.param(
        "create_ticket",
        {"queue": "it", "description": "Please purchase two printer cartridges for the office"},
        {"queue": "it", "description": "Please buy two printer cartridges for the office"},
        "duplicate",
        id="synonym-buy",
    ),
    pytest.param(
        "send_message",
        {"to": "#billing", "message": "Send the overdue notice to the tenant in flat 4B"},
        {"to": "#billing", "message": "Retry: send the overdue notice to the tenant in flat 4B"},
        "duplicate",
        id="retry-label-added",
    ),
    pytest.param(
        "schedule_task",
        {"instructions": "Cancel my dentist appointment for Tuesday morning"},
        {"instructions": "Cancel my dentist appointment appointment for Tuesday morning"},
        "duplicate",
        id="word-said-twice",
    ),
]


@pytest.mark.parametrize(("tool", "first", "second", "expected"), TARGET_RETRIES)
def test_target_retries(
    client: TestClient,
    request: pytest.FixtureRequest,
    tool: str,
    first: Args,
    second: Args,
    expected: str,
) -> None:
    _pair(client, request, tool, first, second, expected)


# --- 11. Attacks on the target rule: where its reasons and its bounds could be used ---------

# A retry's marker that is a word of the target's name, urgency inside a noun phrase, a
# greeting before a request, a note that writes no articles, a time before the target.
TARGET_ATTACKS = [
    pytest.param(
        "schedule_task",
        {"instructions": "Move the failed job to the retry queue"},
        {"instructions": "Move the failed job to the queue"},
        "proceed",
        id="retry-word-in-name",
    ),
    pytest.param(
        "send_message",
        {
            "to": "#support",
            "message": "Send the outage notice to the immediately affected customers",
        },
        {"to": "#support", "message": "Send the outage notice to the affected customers"},
        "proceed",
        id="urgency-word-in-noun-phrase",
    ),
    pytest.param(
        "send_message",
        {"to": "#docs", "message": "Hi, send the file to the team lead"},
        {"to": "#docs", "message": "Hi, send the file to the team"},
        "proceed",
        id="greeting-before-request",
    ),
    pytest.param(
        "send_message",
        {"to": "#legal", "message": "Thanks, send the signed contract to Ana's lawyer"},
        {"to": "#legal", "message": "Thanks, send the signed contract to Ana"},
        "proceed",
        id="thanks-before-request",
    ),
    pytest.param(
        "schedule_task",
        {"instructions": "Email draft to team lead"},
        {"instructions": "Email draft to team"},
        "proceed",
        id="note-without-articles",
    ),
    pytest.param(
        "schedule_task",
        {"instructions": "Cancel the 9 AM standup meeting on Thursday"},
        {"instructions": "Cancel the 9 AM meeting on Thursday"},
        "proceed",
        id="time-before-target",
    ),
    pytest.param(
        "schedule_task",
        {"instructions": "Restart the payment workers on the EU cluster"},
        {"instructions": "Restart the payment workers on the EU cluster immediately"},
        "duplicate",
        id="urgency-at-the-end",
    ),
    pytest.param(
        "send_message",
        {"to": "#docs", "message": "Send the onboarding guide to the new hires"},
        {
            "to": "#docs",
            "message": "Send the onboarding guide to the new hires. Thanks for your help!",
        },
        "duplicate",
        id="thank-you-added",
    ),
]


@pytest.mark.parametrize(("tool", "first", "second", "expected"), TARGET_ATTACKS)
def test_target_attacks(
    client: TestClient,
    request: pytest.FixtureRequest,
    tool: str,
    first: Args,
    second: Args,
    expected: str,
) -> None:
    _pair(client, request, tool, first, second, expected)
