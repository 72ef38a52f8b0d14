"""The shipped pair model: its files, its scores, the verifier it backs, and the training script."""

from __future__ import annotations

import json
import math
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from hypothesis import given
from hypothesis import strategies as st

from tests.helpers import EMAIL, MakeApp, check, complete
from tooldedup.api.settings import Settings
from tooldedup.calibration.train_pair_model import TextPair, _batches, export, text_pairs, train
from tooldedup.calibration.train_pair_model import main as train_main
from tooldedup.dedup.english import RuleVerifier
from tooldedup.dedup.errors import ConfigurationError
from tooldedup.dedup.model_verifier import ModelVerifier
from tooldedup.dedup.policy import ToolPolicy
from tooldedup.dedup.protocols import PairScorer
from tooldedup.dedup.verifier import VerdictKind
from tooldedup.index import OnnxPairScorer, load_pair_model, pair_model_dir
from tooldedup.index.packaged_model import file_sha256
from tooldedup.index.settings import ServiceSettings
from tooldedup.index.source_model import source_model_dir
from tooldedup.index.wiring import build_verifier


@pytest.fixture(scope="module")
def scorer() -> OnnxPairScorer:
    """The shipped pair model."""
    return OnnxPairScorer.packaged()


def test_shipped_files_match_their_manifest() -> None:
    model = load_pair_model()
    model.verify()
    assert model.folder == pair_model_dir()
    assert model.max_seq_length == 128
    assert "Apache License" in (model.folder / "LICENSE").read_text(encoding="utf-8")
    assert "calibration half" in (model.folder / "NOTICE.md").read_text(encoding="utf-8")


def test_a_model_folder_that_is_not_a_model_refuses_to_start(tmp_path: Path) -> None:
    folder = tmp_path / "pair"
    shutil.copytree(pair_model_dir(), folder)
    model = load_pair_model(folder)
    (folder / model.onnx_file).write_bytes(b"not an onnx graph")
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["onnx"]["sha256"] = file_sha256(folder / model.onnx_file)
    (folder / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ConfigurationError, match="cannot load the pair model"):
        OnnxPairScorer(load_pair_model(folder))
    manifest["max_seq_length"] = 0
    (folder / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ConfigurationError, match="max_seq_length must be 8 to 512"):
        load_pair_model(folder)


def test_a_damaged_model_file_refuses_to_start(tmp_path: Path) -> None:
    folder = tmp_path / "pair"
    shutil.copytree(pair_model_dir(), folder)
    model = load_pair_model(folder)
    with (folder / model.onnx_file).open("r+b") as handle:
        handle.seek(1000)
        handle.write(b"\x00\x01\x02\x03")
    with pytest.raises(ConfigurationError, match="does not match its manifest"):
        OnnxPairScorer(load_pair_model(folder))
    with pytest.raises(ConfigurationError, match="no usable model manifest"):
        load_pair_model(tmp_path)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Please approve invoice 4471 before Friday.", "Please reject invoice 4471 before Friday."),
        ("", "Cancel the order"),
        ("Ja, bitte.", "はい、お願いします"),
        ("word " * 55, "another " * 55),
    ],
)
def test_scores_are_finite_and_the_same_in_either_order(
    scorer: OnnxPairScorer, first: str, second: str
) -> None:
    forward = scorer.score(first, second)
    assert forward is not None
    assert math.isfinite(forward)
    assert scorer.score(second, first) == forward


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("word " * 70, "another " * 70),  # 140 words: past 128 tokens together
        ("Cancel the order. " * 4000, "Cancel the order! " * 4000),  # 72,000 characters
        ("長い文章" * 100, "短い"),  # no spaces: few words, many tokens
    ],
)
def test_a_pair_longer_than_the_model_reads_is_not_scored(
    scorer: OnnxPairScorer, first: str, second: str
) -> None:
    assert scorer.score(first, second) is None


