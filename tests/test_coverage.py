"""What is compared by meaning: the reader (index/coverage.py), windows, the canonical form,
and through HTTP."""

from __future__ import annotations

import json
import unicodedata
from typing import Any

import pytest
from fastapi.testclient import TestClient
from tokenizers import Tokenizer, models, pre_tokenizers

from tests.helpers import canonicalize, check, complete
from tooldedup.dedup.canonical import (
    MAX_TEXT_CHARS,
    MAX_WINDOWS,
    WINDOW_WORDS,
    normalize_text,
    text_windows,
    too_long,
    window_field,
)
from tooldedup.dedup.policy import ToolPolicy
from tooldedup.dedup.protocols import Embedder, TextReader
from tooldedup.index.coverage import ENGLISH_ONLY, TokenizerCoverage
from tooldedup.index.onnx_embedder import OnnxEmbedder
from tooldedup.index.wiring import build_reader

DEFAULT = ToolPolicy()
THAI = "กรุณาโอนเงินห้าพันบาทให้ซัพพลายเออร์ภายในวันนี้"
THAI_OTHER = "กรุณายกเลิกการประชุมทีมในวันพรุ่งนี้เช้า"

# Twenty sentences of fifteen words each: 300 words, windows end at sentence ends.
_SENTENCES = [
    f"Sentence {i} says that the quarterly review of supplier {i} is due before the end."
    for i in range(20)
]
LONG_300 = " ".join(_SENTENCES)

# A long English request of 292 words in three windows, which the rows below change in
# each.
_LONG_PARTS = [
    "Please approve the refund request from Halvorsen Retail for invoice 5512.",
    "This request follows the review meeting held last Tuesday with the product, finance and"
    " support leads, where the background of the case was discussed in detail.",
    "The customer has been with us for six years, holds an enterprise plan with priority"
    " support, and has opened four tickets about the same billing problem since January.",
    "Support has already confirmed that the duplicate charges were caused by the migration of"
    " the invoicing system and not by anything the customer did.",
    "The engineering team has since fixed the underlying bug and backfilled the affected"
    " records, so no further charges of this kind are expected.",
    "The account manager has spoken with the customer twice this week and promised a written"
    " answer by Friday at the latest.",
    "Please treat this as urgent and keep the account manager copied on every message.",
    "Record the decision in the billing system with a reference to the original tickets.",
    "Update the customer's account notes, and send the standard confirmation email template"
    " with the amounts filled in.",
    "The finance team needs the total in their weekly report, and the support lead wants to"
    " use this case as an example in the next training session.",
    "Please write a short summary of what happened and what we decided.",
    "If you need any of the original invoices or the call notes, they are in the shared"
    " folder for the account, under the billing subfolder.",
    "The email thread from March is in the same folder.",
    "Send the confirmation to the customer before you close the ticket.",
    "Once the refund has gone through, close all four tickets with a short note that links"
    " to this decision, and tell the account manager that the case is finished.",
]
LONG_REQUEST = " ".join(_LONG_PARTS)


@pytest.fixture(scope="module")
def reader(embedder: Embedder) -> TextReader:
    """The service's reader, sharing the session embedder's tokenizer."""
    return build_reader(embedder)


def _nfkc(text: str) -> str:
    return normalize_text(unicodedata.normalize("NFKC", text))


# --- the reader ---------------------------------------------------------------------------

