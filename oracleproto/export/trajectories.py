"""Trajectory exports: SFT traces and RL prompts in the formats trainers read.

One canonical trace per trial (the trial table's ``messages`` JSON) is rendered twice:

* the TRL conversational format — a ``messages`` column of typed structs (role, content,
  tool_calls with ``function.arguments`` as a JSON value, so ``datasets`` returns a dict as
  TRL expects; tool_call_id; name) plus a ``tools`` column of JSON tool schemas;
* the OpenAI chat fine-tuning JSONL — the same rows, with ``arguments`` as a JSON string
  and tool results linked by ``tool_call_id``.

RL rows follow the verl parquet schema (data_source, prompt, ability, reward_model,
extra_info) and carry flat ``answer``/``question_type``/``options``/``choice_type`` columns
that reach TRL GRPO reward functions as keyword arguments (:mod:`oracleproto.export.rewards`).

Every struct has the same keys in every row (parquet needs one schema); a missing value is
null, never a missing key.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from oracleproto.admission import prediction_cutoff, split_name
from oracleproto.config import (
    BASELINE_PREFIX,
    Export,
    Params,
    PromptBudgets,
    ProtocolSwitches,
    SftMode,
    search_offered,
)
from oracleproto.errors import InputError
from oracleproto.exam import exam_scores
from oracleproto.io import (
    read_parquet,
    table_metadata,
    write_json,
    write_parquet,
    write_text,
)
from oracleproto.layout import (
    EXPORT_SUMMARY,
    SPLITS,
    rl_file,
    sft_file,
    sft_openai_file,
)
from oracleproto.prompts import (
    PromptQuestion,
    render_user_prompt,
    templates_from_schema,
)
from oracleproto.schema import RL_SCHEMA, SFT_SCHEMA
from oracleproto.tools import WEB_SEARCH, WEB_SEARCH_TOOL

SFT_MODES = get_args(SftMode)
ROLES = ("system", "user", "assistant", "tool")
ABILITY = "forecasting"
REWARD_STYLE = "rule"

SFT_SORT = ("model", "q_id", "trial")
RL_SORT = ("cutoff", "q_id")

# Trial columns the SFT export reads.
SFT_TRIAL_COLUMNS = (
    "model", "q_id", "trial", "question_type", "choice_type", "answer", "pred", "error",
    "cutoff", "prediction_cutoff", "end_time", "messages", "tools", "search_calls",
)  # fmt: skip




# ---------------------------------------------------------------------------------------
# Arrow helpers


def _storage_type(data_type: pa.DataType) -> pa.DataType:
    """``data_type`` with every extension type (the JSON columns) replaced by its storage."""
    if isinstance(data_type, pa.BaseExtensionType):
        return data_type.storage_type
    if pa.types.is_list(data_type):
        return pa.list_(_storage_type(data_type.value_type))
    if pa.types.is_struct(data_type):
        return pa.struct([pa.field(f.name, _storage_type(f.type), f.nullable) for f in data_type])
    return data_type


def table_from_rows(rows: Sequence[Mapping[str, Any]], schema: pa.Schema) -> pa.Table:
    """Arrow table of python rows: built on the storage types (pyarrow cannot convert
    python values to an extension type directly), then cast to ``schema``."""
    storage = pa.schema([pa.field(f.name, _storage_type(f.type), f.nullable) for f in schema])
    return pa.Table.from_pylist(list(rows), schema=storage).cast(schema)


def json_canonical(value: Any) -> str:
    """Compact JSON with sorted keys: the same value always gives the same text."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


# ---------------------------------------------------------------------------------------
# SFT: which trials


@dataclass(frozen=True)
class SftSelection:
    """The chosen trials (the trial columns plus ``exam_score``) and what was left out."""

    trials: pa.Table
    counts: dict[str, int]


