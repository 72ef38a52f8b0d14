"""The rule verifier: what it rules out, holds, confirms, and leaves to the thresholds."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tooldedup.dedup.english import EnglishPack, RuleVerifier
from tooldedup.dedup.english.lexicon import MEANING
from tooldedup.dedup.model_verifier import ModelVerifier
from tooldedup.dedup.records import SemanticLeaf
from tooldedup.dedup.verifier import (
    Verdict,
    VerdictKind,
    verified_candidates,
    verify_leaves,
)


def word_cosine(a: str, b: str) -> float:
    """A table of word cosines, so that the rules are tested exactly (the model is tested
    through HTTP): synonyms high, unrelated words low."""
    table = {
        frozenset({"big", "large"}): 0.86,
        frozenset({"reading", "cooking"}): 0.41,
        # Days read alike as phrases; they trade places as values all the same.
        frozenset({"monday and wednesday", "tuesday and thursday"}): 0.88,
    }
    return table.get(frozenset({a, b}), 0.2)


VERIFIER = RuleVerifier(word_cosine)


@pytest.mark.parametrize(
    ("stored", "proposed", "kind", "reason"),
    [
        ("Approve the refund", "Do not approve the refund", "different", "negation was added"),
        ("Don't ship it yet", "Ship it", "different", "negation was removed"),
        ("Increase the limit", "Decrease the limit", "different", "increase"),
        ("Buy 10 shares", "Sell 10 shares", "different", "buy"),
        ("Open the ticket", "Close the ticket", "different", "open"),
        ("Sort by highest price", "Sort by lowest price", "different", "highest"),
        ("Move it to the other account", "Move it to its own account", "different", "own"),
        ("Thanks for all the replies!", "Could you reply to all of them?", "different", "act"),
        # Word cosines cannot tell "reading"/"cooking" from "send"/"forward": held.
        (
            "I enjoy hiking, swimming and reading",
            "I enjoy hiking, swimming and cooking",
            "unsure",
            "reading",
        ),
        ("Send the first draft", "Send the second draft", "unsure", "ordinal"),
        (
            "Let me know if anything isn't clear",
            "Let me know if anything is unclear",
            "confirmed",
            None,
        ),
        ("Don't forget the keys", "Remember the keys", "confirmed", None),
        (
            "Please book a big room for the team offsite",
            "Please book a large room for the team offsite",
            "confirmed",
            "synonyms",
        ),
        (
            "Please move the 18 pallets from Reno to Fresno before Friday",
            "Please transfer the 18 pallets from Reno to Fresno before Friday",
            "unsure",
            "one word swapped",
        ),
        (
            "Email the doc about my knee injury to the clinic before Friday",
            "Email the document about my knee injury to the clinic before Friday",
            "unsure",
            "one word swapped",
        ),
        (
            "Dental appt confirmed for next week, please bring the forms",
            "Dental appointment confirmed for next week, please bring the forms",
            "confirmed",
            "short forms",
        ),
        (
            "Please forward the signed contract to Ana before the board meeting",
            "Please send the signed contract to Ana before the board meeting",
            "unsure",
            "one word swapped",
        ),
        (
            "Wait 30 mins before the second dose and log it in the chart",
            "Wait 30 minutes before the second dose and log it in the chart",
            "confirmed",
            "short forms",
        ),
        (
            "Set the min to 5 for the retry counter on the staging queue",
            "Set the minutes to 5 for the retry counter on the staging queue",
            "unsure",
            "one word swapped",
        ),
        ("Approve the refund", "OK the refund", "no_objection", None),
        ("I can access the dashboard", "I can't access the dashboard", "different", "negation"),
        (
            "Error rate fell from 12% to 1%",
            "Error rate fell from 1% to 12%",
            "different",
            "reversed",
        ),
        ("Meet Friday at 6 on the 3rd", "Meet on the 3rd, Friday at 6", "no_objection", None),
        ("Standup at 9:00 tomorrow", "Standup at 09:00 tomorrow", "confirmed", None),
        (
            "Please approve the refund for Alice's order",
            "Please do not approve the refund for Alice's order under any circumstances",
            "different",
            "negation",
        ),
        (
            "I will be able to join the call tomorrow",
            "Sorry, I won't be able to join the call tomorrow after all",
            "different",
            "negation",
        ),
        (
            "Transfer the balance from savings to checking tonight",
            "Transfer the balance to savings from checking tonight",
            "different",
            "direction",
        ),
        ("Delete my account today", "Delete your account today", "different", "my"),
        (
            "Please send the signed offer to the new employee today",
            "Please send the signed offer to the new employer today",
            "unsure",
            "employee",
        ),
        (
            "Book the weekly sync with the design team",
            "Book the weekyl sync with the design team",
            "confirmed",
            None,
        ),
        ("The report is clear", "The report is unclear", "different", "negation"),
        ("I can't access the dashboard", "I am unable to access the dashboard", "confirmed", None),
        ("My laptop will not power on", "My laptop fails to power on", "confirmed", None),
        (
            "The invoice lists 240 units instead of 200.",
            "The invoice lists 200 units instead of 240.",
            "different",
            "refused",
        ),
        (
            "Please book the room for the sync",
            "please book the room for the sync!",
            "confirmed",
            None,
        ),
        ("Please review the questions", "Please review the questons", "confirmed", "typos"),
        (
            "Let me know if anything isn't clear",
            "Tell me if anything is unclear",
            "no_objection",
            None,
        ),
        (
            "Hi Bob, the Q3 report is attached.",
            "Hello Bob, I attached the report for Q3.",
            "no_objection",
            None,
        ),
        # Values bound to names, and names or items that traded places.
        ("Scores: Ana: 4, Ben: 2", "Scores: Ben 4, Ana 2", "different", "values changed"),
        ("Give 5 to Carla and 3 to Dan", "Give 3 to Carla and 5 to Dan", "different", "reversed"),
        (
            "Pizza: Sam 3 slices, Leo 2",
            "Order 3 slices for Sam and 2 for Leo",
            "no_objection",
            None,
        ),
        (
            "Leo brings wine, Ada brings cake",
            "Leo brings cake, Ada brings wine",
            "different",
            "traded",
        ),
        (
            "Julia will mentor Kenji from May",
            "Kenji will mentor Julia from May",
            "different",
            "traded",
        ),
        (
            "Train from Milan to Turin at 8",
            "Train from Turin to Milan at 8",
            "different",
            "direction",
        ),
        (
            "Thanks to Ingrid and Tomas for this",
            "Thanks to Tomas and Ingrid for this",
            "no_objection",
            None,
        ),
        (
            "Swap the grey covers for the navy ones",
            "Swap the navy covers for the grey ones",
            "different",
            "grey",
        ),
        ("Ferry from Split to Hvar, 3 PM", "3 PM ferry from Split to Hvar", "no_objection", None),
        # Who does what, and the act of a sentence whose words stay.
        ("Rent for June: I sent you $650", "Rent for June: you sent me $650", "different", "who"),
        ("I am on my way to your place", "On my way to your place", "confirmed", None),
        ("Please cancel order FX-2093", "We've cancelled order FX-2093", "different", "report"),
        (
            "Don't forget to return the books",
            "Thanks for returning the books",
            "different",
            "thanks",
        ),
        (
            "Wi-Fi keeps dropping in room 4B.",
            "Is Wi-Fi still dropping in room 4B?",
            "different",
            "question",
        ),
        (
            "Please file the trademark by June 30.",
            "Did you file the trademark by June 30?",
            "different",
            "question",
        ),
        (
            "Please approve invoice 4471 today.",
            "Could you approve invoice 4471 today?",
            "confirmed",
            None,
        ),
        ("I need to cancel my booking", "I have to cancel my booking", "no_objection", None),
        # A negation whose word was reworded too is a rewording; one that keeps it flips.
        (
            "The radiator has not worked since Sunday",
            "The radiator has been broken since Sunday",
            "no_objection",
            None,
        ),
        (
            "The estimate does not include the floor",
            "The estimate leaves out the floor",
            "no_objection",
            None,
        ),
        ("Move it to a later date, not cancel it", "Cancel it", "different", "negation"),
        (
            "The workaround works for them",
            "The workaround does not work for them",
            "different",
            "negation",
        ),
        # From the review of 0.3: what must not split, and what must not merge.
        ("Set 3 reminders and 2 alarms", "Set 2 alarms and 3 reminders", "no_objection", None),
        (
            "Transfer 50 to Ana from account 3",
            "Transfer 50 from account 3 to Ana",
            "no_objection",
            None,
        ),
        (
            "We've updated the address. Please check the updated address.",
            "We've updated the address. Kindly check the updated address.",
            "confirmed",
            "only politeness words changed",
        ),
        (
            "I've attached the contract. Please sign it.",
            "Please sign the attached contract.",
            "no_objection",
            None,
        ),
        ("Is the API down?", "API down?", "confirmed", None),
        (
            "Do not ever delete the production database",
            "Delete the production database",
            "different",
            "negation",
        ),
        (
            "Never again send marketing emails to Bo",
            "Send marketing emails to Bo",
            "different",
            "negation",
        ),
        ("Trade 100 USDT for SOL", "Trade 100 SOL for USDT", "different", "traded"),
        ("Please cancel order FX-2093", "Order FX-2093 has been cancelled", "different", "report"),
        ("Please pay invoice 42 today", "We've paid invoice 42 today", "different", "report"),
        # 0.9: "was"/"were" with a participle reports; a verb and its object opening a
        # sentence requests.
        (
            "Please add Laura's KTN to her United bookings for the Houston trip",
            "Laura's KTN was added to her United bookings for the Houston trip",
            "different",
            "report",
        ),
        (
            "Replace the battery in the hallway smoke detector of unit 10A",
            "We've replaced the battery in the hallway smoke detector of unit 10A",
            "different",
            "report",
        ),
        (
            "Ops, move the read traffic from replica 2 to replica 3 now",
            "The read traffic was moved from replica 2 to replica 3 now",
            "different",
            "report",
        ),
        # Nouns that open a sentence are no request.
        (
            "Refund for order 1182 was issued to the card on file",
            "We issued the refund for order 1182 to the card on file",
            "no_objection",
            None,
        ),
        (
            "Return label was sent to the customer by email",
            "We've sent the return label to the customer by email",
            "no_objection",
            None,
        ),
        ("Should I book the room for Friday?", "Book the room for Friday", "different", "question"),
        (
            "My bill shows 14 calls to Brazil",
            "My bill shows 14 calls from Brazil",
            "different",
            "direction",
        ),
        # Words the lexicon cannot read, "not delete" for "delete": one phrase for another.
        ("Не удаляйте базу данных", "Удалите базу данных", "unsure", "phrase"),  # noqa: RUF001
        ("👍", "👎", "no_objection", None),
        # Formulas and an inverted "is" reword ("Hi Bob" replicas race on these).
        ("Please find the Q3 report attached", "I've attached the Q3 report", "no_objection", None),
        ("Attached is the Q3 report", "The Q3 report is attached", "no_objection", None),
        # "Y instead of X" says "from X to Y"; the other way round is a reversal.
        (
            "Switch my rental from a compact car to a full-size SUV",
            "I'd like a full-size SUV instead of the compact car",
            "no_objection",
            None,
        ),
        (
            "Please move me from seat 32B to an aisle seat",
            "Please give me seat 32B instead of an aisle seat",
            "different",
            "negation was added",
        ),
        ("Do not move from the aisle seat", "Move from the aisle seat", "different", "negation"),
        (
            "Please approve the refund for order 1182 today",
            "Please don't go ahead and approve the refund for order 1182 today",
            "different",
            "negation was added",
        ),
        # "won't be able to attend" refuses "attend" (0.10).
        (
            "I can attend the quarterly review on the 14th, please keep my seat.",
            "I won't be able to attend the quarterly review on the 14th, so please release my"
            " seat.",
            "different",
            "negation was added",
        ),
        # A value given by a verb is bound to its name too, whatever comes before it.
        (
            "Ana scored 4 and Ben scored 2",
            "Per the coach today, Ana scored 2 and Ben scored 4",
            "different",
            "values changed places",
        ),
        (
            "Sam owes $40 and Lee owes $25",
            "For the cabin: Lee owes $40, Sam owes $25",
            "different",
            "values",
        ),
        ("Pay Ana 200, not 240", "Ana should get 240 rather than 200", "different", "not 240"),
        (
            "Refund 200 instead of 240 to Ana",
            "Ana gets a refund: 240, not 200",
            "different",
            "refused",
        ),
        ("Pay Ana 200, not 240", "Ana should get 200 rather than 240", "no_objection", None),
        (
            "Please ship the order to my home address, not the office",
            "Ship it to the office rather than my home address please",
            "different",
            "what is refused changed",
        ),
        (
            "Don't include any nuts in the wraps, please",
            "The wraps should have no nuts in them",
            "no_objection",
            None,
        ),
        (
            "Assign the ticket to Priya, not to Omar",
            "Give it to Omar instead of Priya",
            "different",
            "refused",
        ),
        (
            "I'd prefer a cash refund, not a voucher",
            "Please give me a cash refund rather than a voucher",
            "no_objection",
            None,
        ),
        (
            "The backup completed last night",
            "Last night the backup did not complete",
            "different",
            "negation",
        ),
        ("King bed, non-smoking room", "King bed, smoking room", "different", "negation"),
        ("Not urgent, but please fix", "Non-urgent, but please fix", "confirmed", None),
        (
            "Referred by Dr. Singh for a knee MRI",
            "Referred to Dr. Singh for a knee MRI",
            "different",
            "direction",
        ),
        # An item put inside a list; a word added at an end is no item.
        (
            "Disable his VPN, GitHub and AWS accounts",
            "Disable his VPN, GitHub, Slack and AWS accounts",
            "different",
            "item was added",
        ),
        (
            "Bring snacks, drinks and cups",
            "Bring snacks, drinks, napkins and cups",
            "different",
            "item",
        ),
        ("Thanks", "Thanks, Bob", "no_objection", None),
        ("Invoice", "Invoice payment", "no_objection", None),
        # "me" for "you", word for word, with a pronoun added elsewhere.
        (
            "Text me when the cake arrives, please",
            "I'll text you when the cake arrives, please",
            "different",
            "who does what",
        ),
        # "from" that names a source, and "replace" in the negated text, replace nothing.
        (
            "Pay the invoice, but not from account 4411",
            "Pay the invoice from account 4411",
            "different",
            "negation",
        ),
        ("Replace the screen, not the battery", "Replace the battery", "different", "negation"),
        ("Upgrade from basic to premium", "Premium instead of basic", "no_objection", None),
        (
            "Room: king bed -> 2 queens",
            "I need 2 queens instead of a king bed",
            "no_objection",
            None,
        ),
        (
            "Room: 2 queens -> king bed",
            "I need 2 queens instead of a king bed",
            "different",
            "negation",
        ),
        # Adverbs skipped do not use up the words a negation reaches.
        (
            "Do not go ahead with the wire transfer",
            "Go ahead with the wire transfer",
            "different",
            "negation",
        ),
        ("Don't go", "Go", "different", "negation"),
        # One thing refused in two words is a rewording.
        (
            "Use the blue one, not the red one",
            "Don't use the red one, use the blue one",
            "no_objection",
            None,
        ),
        ("Ana paid $1,200.00 for the hotel", "Ana paid $1200 for the hotel", "no_objection", None),
        (
            "Ben paid 40 for Ana and 20 for Cleo",
            "Ben paid 20 for Cleo and 40 for Ana",
            "no_objection",
            None,
        ),
        # Verbs and phrases that refuse as "not" does.
        (
            "Could you pick me up at Terminal 3?",
            "No need to pick me up at Terminal 3",
            "different",
            "negation",
        ),
        ("Do not overwrite the live data", "Avoid overwriting the live data", "confirmed", None),
        (
            "Please don't merge pipeline changes",
            "Please hold off on merging pipeline changes",
            "confirmed",
            None,
        ),
        ("Overwrite the live data", "Avoid overwriting the live data", "different", "negation"),
        (
            "No contrast is required for the CT",
            "Contrast is unnecessary for the CT",
            "no_objection",
            None,
        ),
        ("The estimate isn't right", "The estimate is wrong", "no_objection", None),
        ("The estimate is right", "The estimate is wrong", "different", "negation"),
        (
            "Promote to 100% at 15:30 unless anyone objects",
            "Promote to 100% at 15:30 if nobody objects",
            "no_objection",
            None,
        ),
        (
            "Promote to 100% at 15:30 unless anyone objects",
            "Promote to 100% at 15:30 if anyone objects",
            "different",
            "negation",
        ),
        ("Serve the coffee with sugar", "Serve the coffee without sugar", "different", "negation"),
        ("Ada brings dessert without nuts", "Ada brings nut-free dessert", "no_objection", None),
        ("Ada brings dessert with nuts", "Ada brings nut-free dessert", "different", "negation"),
        ("I won't apologize for it", "I refuse to apologize for it", "confirmed", None),
        (
            "Emails aren't reaching Outlook users",
            "Emails are failing to reach Outlook users",
            "no_objection",
            None,
        ),
        (
            "Freeze: no merges to main until Thursday",
            "Freeze: merges to main are blocked until Thursday",
            "no_objection",
            None,
        ),
        # "hold off until" waits; only "hold off on" refuses.
        (
            "Should I restart the iron tablets, or wait until my appointment on March 18?",
            "Should I go back on the iron tablets now or hold off until the March 18 appointment?",
            "no_objection",
            None,
        ),
        (
            "I'm away Friday to Tuesday, please water the plants",
            "I'll be away Friday to Tuesday, please water the plants",
            "confirmed",
            None,
        ),
        # One negation spelt another way, or one verb in another form, is no other word; a
        # request put in the past tense, or a verb made a noun, is.
        (
            "The deposit isn't refundable after Friday",
            "The deposit is non-refundable after Friday",
            "confirmed",
            None,
        ),
        (
            "My suitcase didn't arrive on IB 3167 from Madrid",
            "My suitcase failed to arrive on IB 3167 from Madrid",
            "confirmed",
            None,
        ),
        (
            "Big news: striker Leo Marsh moves to Kingsbridge FC on a 3-year deal",
            "Big news: striker Leo Marsh is moving to Kingsbridge FC on a 3-year deal",
            "confirmed",
            None,
        ),
        (
            "Cancellation of the seat upgrade on the 6:40 AM flight",
            "Cancel the seat upgrade on the 6:40 AM flight",
            "unsure",
            None,
        ),
        (
            "Call the landlord at 9 AM: the heater isn't working",
            "Called the landlord at 9 AM: the heater isn't working",
            "unsure",
            "called",
        ),
        # A negation in a sentence rewritten around it is held: a rewording as often as a flip.
        # One put before words left in place flips, however many words it brings, and so does
        # a bare "do not" that another negating word elsewhere evens out.
        (
            "Could we schedule the releases with web at 10:00 and mobile at 13:00? That way the"
            " two rollbacks don't overlap.",
            "To keep the two rollbacks from overlapping, can the releases be scheduled as web at"
            " 10:00 and mobile at 13:00?",
            "unsure",
            "reworded",
        ),
        (
            "Please renew the Adobe licence for the design team",
            "The Adobe licence for the design team should not be renewed this year",
            "unsure",
            "reworded",
        ),
        (
            "Approve the expense report for Marcus",
            "Do not approve the expense report for Marcus unless receipts are attached",
            "different",
            "negation was added",
        ),
        (
            "Merge the pull request",
            "Don't merge the pull request without a review",
            "different",
            "negation was added",
        ),
        (
            "Please approve the refund for order 1182 today",
            "Please do not under any circumstances approve the refund for order 1182 today",
            "different",
            "negation",
        ),
        # One more thing joined on with "and".
        (
            "Please fail over to lb-ap-2 and page the network team.",
            "Please fail over to lb-ap-2.",
            "different",
            "added: page the network team",
        ),
        (
            "Remove the stale flag from config and code; it is on.",
            "Remove the stale flag from config; it is on.",
            "different",
            "added: code",
        ),
        (
            "Call me when you land",
            "Call me when you land, and thanks",
            "confirmed",
            "only politeness words changed",
        ),
        (
            "We're bringing the grill and 2 coolers.",
            "We're bringing the grill, 2 coolers and the kayak.",
            "different",
            "added: the kayak",
        ),
        (
            "Don't merge pipeline changes that week",
            "Don't merge pipeline or Terraform changes that week",
            "different",
            "added: terraform",
        ),
        (
            "No deploys to prod-eu except hotfixes approved by Nadia.",
            "No deploys to prod-eu.",
            "different",
            "added: except",
        ),
        ("VPN, GitHub and AWS", "VPN, GitHub, and AWS", "confirmed", None),
        (
            "Potluck Sunday: Omar brings dessert, I've got drinks and plates.",
            "Potluck Sunday: Omar brings dessert, I've got drinks, plates and ice.",
            "different",
            "added to a list: ice",
        ),
        (
            "Invite Ingrid and Tomas to the review",
            "Invite Ingrid, Tomas and Maria to the review",
            "different",
            "maria",
        ),
        ("Buy milk and eggs", "Buy milk, eggs, and bread", "different", "bread"),
        (
            "Roll back payments-service from v3.4.1 in prod",
            "Roll back payments-service and ledger-service from v3.4.1 in prod",
            "different",
            "added: ledger service",
        ),
        # A statement and the question it answers, after a heading or a dash.
        (
            "Big news: Leo Marsh moves to Kingsbridge FC on a 3-year deal.",
            "Big news: is Leo Marsh moving to Kingsbridge FC on a 3-year deal?",
            "different",
            "a statement became a question",
        ),
        (
            "Late penalty waived - Marcus was out sick with a doctor's note.",
            "Should the late penalty be waived? Marcus was out sick with a doctor's note.",
            "different",
            "question",
        ),
        (
            "Reminder: please bring the keys to the office",
            "Reminder: could you bring the keys to the office?",
            "confirmed",
            None,
        ),
        # Reviewer regressions: two negative words of their own, a noun and its plural or its
        # verb, "I've" for "I'll", a question cut at a dash, "-free" only for what food lacks.
        ("Mark invoice 42 as unpaid", "Mark invoice 42 as unread", "unsure", "unpaid → unread"),
        ("Book the training for Ana on Friday", "Book the train for Ana on Friday", "unsure", None),
        (
            "Delete the nightly backup of the billing database",
            "Delete the nightly backups of the billing database",
            "unsure",
            None,
        ),
        (
            "I've put the keys in the lockbox by the door",
            "I'll put the keys in the lockbox by the door",
            "unsure",
            None,
        ),
        ("Is the office open Mon - Fri?", "The office is open Mon - Fri.", "different", "question"),
        (
            "Order the gluten free cake for Ana",
            "Order the gluten-free cake for Ana",
            "confirmed",
            None,
        ),
        (
            "Order the toll-free number for the shop",
            "Order the toll free number for the shop",
            "confirmed",
            None,
        ),
        ("Reset Ana's password", "Reset Ana's password and let me know", "no_objection", None),
        # A phrase added to a text otherwise the same: no item added, but a content word that
        # nothing accounts for (see the accounting's table).
        (
            "Reply to Ana about the invoice",
            "Reply to Ana about the invoice with a short note",
            "unsure",
            "a content word was added: short",
        ),
        (
            "Email everyone on the list",
            "Email everyone on the list other than Ana",
            "different",
            "added",
        ),
        # Spans of unequal length that traded places around "to".
        (
            "Assign the licence from Harlow Ltd to Harlow Ireland Ltd, effective 1 July",
            "Assign the licence from Harlow Ireland Ltd to Harlow Ltd, effective 1 July",
            "different",
            "direction was reversed",
        ),
        (
            "Pick up Maya from soccer at 5:30",
            "Drop off Maya at soccer at 5:30",
            "different",
            "reversed",
        ),
        # 0.11: opposites told apart in place though both stand elsewhere in the text.
        (
            "Turn off the pricing flag for EU users until Legal signs off on it",
            "Turn on the pricing flag for EU users until Legal signs off on it",
            "different",
            "reversed in place: off → on",
        ),
        (
            "Pager: Lena primary, Omar secondary until Friday 18:00",
            "Pager: Lena primary, Omar secondary from Friday 18:00",
            "different",
            "reversed in place: until → from",
        ),
        (
            "Move-out inspection for unit 5D on Friday at 2 PM",
            "Move-in inspection for unit 5D on Friday at 2 PM",
            "different",
            "reversed in place: out → in",
        ),
        (
            "The coach must leave school no earlier than 8:45 and be back by 3:15",
            "The coach must leave school no later than 8:45 and be back by 3:15",
            "different",
            "reversed in place",
        ),
        (
            "Enable the new checkout for 10% of EU traffic starting Monday",
            "Enable the new checkout for 10% of US traffic starting Monday",
            "unsure",
            "eu → usa",
        ),
        (
            "Carpool: Maya drives Monday and Wednesday, Ben drives Tuesday and Thursday",
            "Carpool: Maya drives Tuesday and Thursday, Ben drives Monday and Wednesday",
            "different",
            "traded places",
        ),
        (
            "Replace the carpet runner in the hallway with luxury vinyl plank",
            "Replace the luxury vinyl plank in the hallway with a carpet runner",
            "different",
            "traded places",
        ),
        (
            "Please remove Daniel Osei from the prod-admin group by Friday 17:00",
            "Please remove Daniel Osei from the prod-admin and billing-admin groups by Friday"
            " 17:00",
            "different",
            "an item was added: billing admin",
        ),
        (
            "This non-compete is too broad. Narrow it to 12 months and to the state of Oregon",
            "This non-compete is too broad. Narrow it to 12 months and to the states of Oregon"
            " and Washington",
            "different",
            "an item was added: washington",
        ),
        # A particle reverses only after a verb that switches; "by", "from" and "until"
        # only before a time. Elsewhere one preposition put for another is no reversal, and
        # no rewording either: held.
        (
            "Draft the churn summary based off the Q3 numbers and send it on Friday",
            "Draft the churn summary based on the Q3 numbers and send it on Friday",
            "unsure",
            "a preposition changed: off → on",
        ),
        (
            "Please chase the signed quote from Ana before the review on Friday",
            "Please chase the signed quote by Ana before the review on Friday",
            "unsure",
            "a preposition changed: from → by",
        ),
        (
            "Log in to the billing portal and download the March invoice for Acme",
            "Log out of the billing portal and download the March invoice for Acme",
            "different",
            "reversed in place: in → out",
        ),
        (
            "Switch the staging alerts off tonight and leave the prod alerts on",
            "Switch the staging alerts on tonight and leave the prod alerts on, without paging",
            "different",
            "reversed in place: off → on",
        ),
        # A bound whose "no" came or went.
        (
            "Submit the audit report no later than Friday 5pm",
            "Submit the audit report later than Friday 5pm",
            "different",
            "a bound was reversed",
        ),
        (
            "Order up to 50 branded mugs for the conference booth",
            "Order no more than 50 branded mugs for the conference booth",
            "confirmed",
            "same words",
        ),
        # A short form written in capitals, and a phrasal verb for an opposable verb.
        (
            "Add a Q&A slot after the keynote in the conference schedule",
            "Add a questions and answers slot after the keynote in the conference schedule",
            "no_objection",
            None,
        ),
        (
            "Please book the caterer for the Friday launch party at the office",
            "Please call off the caterer for the Friday launch party at the office",
            "unsure",
            "one phrase swapped",
        ),
        # 0.11, second review: a count is no time, "out front" says where (no reversal, but
        # held), a negation elsewhere leaves an opposite standing, a bound negated by its verb.
        (
            "We got feedback from 120 customers on the new checkout flow",
            "We got feedback by 120 customers on the new checkout flow",
            "unsure",
            "a preposition changed: from → by",
        ),
        (
            "Keep the lab closed until 17:00 for the audit team",
            "Keep the lab closed from 17:00 for the audit team",
            "different",
            "reversed in place: until → from",
        ),
        (
            "Please enable international payments on my card ending 4417 from May 3",
            "Please enable international payments on my card ending 4417 until May 3",
            "different",
            "reversed in place: from → until",
        ),
        (
            "Leave the bins out front on Tuesday night for the collection",
            "Leave the bins in front on Tuesday night for the collection",
            "unsure",
            "a preposition changed: out → in",
        ),
        (
            "No worries, switch the heater off before the guests arrive",
            "Also, switch the heater on before the guests arrive",
            "different",
            "reversed",
        ),
        (
            "The summary for the board should be no more than two pages",
            "The summary for the board shouldn't be more than two pages",
            "confirmed",
            None,
        ),
        (
            "Buy Ana a farewell gift and spend no more than $60",
            "Buy Ana a farewell gift but don't spend more than $60",
            "confirmed",
            None,
        ),
        (
            "Round the invoice totals up to 2 decimal places",
            "Round the invoice totals down to 2 decimal places",
            "different",
            "reversed",
        ),
        (
            "Open a US entity for the new sales team",
            "Open a United States entity for the new sales team",
            "confirmed",
            "same words",
        ),
        (
            "Please send the revised budget to Hannah by eod and copy in Marco",
            "Please send the revised budget to Hannah by end of day and copy in Marco",
            "no_objection",
            None,
        ),
        (
            "Roll back the checkout service in prod to the previous version tonight",
            "Roll back the checkout service in the production environment to the previous"
            " version tonight",
            "no_objection",
            None,
        ),
        # A negation that came with the opposite reverses it back.
        (
            "Don't leave the water heater on when we head to the airport on Saturday",
            "Turn the water heater off when we head to the airport on Saturday",
            "no_objection",
            None,
        ),
        # Bounds are no refusals, and "fill out" is "fill in".
        (
            "Please have the drafts in the shared folder no later than Friday",
            "Please have the drafts in the shared folder by Friday",
            "confirmed",
            "same words",
        ),
        (
            "Limit audits to once a year, with at least 30 days' notice",
            "Limit audits to once a year, with no less than 30 days' notice",
            "confirmed",
            "same words",
        ),
        (
            "Please fill out the visa form for Ana before her trip",
            "Please fill in the visa form for Ana before her trip",
            "confirmed",
            "same words",
        ),
        (
            "The store isn't willing to refund me, please reverse the charge",
            "The store is unwilling to refund me, please reverse the charge",
            "no_objection",
            None,
        ),
        # One phrase for another: held unless a short form, a negation or a phrasal verb.
        (
            "Please put Kofi on forklift 2 and Sanne on the receiving desk tomorrow",
            "Please put Kofi on reach truck 2 and Sanne on the receiving desk tomorrow",
            "unsure",
            "one phrase swapped: forklift → reach truck",
        ),
        (
            "Please send the signed PO to the supplier and copy finance today",
            "Please send the signed purchase order to the supplier and copy finance today",
            "no_objection",
            None,
        ),
        (
            "The ladder in the loading bay is not safe, please tag it today",
            "The ladder in the loading bay is unsafe, please tag it today",
            "no_objection",
            None,
        ),
        (
            "Please enroll Maya in the after-school chess club this term",
            "Please sign up Maya for the after-school chess club this term",
            "unsure",
            "a preposition changed: in → for",
        ),
    ],
)
def test_rules(stored: str, proposed: str, kind: str, reason: str | None) -> None:
    verdict = VERIFIER.compare(stored, proposed)
    assert verdict.kind is VerdictKind(kind), verdict
    if kind == "different":
        assert verdict.reason is not None
        assert reason is not None
        assert reason in verdict.reason or (reason in {"act"} and "became" in verdict.reason)
    elif reason is not None:
        assert verdict.reason is not None
        assert reason in verdict.reason


def test_a_swapped_word_is_unsure_without_word_cosines() -> None:
    big, large = (
        "Please book a big room for the offsite",
        "Please book a large room for the offsite",
    )
    verdict = RuleVerifier().compare(big, large)
    assert verdict == Verdict(VerdictKind.UNSURE, "one word swapped: big → large")


def test_verdicts_combine_across_leaves() -> None:
    stored = (SemanticLeaf("subject", "Refund"), SemanticLeaf("body", "Approve the refund"))
    same = (SemanticLeaf("subject", "Refund"), SemanticLeaf("body", "approve the refund"))
    flipped = (SemanticLeaf("subject", "Refund"), SemanticLeaf("body", "Reject the refund"))
    assert verify_leaves(VERIFIER, same, stored).kind is VerdictKind.CONFIRMED
    assert verify_leaves(VERIFIER, flipped, stored).kind is VerdictKind.DIFFERENT
    reworded = (SemanticLeaf("subject", "Refund"), SemanticLeaf("body", "Refund it, that's OK"))
    assert verify_leaves(VERIFIER, reworded, stored).kind is VerdictKind.NO_OBJECTION


def test_the_synonym_threshold_is_a_cosine() -> None:
    with pytest.raises(ValueError, match="cosine"):
        RuleVerifier(word_cosine, min_synonym_cosine=1.5)
    with pytest.raises(ValueError, match="min_phrase_cosine"):
        RuleVerifier(word_cosine, min_phrase_cosine=-2)
    strict = RuleVerifier(word_cosine, min_synonym_cosine=0.9)
    big, large = (
        "Please book a big room for the offsite",
        "Please book a large room for the offsite",
    )
    assert strict.compare(big, large).kind is VerdictKind.UNSURE


@pytest.mark.parametrize(("min_phrase_cosine", "kind"), [(0.0, "no_objection"), (0.5, "unsure")])
def test_the_phrase_threshold_is_a_cosine_and_0_is_a_real_value(
    min_phrase_cosine: float, kind: str
) -> None:
    # The fake word cosine reads any two phrases at 0.2.
    verifier = RuleVerifier(word_cosine, min_phrase_cosine=min_phrase_cosine)
    verdict = verifier.compare(
        "Please put Kofi on forklift 2 and Sanne on the receiving desk tomorrow",
        "Please put Kofi on reach truck 2 and Sanne on the receiving desk tomorrow",
    )
    assert verdict.kind is VerdictKind(kind)


@pytest.mark.parametrize(
    ("leaves", "candidates"), [(0, 8), (1, 8), (2, 8), (3, 5), (8, 2), (16, 1), (64, 1)]
)
def test_a_call_of_many_leaves_has_fewer_candidates_verified(leaves: int, candidates: int) -> None:
    assert verified_candidates(leaves) == candidates


# Each change is a rewording only for a stated reason; a small word of meaning put for
# another, or added to a text otherwise the same, is none.
@pytest.mark.parametrize(
    ("stored", "proposed", "kind", "reason"),
    [
        (
            "I vote for the proposal to move the office to Leeds",
            "I vote against the proposal to move the office to Leeds",
            "unsure",
            "a preposition changed: for → against",
        ),
        (
            "Grant Priya access to the billing and payroll systems",
            "Grant Priya access to the billing or payroll systems",
            "unsure",
            "a conjunction changed: and → or",
        ),
        (
            "Contractors must use the north entrance after 6pm",
            "Contractors may use the north entrance after 6pm",
            "unsure",
            "a modal changed: must → may",
        ),
        (
            "Tell the client the shipment will be late",
            "Tell the client the shipment might be late",
            "unsure",
            "a modal changed: will → might",
        ),
        (
            "Please confirm that we will cover the shipping costs for order 7731",
            "Please confirm that they will cover the shipping costs for order 7731",
            "unsure",
            "a pronoun changed: we → they",
        ),
        (
            "Restart the payment workers now",
            "Restart the payment workers later",
            "unsure",
            "a deictic changed: now → later",
        ),
        (
            "Book the team lunch for this Friday at noon",
            "Book the team lunch for next Friday at noon",
            "unsure",
            "a deictic changed: this → next",
        ),
        (
            "Please leave the parcel here by the door",
            "Please leave the parcel there by the door",
            "unsure",
            "a deictic changed: here → there",
        ),
        (
            "Send invoice 204 only to the finance team",
            "Send invoice 204 also to the finance team",
            "unsure",
            "a quantifier changed: only → also",
        ),
        (
            "Delete the old files in the shared archive",
            "Delete only the old files in the shared archive",
            "unsure",
            "a quantifier was added: only",
        ),
        (
            "Tell Ana that he is late for the review",
            "Tell Ana that she is late for the review",
            "unsure",
            "a pronoun changed: he → she",
        ),
        (
            "I've put the keys in the lockbox by the door",
            "I'll put the keys in the lockbox by the door",
            "unsure",
            "a modal was added: i'll",
        ),
        # Roles swapped through pronouns: the names traded places.
        (
            "Remind Carlos that he owes Fatima $40",
            "Remind Fatima that she owes Carlos $40",
            "different",
            "traded places: carlos ↔ fatima",
        ),
        ("Tell Ana her report beat Ben's", "Tell Ben his report beat Ana's", "different", "ana"),
        # Reasons name the words as written, not their stems.
        (
            "The customer wants more sugar in every delivery",
            "The customer wants less sugar in every delivery",
            "different",
            "reversed: more → less",
        ),
        # What accounts for a change.
        (
            "Please email every tenant about the water outage",
            "Please email each tenant about the water outage",
            "confirmed",
            "only words of one meaning changed",
        ),
        (
            "Fire drill Thursday 10:30, please use the stairs",
            "Fire drill on Thursday at 10:30, please use the stairs",
            "confirmed",
            "prepositions of a time",
        ),
        (
            "Reset the staging database tonight",
            "Hi all, reset the staging database tonight. Many thanks!",
            "confirmed",
            "politeness words",
        ),
        (
            "Can you reset the staging database tonight?",
            "Could you reset the staging database tonight?",
            "confirmed",
            "politeness words",
        ),
        (
            "I am on my way to your place",
            "On my way to your place",
            "confirmed",
            "dropped copulas",
        ),
        (
            "Book the big room for the team offsite in March",
            "Book the large room for the team offsite in March",
            "confirmed",
            "only synonyms changed",
        ),
        # A content word added or dropped where the action's target stands, in a text
        # otherwise the same, names another target.
        (
            "Send the signed contract to Ana's lawyer",
            "Send the signed contract to Ana",
            "unsure",
            "a content word was dropped: lawyer",
        ),
        (
            "Email the draft to the team lead",
            "Email the draft to the team",
            "unsure",
            "a content word was dropped: lead",
        ),
        ("Delete the backup folder", "Delete the folder", "unsure", "dropped: backup"),
        (
            "Book a table for the kids",
            "Book a table for the kids' teacher",
            "unsure",
            "a content word was added: teacher",
        ),
        (
            "Lock the account of the former employee",
            "Lock the account of the employee",
            "unsure",
            "dropped: former",
        ),
        (
            "Restart the staging database replica at midnight",
            "Restart the staging database replica at midnight again",
            "unsure",
            "a repetition was added: again",
        ),
        # … unless a stated reason covers it: a retry's urgency or label, a word said twice.
        (
            "Send the report to Ana",
            "Please send the report to Ana right away",
            "confirmed",
            "only politeness words and words of urgency changed",
        ),
        (
            "Send the invoice to the supplier",
            "Send the invoice to the supplier as soon as possible",
            "confirmed",
            "words of urgency",
        ),
        (
            "Retry: send the invoice to the supplier",
            "Send the invoice to the supplier",
            "confirmed",
            "retry markers",
        ),
        (
            "Cancel my dentist appointment appointment for Tuesday",
            "Cancel my dentist appointment for Tuesday",
            "confirmed",
            "repeated words",
        ),
        # A heading's or a thank-you's words name no target: the thresholds decide.
        (
            "Sprint 31 planning: Ravi on payments",
            "Sprint 31 planning session: Ravi on payments",
            "no_objection",
            None,
        ),
        (
            "Please send the report to Ana.",
            "Please send the report to Ana. Thanks for your help!",
            "no_objection",
            None,
        ),
        # Where the texts are otherwise reworded, an added word drifts with them.
        (
            "Email the draft to the team lead",
            "Could you forward the draft to the team?",
            "no_objection",
            None,
        ),
        # In a rewording the small words move with the words around them: the thresholds
        # decide.
        (
            "Leave the frozen items with Mrs. Patel in unit 3B and the flowers with the doorman.",
            "Please give the frozen items to Mrs. Patel in unit 3B, and hand the flowers to the"
            " doorman.",
            "no_objection",
            "reworded, and a preposition changed: with → to",
        ),
    ],
)
def test_a_change_is_accounted_for_or_it_is_not(
    stored: str, proposed: str, kind: str, reason: str | None
) -> None:
    verdict = VERIFIER.compare(stored, proposed)
    assert verdict.kind is VerdictKind(kind), verdict
    if reason is not None:
        assert reason in (verdict.reason or ""), verdict
    # Which text came first does not matter to the verdict.
    assert VERIFIER.compare(proposed, stored).kind is verdict.kind


_CLASSES: dict[str, list[tuple[str, str]]] = {}
for _word, _senses in MEANING.items():
    if len(_senses) == 1 and "'" not in _word:
        _CLASSES.setdefault(_senses[0][0], []).append((_word, _senses[0][1]))
_CONTENT = "invoice ledger budget archive contract supplier report quarterly".split()


@given(
    st.sampled_from(sorted(_CLASSES)).flatmap(
        lambda kind: st.tuples(
            st.sampled_from(sorted(_CLASSES[kind])), st.sampled_from(sorted(_CLASSES[kind]))
        )
    ),
    st.lists(st.sampled_from(_CONTENT), min_size=3, max_size=8),
    st.integers(min_value=0, max_value=8),
)
def test_a_word_of_meaning_put_for_another_is_never_a_rewording(
    swap: tuple[tuple[str, str], tuple[str, str]], content: list[str], at: int
) -> None:
    (first, first_value), (second, second_value) = swap
    assume(first_value != second_value)
    at = min(at, len(content))
    stored = " ".join([*content[:at], first, *content[at:]])
    proposed = " ".join([*content[:at], second, *content[at:]])
    verdict = VERIFIER.compare(stored, proposed)
    assert verdict.kind in (VerdictKind.UNSURE, VerdictKind.DIFFERENT), (stored, proposed)


# No deadline: the first example pays for cold caches on a busy machine, which says nothing
# about the rule.
@settings(deadline=None)
@given(
    st.sampled_from(_CONTENT),
    st.sampled_from(_CONTENT),
    st.sampled_from(_CONTENT),
    st.sampled_from(["to the", "for the", "with our", "of Ana's"]),
)
def test_a_content_word_added_to_the_target_is_never_a_rewording(
    thing: str, target: str, added: str, opener: str
) -> None:
    assume(len({thing, target, added}) == 3)
    stored = f"Send the {thing} {opener} {target}"
    for proposed in (f"{stored} {added}", f"Send the {thing} {opener} {added} {target}"):
        verdict = VERIFIER.compare(stored, proposed)
        assert verdict.kind is VerdictKind.UNSURE, (stored, proposed, verdict)
        assert verdict.reason == f"a content word was added: {added}", verdict


@dataclass(frozen=True, slots=True)
class _SureModel:
    """A pair model that reads every pair as the same request."""

    model_id: str = "sure"

    def score(self, first: str, second: str) -> float | None:
        return 9.0


@pytest.mark.parametrize(
    ("stored", "proposed", "kind"),
    [
        # The model may confirm a rewording …
        ("Approve the refund", "OK the refund", "confirmed"),
        # … but never excuse a change of meaning the rules hold.
        (
            "Contractors must use the north entrance",
            "Contractors may use the north entrance",
            "unsure",
        ),
        ("Restart the payment workers now", "Restart the payment workers later", "unsure"),
        (
            "Leave the frozen items with Mrs. Patel in unit 3B and the flowers with the doorman.",
            "Please give the frozen items to Mrs. Patel in unit 3B, and hand the flowers to the"
            " doorman.",
            "no_objection",
        ),
    ],
)
def test_the_pair_model_confirms_a_rewording_never_a_change_of_meaning(
    stored: str, proposed: str, kind: str
) -> None:
    verifier = ModelVerifier(VERIFIER, _SureModel(), min_logit_confirm=3.0)
    assert verifier.compare(stored, proposed).kind is VerdictKind(kind)


@pytest.mark.parametrize(
    ("stored", "proposed"),
    [
        ("Please enroll Maya in the chess club", "Please sign up Maya for the chess club"),
        ("Renew the contract with Acme", "Do not renew the contract with Acme"),
        ("Send the report to Bob", "Send the report to Bob"),
        ("Buy two tickets for Friday", "Purchase two tickets for Friday"),
    ],
)
def test_the_packs_verifier_says_what_the_rules_say_each_time(stored: str, proposed: str) -> None:
    remembered = EnglishPack().verifier(word_cosine)
    expected = VERIFIER.compare(stored, proposed)
    assert [remembered.compare(stored, proposed) for _ in range(2)] == [expected, expected]
