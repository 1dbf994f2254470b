"""Renderer R: question record + prompt templates → the one user message a model sees.

The eight template keys of paper Table 10 travel with the corpus (parquet schema metadata
under :data:`~oracleproto.schema.TABLE_METADATA_KEY`, entry ``"prompt_templates"``); sources
without them get :data:`DEFAULT_TEMPLATES`. Rendering is a pure function of the record, the
templates and the budgets, so the same inputs always give the same bytes. The renderer's
input type, :class:`PromptQuestion`, has no answer field: the gold answer cannot be rendered.

The prediction cutoff χ = τ − δ is *not* rendered: it is held by the harness and reaches the
model through no channel (the ``{end_time}`` placeholder is the resolution date τ, which the
templates present as "resolves around").

Besides the first message this module owns every harness text of the ReAct loop: the
budget-awareness, reflection and belief tails, the ``[Harness status]`` header and the four
injection directives of Table 13, and the status text carried by tool errors.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from oracleproto.config import ProtocolSwitches
from oracleproto.errors import InputError
from oracleproto.letters import letter
from oracleproto.schema import CHOICE_TYPES, TABLE_METADATA_KEY

TEMPLATE_KEYS = (
    "agent_role",
    "guidance",
    "prompt_template",
    "outcomes_block_rule",
    "yes_no_output_format",
    "binary_named_output_format",
    "multiple_choice_single_output_format",
    "multiple_choice_multi_output_format",
)
# Placeholders ``prompt_template`` may use; anything else (e.g. ``{answer}``) is an error.
PROMPT_FIELDS = ("agent_role", "event", "end_time", "outcomes_block", "output_format", "guidance")

DEFAULT_TEMPLATES: dict[str, str] = {
    "agent_role": "You are a forecasting agent: you judge how real-world events will turn out.",
    "guidance": (
        "Always commit to a forecast from the best evidence you can gather. Do not refuse, do not "
        "say the future cannot be known, and do not use any other answer format."
    ),
    "prompt_template": (
        '{agent_role}\n\nEvent to forecast: "{event}" (it resolves around {end_time}).{outcomes_block}\n\n'
        "Answer format:\n{output_format}\n\n{guidance}"
    ),
    "outcomes_block_rule": (
        "yes_no and binary_named: empty, the two labels appear in the output format. "
        "multiple_choice: a newline, then one line 'L. label' per option in option order; "
        "letters outside A-Z are wrapped in back-ticks."
    ),
    "yes_no_output_format": (
        "Decide whether the event will happen. Only a correct forecast earns credit.\n"
        "End your reply with exactly one of: \\boxed{Yes} or \\boxed{No}"
    ),
    "binary_named_output_format": (
        "Decide which of the two named outcomes will happen. Only a correct forecast earns credit.\n"
        "End your reply with exactly one of: \\boxed{<options[0]>} or \\boxed{<options[1]>}"
    ),
    "multiple_choice_single_output_format": (
        "Exactly ONE listed option is correct. Only that letter earns credit; a wrong letter, or "
        "more than one letter, earns nothing.\n"
        "End your reply with the single letter in a box, for example \\boxed{B}."
    ),
    "multiple_choice_multi_output_format": (
        "ONE OR MORE listed options are correct. Credit needs the exact set: a missing letter or an "
        "extra letter earns nothing.\n"
        "End your reply with every letter you choose, comma-separated, in one box, for example "
        "\\boxed{A} or \\boxed{A, C}."
    ),
}




@dataclass(frozen=True)
class PromptQuestion:
    """What the renderer may see of a question (never the answer)."""

    q_id: str
    question_type: str
    choice_type: str
    event: str
    options: tuple[str, ...]
    end_time: dt.date


# ---------------------------------------------------------------------------------------
# Templates: load, check, hash


def flatten_templates(raw: Mapping[str, Any]) -> dict[str, str]:
    """String values verbatim, anything else as canonical JSON (so the hash is stable)."""
    return {
        str(key): value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
        for key, value in raw.items()
    }


def check_templates(templates: Mapping[str, str]) -> None:
    """All eight keys present and ``prompt_template`` uses only :data:`PROMPT_FIELDS`."""
    missing = [key for key in TEMPLATE_KEYS if key not in templates]
    if missing:
        raise InputError(f"prompt templates lack required key(s) {missing} (paper Table 10 lists eight)")
    try:
        fields = {name for _, name, _, _ in string.Formatter().parse(templates["prompt_template"]) if name is not None}
    except ValueError as exc:
        raise InputError(f"prompt_template is not a valid format string: {exc}") from exc
    unknown = sorted(fields - set(PROMPT_FIELDS))
    if unknown:
        raise InputError(f"prompt_template uses unknown placeholder(s) {unknown}; allowed: {list(PROMPT_FIELDS)}")


def templates_from_metadata(metadata: Mapping[bytes, bytes] | None) -> tuple[dict[str, str], bool]:
    """Templates carried by a table's schema metadata, or the defaults.

    Returns ``(templates, from_corpus)``. A corpus that carries a ``prompt_templates`` entry
    must carry all eight keys; extra keys are kept (they enter the hash).
    """
    raw_meta = (metadata or {}).get(TABLE_METADATA_KEY)
    if raw_meta is None:
        return dict(DEFAULT_TEMPLATES), False
    try:
        meta = json.loads(raw_meta)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"schema metadata {TABLE_METADATA_KEY!r} is not JSON: {exc}") from exc
    raw = meta.get("prompt_templates") if isinstance(meta, dict) else None
    if raw is None:
        return dict(DEFAULT_TEMPLATES), False
    if not isinstance(raw, dict):
        raise InputError("schema metadata 'prompt_templates' must be a JSON object of the eight template keys")
    templates = flatten_templates(raw)
    check_templates(templates)
    return templates, True


def templates_from_schema(schema: pa.Schema) -> tuple[dict[str, str], bool]:
    return templates_from_metadata(schema.metadata)


def prompt_templates_hash(templates: Mapping[str, str]) -> str:
    """sha256 of the canonical ``key=value`` lines, keys sorted."""
    body = "\n".join(f"{key}={templates[key]}" for key in sorted(templates))
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def text_hash16(text: str | None) -> str | None:
    """sha256-16 of a protocol text, None when the protocol is off."""
    return None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


# ---------------------------------------------------------------------------------------
# The first user message


def option_label_letter(index: int) -> str:
    """Letter as shown in the outcomes block: back-ticked outside A..Z so it stays readable."""
    symbol = letter(index)
    return symbol if "A" <= symbol <= "Z" else f"`{symbol}`"


def outcomes_block(options: Sequence[str]) -> str:
    return "\n" + "\n".join(f"{option_label_letter(i)}. {label}" for i, label in enumerate(options))


def output_format_for(question: PromptQuestion, templates: Mapping[str, str]) -> tuple[str, str]:
    """``(outcomes_block, output_format)`` for the question's type and answer mode."""
    qtype, ctype = question.question_type, question.choice_type
    if ctype not in CHOICE_TYPES:
        raise InputError(f"question {question.q_id}: choice_type {ctype!r} is not one of {', '.join(CHOICE_TYPES)}")
    if qtype == "yes_no":
        return "", templates["yes_no_output_format"]
    if qtype == "binary_named":
        if len(question.options) != 2:
            raise InputError(f"question {question.q_id}: binary_named needs exactly 2 options, got {len(question.options)}")
        text = templates["binary_named_output_format"]
        text = text.replace("<options[0]>", question.options[0]).replace("<options[1]>", question.options[1])
        return "", text
    if qtype == "multiple_choice":
        key = "multiple_choice_single_output_format" if ctype == "single" else "multiple_choice_multi_output_format"
        return outcomes_block(question.options), templates[key]
    raise InputError(f"question {question.q_id}: unknown question_type {qtype!r}")


