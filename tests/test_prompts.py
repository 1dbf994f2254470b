import datetime as dt
import json

import pyarrow as pa
import pytest

from oracleproto import prompts
from oracleproto.errors import InputError
from oracleproto.prompts import (
    DEFAULT_TEMPLATES,
    LoopState,
    PromptQuestion,
    ProtocolSwitches,
    prompt_templates_hash,
    render_question,
    render_user_prompt,
    templates_from_metadata,
)

TAU = dt.date(2026, 3, 12)


def question(qtype="multiple_choice", ctype="single", options=("Red", "Green", "Blue"), event="Which colour?"):
    return PromptQuestion("q1", qtype, ctype, event, tuple(options), TAU)


# Templates in the shape the paper's released corpus carries (our own words).
CORPUS_TEMPLATES = {
    "agent_role": "ROLE.",
    "guidance": "GUIDE.",
    "prompt_template": '{agent_role} Predict: "{event} (resolved around {end_time} (GMT+8)).{outcomes_block}"\n{output_format}\n{guidance}',
    "outcomes_block_rule": "documentation only",
    "yes_no_output_format": "\\boxed{Yes} or \\boxed{No}",
    "binary_named_output_format": "\\boxed{<options[0]>} or \\boxed{<options[1]>}",
    "multiple_choice_single_output_format": "one letter",
    "multiple_choice_multi_output_format": "letters",
}


def test_multiple_choice_lists_lettered_options():
    text = render_question(question(), CORPUS_TEMPLATES)
    assert text == (
        'ROLE. Predict: "Which colour? (resolved around 2026-03-12 (GMT+8)).\nA. Red\nB. Green\nC. Blue"\n'
        "one letter\nGUIDE."
    )


def test_multi_answer_uses_multi_format():
    assert render_question(question(ctype="multi"), CORPUS_TEMPLATES).endswith("letters\nGUIDE.")


def test_yes_no_has_no_outcomes_block():
    text = render_question(question("yes_no", options=("Yes", "No"), event="Will it rain?"), CORPUS_TEMPLATES)
    assert "A. Yes" not in text
    assert "\\boxed{Yes} or \\boxed{No}" in text


def test_binary_named_fills_the_two_labels():
    text = render_question(question("binary_named", options=("Lakers", "Celtics")), CORPUS_TEMPLATES)
    assert "\\boxed{Lakers} or \\boxed{Celtics}" in text
    with pytest.raises(InputError, match="exactly 2 options"):
        render_question(question("binary_named", options=("a", "b", "c")), CORPUS_TEMPLATES)


def test_letters_past_z_are_backticked():
    options = [f"opt{i}" for i in range(28)]
    text = render_question(question(options=options), CORPUS_TEMPLATES)
    assert "\nZ. opt25\n`[`. opt26\n`\\`. opt27" in text


def test_unknown_types_are_errors():
    with pytest.raises(InputError, match="unknown question_type"):
        render_question(question("numeric"), CORPUS_TEMPLATES)
    with pytest.raises(InputError, match="choice_type"):
        render_question(question(ctype="some"), CORPUS_TEMPLATES)


def test_event_braces_are_not_format_fields():
    text = render_question(question(event="Will {x} exceed {0}?"), CORPUS_TEMPLATES)
    assert "Will {x} exceed {0}?" in text


def test_template_with_answer_placeholder_is_rejected():
    bad = dict(CORPUS_TEMPLATES, prompt_template="{event} {answer}")
    with pytest.raises(InputError, match="unknown placeholder.*answer"):
        prompts.check_templates(bad)


def test_renderer_input_has_no_answer_field():
    assert "answer" not in PromptQuestion.__dataclass_fields__


def test_default_templates_are_complete_and_render_every_type():
    prompts.check_templates(DEFAULT_TEMPLATES)
    for qtype, ctype, options in [
        ("yes_no", "single", ("Yes", "No")),
        ("binary_named", "single", ("X", "Y")),
        ("multiple_choice", "single", ("a", "b", "c")),
        ("multiple_choice", "multi", ("a", "b", "c")),
    ]:
        text = render_question(question(qtype, ctype, options), DEFAULT_TEMPLATES)
        assert "\\boxed" in text and "2026-03-12" in text


def metadata_with(templates):
    return {b"oracleproto": json.dumps({"schema_version": "1", "prompt_templates": templates}).encode()}