UNREAD = [
    pytest.param(THAI, "written in Thai script, which the rules do not cover", id="thai"),
    pytest.param("សូមជួសជុលម៉ាស៊ីនបោះពុម្ពនៅជាន់ទីពីរ", "written in Khmer script", id="khmer"),
    pytest.param("እባክዎን ሪፖርቱን እስከ ነገ ይላኩ", "written in Ethiopic script", id="amharic"),
    pytest.param(
        "请帮我取消订单 8841 并在今天之内处理", "written in Han (CJK) script", id="chinese"
    ),
    pytest.param("本番サーバーの電源を入れてください", "Katakana", id="japanese"),
    pytest.param("주문을 취소해 주세요", "written in Hangul script", id="korean"),
    pytest.param("Пожалуйста, отмените заказ 1234", "written in Cyrillic script", id="cyrillic"),
    pytest.param("يرجى إلغاء الطلب رقم 1234", "written in Arabic script", id="arabic"),
    pytest.param("Send the contract to 王伟 today", "has letters in Han (CJK) script", id="mixed"),
    pytest.param("The αβ test starts today", "has letters in Greek script", id="greek-word"),
    pytest.param("👍", "100% of its tokens are unknown to the model (1 of 1)", id="emoji"),
    pytest.param("✅✅✅", "100% of its tokens are unknown to the model", id="emoji-run"),
    pytest.param(
        "Production deploy status: 🟢",
        "20% of its tokens are unknown to the model (1 of 5)",
        id="emoji-in-english",
    ),
    pytest.param("My rating for this launch: 🔥", "of its tokens are unknown", id="emoji-rating"),
    pytest.param("\u0301\u0301\u0301", "100% of its tokens are unknown", id="combining-only"),
    pytest.param("Restart the \x07 workers now", "of its tokens are unknown", id="control-char"),
    pytest.param("Approve " + "x" * 120, "of its tokens are unknown", id="word-too-long"),
    pytest.param(
        "Ship " + " ".join(["AB-1234-5678-9012-3456"] * 40),
        "longer than the model reads",
        id="too-many-tokens",
    ),
    pytest.param("Bitte die Bestellung nicht stornieren", ENGLISH_ONLY, id="german"),
    pytest.param(
        "Bitte schicken Sie die Rechnung heute an den Kunden", ENGLISH_ONLY, id="german-an-den"
    ),
    pytest.param("El gerente aprueba la solicitud", ENGLISH_ONLY, id="spanish"),
    pytest.param("Veuillez activer le mode sombre", ENGLISH_ONLY, id="french"),
    pytest.param(
        "Merci d'activer l'authentification à deux facteurs pour tous les comptes",
        ENGLISH_ONLY,
        id="french-elision",
    ),
    pytest.param("Aumenta il limite di credito del cliente Rossi", ENGLISH_ONLY, id="italian"),
    pytest.param(
        "Por favor, aceite a proposta do fornecedor até sexta-feira",
        ENGLISH_ONLY,
        id="portuguese",
    ),
    pytest.param("Ligue os servidores de teste às oito da manhã", ENGLISH_ONLY, id="portuguese-2"),
    pytest.param("Stuur de factuur vandaag naar de klant", ENGLISH_ONLY, id="dutch"),
    pytest.param("BITTE NICHT STORNIEREN", ENGLISH_ONLY, id="german-capitals"),
    pytest.param("Zażółć gęślą jaźń", ENGLISH_ONLY, id="polish-accents"),
    pytest.param("Tolong batalkan pesanan saya", "not in the model's English", id="indonesian"),
]


@pytest.mark.parametrize(("text", "reason"), UNREAD)
def test_what_is_not_read(reader: TextReader, text: str, reason: str) -> None:
    said = reader.unread(_nfkc(text))
    assert said is not None
    assert reason in said


