"""The FutureX raw-shape parser: round trips with the renderer, and every defect becomes a
parse error (never a crash, never a silently wrong row)."""

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from oracleproto.corpus.sources.futurex import (
    ground_truth_literal,
    parse_futurex,
    render_prompt,
)


def _row(i, event, options, qtype, answer, end="2025-01-02", **extra):
    return {
        "id": f"{i:024x}",
        "prompt": render_prompt(event, options, end, qtype),
        "ground_truth": ground_truth_literal(qtype, options, answer),
        "end_time": end,
        "level": 1,
        **extra,
    }


def _parse(rows):
    return parse_futurex(pa.Table.from_pylist(rows)).drop(["original"]).to_pylist()


def test_round_trip_of_all_strata():
    rows = [
        _row(0, "Will X happen by June?", ["Yes", "No"], "yes_no", "B"),
        _row(1, "Who wins the final (2025)?", ["Team A", "Team B"], "binary_named", "A"),
        _row(2, "Which rate?", ["< 1%", "1-2%", "> 2%"], "multiple_choice", "C"),
        _row(3, "Which films win?", ["P", "Q", "R", "S"], "multiple_choice", "B, D"),
    ]
    parsed = _parse(rows)
    assert [r["event"] for r in parsed] == ["Will X happen by June?", "Who wins the final (2025)?", "Which rate?", "Which films win?"]
    assert [r["options"] for r in parsed] == [["Yes", "No"], ["Team A", "Team B"], ["< 1%", "1-2%", "> 2%"], ["P", "Q", "R", "S"]]
    assert [r["answer"] for r in parsed] == ["B", "A", "C", "B, D"]
    assert [r["question_type"] for r in parsed] == ["yes_no", None, None, None]  # the audit infers the rest
    assert all(r["parse_error"] is None for r in parsed)


def test_more_than_26_options_use_the_released_letters():
    options = [f"opt{i}" for i in range(30)]
    parsed = _parse([_row(0, "Many?", options, "multiple_choice", "[, \\")])
    assert parsed[0]["options"] == options
    assert parsed[0]["answer"] == "[, \\"


def test_defects_become_parse_errors():
    good = _row(0, "Which?", ["a", "b", "c"], "multiple_choice", "A")
    rows = [
        {**good, "id": "no-block", "prompt": "nothing here"},
        {**good, "id": "scalar-gt", "ground_truth": "5.25%"},
        {**good, "id": "empty-gt", "ground_truth": "[]"},
        {**good, "id": "gt-out-of-range", "ground_truth": "['D']"},
        {**good, "id": "yes-no-gt-on-options", "ground_truth": "['Yes']"},
        {**good, "id": "skipped-letter", "prompt": good["prompt"].replace("B.  the outcome be b\n", "")},
    ]
    parsed = _parse(rows)
    assert all(r["parse_error"] for r in parsed), parsed
    # A missing option line renumbers nothing: letters A, C are not consecutive.
    assert parsed[-1]["parse_error"] == "option letters are not consecutive from A"


@settings(max_examples=200, deadline=None)
@given(prompt=st.text(max_size=300), gt=st.text(max_size=40), end=st.text(max_size=12))
def test_parser_never_crashes_on_any_text(prompt, gt, end):
    table = pa.Table.from_pylist([{"id": "x", "prompt": prompt, "ground_truth": gt, "end_time": end, "level": 1}])
    (row,) = parse_futurex(table).drop(["original"]).to_pylist()
    # Either every field the audit needs is there, or the row says why not.
    assert row["parse_error"] is not None or (row["event"] is not None and row["answer"] is not None)