@pytest.mark.parametrize(
    ("same", "confirm", "message"),
    [
        (float("nan"), 3.0, "min_logit_same must be a finite logit"),
        (0.0, float("inf"), "min_logit_confirm must be a finite logit"),
        (2.0, 1.0, "must not be under min_logit_same"),
    ],
)
def test_bars_are_validated(
    scorer: OnnxPairScorer, same: float, confirm: float, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        ModelVerifier(RuleVerifier(), scorer, min_logit_same=same, min_logit_confirm=confirm)
    settings = ServiceSettings(pair_model=True, min_logit_same=same, min_logit_confirm=confirm)
    with pytest.raises(ConfigurationError, match=message):
        build_verifier(settings, RuleVerifier())


def test_a_missing_model_folder_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="no usable model manifest"):
        build_verifier(ServiceSettings(pair_model_path=tmp_path), RuleVerifier())
    with pytest.raises(ConfigurationError, match="with the pair model off"):
        build_verifier(ServiceSettings(pair_model=False, pair_model_path=tmp_path), RuleVerifier())


@pytest.mark.parametrize(
    ("loaded", "asks", "model"),
    [(True, False, False), (True, True, True), (False, True, False), (False, False, False)],
)
def test_the_pair_model_is_read_only_for_tools_whose_policy_asks(
    loaded: bool, asks: bool, model: bool
) -> None:
    rules = RuleVerifier()
    verifiers = build_verifier(ServiceSettings(pair_model=loaded), rules)
    chosen = verifiers.for_policy(ToolPolicy(pair_model=asks))
    assert isinstance(chosen, ModelVerifier) is model
    assert (chosen is rules) is not model


def test_the_pair_model_is_off_in_the_default_policy() -> None:
    assert ToolPolicy().pair_model is False


def test_a_rule_objection_stands_whatever_the_model_reads(scorer: OnnxPairScorer) -> None:
    # Bars that would confirm anything: the rules' "different" still wins.
    verifier = ModelVerifier(RuleVerifier(), scorer, min_logit_same=-50, min_logit_confirm=-50)
    verdict = verifier.compare("Approve the refund for Ana", "Do not approve the refund for Ana")
    assert verdict.kind is VerdictKind.DIFFERENT
    assert "pair model" not in (verdict.reason or "")


@pytest.mark.parametrize(
    ("stored", "proposed"),
    [
        (
            "On Safari 17 the checkout button does nothing when tapped. Chrome and Firefox work.",
            "On Safari 17 the cehckout button does nothing when tapped. Chrome and Firefox work.",
        ),
        (
            "Gather the permission slips from 7B for the Oct 17 aquarium trip",
            "Gather the premission slips from 7B for the Oct 17 aquarium trip",
        ),
        ("Please book a big room for the offsite", "please book a big room for the offsite!"),
    ],
)
def test_a_rule_confirmation_stands_whatever_the_model_reads(
    scorer: OnnxPairScorer, stored: str, proposed: str
) -> None:
    # Bars that would rule anything out: a typo or the same words stay a repeat.
    verifier = ModelVerifier(RuleVerifier(), scorer, min_logit_same=50, min_logit_confirm=50)
    assert verifier.compare(stored, proposed).kind is VerdictKind.CONFIRMED


def test_a_rule_doubt_is_ruled_out_never_confirmed(scorer: OnnxPairScorer) -> None:
    stored, proposed = (
        "Please send the first draft to the team",
        "Please send the second draft to the team",
    )
    assert RuleVerifier().compare(stored, proposed).kind is VerdictKind.UNSURE
    confirming = ModelVerifier(RuleVerifier(), scorer, min_logit_same=-50, min_logit_confirm=-50)
    assert confirming.compare(stored, proposed).kind is VerdictKind.UNSURE
    ruling_out = ModelVerifier(RuleVerifier(), scorer, min_logit_same=50, min_logit_confirm=50)
    assert ruling_out.compare(stored, proposed).kind is VerdictKind.DIFFERENT