def select_sft_trials(trials: pa.Table, mode: str, models: Sequence[str] | None = None) -> SftSelection:
    """Trials to train on, scored exactly as the scorer scores them (exam score, Eq. 18).

    Only trials that ran without error, parsed, and kept their trace are candidates.
    ``correct``: every candidate with exam score 1. ``all``: every candidate (the score is a
    column, for weighting or filtering). ``best_of_n``: per (model, question) the candidate
    with the highest score, ties to the lowest trial number, kept if the score is above 0.
    ``models`` limits the export to those model labels; None means every model except the
    baseline forecasters (labels ``baseline:…``), whose one-line boxed guesses are no
    trajectories to learn from.
    """
    if mode not in SFT_MODES:
        raise InputError(f"export sft mode {mode!r} is not one of {', '.join(SFT_MODES)}")
    missing = [name for name in SFT_TRIAL_COLUMNS if name not in trials.column_names]
    if missing:
        raise InputError(f"trial table lacks column(s) {', '.join(missing)} needed for the SFT export")
    counts = {"trials": trials.num_rows}
    if models is None:
        trials = trials.filter(pc.invert(pc.starts_with(trials["model"], BASELINE_PREFIX)))
    else:
        trials = trials.filter(pc.is_in(trials["model"], value_set=pa.array(list(models), pa.string())))
    counts["trials_of_models"] = trials.num_rows
    ran = pc.and_(pc.is_null(trials["error"]), pc.is_valid(trials["pred"]))
    candidates = trials.filter(pc.and_(ran, pc.is_valid(trials["messages"])))
    counts["parsed_with_trace"] = candidates.num_rows
    scores = exam_scores(candidates["pred"], candidates["answer"])
    candidates = candidates.append_column("exam_score", pa.array(scores, pa.float64()))
    if mode == "correct":
        chosen = candidates.filter(pa.array(scores == 1.0))
    elif mode == "all":
        chosen = candidates
    else:
        chosen = _best_of_n(candidates)
    counts["selected"] = chosen.num_rows
    return SftSelection(chosen.sort_by([(name, "ascending") for name in SFT_SORT]), counts)


def _best_of_n(candidates: pa.Table) -> pa.Table:
    ranked = candidates.sort_by(
        [("model", "ascending"), ("q_id", "ascending"), ("exam_score", "descending"), ("trial", "ascending")]
    )
    model = ranked["model"].to_numpy(zero_copy_only=False)
    q_id = ranked["q_id"].to_numpy(zero_copy_only=False)
    first = np.ones(ranked.num_rows, dtype=bool)
    first[1:] = (model[1:] != model[:-1]) | (q_id[1:] != q_id[:-1])
    positive = ranked["exam_score"].to_numpy() > 0
    return ranked.filter(pa.array(first & positive))


# ---------------------------------------------------------------------------------------
# SFT: one canonical trace → typed messages


def _load_json(text: str | None, where: str, field: str) -> Any:
    if text is None:
        raise InputError(f"{where}: {field} is null")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}: {field} is not JSON ({exc.msg} at char {exc.pos})") from exc


class UnusableTrace(InputError):
    """A well-formed trace that is no SFT target because of what the model did: a tool call
    whose arguments are not a JSON object (TRL needs a dict), or no final answer turn at
    the end. Such a trial is skipped and counted under ``reason``, not a table error."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


def _tool_call(call: Any, where: str) -> dict[str, Any]:
    if not isinstance(call, dict) or not isinstance(call.get("function"), dict):
        raise InputError(f"{where}: a tool call is not an object with a 'function' object")
    function = call["function"]
    if not isinstance(function.get("name"), str) or not isinstance(call.get("id"), str):
        raise InputError(f"{where}: a tool call lacks a string 'id' or 'function.name'")
    arguments = function.get("arguments")
    return {
        "id": call["id"],
        "type": call.get("type") or "function",
        "function": {"name": function["name"], "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments)},
    }


# ---------------------------------------------------------------------------------------
# SFT: only allowed behaviour — tool calls carry exactly the offered schema's arguments


def _was_refused(result: Mapping[str, Any] | None) -> str | None:
    """The harness's refusal reason when a tool result is its rejection of the call."""
    if result is None or result.get("content") is None:
        return "no tool result"
    try:
        payload = json.loads(result["content"])
    except json.JSONDecodeError:
        return None
    if isinstance(payload, dict) and "error" in payload and "status" in payload and "results" not in payload:
        return str(payload["error"])
    return None


