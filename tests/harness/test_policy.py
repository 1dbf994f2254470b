"""The loop's injection policy as a table: state at the top of a turn -> (which injection, tools off)."""

import pytest

from oracleproto.harness.react import TurnState, next_injection, nudge_fits
from oracleproto.harness.settings import Budgets

PAPER = Budgets()  # T = 6, C = 4, lookahead 2, tools dropped when spent, forced final
LAX = Budgets(force_final=False, drop_tools_when_spent=False)


def kind(text: str | None) -> str | None:
    if text is None:
        return None
    for needle, name in (
        ("final step", "last_step"),
        ("used all", "budget_spent"),
        ("no parseable", "continuation"),
        ("ONE more web_search", "penultimate"),
        ("in this reply or the next one", "penultimate"),
    ):
        if needle in text:
            return name
    return "other"


@pytest.mark.parametrize(
    ("budgets", "state", "expected_kind", "tools_off"),
    [
        (PAPER, TurnState(1, 6, 0, 4), None, False),
        (PAPER, TurnState(6, 6, 0, 4), "last_step", True),  # last step: tools always off
        (PAPER, TurnState(5, 6, 0, 4), "penultimate", False),
        (PAPER, TurnState(4, 6, 0, 4), None, False),  # lookahead 2: only steps_left == 2 is warned
        (PAPER, TurnState(5, 6, 4, 4), "penultimate", True),  # warned without the search offer
        (PAPER, TurnState(3, 6, 4, 4), "budget_spent", True),
        (PAPER, TurnState(3, 6, 4, 4, announced_budget=True), None, True),  # said once only
        (PAPER, TurnState(2, 6, 1, 4, pending_continuation=True), "continuation", False),
        (PAPER, TurnState(3, 6, 4, 4, pending_continuation=True), "budget_spent", True),  # priority
        (PAPER, TurnState(6, 6, 0, 4, pending_continuation=True), "last_step", True),
        (PAPER, TurnState(2, 6, 0, 0), None, True),  # search off: no tools, no budget notice
        (LAX, TurnState(6, 6, 0, 4), None, False),  # no forced final
        (LAX, TurnState(3, 6, 4, 4), None, False),  # tools kept when spent: the call is refused instead
        (LAX, TurnState(3, 6, 1, 4, pending_continuation=True), "continuation", False),
    ],
)
def test_next_injection(budgets, state, expected_kind, tools_off):
    turn = next_injection(state, budgets)
    assert (kind(turn.injection), turn.tools_off) == (expected_kind, tools_off)
    assert turn.announces_budget == (expected_kind == "budget_spent")


@pytest.mark.parametrize(
    ("budgets", "step", "fits"),
    [
        (PAPER, 1, True),  # the nudge goes to step 2, before the warnings
        (PAPER, 2, True),
        (PAPER, 3, True),
        (PAPER, 4, False),  # step 5 belongs to the penultimate warning
        (PAPER, 5, False),
        (LAX, 5, True),
        (LAX, 6, False),  # no step after the last
    ],
)
def test_nudge_fits_only_where_no_other_injection_speaks(budgets, step, fits):
    assert nudge_fits(TurnState(step, 6, 0, 4), budgets) is fits