READ = [
    pytest.param("Cancel order 1234 now", id="imperative"),
    pytest.param("Cancel order 1234", id="imperative-no-function-word"),
    pytest.param("Approve PO-60418", id="two-words"),
    pytest.param("LGTM", id="acronym"),
    pytest.param("Thanks!", id="one-word"),
    pytest.param("Urgent: server down", id="headline"),
    pytest.param("Refund José for order 88", id="accented-name"),
    pytest.param("Send the invoice to José de la Cruz", id="name-particles"),
    pytest.param("Ship the parcel to Los Angeles by Friday", id="spanish-place"),
    pytest.param("Book a table at Le Bernardin for 4", id="french-restaurant"),
    pytest.param("Meeting with Zoë and Søren at the café", id="accents-in-names"),
    pytest.param("Add crème fraîche to the café menu", id="loanwords"),
    pytest.param("See Smith et al. for the details", id="et-al"),
    pytest.param("See https://example.com/docs/a?b=1 for the details", id="url"),
    pytest.param("Email anna.kowalska@example.com the Q3 numbers", id="email"),
    pytest.param("Deploy v2.3.1 to prod-eu-1 at 14:00", id="version"),
    pytest.param("Transfer $500 to account 1234-5678", id="amount"),
    pytest.param("Remind Diego that he owes Leila €25 for the taxi", id="euro-sign"),
    pytest.param("Give 5 µg of vitamin D daily, and log it", id="micro-sign"),
    pytest.param("We've cancelled order FX-2093 - 300 gaskets.", id="contraction"),
    pytest.param("PLEASE CANCEL THE ORDER", id="capitals"),
    pytest.param("Swap x and y on the chart", id="single-letters"),
    pytest.param("Rent a van for the move on Saturday", id="van"),
    pytest.param("12345 67890", id="numbers-only"),
    pytest.param(" ".join(_LONG_PARTS[:6]), id="long-paragraph"),
]


@pytest.mark.parametrize("text", READ)
def test_what_is_read(reader: TextReader, text: str) -> None:
    assert reader.unread(_nfkc(text)) is None


@pytest.mark.parametrize(
    ("share", "text", "read"),
    [
        pytest.param(0, "Production deploy status: 🟢", False, id="zero-int"),
        pytest.param(0.0, "Production deploy status: 🟢", False, id="zero"),
        pytest.param(0.2, "Production deploy status: 🟢", True, id="at-the-bound"),
        pytest.param(0.19, "Production deploy status: 🟢", False, id="over-the-bound"),
        pytest.param(1.0, "👍", True, id="never"),
    ],
)
def test_max_unknown_share(embedder: Embedder, share: float, text: str, read: bool) -> None:
    assert isinstance(embedder, OnnxEmbedder)
    coverage = TokenizerCoverage(embedder.tokenizer, max_unknown_share=share)
    assert coverage.max_unknown_share == share
    assert (coverage.unread(text) is None) is read


@pytest.mark.parametrize(
    ("share", "tokens"),
    [
        pytest.param(-0.1, 256, id="negative"),
        pytest.param(1.5, 256, id="over-one"),
        pytest.param(float("nan"), 256, id="nan"),
        pytest.param(True, 256, id="bool"),
        pytest.param("0.1", 256, id="string"),
        pytest.param(0.0, 2, id="no-room-for-tokens"),
        pytest.param(0.0, 256.0, id="float-tokens"),
    ],
)
def test_bad_reader_settings(embedder: Embedder, share: Any, tokens: Any) -> None:
    assert isinstance(embedder, OnnxEmbedder)
    with pytest.raises(ValueError, match="max_"):
        TokenizerCoverage(embedder.tokenizer, max_tokens=tokens, max_unknown_share=share)


def test_the_reader_shares_the_embedders_tokenizer(embedder: Embedder) -> None:
    assert isinstance(embedder, OnnxEmbedder)
    coverage = build_reader(embedder)
    assert isinstance(coverage, TokenizerCoverage)
    assert coverage._tokenizer is embedder.tokenizer
    # Counted whole, past the embedder's truncation at 256 tokens.
    said = coverage.unread(" ".join(["alpha"] * 300))
    assert said == "longer than the model reads: 300 tokens, it reads 254"


def test_a_tokenizer_without_a_normaliser() -> None:
    vocab = {"[UNK]": 0, "please": 1, "cancel": 2, "the": 3, "order": 4}
    plain = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    plain.pre_tokenizer = pre_tokenizers.Whitespace()
    coverage = TokenizerCoverage(plain)
    assert coverage.unread("please cancel the order") is None
    assert coverage.unread("please cancel the invoice") == (
        "25% of its tokens are unknown to the model (1 of 4)"
    )


