"""Critical tokens in free text: numbers, dates, times, units, currencies."""

from __future__ import annotations

import pytest

from tooldedup.dedup.english.critical import critical_tokens


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        # A time of day with am or pm is read in 24 hours (dedup/english/facts.py).
        ("meeting at 6 PM", ("18:0",)),
        ("meeting at six p.m.", ("18:0",)),
        ("meet at 6pm tomorrow", ("18:0", "tomorrow")),
        ("I am here", ()),
        ("You may want to call", ()),
        ("due May 5", ("5", "may")),
        ("pay $1,200.50", ("1200.5", "usd")),
        ("pay 1200.50 dollars", ("1200.5", "usd")),
        ("ship 2 boxes", ("2",)),
        ("ship two boxes", ("2",)),
        ("the 5th of March", ("5", "march")),
        ("the third Friday", ("3", "friday", "ord")),
        ("version 1,2,3", ("1", "2", "3")),
        ("order 00123", ("123",)),
        ("see you on Friday", ("friday",)),
        ("this one please", ()),
        ("on 2024-03-05 at 10:05", ("10:5", "2024-3-5")),
        ("thirty-one chairs", ("31",)),
        ("-18 degrees", ("-18",)),
        (".5 mg", ("0.5mg",)),
        ("500 CHF", ("500", "chf")),
        # Negation is the verifier's to judge, not a token: see tests/test_rule_verifier.py.
        ("please do not approve it", ()),
        ("don't send it", ()),
        # Values bound to names are the verifier's to compare (tests/test_rule_verifier.py).
        ("Scores: Ana: 4, Ben: 2", ("2", "4")),
        ("give 5 to Carla", ("5",)),
        ("500 CHF and 3 GB", ("3gb", "500", "chf")),
        ("the Oct 12 food truck festival", ("12", "october")),
        ("forward it to Bob@Example.com, then /srv/a/b", ("@/srv/a/b", "@bob@example.com")),
        ("2 to 3 days", ("2", "3d")),
        # A month is no name to bind a value to, and a comma after a number ends it.
        ("from July 8 to July 19", ("19", "8", "july", "july")),
        ("estimated $4,200, but not more", ("4200", "usd")),
        # Words after a number that are not units.
        ("Truck 17 has reached 60,000 km", ("17", "60000km")),
        ("let me know by 11 if you can", ("11",)),
        # Facts are read in one spelling (dedup/english/facts.py): a day, a time, an amount.
        ("on March 5, 2026", ("2026-3-5",)),
        ("at 9:30 AM", ("09:30",)),
        ("at 9:30", ("9:30",)),
        ("pay EUR 40", ("40", "eur")),
        ("pay 40 Canadian dollars", ("40", "cad")),
        ("paid in Canadian dollars", ("cad",)),
        # A dollar that is not the US one, and yen or yuan, keep their own tokens.
        ("pay C$40", ("40", "c$")),
        ("pay ¥500", ("500", "¥")),
    ],
)
def test_tokens(text: str, tokens: tuple[str, ...]) -> None:
    assert critical_tokens(text) == tokens


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("from 6 AM to 8 PM", "from 6 PM to 8 AM"),
        ("2024-03-05", "2024-05-03"),
        ("at 10:05", "at 5:10"),
        ("thirty-one chairs", "thirty chairs"),
        ("the third Friday", "the fourth Friday"),
        ("-18 degrees", "18 degrees"),
        (".5 mg", "5 mg"),
        ("500 CHF", "500 CAD"),
        ("5 kg", "5 lb"),
        ("123456789012345678901234567890", "123456789012345678901234567891"),
        ("Transfer 1.000 EUR", "Transfer 1 EUR"),
        ("Transfer 1.000 EUR", "Transfer 1000 EUR"),
        ("pay 1,000 EUR and 2,5 kg", "pay 1000 EUR and 2,5 kg"),
        ("Tuesday the twenty-first", "Tuesday the twenty-second"),
        ("mail bob@example.com", "mail carol@example.com"),
        ("send 2,5 kg of flour", "send 5,2 kg of flour"),
        ("transfer 2,5 EUR", "transfer 2,05 EUR"),
        ("run `kubectl delete namespace staging` now", "run `kubectl delete namespace prod` now"),
        (
            "please run kubectl delete ns staging, thanks",
            "please run kubectl delete ns prod, thanks",
        ),
        ("then run UPDATE t SET a = 1 WHERE o = 'x'", "then run UPDATE t SET a = 1 WHERE o = 'y'"),
        ("remind me in 30 minutes", "remind me in 30 hours"),
        ("hold it for 3 days", "hold it for 3 weeks"),
        ("a 5-year plan", "a 5-month plan"),
        ("ready Thu after 4 PM", "ready Fri after 4 PM"),
        ("Remind me in 2 hours and 30 minutes", "Remind me in 30 hrs and 2 mins"),
        ("Scale the deployment 3x", "Scale the deployment to 3 replicas"),
        ("on Sat at 9", "on Sun at 9"),
        # A command word inside a sentence.
        ("please sudo systemctl restart nginx", "please sudo systemctl restart apache2"),
        ("clean up with rm -rf /tmp/build today", "clean up with rm -rf /tmp/cache today"),
        ("then git push --force to main", "then git push to main"),
        ("ssh into db-2 with ssh -i ~/.ssh/ops", "ssh into db-2 with ssh -i ~/.ssh/dev"),
        ("mow the lawn on Tuesdays", "mow the lawn on Thursdays"),
        # Every such day is not the next one, and a day said twice is said twice.
        ("cancel the yoga class on Tuesdays", "cancel the yoga class on Tuesday"),
        (
            "Cover Monday and Tuesday for Ana, and Monday for Ben",
            "Cover Monday and Tuesday for Ana, and Tuesday for Ben",
        ),
        ("Plan for Northwind: 1 Year, 10 Seats", "Plan for Northwind: 1 Month, 10 Seats"),
        ("please sudo poweroff the spare node", "please sudo reboot the spare node"),
        ("please git stash the changes", "please git stash pop the changes"),
        # A code before its amount, and dollars that are not US dollars.
        ("pay USD 40", "pay EUR 40"),
        ("pay $40", "pay C$40"),
        ("pay in US dollars", "pay in Canadian dollars"),
        # An hour without am/pm is no reading of one with it.
        ("at 9:30", "at 9:30 AM"),
        ("at 9:30", "at 09:30"),
        ("on March 5", "on March 5, 2026"),
    ],
)
def test_changed_values_are_told_apart(a: str, b: str) -> None:
    assert critical_tokens(a) != critical_tokens(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("$100", "100 dollars"),
        ("Pay 1,200.50 today", "pay 1200.5 today"),
        ("meet at 6 PM", "meet at six p.m."),
        ("on 2024-03-05", "on 2024-3-5"),
        ("at 6 on Friday", "Friday at 6"),
        ("wait 30 min after", "wait 30 minutes after"),
        ("a 30-minute call", "a call of 30 min"),
        ("for 3 hrs", "for three hours"),
        ("a five-year plan", "a plan over 5 years"),
        ("5 kilograms", "5 kg"),
        ("ready Thu after 4 PM", "ready Thursday after 4 PM"),
        ("done Wed after 4 PM", "done Wednesday after 4 PM"),
        ("dinner is Sat at 7pm", "dinner, Saturday 7pm"),
        ("the recital thurs at 6", "the recital on Thursday at 6"),
        ("Sat 9am", "Saturday 9am"),
        ("2x a week", "2 times a week"),
        ("in 20 more minutes", "in 20 minutes"),
        ("3 mos", "3 months"),
        ("due on Sun", "due on Sunday"),
        # A capital at a sentence's start, or a word, is no weekday.
        ("Sat down at 9 with Ana", "sat down at 9 with Ana"),
        ("the Sun is out at 9", "the sun is out at 9"),
        ("Ana Sat the exam at 9", "Ana sat the exam at 9"),
        ("Register Ana for the SAT", "Register Ana for the test"),
        ("Bring 2 Sun hats", "Bring 2 sun hats"),
        ("SPF 50 sun cream", "SPF 50 sunscreen"),
        # A weekday in the plural is every such day.
        ("mow the lawns on Tuesdays", "mow the lawns every Tuesday"),
        # A command word used as a noun, or as a short form, is prose.
        ("Harbourview Hotel, rm 1507", "Harbourview Hotel, room 1507"),
        (
            "Requesting sudo on bastion-02 for Yusuf for 4 hours",
            "Yusuf needs 4 hours of sudo on bastion-02",
        ),
        # A capitalised unit before its own number is a label.
        ("the March 28 Year 8 museum trip", "the Year 8 museum trip on March 28"),
        ("Diaz's two second-half goals", "two goals from Diaz in the second half"),
        # Facts written another way (dedup/english/facts.py).
        ("on March 5, 2026", "on 2026-03-05"),
        ("on the 5th of March 2026", "on 5 March 2026"),
        ("the 5th of March", "March 5th"),
        ("at 3 PM", "at 15:00"),
        ("at 9:30 a.m.", "at 09:30"),
        ("pay $40", "pay USD 40"),
        ("pay 40 US dollars", "pay 40 USD"),
        ("500 CHF", "CHF 500"),
    ],
)
def test_same_values_written_differently_agree(a: str, b: str) -> None:
    assert critical_tokens(a) == critical_tokens(b)
