import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oracleproto.letters import format_answer, letter, letters
from oracleproto.parse import last_boxed, parse_answer, parse_belief

YES_NO = ("Yes", "No")
MC4 = ("alpha", "beta", "gamma", "delta")


def box(payload: str) -> str:
    return "\\boxed{" + payload + "}"


# --- structure -------------------------------------------------------------------------


@pytest.mark.parametrize("text", [None, "", "no box here", "\\boxed{}", "\\boxed{   }", "\\boxed{A"])
def test_missing_or_empty_box_is_bottom(text):
    assert parse_answer(text, "multiple_choice", MC4, "multi") is None


def test_last_box_wins():
    assert parse_answer(f"first {box('A')} then {box('C')}", "multiple_choice", MC4, "single") == "C"


def test_braces_do_not_nest():
    assert last_boxed(box("\\text{Yes}")) == "\\text{Yes"
    assert parse_answer(box("\\text{Yes}"), "yes_no", YES_NO) is None


# --- yes_no ------------------------------------------------------------------------------


@pytest.mark.parametrize(("payload", "expected"), [("Yes", "A"), ("no", "B"), (" YES ", "A"), ("NO", "B")])
def test_yes_no_words(payload, expected):
    assert parse_answer(box(payload), "yes_no", YES_NO, "single") == expected


@pytest.mark.parametrize("payload", ["Yes.", "A", "YES!", "yes no", "maybe"])
def test_yes_no_anything_else_is_bottom(payload):
    assert parse_answer(box(payload), "yes_no", YES_NO, "single") is None


# --- binary_named -----------------------------------------------------------------------


def test_binary_named_matches_labels_case_insensitively():
    options = ("Real Madrid ", "Barcelona")
    assert parse_answer(box("real madrid"), "binary_named", options, "single") == "A"
    assert parse_answer(box("BARCELONA"), "binary_named", options, "single") == "B"


@pytest.mark.parametrize("payload", ["A", "Barca", "Real"])
def test_binary_named_letters_and_partial_names_fail(payload):
    assert parse_answer(box(payload), "binary_named", ("Real Madrid", "Barcelona"), "single") is None


# --- multiple_choice --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("payload", "expected"),
    [("A", "A"), ("C, A", "A, C"), ("A,C", "A, C"), ("B D", "B, D"), ("A, A", "A"), (" D ,B ", "B, D")],
)
def test_multi_choice_letter_sets(payload, expected):
    assert parse_answer(box(payload), "multiple_choice", MC4, "multi") == expected


@pytest.mark.parametrize("payload", ["AB", "A.", "(A)", "A and B", "E", "a", ",", "A, E"])
def test_multi_choice_structural_defects(payload):
    assert parse_answer(box(payload), "multiple_choice", MC4, "multi") is None


def test_single_answer_cardinality_is_enforced():
    # the paper (Algorithm 2, §3.3) marks structural violations invalid; the reference code did not
    assert parse_answer(box("A, C"), "multiple_choice", MC4, "single") is None
    assert parse_answer(box("A, A"), "multiple_choice", MC4, "single") == "A"


def test_letters_beyond_z():
    options = [f"o{i}" for i in range(40)]
    assert parse_answer(box("[, a"), "multiple_choice", options, "multi") == "[, a"
    # lowercase "a" is index 32: out of range with fewer options
    assert parse_answer(box("a"), "multiple_choice", options[:30], "single") is None


def test_unknown_question_type_is_bottom():
    assert parse_answer(box("A"), "numeric", MC4, "single") is None


# --- properties ---------------------------------------------------------------------------

option_counts = st.integers(min_value=2, max_value=40)


@st.composite
def option_subsets(draw):
    k = draw(option_counts)
    chosen = draw(st.sets(st.integers(min_value=0, max_value=k - 1), min_size=1))
    return k, sorted(chosen)


@given(option_subsets(), st.sampled_from([", ", ",", " ", " , "]), st.randoms())
@settings(max_examples=200)
def test_any_valid_letter_set_round_trips(subset, separator, rnd):
    k, chosen = subset
    symbols = [letter(i) for i in chosen]
    rnd.shuffle(symbols)
    text = "reasoning... " + box(separator.join(symbols))
    options = [f"opt{i}" for i in range(k)]
    assert parse_answer(text, "multiple_choice", options, "multi") == format_answer(chosen)
    single = parse_answer(text, "multiple_choice", options, "single")
    assert single == (format_answer(chosen) if len(chosen) == 1 else None)


@given(st.text(max_size=60), option_counts, st.sampled_from(["yes_no", "binary_named", "multiple_choice"]),
       st.sampled_from(["single", "multi"]))
@settings(max_examples=300)
def test_never_raises_and_output_is_canonical_and_in_range(payload, k, qtype, ctype):
    options = list(YES_NO) if qtype == "yes_no" else [f"opt{i}" for i in range(2 if qtype == "binary_named" else k)]
    result = parse_answer(box(payload), qtype, options, ctype)
    if result is not None:
        tokens = result.split(", ")
        assert tokens == sorted(set(tokens), key=lambda s: ord(s))
        assert all(0 <= ord(t) - 65 < len(options) for t in tokens)
        if ctype == "single" or qtype != "multiple_choice":
            assert len(tokens) == 1


@given(st.text(max_size=80).filter(lambda s: "\\boxed{" not in s))
def test_text_without_a_box_is_bottom(text):
    assert parse_answer(text, "multiple_choice", MC4, "multi") is None


@given(st.text(alphabet=st.characters(blacklist_characters="}"), max_size=20), st.sampled_from(["A", "B, C"]))
def test_a_later_box_overrides_any_earlier_payload(junk, final):
    text = box(junk) + " after reflection " + box(final)
    assert parse_answer(text, "multiple_choice", MC4, "multi") == final


# --- belief -------------------------------------------------------------------------------


def belief(probs) -> str:
    return "<belief>" + json.dumps({"probabilities": probs}) + "</belief> " + box("A")


def test_belief_vector_in_option_order():
    assert parse_belief(belief({"B": 0.25, "A": 0.75}), YES_NO, "single") == [0.75, 0.25]


def test_last_belief_block_wins():
    text = belief({"A": 0.1, "B": 0.9}) + belief({"A": 0.6, "B": 0.4})
    assert parse_belief(text, YES_NO, "single") == [0.6, 0.4]


@pytest.mark.parametrize(
    "probs",
    [
        {"A": 0.5},  # missing letter
        {"A": 0.5, "B": 0.3, "C": 0.2},  # extra letter
        {"A": 0.7, "B": 0.7},  # single must sum to 1
        {"A": True, "B": 0.0},  # booleans are not numbers here
        {"A": 1.5, "B": -0.5},
        {"A": "0.5", "B": "0.5"},
    ],
)
def test_bad_beliefs_are_none(probs):
    assert parse_belief(belief(probs), YES_NO, "single") is None


def test_multi_beliefs_need_not_sum_to_one():
    assert parse_belief(belief({"A": 0.9, "B": 0.8, "C": 0.1}), ("x", "y", "z"), "multi") == [0.9, 0.8, 0.1]


@pytest.mark.parametrize("text", [None, "", "no block", "<belief>not json</belief>", "<belief>[1, 2]</belief>"])
def test_absent_or_malformed_belief(text):
    assert parse_belief(text, YES_NO, "single") is None


def test_letters_helper_matches_belief_keys():
    assert letters(3) == ["A", "B", "C"]