def _argument_violations(call: Mapping[str, Any]) -> tuple[str | None, list[str]]:
    """(the query the call asks for, or None; how its arguments break the offered schema)."""
    function = call["function"]
    if function["name"] != WEB_SEARCH_TOOL["function"]["name"]:
        return None, [f"unknown tool {function['name']!r}"]
    try:
        arguments = json.loads(function["arguments"] or "{}")
    except json.JSONDecodeError:
        return None, ["arguments are not JSON"]
    if not isinstance(arguments, dict):
        return None, ["arguments are not a JSON object"]
    violations = [f"argument {key!r} is not in the schema" for key in sorted(set(arguments) - {"query"})]
    query = arguments.get("query")
    if not isinstance(query, str) or not query.strip():
        return None, [*violations, "no non-empty string 'query'"]
    return query.strip(), violations


def canonical_tool_calls(messages: list[dict[str, Any]], search_calls: Sequence[Mapping[str, Any]] | None, where: str) -> tuple[list[str], list[str]]:
    """Rewrite every tool call's arguments to exactly ``{"query": q}``: q is the query the
    harness ran (``search_calls``, in order), or the one a refused call asked for. Returns
    (the raw arguments, in call order; the schema violations). A call with no usable query
    or a tool that was never offered leaves no allowed form: :class:`UnusableTrace`."""
    ran = [str(c.get("query")) for c in (search_calls or []) if isinstance(c, dict)]
    results = {m["tool_call_id"]: m for m in messages if m["role"] == "tool"}
    raw, violations = [], []
    for message in messages:
        for call in message["tool_calls"] or []:
            raw.append(call["function"]["arguments"])
            asked, problems = _argument_violations(call)
            refusal = _was_refused(results.get(call["id"]))
            if refusal is None and ran:
                query = ran.pop(0)
            elif asked is not None:
                query = asked
                problems.append(f"refused by the harness: {refusal}")
            else:
                reason = "unknown_tool" if problems[0].startswith("unknown tool") else "bad_tool_arguments"
                raise UnusableTrace(f"{where}: tool call {call['id']}: {'; '.join(problems)}", reason)
            violations += [f"{call['id']}: {problem}" for problem in problems]
            call["function"]["arguments"] = json.dumps({"query": query}, ensure_ascii=False)
    return raw, violations


def trace_messages(trace: Any, where: str) -> list[dict[str, Any]]:
    """The canonical trace as typed messages with all five keys; tool results get the
    ``name`` of the call they answer (TRL reads it) when the trace left it out."""
    if not isinstance(trace, list) or not trace:
        raise InputError(f"{where}: messages is not a non-empty JSON list")
    call_names: dict[str, str] = {}
    out = []
    for position, message in enumerate(trace):
        at = f"{where}, message {position}"
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            raise InputError(f"{at}: role must be one of {', '.join(ROLES)}")
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            raise InputError(f"{at}: content must be a string or null")
        calls = [_tool_call(call, at) for call in message.get("tool_calls") or []]
        call_names.update((call["id"], call["function"]["name"]) for call in calls)
        tool_call_id = message.get("tool_call_id")
        name = message.get("name")
        if message["role"] == "tool":
            if tool_call_id not in call_names:
                raise InputError(f"{at}: tool result answers no earlier tool call (tool_call_id {tool_call_id!r})")
            name = name or call_names[tool_call_id]
        out.append(
            {
                "role": message["role"],
                "content": content,
                "tool_calls": calls or None,
                "tool_call_id": tool_call_id,
                "name": name,
            }
        )
    if out[-1]["role"] != "assistant" or out[-1]["tool_calls"]:
        raise UnusableTrace(f"{where}: the trace does not end with an assistant answer turn", "no_final_answer")
    return out


