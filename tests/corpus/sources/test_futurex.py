"""The FutureX raw-shape parser: round trips with the renderer, survives the whitespace of real
prompts, and every defect becomes a parse error (never a crash, never a silently wrong row)."""

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oracleproto.corpus.sources.futurex import (
    LETTERS_OUT_OF_ORDER,
    REPEATED_MARK,
    STRAY_LINE,
    UNCLOSED_BLOCK,
    _slice_strings,
    parse_futurex,
    render_prompt,
)
from tests.corpus.sources.helpers import futurex_row as _row

FIELDS = ["id", "question_type", "event", "options", "answer", "end_time", "level", "parse_error"]


def _parse(rows):
    return parse_futurex(pa.Table.from_pylist(rows)).select(FIELDS).to_pylist()


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


@pytest.mark.parametrize(
    "before, after",
    [
        ('Cut"\nIMPORTANT', 'Cut"\n\nIMPORTANT'),  # a blank line before IMPORTANT
        ('Cut"\nIMPORTANT', 'Cut"   \nIMPORTANT'),  # trailing spaces after the quote
        ('Cut"\nIMPORTANT', 'Cut  "\nIMPORTANT'),  # spaces before the quote
        ("\n", "\r\n"),  # CRLF line ends
        ("C.  the outcome be", "C.\tthe outcome be"),  # a tab after the letter
        ("\nB.", "\n\n  \nB."),  # blank lines between options
    ],
)
def test_real_whitespace_variations_keep_the_labels(before, after):
    row = _row(0, "Which cut?", ["Hold", "Hike", "Cut"], "multiple_choice", "C")
    assert before in row["prompt"]
    varied = {**row, "prompt": row["prompt"].replace(before, after)}
    (parsed,) = _parse([varied])
    assert parsed["options"] == ["Hold", "Hike", "Cut"]
    assert (parsed["answer"], parsed["parse_error"]) == ("C", None)


def test_defects_become_parse_errors():
    good = _row(0, "Which?", ["a", "b", "c"], "multiple_choice", "A")
    rows = [
        {**good, "id": "no-block", "prompt": "nothing here"},
        {**good, "id": "scalar-gt", "ground_truth": "5.25%"},
        {**good, "id": "empty-gt", "ground_truth": "[]"},
        {**good, "id": "gt-out-of-range", "ground_truth": "['D']"},
        {**good, "id": "yes-no-gt-on-options", "ground_truth": "['Yes']"},
        {**good, "id": "skipped-letter", "prompt": good["prompt"].replace("B.  the outcome be b\n", "")},
        {**good, "id": "unclosed", "prompt": good["prompt"].replace('c"\nIMPORTANT', "c\nIMPORTANT")},
        # A label that runs onto a second line: which line is the label is not certain.
        {**good, "id": "two-line-label", "prompt": good["prompt"].replace("be b\n", "be b\ncontinued\n")},
        {**good, "id": "no-instructions", "prompt": good["prompt"].split('"\nIMPORTANT')[0]},
    ]
    parsed = _parse(rows)
    assert all(r["parse_error"] for r in parsed), parsed
    assert [r["parse_error"] for r in parsed[-4:]] == [LETTERS_OUT_OF_ORDER, UNCLOSED_BLOCK, STRAY_LINE, UNCLOSED_BLOCK]


def test_field_types_are_judged_per_row():
    good = _row(0, "Which?", ["a", "b", "c"], "multiple_choice", "A")
    table = pa.Table.from_pylist([good, {**good, "level": None}])
    table = table.set_column(table.schema.get_field_index("level"), "level", pa.array(["2", "two"]))
    parsed = parse_futurex(table).select(FIELDS).to_pylist()
    assert [r["level"] for r in parsed] == [2, None]
    assert [r["parse_error"] for r in parsed] == [None, "level is not an integer (two)"]


# --------------------------------------------------------------------------------- layouts
LAYOUTS = {
    "string": lambda a: a,
    "large_string": lambda a: a.cast(pa.large_string()),
    "string_view": lambda a: a.cast(pa.string_view()),
    "dictionary": lambda a: a.dictionary_encode(),
    "sliced": lambda a: pa.concat_arrays([pa.array(["pad"] * 3), a]).slice(3),
    "chunked": lambda a: pa.chunked_array([a.slice(0, 1), a.slice(1)]),
}


def _in_layout(table: pa.Table, layout: str) -> pa.Table:
    columns = [LAYOUTS[layout](c.combine_chunks()) if pa.types.is_string(c.type) else c for c in table.columns]
    return pa.Table.from_arrays(columns, names=table.column_names)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_every_string_layout_parses_the_same(layout):
    rows = [
        _row(0, "Will X?", ["Yes", "No"], "yes_no", "A"),
        _row(1, "Wer gewinnt — Ä oder Ö?", ["Ä", "Ö", "Ü"], "multiple_choice", "B, C"),
        _row(2, "Which?", [f"o{i}" for i in range(12)], "multiple_choice", "L"),
    ]
    plain = pa.Table.from_pylist(rows)
    expected = parse_futurex(plain).drop(["original"])
    assert parse_futurex(_in_layout(plain, layout)).drop(["original"]).equals(expected)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_the_slicer_reads_every_layout(layout):
    text = pa.array(["abcdefghijklmnopq", "ÄÖÜ-long-enough-text", "xy"])
    start, length = [2, 2, 0], [13, 2, 2]  # bytes: "Ä" is two
    values = LAYOUTS[layout](text)
    assert _slice_strings(values, start, length).to_pylist() == ["cdefghijklmno", "Ö", "xy"]