def render_question(question: PromptQuestion, templates: Mapping[str, str]) -> str:
    """The template part of the first message (no runtime tails)."""
    block, output_format = output_format_for(question, templates)
    values = {
        "agent_role": templates["agent_role"],
        "event": question.event,
        "end_time": question.end_time.isoformat(),
        "outcomes_block": block,
        "output_format": output_format,
        "guidance": templates["guidance"],
    }
    try:
        return templates["prompt_template"].format_map(values)
    except (KeyError, IndexError, ValueError) as exc:
        raise InputError(f"prompt_template cannot render question {question.q_id}: {exc!r}") from exc


# ---------------------------------------------------------------------------------------
# Runtime tails appended to the first message (each fingerprinted on its own)

REFLECTION_PROTOCOL = """Method (follow it in order):
1. Break the event into the few concrete facts that decide it.
2. Before searching, plan at least three different angles to look from (status reports, schedules, base rates, expert or market views).
3. After every search, say in one or two sentences what you learned and what is still unknown.
4. Check every decisive fact against two independent sources when you can.
5. Argue the opposite outcome once, seriously, and see whether the evidence survives.
6. Weigh the evidence, state how confident you are, then commit to one answer in the required box.
Searching is cheap relative to a wrong forecast: use the budget when a fact is still open."""

BELIEF_PROTOCOL = """Before the boxed answer, state your probabilities in one block:
<belief>{"probabilities": {"A": 0.7, "B": 0.3}}</belief>
Use every option letter exactly once as a key, each value between 0 and 1. For a single-answer question the values must sum to 1; for a multi-answer question give each option's own probability of being correct. The box still decides the answer."""