def tool_schemas(tools: Any, where: str) -> list[str]:
    """Tool schemas offered to the model, one JSON text each (the ``tools`` column)."""
    if not isinstance(tools, list) or not all(isinstance(tool, dict) for tool in tools):
        raise InputError(f"{where}: tools is not a JSON list of objects")
    return [json_canonical(tool) for tool in tools]


def retrieved_docs(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """(url, sha256) of every search result the model was shown, in trace order: the hash
    covers the result object exactly as the tool message gave it (canonical JSON)."""
    docs = []
    for message in messages:
        if message["role"] != "tool" or message["content"] is None:
            continue
        try:
            payload = json.loads(message["content"])
        except json.JSONDecodeError:
            continue  # a plain-text tool error carries no document
        results = payload.get("results") if isinstance(payload, dict) else None
        for result in results if isinstance(results, list) else []:
            if isinstance(result, dict):
                digest = hashlib.sha256(json_canonical(result).encode("utf-8")).hexdigest()
                docs.append({"url": str(result.get("url") or ""), "sha256": digest})
    return docs


def detector_verdicts(search_calls: Any, where: str) -> list[list[str]]:
    """The leak detector's verdicts, one list per search call (empty when it did not run)."""
    if search_calls is None:
        return []
    if not isinstance(search_calls, list):
        raise InputError(f"{where}: search_calls is not a JSON list")
    return [[str(v) for v in (call.get("detector_verdicts") or [])] for call in search_calls if isinstance(call, dict)]


def sft_table(
    selected: pa.Table, split_of: Mapping[tuple[dt.date, str], str], violations: str = "flag"
) -> tuple[pa.Table, dict[str, int]]:
    """SFT rows (``SFT_SCHEMA``) of selected trials, and the count of skipped traces by
    reason (see :class:`UnusableTrace`). ``split_of`` maps (cutoff, q_id) to the question's
    split (the corpus' one boundary); ``violations`` is ``flag`` (export trials whose tool
    calls broke the schema, with canonical arguments, flagged) or ``drop`` (skip them)."""
    rows = []
    skipped: dict[str, int] = {}
    for trial in selected.select([*SFT_TRIAL_COLUMNS, "exam_score"]).to_pylist():
        where = f"trial (model={trial['model']}, q_id={trial['q_id']}, trial={trial['trial']})"
        search_calls = _load_json(trial["search_calls"], where, "search_calls") if trial["search_calls"] else None
        try:
            messages = trace_messages(_load_json(trial["messages"], where, "messages"), where)
            raw_arguments, problems = canonical_tool_calls(messages, search_calls, where)
            if problems and violations == "drop":
                raise UnusableTrace(f"{where}: {'; '.join(problems)}", "schema_violation")
        except UnusableTrace as exc:
            skipped[exc.reason] = skipped.get(exc.reason, 0) + 1
            continue
        tools = _load_json(trial["tools"], where, "tools") if trial["tools"] is not None else []
        rows.append(
            {
                "messages": messages,
                "tools": tool_schemas(tools, where),
                **{name: trial[name] for name in ("model", "q_id", "trial", "question_type", "choice_type", "answer", "pred")},
                "exam_score": trial["exam_score"],
                **{name: trial[name] for name in ("cutoff", "prediction_cutoff", "end_time")},
                "split": split_of.get((trial["cutoff"], trial["q_id"])),
                "detector_verdicts": detector_verdicts(search_calls, where),
                "retrieved_docs": retrieved_docs(messages),
                "raw_tool_arguments": raw_arguments,
                "schema_violations": problems,
            }
        )
    return table_from_rows(rows, SFT_SCHEMA), dict(sorted(skipped.items()))


# ---------------------------------------------------------------------------------------
# SFT: the OpenAI chat fine-tuning rendering of the same rows


def openai_message(message: Mapping[str, Any]) -> dict[str, Any]:
    """One typed message in the OpenAI shape: no null keys, arguments as a JSON string,
    tool results linked by ``tool_call_id`` only."""
    out: dict[str, Any] = {"role": message["role"]}
    if message["role"] == "tool":
        return {**out, "tool_call_id": message["tool_call_id"], "content": message["content"] or ""}
    if message["tool_calls"]:
        if message["content"]:
            out["content"] = message["content"]
        out["tool_calls"] = [
            {
                "id": call["id"],
                "type": call["type"],
                "function": {"name": call["function"]["name"], "arguments": _json_text(call["function"]["arguments"])},
            }
            for call in message["tool_calls"]
        ]
        return out
    return {**out, "content": message["content"] or ""}


def _json_text(value: Any) -> str:
    # A JSON column reads back as its text from Arrow but as a parsed value via datasets.
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def openai_records(sft: pa.Table) -> list[dict[str, Any]]:
    """The SFT rows, in order, as OpenAI chat fine-tuning records (messages and tools)."""
    records = []
    for row in sft.select(["messages", "tools"]).to_pylist():
        record: dict[str, Any] = {"messages": [openai_message(m) for m in row["messages"]]}
        if row["tools"]:
            record["tools"] = [json.loads(_json_text(tool)) for tool in row["tools"]]
        records.append(record)
    return records


def jsonl_text(records: Iterable[Mapping[str, Any]]) -> str:
    """JSON lines, one record per line, keys in insertion order, UTF-8 kept."""
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)