# --- windows ------------------------------------------------------------------------------


def _words(count: int, end: str = "") -> str:
    return " ".join(f"w{i}{end}" for i in range(count))


@pytest.mark.parametrize(
    ("text", "sizes"),
    [
        pytest.param("Cancel the order", [3], id="short"),
        pytest.param(_words(WINDOW_WORDS), [WINDOW_WORDS], id="one-full-window"),
        pytest.param(LONG_300, [120, 120, 60], id="300-words-sentences"),
        pytest.param(_words(300), [120, 120, 60], id="300-words-no-sentences"),
        pytest.param(_words(300, "."), [120, 120, 60], id="300-one-word-sentences"),
        pytest.param(
            " ".join(["a b c d e f g h i j k l m n o p q r s t u v w x y z a b c d e."] * 5),
            [93, 62],
            id="cut-at-a-sentence-end",
        ),
    ],
)
def test_windows_cover_every_word(text: str, sizes: list[int]) -> None:
    windows = text_windows(text)
    assert [len(w.split(" ")) for w in windows] == sizes
    assert " ".join(windows) == text
    assert all(len(w.split(" ")) <= WINDOW_WORDS for w in windows)


def test_a_window_ends_at_a_sentence_end() -> None:
    windows = text_windows(LONG_300)
    assert len(windows) == 3
    assert all(w.endswith("end.") for w in windows)
    assert windows[1].startswith("Sentence 8 says")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        pytest.param(_words(MAX_WINDOWS * WINDOW_WORDS), None, id="max-windows"),
        pytest.param(
            _words(MAX_WINDOWS * WINDOW_WORDS + 1),
            f"longer than {MAX_WINDOWS} windows of up to {WINDOW_WORDS} words: 961 words",
            id="one-word-more",
        ),
        pytest.param(
            # Sentences of 61 words: each fills a window of its own.
            " ".join([_words(60) + " end."] * (MAX_WINDOWS + 1)),
            f"longer than {MAX_WINDOWS} windows",
            id="max-windows-plus-one",
        ),
        pytest.param(
            "x" * (MAX_TEXT_CHARS + 1), f"longer than {MAX_WINDOWS} windows: ", id="characters"
        ),
        pytest.param("word " * 200_000, f"longer than {MAX_WINDOWS} windows", id="megabyte"),
    ],
)
def test_too_long(text: str, reason: str | None) -> None:
    said = too_long(text.strip())
    if reason is None:
        assert said is None
    else:
        assert said is not None
        assert reason in said


def test_window_field() -> None:
    assert window_field("body#w3") == "body"
    assert window_field("body") == "body"
    assert window_field('a["x#w1"].b') == 'a["x#w1"].b'


# --- the canonical form -------------------------------------------------------------------


