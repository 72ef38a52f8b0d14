"""The consumer's token budget: a sliding window of what handlers spent, on a hand-moved clock."""

from __future__ import annotations

from typing import Any

import pytest
from tooldedup_client.consumer import TokenBudget, tokens_in_result


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    ("result", "tokens"),
    [
        ({"usage": {"total_tokens": 42}}, 42),
        ({"usage": {"input_tokens": 30, "output_tokens": 12}}, 42),
        ({"usage": {"prompt_tokens": 40, "completion_tokens": 2}}, 42),
        ({"usage": {"total_tokens": True}}, 0),
        ({"usage": {"total_tokens": -5}}, 0),
        ({"usage": "lots"}, 0),
        ({"tags": ["a"]}, 0),
        (["usage"], 0),
        (None, 0),
    ],
)
def test_tokens_are_read_from_a_results_usage(result: Any, tokens: int) -> None:
    assert tokens_in_result(result) == tokens


def test_it_pauses_before_the_budget_runs_out_and_resumes_as_the_window_slides() -> None:
    clock = _Clock()
    budget = TokenBudget(100, clock=clock)
    assert budget.wait_seconds() == 0
    budget.spend(40)
    clock.now += 10
    budget.spend(40)
    # 80 spent and messages cost 40: the next would pass 100, so wait until the first leaves.
    assert budget.wait_seconds() == pytest.approx(50)
    clock.now += 50
    assert budget.in_window() == 40
    assert budget.wait_seconds() == 0
    assert budget.tokens_used == 80


def test_paused_time_adds_up() -> None:
    budget = TokenBudget(10)
    budget.paused(1.5)
    budget.paused(0.5)
    assert budget.paused_seconds == 2.0


@pytest.mark.parametrize("bad", [0, -1])
def test_a_budget_below_one_token_is_refused(bad: int) -> None:
    with pytest.raises(ValueError, match="tokens_per_minute"):
        TokenBudget(bad)