# ---------------------------------------------------------------------------------------
# RL: one row per admissible question per cutoff

# Renders the evaluator's opening messages for one question row (QUESTION_SCHEMA fields).
PromptRenderer = Callable[[Mapping[str, Any]], list[dict[str, str]]]


def rl_rows(
    questions: pa.Table,
    cutoff: dt.date,
    split: str,
    delta_days: int,
    render: PromptRenderer,
    with_tools: bool = True,
) -> list[dict[str, Any]]:
    """RL rows of one cutoff's split (data_source names the cutoff's config); ``index`` is
    filled in by :func:`rl_table`. A prompt rendered with a search budget ships the
    ``web_search`` schema (``tools``) and its χ for the trainer's tool (``tools_kwargs``)."""
    rows = []
    tools = [json_canonical(WEB_SEARCH_TOOL)] if with_tools else []
    for question in questions.to_pylist():
        chi = prediction_cutoff(question["end_time"], delta_days)
        prompt = render(question)
        for position, message in enumerate(prompt):
            if set(message) != {"role", "content"} or message["role"] not in ROLES:
                raise InputError(f"question {question['id']}: rendered prompt message {position} is not {{role, content}}")
        rows.append(
            {
                "data_source": f"oracleproto/{split_name(cutoff)}",
                "prompt": prompt,
                "ability": ABILITY,
                "reward_model": {"style": REWARD_STYLE, "ground_truth": question["answer"]},
                "extra_info": {
                    "split": split,
                    "index": 0,
                    "q_id": question["id"],
                    "question_type": question["question_type"],
                    "choice_type": question["choice_type"],
                    "options": question["options"],
                    "end_time": question["end_time"].isoformat(),
                    "prediction_cutoff": chi.isoformat(),
                    "cutoff": cutoff.isoformat(),
                    "tools_kwargs": {WEB_SEARCH: {"create_kwargs": {"end_date": chi.isoformat()}}} if with_tools else None,
                },
                "q_id": question["id"],
                "question_type": question["question_type"],
                "choice_type": question["choice_type"],
                "options": question["options"],
                "answer": question["answer"],
                "cutoff": cutoff,
                "tools": tools,
            }
        )
    return rows