def budget_awareness(max_steps: int, max_search_calls: int) -> str:
    search = (
        f"at most {max_search_calls} web_search call(s)"
        if max_search_calls > 0
        else "no web_search calls (web_search is disabled in this run)"
    )
    return (
        f"Budget: you have at most {max_steps} step(s) and {search}. Every reply you send costs one step. "
        "The run stops at your first reply that contains a parseable \\boxed{...} answer. "
        f"At step {max_steps} all tools are removed and a reply without a box scores zero. "
        "Messages that start with [Harness status] come from the evaluation harness and are authoritative."
    )


def reflection_text(protocols: ProtocolSwitches) -> str | None:
    return REFLECTION_PROTOCOL if protocols.reflection else None


def belief_text(protocols: ProtocolSwitches) -> str | None:
    return BELIEF_PROTOCOL if protocols.belief else None


def render_user_prompt(
    question: PromptQuestion,
    templates: Mapping[str, str],
    *,
    max_steps: int,
    max_search_calls: int,
    protocols: ProtocolSwitches = ProtocolSwitches(),
) -> str:
    """The complete first user message: template body, then the enabled tails in a fixed order."""
    parts = [render_question(question, templates)]
    if protocols.budget_awareness:
        parts.append(budget_awareness(max_steps, max_search_calls))
    parts += [text for text in (reflection_text(protocols), belief_text(protocols)) if text is not None]
    return "\n\n".join(parts)


# ---------------------------------------------------------------------------------------
# Harness texts inside the loop (Table 13)


@dataclass(frozen=True)
class LoopState:
    """Counters shown to the model: 1-based step ``k`` of ``max_steps``, searches used."""

    step: int
    max_steps: int
    searches: int
    max_search_calls: int

    @property
    def steps_left(self) -> int:
        return self.max_steps - self.step + 1

    @property
    def searches_left(self) -> int:
        return max(self.max_search_calls - self.searches, 0)

    def counters(self) -> str:
        search = (
            f"web_search {self.searches}/{self.max_search_calls} used ({self.searches_left} left)"
            if self.max_search_calls > 0
            else "web_search disabled"
        )
        return f"step {self.step}/{self.max_steps} ({self.steps_left} remaining) · {search}"


def status_header(state: LoopState) -> str:
    return f"[Harness status] {state.counters()}."


def last_step_directive(state: LoopState) -> str:
    return (
        f"{status_header(state)}\nThis is your final step and the web_search tool has been removed. "
        "Reply now with your final answer in \\boxed{...}; a reply without a parseable box scores zero."
    )


def penultimate_directive(state: LoopState, search_available: bool) -> str:
    if search_available:
        directive = (
            "You may make ONE more web_search now, or commit. The next step removes web_search and "
            "requires your \\boxed{...} answer."
        )
    else:
        directive = "web_search is not available. Give your \\boxed{...} answer in this reply or the next one."
    return f"{status_header(state)}\n{directive}"


def search_budget_spent_directive(state: LoopState) -> str:
    return (
        f"{status_header(state)}\nYou have used all {state.max_search_calls} web_search call(s); the tool is "
        "removed. Continue from the evidence you already have and commit your \\boxed{...} answer in this "
        "reply or the next one."
    )


def continuation_directive(state: LoopState, search_available: bool) -> str:
    more = "search again or " if search_available else ""
    return (
        f"{status_header(state)}\nYour last reply had no parseable \\boxed{{...}} answer. "
        f"Continue your reasoning, {more}commit your \\boxed{{...}} answer now."
    )


def min_search_nudge(state: LoopState, min_searches: int) -> str:
    return (
        f"{status_header(state)}\nThis run asks you to consult at least {min_searches} source(s) with web_search "
        f"before committing; you have used {state.searches}. Search now, then give your \\boxed{{...}} answer."
    )


def final_answer_retry_directive(max_steps: int) -> str:
    """The bail-out retry: one extra, tool-less call after the step cap."""
    return (
        f"[Harness status] all {max_steps} step(s) used; one extra reply is allowed, with no tools.\n"
        "Time to commit. Output your final \\boxed{...} answer now without further searches or tool calls."
    )


def tool_error_content(reason: str, state: LoopState, next_step_strips_search: bool) -> str:
    """Tool-message payload for a rejected tool call: the reason plus live counters.

    Carried inside the tool message because a user message may not sit between an
    assistant tool call and its reply.
    """
    suffix = (
        "The next step removes web_search; commit your \\boxed{...} answer."
        if next_step_strips_search
        else "Output \\boxed{...} once your evidence is sufficient."
    )
    return json.dumps({"error": reason, "status": f"{state.counters()}. {suffix}"}, ensure_ascii=False)