# --------------------------------------------------------------------------------- properties
_LABEL_TEXT = st.text(st.characters(categories=("L", "N", "P", "S"), include_characters=" "), min_size=1, max_size=12)
_LABEL = _LABEL_TEXT.map(str.strip).filter(bool)
_EVENT = _LABEL_TEXT.map(str.strip).filter(lambda e: e and "(resolved around" not in e)


@st.composite
def _question(draw):
    qtype = draw(st.sampled_from(["yes_no", "binary_named", "multiple_choice"]))
    if qtype == "yes_no":
        options = ["Yes", "No"]
    else:
        options = draw(st.lists(_LABEL, min_size=2 if qtype == "binary_named" else 3, max_size=2 if qtype == "binary_named" else 8, unique_by=str.casefold))
    chosen = draw(st.lists(st.integers(0, len(options) - 1), min_size=1, max_size=1 if qtype != "multiple_choice" else len(options), unique=True))
    answer = ", ".join(chr(65 + i) for i in sorted(chosen))
    return draw(_EVENT), options, qtype, answer


@st.composite
def _whitespace(draw):
    """How a real prompt's whitespace may differ from the rendered one."""
    spaces = st.sampled_from(["", " ", "  ", "\t", " \t "])
    return {
        "newline": draw(st.sampled_from(["\n", "\r\n"])),
        "gap": draw(st.sampled_from([".  ", ". ", ".\t", ".\t ", ".    "])),
        "trailing": draw(st.lists(spaces, min_size=40, max_size=40)),
        "blank_lines": draw(st.lists(st.lists(spaces, max_size=2), min_size=40, max_size=40)),
        "before_quote": draw(spaces),
    }


def _perturbed(prompt: str, ws: dict) -> str:
    """``prompt`` with its block's whitespace varied: gaps after letters, trailing spaces,
    blank lines after any block line, spaces before the closing quote, CRLF."""
    lines = prompt.split("\n")
    block_end = next(i for i, line in enumerate(lines) if line.startswith("IMPORTANT"))
    out = []
    for i, line in enumerate(lines):
        if 0 < i < block_end:
            line = line.replace(".  the outcome be", ws["gap"] + "the outcome be", 1)
        if i == block_end - 1:
            line = line[:-1] + ws["before_quote"] + '"'
        if i < block_end:
            out.append(line + ws["trailing"][i % 40])
            out.extend(ws["blank_lines"][i % 40])
        else:
            out.append(line)
    return ws["newline"].join(out)


@settings(max_examples=300, deadline=None)
@given(question=_question(), ws=_whitespace())
def test_whitespace_never_changes_the_row(question, ws):
    event, options, qtype, answer = question
    row = _row(0, event, options, qtype, answer)
    varied = {**row, "prompt": _perturbed(row["prompt"], ws)}
    parsed, parsed_varied = _parse([row, varied])
    assert parsed["parse_error"] is None, parsed
    assert parsed["options"] == options and parsed["answer"] == answer and parsed["event"] == event
    assert parsed_varied == parsed


@settings(max_examples=200, deadline=None)
@given(prompt=st.text(max_size=300), gt=st.text(max_size=40), end=st.text(max_size=12))
def test_parser_never_crashes_on_any_text(prompt, gt, end):
    table = pa.Table.from_pylist([{"id": "x", "prompt": prompt, "ground_truth": gt, "end_time": end, "level": 1}])
    (row,) = parse_futurex(table).drop(["original"]).to_pylist()
    # Either every field the audit needs is there, or the row says why not.
    assert row["parse_error"] is not None or (row["event"] is not None and row["answer"] is not None)


@settings(max_examples=100, deadline=None)
@given(question=_question(), cut=st.integers(0, 400))
def test_a_truncated_prompt_is_never_read_as_a_question(question, cut):
    """Anything the parser cannot read with certainty is unparseable: a prompt cut short
    (as a bad export leaves it) either still holds its whole block or is flagged."""
    event, options, qtype, answer = question
    row = _row(0, event, options, qtype, answer)
    block_end = row["prompt"].index('"\nIMPORTANT') + 1
    truncated = {**row, "prompt": row["prompt"][: min(cut, block_end - 1)]}
    (parsed,) = _parse([truncated])
    assert parsed["parse_error"] is not None


def test_render_prompt_is_what_the_perturbation_starts_from():
    prompt = render_prompt("E?", ["a", "b", "c"], "2025-01-02", "multiple_choice")
    assert '\nA.  the outcome be a\nB.  the outcome be b\nC.  the outcome be c"\nIMPORTANT' in prompt


def test_an_event_that_says_resolved_around_is_not_cut_short():
    """The event ends at " (resolved around": an event line holding it twice cannot be split
    with certainty (it was read up to the first, dropping the rest of the event)."""
    row = _row(0, '"Quoted" (resolved around soon) Will X happen?', ["a", "b"], "binary_named", "A")
    (parsed,) = _parse([row])
    assert parsed["parse_error"] == REPEATED_MARK


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(st.characters(max_codepoint=127), max_size=40), min_size=1, max_size=12), st.integers(0, 3), st.data())
def test_the_slicer_matches_python_slicing(texts, skip, data):
    """Every (start, length), at the data buffer's very end too (the inline bytes of the
    views are read as 32-bit words there), on an array that starts at an offset."""
    array = pa.array(["pad"] * skip + texts, pa.string()).slice(skip)
    start = [data.draw(st.integers(0, len(t))) for t in texts]
    length = [data.draw(st.integers(-2, len(t) - s)) for t, s in zip(texts, start)]
    expected = [t[s : s + max(k, 0)] for t, s, k in zip(texts, start, length)]
    assert _slice_strings(array, start, length).to_pylist() == expected