def rl_table(rows: Iterable[dict[str, Any]]) -> pa.Table:
    """RL table (``RL_SCHEMA``) in (cutoff, q_id) order; ``extra_info.index`` is the row number."""
    ordered = sorted(rows, key=lambda row: (row["cutoff"], row["q_id"]))
    for index, row in enumerate(ordered):
        row["extra_info"]["index"] = index
    return table_from_rows(ordered, RL_SCHEMA)


def user_prompt_renderer(
    templates: Mapping[str, str],
    *,
    max_steps: int,
    max_search_calls: int,
    protocols: ProtocolSwitches,
) -> PromptRenderer:
    """The evaluator's opening message: one user turn rendered by R with the evaluation's
    budgets and protocol tails, so an RL prompt is byte-identical to the evaluation prompt."""

    def render(question: Mapping[str, Any]) -> list[dict[str, str]]:
        prompt_question = PromptQuestion(
            q_id=question["id"],
            question_type=question["question_type"],
            choice_type=question["choice_type"],
            event=question["event"],
            options=tuple(question["options"]),
            end_time=question["end_time"],
        )
        text = render_user_prompt(
            prompt_question, templates, max_steps=max_steps, max_search_calls=max_search_calls, protocols=protocols
        )
        return [{"role": "user", "content": text}]

    return render


# ---------------------------------------------------------------------------------------
# Files: what the export stage and `oracleproto export` write

SPLIT_GLOB = "cutoff-*"


class ExportSettings(Export, PromptBudgets):
    """The ``export`` section plus the budgets and protocol switches the prompts state."""

    protocols: ProtocolSwitches = ProtocolSwitches()

    @property
    def rl_search_calls(self) -> int:
        """The search budget an RL prompt states (0: closed-book)."""
        return self.max_search_calls if self.rl_tools else 0

    @property
    def rl_protocols(self) -> ProtocolSwitches:
        """Closed-book prompts drop the budget line and the search-driven method (the belief
        protocol, which asks for probabilities, stays as configured)."""
        if self.rl_search_calls > 0:
            return self.protocols
        return self.protocols.model_copy(update={"budget_awareness": False, "reflection": False})


def export_settings(params: Params) -> ExportSettings:
    """Settings from the params: the ``export`` section, and the prompt budgets and protocol
    switches of the ``evaluate`` section, as the evaluator states them to a model."""
    evaluate = params.evaluate
    searching = search_offered(evaluate.search_backend, evaluate.max_search_calls)
    return ExportSettings(
        **params.export.fields_of(Export),
        max_steps=evaluate.max_steps,
        max_search_calls=evaluate.max_search_calls if searching else 0,  # the evaluator states 0 when search is off
        protocols=evaluate.protocols,
    )


def _split_delta_days(path: Path) -> int:
    delta = table_metadata(path).get("delta_days")
    if not isinstance(delta, int):
        raise InputError(f"{path}: schema metadata has no integer delta_days (written by the admit stage)")
    return delta


def split_dirs(splits_dir: Path) -> list[tuple[dt.date, Path]]:
    """``(cutoff, directory)`` of every ``cutoff-YYYY-MM-DD`` split set, by cutoff."""
    found = []
    for path in sorted(p for p in splits_dir.glob(SPLIT_GLOB) if p.is_dir()):
        try:
            found.append((dt.date.fromisoformat(path.name.removeprefix("cutoff-")), path))
        except ValueError as exc:
            raise InputError(f"{path}: split set name is not cutoff-YYYY-MM-DD") from exc
    if not found:
        raise InputError(f"{splits_dir}: no cutoff-YYYY-MM-DD split set (run the admit stage first)")
    return found