def test_templates_come_from_schema_metadata():
    templates, from_corpus = templates_from_metadata(metadata_with(CORPUS_TEMPLATES))
    assert from_corpus and templates == CORPUS_TEMPLATES
    schema = pa.schema([("id", pa.string())], metadata=metadata_with(CORPUS_TEMPLATES))
    assert prompts.templates_from_schema(schema) == (CORPUS_TEMPLATES, True)


def test_absent_templates_fall_back_to_defaults():
    assert templates_from_metadata(None) == (DEFAULT_TEMPLATES, False)
    assert templates_from_metadata({b"oracleproto": b'{"schema_version": "1"}'}) == (DEFAULT_TEMPLATES, False)


def test_incomplete_corpus_templates_are_an_error_naming_the_keys():
    partial = {k: v for k, v in CORPUS_TEMPLATES.items() if k != "guidance"}
    with pytest.raises(InputError, match="guidance"):
        templates_from_metadata(metadata_with(partial))


def test_non_string_template_values_are_flattened_as_canonical_json():
    templates, _ = templates_from_metadata(metadata_with(dict(CORPUS_TEMPLATES, extra={"b": 1, "a": [2]})))
    assert templates["extra"] == '{"a": [2], "b": 1}'


def test_hash_is_canonical_and_sensitive():
    reordered = dict(reversed(list(CORPUS_TEMPLATES.items())))
    assert prompt_templates_hash(reordered) == prompt_templates_hash(CORPUS_TEMPLATES)
    changed = dict(CORPUS_TEMPLATES, guidance="GUIDE!")
    assert prompt_templates_hash(changed) != prompt_templates_hash(CORPUS_TEMPLATES)
    assert len(prompt_templates_hash(CORPUS_TEMPLATES)) == 64


def test_tails_are_appended_in_fixed_order_and_can_be_switched_off():
    q = question()
    full = render_user_prompt(q, CORPUS_TEMPLATES, max_steps=6, max_search_calls=4,
                              protocols=ProtocolSwitches(belief=True))
    base = render_question(q, CORPUS_TEMPLATES)
    assert full.startswith(base)
    i_budget = full.index("at most 6 step(s) and at most 4 web_search")
    i_reflect = full.index(prompts.REFLECTION_PROTOCOL)
    i_belief = full.index(prompts.BELIEF_PROTOCOL)
    assert i_budget < i_reflect < i_belief
    bare = render_user_prompt(q, CORPUS_TEMPLATES, max_steps=6, max_search_calls=4,
                              protocols=ProtocolSwitches(budget_awareness=False, reflection=False))
    assert bare == base


def test_budget_awareness_mentions_disabled_search():
    assert "web_search is disabled" in prompts.budget_awareness(3, 0)


def test_rendering_is_deterministic():
    q = question()
    assert render_user_prompt(q, DEFAULT_TEMPLATES, max_steps=6, max_search_calls=4) == render_user_prompt(
        q, DEFAULT_TEMPLATES, max_steps=6, max_search_calls=4
    )


def test_status_header_counters():
    state = LoopState(step=5, max_steps=6, searches=4, max_search_calls=4)
    assert prompts.status_header(state) == "[Harness status] step 5/6 (2 remaining) · web_search 4/4 used (0 left)."
    off = LoopState(step=1, max_steps=6, searches=0, max_search_calls=0)
    assert "web_search disabled" in prompts.status_header(off)


def test_injection_texts_start_with_the_header():
    state = LoopState(step=6, max_steps=6, searches=1, max_search_calls=4)
    header = prompts.status_header(state)
    for text in (
        prompts.last_step_directive(state),
        prompts.penultimate_directive(state, True),
        prompts.penultimate_directive(state, False),
        prompts.search_budget_spent_directive(state),
        prompts.continuation_directive(state, True),
    ):
        assert text.startswith(header + "\n")
    assert "ONE more web_search" in prompts.penultimate_directive(state, True)
    assert "not available" in prompts.penultimate_directive(state, False)


def test_tool_error_content_is_json_with_status():
    state = LoopState(step=2, max_steps=6, searches=4, max_search_calls=4)
    payload = json.loads(prompts.tool_error_content("search budget exceeded", state, True))
    assert payload["error"] == "search budget exceeded"
    assert payload["status"].startswith("step 2/6 (5 remaining) · web_search 4/4 used (0 left).")
    assert "removes web_search" in payload["status"]


def test_protocol_hashes():
    assert prompts.text_hash16(None) is None
    assert len(prompts.text_hash16(prompts.REFLECTION_PROTOCOL)) == 16
