import datetime as dt

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oracleproto.exam import exam_scores
from oracleproto.export.rewards import compute_score, final_answer_text, forecast_reward
from oracleproto.export.trajectories import rl_rows, rl_table
from oracleproto.parse import parse_answer
from oracleproto.schema import QUESTION_SCHEMA

YES_NO = {"question_type": "yes_no", "options": ["Yes", "No"], "choice_type": "single"}
NAMED = {"question_type": "binary_named", "options": ["Lakers", "Celtics"], "choice_type": "single"}
MC_SINGLE = {"question_type": "multiple_choice", "options": ["Red", "Green", "Blue"], "choice_type": "single"}
MC_MULTI = {"question_type": "multiple_choice", "options": ["Red", "Green", "Blue", "Grey"], "choice_type": "multi"}


@pytest.mark.parametrize(
    ("info", "text", "gold", "score"),
    [
        (YES_NO, "I think so. \\boxed{Yes}", "A", 1.0),
        (YES_NO, "\\boxed{No}", "A", 0.0),
        (YES_NO, "\\boxed{Yes.}", "A", 0.0),  # parse failure scores 0
        (NAMED, "\\boxed{celtics}", "B", 1.0),
        (NAMED, "\\boxed{B}", "B", 0.0),  # a letter is not a label
        (MC_SINGLE, "first \\boxed{A} then \\boxed{C}", "C", 1.0),  # the last box counts
        (MC_SINGLE, "\\boxed{A, C}", "C", 0.0),  # two letters on a single-answer question: unparseable
        (MC_MULTI, "\\boxed{A}", "A, C", 0.5),  # partial credit
        (MC_MULTI, "\\boxed{C, A}", "A, C", 1.0),
        (MC_MULTI, "\\boxed{A, B}", "A, C", 0.0),  # a wrong letter zeroes the score
        (MC_MULTI, "no box at all", "A, C", 0.0),
        (MC_MULTI, None, "A, C", 0.0),
    ],
)
def test_compute_score_is_parser_then_exam_score(info, text, gold, score):
    assert compute_score("oracleproto/cutoff-2026-02-25", text, gold, info) == score


def test_compute_score_needs_the_question_fields():
    with pytest.raises(ValueError, match="extra_info lacks question_type, options, choice_type"):
        compute_score("src", "\\boxed{A}", "A")
    with pytest.raises(ValueError, match="extra_info lacks options"):
        compute_score("src", "\\boxed{A}", "A", {"question_type": "yes_no", "choice_type": "single"})


def test_conversational_completion_uses_the_last_answer_turn():
    completion = [
        {"role": "assistant", "content": "\\boxed{A}", "tool_calls": [{"id": "c", "function": {"name": "web_search"}}]},
        {"role": "tool", "content": "{\"results\": []}"},
        {"role": "assistant", "content": "Settled: \\boxed{No}"},
    ]
    assert final_answer_text(completion) == "Settled: \\boxed{No}"
    assert final_answer_text(completion[:2]) is None  # the content of a tool-call turn is not an answer
    assert final_answer_text("\\boxed{Yes}") == "\\boxed{Yes}"


def test_trl_reward_scores_each_completion_from_the_rl_columns():
    completions = [
        [{"role": "assistant", "content": "\\boxed{Yes}"}],
        [{"role": "assistant", "content": "\\boxed{A}"}],
        "\\boxed{A, C}",
    ]
    columns = {
        "answer": ["A", "A, C", "A, C"],
        "question_type": ["yes_no", "multiple_choice", "multiple_choice"],
        "options": [["Yes", "No"], MC_MULTI["options"], MC_MULTI["options"]],
        "choice_type": ["single", "multi", "multi"],
    }
    assert forecast_reward(completions, **columns, prompts=None, trainer_state=None) == [1.0, 0.5, 1.0]
    with pytest.raises(ValueError, match="3 completions but 2 values of 'answer'"):
        forecast_reward(completions, **{**columns, "answer": ["A", "A"]})


def test_rewards_read_the_exported_rl_rows():
    questions = pa.Table.from_pylist(
        [{"id": "q1", "choice_type": "multi", "question_type": "multiple_choice", "event": "Which?",
          "options": MC_MULTI["options"], "answer": "B, D", "end_time": dt.date(2026, 3, 1)}],
        schema=QUESTION_SCHEMA,
    )  # fmt: skip
    table = rl_table(rl_rows(questions, dt.date(2025, 1, 31), "train", 1, lambda q: [{"role": "user", "content": q["event"]}]))
    row = table.to_pylist()[0]
    assert compute_score(row["data_source"], "\\boxed{D}", row["reward_model"]["ground_truth"], row["extra_info"]) == 0.5
    # TRL passes every extra dataset column to the reward function as a list per batch
    columns = table.drop_columns(["prompt", "reward_model", "extra_info"]).to_pydict()
    assert forecast_reward(["\\boxed{B, D}"], **columns) == [1.0]


# On a trial table the reward of a trial's raw output equals the scorer's exam score of the
# trial: pred is what the evaluator parsed from that output, and the scorer's vectorised
# exam score (bit masks) is an implementation separate from the scalar one the reward uses.
QUESTIONS = [("A", YES_NO), ("B", NAMED), ("C", MC_SINGLE), ("A, C", MC_MULTI), ("B", MC_MULTI)]
payloads = st.sampled_from(["Yes", "No", "yes", "Lakers", "Celtics", "A", "B", "C", "D", "A, C", "C,A", "A B", "AB", "", "Z", "A, A"])
outputs = st.one_of(st.none(), payloads.map(lambda p: f"Reasoning. \\boxed{{{p}}}"), st.text(max_size=20))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(QUESTIONS), outputs), min_size=1, max_size=30))
def test_reward_equals_the_scorer_exam_score_on_every_trial(trials):
    answers = [gold for (gold, _), _ in trials]
    preds = [
        parse_answer(raw, info["question_type"], info["options"], info["choice_type"]) for (_, info), raw in trials
    ]  # what the evaluator stores in the trial's `pred`
    scorer = exam_scores(pa.array(preds, pa.string()), pa.array(answers, pa.string()))
    rewards = [compute_score("oracleproto/x", raw, gold, info) for (gold, info), raw in trials]
    assert rewards == scorer.tolist()