def test_the_bars_decide_between_them(scorer: OnnxPairScorer) -> None:
    stored = "Hi Bob, the Q3 report is attached. Let me know if you have any questions."
    proposed = "Bob, attached you will find the Q3 report; questions welcome."
    logit = scorer.score(stored, proposed)
    rules = RuleVerifier()
    ruled_out = ModelVerifier(rules, scorer, min_logit_same=logit + 1, min_logit_confirm=logit + 2)
    assert ruled_out.compare(stored, proposed).kind is VerdictKind.DIFFERENT
    confirmed = ModelVerifier(rules, scorer, min_logit_same=logit - 2, min_logit_confirm=logit)
    verdict = confirmed.compare(stored, proposed)
    assert verdict.kind is VerdictKind.CONFIRMED
    assert "pair model reads the same request" in (verdict.reason or "")


def test_training_pairs_share_no_text_with_the_held_out_half() -> None:
    train_pairs, held = text_pairs()
    assert len(train_pairs) > 1000
    assert len(held) > 1000
    held_texts = {t for p in held for t in (p.first, p.second)}
    assert not any(p.first in held_texts or p.second in held_texts for p in train_pairs)
    assert {p.kind for p in train_pairs} == {"paraphrase", "different", "hard_negative"}


@given(
    st.lists(st.tuples(st.text(max_size=30), st.text(max_size=30), st.sampled_from([0.0, 1.0]))),
    st.integers(min_value=0),
)
def test_training_batches_hold_every_pair_once(
    examples: list[tuple[str, str, float]], seed: int
) -> None:
    batches = _batches(examples, random.Random(seed))
    assert sorted(e for batch in batches for e in batch) == sorted(examples)
    assert all(0 < len(batch) <= 16 for batch in batches)


def test_the_training_script_exports_a_model_the_service_loads(tmp_path: Path) -> None:
    # One short pass on a handful of pairs: the whole path, not the shipped quality.
    pairs = [
        TextPair("Approve invoice 12", "Please approve invoice 12", True, "paraphrase", "p1"),
        TextPair("Approve invoice 12", "Reject invoice 12", False, "hard_negative", "h1"),
    ]
    source = source_model_dir()
    model = train(pairs * 4, source, epochs=1)
    manifest = export(model, source, tmp_path, trained_on=len(pairs))
    assert manifest["max_seq_length"] == 128
    scorer = OnnxPairScorer(load_pair_model(tmp_path))
    logit = scorer.score("Approve invoice 12", "Reject invoice 12")
    assert logit is not None
    assert math.isfinite(logit)


@pytest.mark.parametrize(
    ("fraction", "message"),
    [
        *(
            (bad, "--fraction must be over 0 and at most 1")
            for bad in ("0", "-0.5", "1.5", "nan", "inf")
        ),
        ("1e-9", "no pair to train on"),
    ],
)
def test_a_share_of_the_training_pairs_that_leaves_none_to_train_on_is_refused(
    fraction: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        train_main(["--fraction", fraction, "--out", str(tmp_path / "model")])
    assert exited.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "model").exists()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--min-logit-same", "nan"], "must be a finite number"),
        (["--min-logit-confirm", "abc"], "must be a number"),
        (
            ["--pair-model", "--min-logit-same", "3", "--min-logit-confirm", "1"],
            "must not be under min_logit_same",
        ),
        (["--pair-model", "--pair-model-path", "{tmp}"], "no usable model manifest"),
        (["--no-pair-model", "--pair-model-path", "{tmp}"], "with the pair model off"),
    ],
)
def test_bad_pair_model_flags_refuse_to_start(
    tmp_path: Path, flags: list[str], message: str
) -> None:
    args = [flag.replace("{tmp}", str(tmp_path)) for flag in flags]
    cmd = [sys.executable, "-m", "tooldedup.api.cli", "serve", "--db", str(tmp_path / "x.db")]
    result = subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert message in result.stderr