class _Recorder:
    """A reader that reads everything but 'UNREAD', and remembers what it was asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def unread(self, text: str) -> str | None:
        self.asked.append(text)
        return "it says UNREAD" if "UNREAD" in text else None


def test_an_unread_text_is_an_exact_leaf_with_its_reason(reader: TextReader) -> None:
    call = canonicalize({"to": "somchai@example.com", "message": THAI}, DEFAULT, reader=reader)
    assert call.semantic_leaves == ()
    assert ("message", json.dumps(THAI, ensure_ascii=False)) in call.exact_leaves
    assert call.unread == (("message", "written in Thai script, which the rules do not cover"),)
    # Without a reader, as before: compared by meaning.
    plain = canonicalize({"to": "somchai@example.com", "message": THAI}, DEFAULT)
    assert [leaf.path for leaf in plain.semantic_leaves] == ["message"]
    assert plain.unread == ()


def test_unread_texts_compare_in_canonical_form(reader: TextReader) -> None:
    def form(text: str) -> Any:
        return canonicalize({"message": text}, DEFAULT, reader=reader)

    spaced = form(f"  {THAI[:10]}   {THAI[10:]}\u200b ")
    assert spaced.args_hash == form(f"{THAI[:10]} {THAI[10:]}").args_hash
    # Fullwidth digits are their plain forms (NFKC).
    assert form("注文 \uff11\uff12\uff13").args_hash == form("注文 123").args_hash
    # Two unread texts never share a signature, so they never meet as candidates.
    assert form(THAI).exact_signature != form(THAI_OTHER).exact_signature
    assert form(THAI).exact_signature == form(THAI).exact_signature


def test_only_free_text_is_read() -> None:
    recorder = _Recorder()
    args = {
        "to": "bob@example.com",
        "order_id": "UNREAD-1",
        "subject": "Refund for order 12",
        "body": "Please refund order 12 in full. It says UNREAD in the margin.",
    }
    call = canonicalize(args, DEFAULT, reader=recorder)
    # Keys in order: "body" first.
    assert recorder.asked == [args["body"], "Refund for order 12"]
    assert [leaf.path for leaf in call.semantic_leaves] == ["subject"]
    assert call.unread == (("body", "it says UNREAD"),)


def test_a_long_text_is_read_window_by_window() -> None:
    recorder = _Recorder()
    call = canonicalize({"body": LONG_300}, DEFAULT, reader=recorder)
    assert [leaf.path for leaf in call.semantic_leaves] == ["body#w0", "body#w1", "body#w2"]
    assert " ".join(leaf.text for leaf in call.semantic_leaves) == LONG_300
    assert recorder.asked == [leaf.text for leaf in call.semantic_leaves]
    assert not any(leaf.path.endswith("#end") for leaf in call.semantic_leaves)
    # One unread window: the whole text is compared exactly, and the reason says where.
    marked = LONG_300.replace("supplier 15", "supplier UNREAD")
    unread = canonicalize({"body": marked}, DEFAULT, reader=_Recorder())
    assert unread.semantic_leaves == ()
    assert unread.unread == (("body", "it says UNREAD (window 2 of 3)"),)


def test_a_text_of_too_many_windows_is_compared_exactly_without_a_reader() -> None:
    text = _words(MAX_WINDOWS * WINDOW_WORDS + 1)
    call = canonicalize({"body": text}, DEFAULT)
    assert call.semantic_leaves == ()
    reason = f"longer than {MAX_WINDOWS} windows of up to {WINDOW_WORDS} words: 961 words"
    assert call.unread == (("body", reason),)


# --- through HTTP -------------------------------------------------------------------------


def _first(client: TestClient, args: dict[str, Any], session: str, tool: str) -> dict[str, Any]:
    claimed = check(client, args, session_id=session, tool=tool)
    assert claimed["decision"] == "proceed", claimed
    complete(client, claimed["call_id"], status="succeeded", result={"done": claimed["call_id"]})
    return claimed


def _sentence_changed(index: int, old: str, new: str) -> str:
    parts = list(_LONG_PARTS)
    assert old in parts[index]
    parts[index] = parts[index].replace(old, new)
    return " ".join(parts)


def _row(key: str, first: str, second: str, expected: str, name: str) -> Any:
    to = "a@example.com"
    return pytest.param({"to": to, key: first}, {"to": to, key: second}, expected, id=name)


HTTP = [
    _row("message", THAI, THAI, "duplicate", "thai-retry"),
    _row("message", THAI, f" {THAI}\u200b  ", "duplicate", "thai-retry-whitespace"),
    _row("message", THAI, THAI_OTHER, "proceed", "thai-other"),
    _row("message", "👍", "👍", "duplicate", "emoji-retry"),
    _row("message", "👍", "👎", "proceed", "emoji-other"),
    _row("body", LONG_REQUEST, LONG_REQUEST, "duplicate", "long-retry"),
    _row("body", LONG_REQUEST, LONG_REQUEST.replace(". ", ".  "), "duplicate", "long-spaces"),
    _row(
        "body",
        LONG_REQUEST,
        _sentence_changed(0, "approve", "reject"),
        "proceed",
        "long-window-0-changed",
    ),
    _row(
        "body",
        LONG_REQUEST,
        _sentence_changed(7, "with a reference", "without a reference"),
        "proceed",
        "long-window-1-changed",
    ),
    _row(
        "body",
        LONG_REQUEST,
        _sentence_changed(13, "before you close", "after you close"),
        "proceed",
        "long-window-2-changed",
    ),
    _row(
        "body",
        LONG_REQUEST,
        _sentence_changed(6, "Please treat", "Please do not treat"),
        "proceed",
        "long-middle-negated",
    ),
]


@pytest.mark.parametrize(("first", "second", "expected"), HTTP)
def test_what_is_read_through_http(
    client: TestClient,
    request: pytest.FixtureRequest,
    first: dict[str, Any],
    second: dict[str, Any],
    expected: str,
) -> None:
    session = f"coverage-{request.node.callspec.id}"
    claimed = _first(client, first, session, "send_message")
    answer = check(client, second, session_id=session, tool="send_message")
    assert answer["decision"] == expected, json.dumps(answer["explain"], ensure_ascii=False)
    if expected == "duplicate":
        assert answer["call_id"] == claimed["call_id"]
        assert answer["match"]["result"] == {"done": claimed["call_id"]}


def test_the_long_request_has_windows() -> None:
    windows = text_windows(normalize_text(LONG_REQUEST))
    assert [len(w.split()) for w in windows] == [112, 105, 75]
    assert _LONG_PARTS[0] in windows[0]
    assert _LONG_PARTS[7] in windows[1]
    assert _LONG_PARTS[13] in windows[2]


def test_explain_says_why_a_text_was_not_read(client: TestClient) -> None:
    first = check(client, {"to": "a@example.com", "message": THAI})
    assert first["explain"]["unread"] == [
        {"path": "message", "reason": "written in Thai script, which the rules do not cover"}
    ]
    second = check(client, {"to": "a@example.com", "message": THAI_OTHER})
    assert second["decision"] == "proceed"
    assert second["explain"]["unread"][0]["path"] == "message"
    german = check(client, {"to": "a@example.com", "body": "Bitte die Bestellung nicht stornieren"})
    assert german["explain"]["unread"] == [
        {"path": "body", "reason": f"{ENGLISH_ONLY} (words of other languages: bitte, nicht)"}
    ]
    english = check(client, {"to": "a@example.com", "body": "Please cancel order 1234 today"})
    assert "unread" not in english["explain"]


@pytest.mark.parametrize(
    ("args", "status", "reason"),
    [
        pytest.param({"body": "\u0301" * 50}, 200, "100% of its tokens are unknown", id="marks"),
        pytest.param({"body": "🎉" * 5000}, 200, "100% of its tokens are unknown", id="emoji"),
        pytest.param({"body": "Наш заказ 1234 ready to ship, 谢谢"}, 200, "script", id="scripts"),
        pytest.param({"body": "word " * 6000}, 200, "longer than 8 windows", id="many-windows"),
        pytest.param({"body": "x" * 60_000}, 200, "longer than 8 windows: 60,000", id="one-word"),
        pytest.param({"body": "word " * 180_000}, 422, None, id="megabyte"),
        pytest.param({"body": "a." * 400_000}, 422, None, id="megabyte-of-dots"),
    ],
)
def test_bad_input_gets_a_clear_answer(
    client: TestClient, args: dict[str, Any], status: int, reason: str | None
) -> None:
    body = {"session_id": "s1", "tool": "send_message", "args": args}
    response = client.post("/v1/check", json=body)
    assert response.status_code == status, response.text
    data = response.json()
    if status == 422:
        assert data["error"]["code"] == "check_too_large"
        assert "max_text_chars" in data["error"]["message"]
        return
    assert data["decision"] == "proceed"
    assert reason is not None
    assert reason in data["explain"]["unread"][0]["reason"]
    again = client.post("/v1/check", json=body).json()
    assert again["decision"] == "in_progress"
    assert again["match"]["stage"] == "exact"