def question_splits(splits_dir: Path) -> dict[tuple[dt.date, str], str]:
    """(cutoff, q_id) → "train" or "test"."""
    out = {}
    for cutoff, path in split_dirs(splits_dir):
        for split in ("train", "test"):
            for q_id in pq.read_table(path / f"{split}.parquet", columns=["id"])["id"].to_pylist():
                out[(cutoff, q_id)] = split
    return out


def export_rl(splits_dir: Path, settings: ExportSettings, split: str) -> pa.Table:
    """RL rows of one split (``train`` or ``test``) of every split set under ``splits_dir``."""
    rows: list[dict[str, Any]] = []
    for cutoff, split_dir in split_dirs(splits_dir):
        path = split_dir / f"{split}.parquet"
        questions = read_parquet(path)
        templates, _ = templates_from_schema(questions.schema)
        render = user_prompt_renderer(
            templates,
            max_steps=settings.max_steps,
            max_search_calls=settings.rl_search_calls,
            protocols=settings.rl_protocols,
        )
        rows += rl_rows(questions, cutoff, split, _split_delta_days(path), render, with_tools=settings.rl_search_calls > 0)
    return rl_table(rows)


def _split_of_rows(sft: pa.Table, split: str) -> pa.Table:
    return sft.filter(pc.equal(sft["split"], split))


def run_export(trials_path: Path, splits_dir: Path, out_dir: Path, settings: ExportSettings) -> dict[str, Any]:
    """Write ``sft/{train,test}.parquet`` (+ ``_openai.jsonl`` twins), ``rl/{train,test}.parquet``
    and ``summary.json`` under ``out_dir``: each export keeps the corpus' train/test boundary."""
    trials = read_parquet(trials_path)
    selection = select_sft_trials(trials, settings.sft_mode, settings.sft_models)
    sft, skipped = sft_table(selection.trials, question_splits(splits_dir), settings.sft_violations)
    outside = sft["split"].null_count  # a trial on a question no split set holds (e.g. stale splits)
    if outside:
        skipped = dict(sorted({**skipped, "question_in_no_split": outside}.items()))
    summary: dict[str, Any] = {
        "sft": {
            "mode": settings.sft_mode,
            "models": None if settings.sft_models is None else list(settings.sft_models),
            "violations": settings.sft_violations,
            **selection.counts,
            "skipped": skipped,
            "rows_by_model": _value_counts(sft["model"]),
            "flagged": sum(1 for v in sft["schema_violations"].to_pylist() if v),
        },
        "rl": {"tools": settings.rl_search_calls > 0, "rows_by_cutoff": {}},
    }
    for split in SPLITS:
        part = _split_of_rows(sft, split)
        write_parquet(part, out_dir / sft_file(split), SFT_SCHEMA, sort_by=SFT_SORT, metadata={"export": "sft", "split": split, "mode": settings.sft_mode})
        write_text(jsonl_text(openai_records(part.sort_by([(k, "ascending") for k in SFT_SORT]))), out_dir / sft_openai_file(split))
        rl = export_rl(splits_dir, settings, split)
        write_parquet(rl, out_dir / rl_file(split), RL_SCHEMA, sort_by=RL_SORT, metadata={"export": "rl", "split": split})
        summary["sft"][f"{split}_rows"] = part.num_rows
        summary["rl"][f"{split}_rows"] = rl.num_rows
        summary["rl"]["rows_by_cutoff"][split] = {str(k): v for k, v in _value_counts(rl["cutoff"]).items()}
        summary["rl"][f"{split}_prompt_chars_max"] = max((len(m["content"]) for p in rl["prompt"].to_pylist() for m in p), default=0)
    write_json(summary, out_dir / EXPORT_SUMMARY)
    return summary


def _value_counts(column: pa.ChunkedArray) -> dict[Any, int]:
    return dict(sorted((row["values"], row["counts"]) for row in pc.value_counts(column).to_pylist()))