# Held-out hand-written pairs that the rules let through and the pair model reads apart.
# Things swapped for others, or another act, in requests the rules let through. (0.8's
# model also ruled out "the e-ticket" / "the invoice" and "aisle seat" / "exit-row seat";
# 0.9's reads -2.8 and +2.0 there, the first under 0.10's bar of -2.5: see the README.)
_READ_APART = [
    (
        "Hi team, the quarterly offsite is at the lake house; please bring hiking boots and a"
        " rain jacket.",
        "Hi team, the quarterly offsite is at the lake house; please bring hiking boots and a"
        " swimsuit.",
    ),
    # A question for a message (0.10 also had "use the east stairwell" / "… the freight
    # elevator", which 0.11's rules hold as one phrase swapped for another).
    ("Tell Omar invoice #4471 isn't paid", "Ask Omar why invoice #4471 isn't paid"),
]


@pytest.mark.parametrize(("first", "second"), _READ_APART)
def test_through_http_the_pair_model_keeps_apart_what_the_rules_let_through(
    tmp_path: Path,
    make_app: MakeApp,
    pair_scorer: PairScorer,
    first: str,
    second: str,
) -> None:
    # Loaded, the pair model reads the tools whose policy asks for it, and only those.
    for pair_model, decision in ((True, "proceed"), (False, "duplicate")):
        policy = tmp_path / f"{pair_model}.toml"
        policy.write_text(f"[defaults]\npair_model = {str(pair_model).lower()}\n")
        settings = Settings(db_path=tmp_path / f"{pair_model}.db", policy_path=policy)
        app = make_app(settings)
        with TestClient(app) as client:
            health = client.get("/healthz").json()
            assert health["pair_model"] == pair_scorer.model_id
            done = check(client, {"channel": "#team", "text": first}, tool="post")
            complete(client, done["call_id"], status="succeeded")
            answer = check(client, {"channel": "#team", "text": second}, tool="post")
        assert answer["decision"] == decision, answer["explain"]
        if pair_model:
            details = [stage.get("detail") or "" for stage in answer["explain"]["stages"]]
            assert any("pair model reads another request" in d for d in details), details


def test_through_http_a_paraphrase_the_model_confirms_is_a_duplicate(client: TestClient) -> None:
    done = check(client, EMAIL)
    complete(client, done["call_id"], status="succeeded", result={"id": "m-1"})
    reworded = {**EMAIL, "body": "Bob, attached you will find the Q3 report; questions welcome."}
    answer = check(client, reworded)
    assert answer["decision"] == "duplicate", answer["explain"]
    assert answer["match"]["result"] == {"id": "m-1"}


def test_by_default_the_pair_model_rules_out_and_never_confirms(scorer: OnnxPairScorer) -> None:
    stored = "Hi Bob, the Q3 report is attached. Let me know if you have any questions."
    proposed = "Bob, attached you will find the Q3 report; questions welcome."
    logit = scorer.score(stored, proposed)
    assert logit is not None
    assert logit > 2  # the model is sure; the rules have no objection
    verdict = ModelVerifier(RuleVerifier(), scorer).compare(stored, proposed)
    assert verdict.kind is VerdictKind.NO_OBJECTION


def _answer(client: TestClient, first: str, second: str) -> dict[str, object]:
    done = check(client, {"channel": "#team", "text": first}, tool="post")
    complete(client, done["call_id"], status="succeeded")
    return check(client, {"channel": "#team", "text": second}, tool="post")


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (
            "Open the east gate at 9 tomorrow for the delivery truck",
            "Tomorrow at 9, close the east gate for the delivery truck",
        ),
        ("Ana scored 4 and Ben scored 2", "Per the coach today, Ana scored 2 and Ben scored 4"),
        ("Refund 200 instead of 240 to Ana", "Ana gets a refund: 240, not 200"),
        (
            "Please approve the refund for order 1182 today",
            "Please don't go ahead and approve the refund for order 1182 today",
        ),
        ("Approve the refund for Ana", "Do not approve the refund for Ana"),
        (
            "Please ship the order to my home address, not the office",
            "Ship it to the office rather than my home address please",
        ),
        ("Assign the ticket to Priya, not to Omar", "Give this ticket to Omar instead of Priya"),
        ("Room change: king bed, non-smoking, Nov 7-9", "Room change: king bed, smoking, Nov 7-9"),
        (
            "Offboarding: disable his VPN, GitHub and AWS accounts at 17:00 on his last day",
            "Offboarding: disable his VPN, GitHub, Slack and AWS accounts at 17:00 on his last day",
        ),
        (
            "Text me when the cake arrives. Keep the guest list under 20, please.",
            "I'll text you when the cake arrives. Keep the guest list under 20, please.",
        ),
        # 0.6: a "do not" evened out by "without", "no need to", an item joined on or added
        # at a list's end, a negation in a reworded sentence (held), a question cut at a dash.
        (
            "Merge the pull request for the billing service",
            "Don't merge the pull request for the billing service without a review",
        ),
        (
            "Could you pick me up at Terminal 3 tonight?",
            "No need to pick me up at Terminal 3 tonight",
        ),
        (
            "APAC customers can't reach the login page; health checks on lb-ap-1 fail. Please fail"
            " over to lb-ap-2 and page the network team.",
            "APAC customers can't reach the login page; health checks on lb-ap-1 fail. Please fail"
            " over to lb-ap-2.",
        ),
        (
            "Potluck Sunday: Omar brings dessert, I've got drinks and plates.",
            "Potluck Sunday: Omar brings dessert, I've got drinks, plates and ice.",
        ),
        (
            "Please renew the Adobe licence for the design team",
            "The Adobe licence for the design team should not be renewed this year",
        ),
        (
            "Is the office open Mon - Fri for the delivery?",
            "The office is open Mon - Fri for the delivery.",
        ),
        # 0.9: a passive report, a command without "please", a thing to do.
        (
            "Please add Laura's KTN to her United bookings for the Houston trip",
            "Laura's KTN was added to her United bookings for the Houston trip",
        ),
        (
            "Replace the battery in the hallway smoke detector of unit 10A",
            "We've replaced the battery in the hallway smoke detector of unit 10A",
        ),
        (
            "Wound dressing on left heel changed at 10:30. Next change due Thursday.",
            "Wound dressing on left heel to be changed at 10:30. Next change due Thursday.",
        ),
        # 0.10: a question after a name, a price in the passive's subject, a negation over
        # "be able to" (the pair model reads this one at 5.7, the same request).
        (
            "I can attend the quarterly review on the 14th, please keep my seat.",
            "I won't be able to attend the quarterly review on the 14th, so please release my"
            " seat.",
        ),
        (
            "Halvard, please book a box van for Thursday to take the monitors to Stafford.",
            "Halvard, did you book a box van for Thursday to take the monitors to Stafford?",
        ),
        (
            "Please include Elif Kaya's $2,500 referral bonus in the April 30 payroll run.",
            "Elif Kaya's $2,500 referral bonus was included in the April 30 payroll run.",
        ),
    ],
)
def test_through_http_a_reworded_flip_proceeds_whatever_the_bars(
    tmp_path: Path, make_app: MakeApp, first: str, second: str
) -> None:
    # Bars as lenient as they go: only the rules stand between these and a merge.
    settings = Settings(db_path=tmp_path / "t.db", min_logit_same=-50, min_logit_confirm=-50)
    app = make_app(settings)
    with TestClient(app) as client:
        answer = _answer(client, first, second)
    assert answer["decision"] == "proceed", answer["explain"]
    # The verifier's rules, or values bound to names in the exact signature (no semantic
    # stage then), kept the two apart: not a low cosine.
    stages = answer["explain"]["stages"]
    verdicts = {stage.get("verdict") for stage in stages}
    compared = any(stage["stage"] == "semantic" for stage in stages)
    assert verdicts & {"different", "unsure"} or not compared, answer["explain"]


# A paraphrase under the borderline band (cosine 0.81) that the pair model confirms (5.3).
_LOW_COSINE_PARAPHRASE = (
    "The spring launch moves from March 3 to March 10 because the landing page is not ready yet.",
    "Spring campaign launch: now March 10 instead of March 3, since the landing page still needs"
    " work.",
)


def test_through_http_a_confirmed_match_under_the_borderline_band_is_a_duplicate(
    tmp_path: Path, make_app: MakeApp
) -> None:
    stored, proposed = _LOW_COSINE_PARAPHRASE
    cases = [
        # (pair model, min_logit_confirm, tool's min_cosine_confirmed, decision)
        (True, 3.0, 0.75, "duplicate"),
        # The defaults: no confirmed band, and the pair model confirms nothing.
        (True, None, None, "proceed"),
        (True, 3.0, None, "proceed"),
        (True, None, 0.75, "proceed"),
        (False, 3.0, 0.75, "proceed"),
    ]
    for i, (pair_model, confirm, floor, decision) in enumerate(cases):
        settings = Settings(
            db_path=tmp_path / f"{i}.db", pair_model=pair_model, min_logit_confirm=confirm
        )
        app = make_app(settings)
        with TestClient(app) as client:
            policy: dict[str, object] = {"pair_model": True}
            if floor is not None:
                policy["min_cosine_confirmed"] = floor
            put = client.put("/v1/tools/post/policy", json=policy)
            assert put.status_code == 200, put.text
            answer = _answer(client, stored, proposed)
        assert answer["decision"] == decision, (i, answer["explain"])
        semantic = next(s for s in answer["explain"]["stages"] if s["stage"] == "semantic")
        assert 0.75 <= semantic["score"] < 0.85
        if decision == "duplicate":
            assert "under min_cosine_borderline" in semantic["detail"], semantic


# Flips under the borderline band that the rules let through and the pair model reads as the
# same request (logits 5.7 and 4.8): a negation came, so no confirmation makes them one.
_NEGATED_UNDER_THE_BAND = [
    (
        "We will be able to deliver the sofa to your flat on Thursday morning.",
        "Sadly the sofa won't reach your flat on Thursday morning.",
    ),
    (
        "I can make the quarterly review on the 14th, so please hold my seat at the table.",
        "Unfortunately I won't manage to attend the quarterly review on the 14th; give my seat to"
        " someone else.",
    ),
]


@pytest.mark.parametrize(("stored", "proposed"), _NEGATED_UNDER_THE_BAND)
def test_through_http_a_negation_under_the_borderline_band_is_never_confirmed(
    tmp_path: Path,
    make_app: MakeApp,
    scorer: OnnxPairScorer,
    stored: str,
    proposed: str,
) -> None:
    logit = scorer.score(stored, proposed)
    assert logit is not None
    assert logit >= 3.0  # the model alone would confirm them at min_logit_confirm 3
    assert RuleVerifier().compare(stored, proposed).kind is VerdictKind.NO_OBJECTION
    settings = Settings(db_path=tmp_path / "t.db", min_logit_confirm=3.0)
    app = make_app(settings)
    with TestClient(app) as client:
        put = client.put("/v1/tools/post/policy", json={"min_cosine_confirmed": 0.75})
        assert put.status_code == 200, put.text
        answer = _answer(client, stored, proposed)
    assert answer["decision"] == "proceed", answer["explain"]
    semantic = next(s for s in answer["explain"]["stages"] if s["stage"] == "semantic")
    assert 0.75 <= semantic["score"] < 0.85


@pytest.mark.parametrize("floor", [1.5, -2, "high", None, True])
def test_through_http_a_confirmed_floor_out_of_range_is_a_422(
    client: TestClient, floor: object
) -> None:
    response = client.put("/v1/tools/post/policy", json={"min_cosine_confirmed": floor})
    if floor is None:
        # Left out: the default.
        assert response.status_code == 200, response.text
        assert response.json()["policy"]["min_cosine_confirmed"] == 1.0
    else:
        assert response.status_code == 422, response.text
        assert "error" in response.json()
