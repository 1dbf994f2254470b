"""Arrow schemas of every table that crosses a stage boundary, and the metadata key.

The schemas fix column order and types for the canonical writer (``oracleproto.io``), which
stores each table's metadata (JSON) under :data:`TABLE_METADATA_KEY` in the parquet schema.
The rules a question table's values follow are the question contract
(``oracleproto.contract``); the scorer's input rules are in ``oracleproto.scoring.validate``.
"""

from __future__ import annotations

import pyarrow as pa

from oracleproto.tools import WEB_SEARCH

TABLE_METADATA_KEY = b"oracleproto"  # parquet schema metadata: our JSON, and nothing else

QUESTION_TYPES = ("yes_no", "binary_named", "multiple_choice")
CHOICE_TYPES = ("single", "multi")
YES_NO_OPTIONS = ("Yes", "No")

# ---------------------------------------------------------------------------------------
# The question table (seven columns)
QUESTION_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("choice_type", pa.string(), nullable=False),
        pa.field("question_type", pa.string(), nullable=False),
        pa.field("event", pa.string(), nullable=False),
        pa.field("options", pa.list_(pa.string()), nullable=False),
        pa.field("answer", pa.string(), nullable=False),
        pa.field("end_time", pa.date32(), nullable=False),
    ]
)
QUESTION_COLUMNS = tuple(QUESTION_SCHEMA.names)

# ---------------------------------------------------------------------------------------
# Raw rows: what every source adapter yields before the audit. Fields a source cannot
# fill are null; `parse_error` says why a row could not be read into fields, and `raw`
# keeps the original record (JSON) so a quarantined row loses nothing.
RAW_SCHEMA = pa.schema(
    [
        pa.field("source_row", pa.int64(), nullable=False),
        pa.field("id", pa.string()),
        pa.field("choice_type", pa.string()),
        pa.field("question_type", pa.string()),
        pa.field("event", pa.string()),
        pa.field("options", pa.list_(pa.string())),
        pa.field("answer", pa.string()),
        pa.field("end_time", pa.string()),
        pa.field("level", pa.int64()),
        pa.field("parse_error", pa.string()),
        pa.field("split", pa.string()),  # the source's split (hf: sources), else null
        # Context some sources carry (ForecastBench); kept beside the question, never audited.
        pa.field("background", pa.string()),
        pa.field("resolution_criteria", pa.string()),
        pa.field("crowd_probability", pa.float64()),  # the crowd's forecast at the freeze date
        pa.field("raw", pa.string()),
    ]
)

# Quarantine: every rejected raw row with its original fields, the rule and a message.
QUARANTINE_SCHEMA = pa.schema(
    [
        pa.field("source_row", pa.int64(), nullable=False),
        pa.field("id", pa.string()),
        pa.field("rule", pa.string(), nullable=False),
        pa.field("message", pa.string(), nullable=False),
        pa.field("event", pa.string()),
        pa.field("options", pa.list_(pa.string())),
        pa.field("answer", pa.string()),
        pa.field("end_time", pa.string()),
        pa.field("raw", pa.string()),
    ]
)

# Collapsed duplicates: one row per exact copy of a row of the same id, and the row it
# collapsed into (source rows of the raw table; ``into`` is kept | quarantined, with its rule).
COLLAPSED_SCHEMA = pa.schema(
    [
        pa.field("source_row", pa.int64(), nullable=False),
        pa.field("id", pa.string(), nullable=False),
        pa.field("into_source_row", pa.int64(), nullable=False),
        pa.field("into", pa.string(), nullable=False),
        pa.field("into_rule", pa.string()),
    ]
)

# Admission log: one row per (model, question).
ADMISSION_LOG_SCHEMA = pa.schema(
    [
        pa.field("model", pa.string(), nullable=False),
        pa.field("cutoff", pa.date32(), nullable=False),
        pa.field("q_id", pa.string(), nullable=False),
        pa.field("admitted", pa.bool_(), nullable=False),
        pa.field("reason", pa.string(), nullable=False),
    ]
)

# ---------------------------------------------------------------------------------------
# The trial table: one row per (model, q_id, trial). Scoring needs only TRIAL_CORE;
# evaluation writes TRIAL_SCHEMA (core + traces and provider markers).
ERROR_KINDS = (
    "skipped_training_cutoff",
    "network",
    "rate_limit",
    "server_5xx",
    "auth",
    "content_policy",
    "bad_request",
    "unknown",
    "timeout",  # no complete response within the call's deadline (sampling.timeout_s)
    "response_too_large",  # response body past sampling.max_response_bytes
)
CUTOFF_SKIP = "skipped_training_cutoff"

TRIAL_CORE_SCHEMA = pa.schema(
    [
        pa.field("model", pa.string(), nullable=False),
        pa.field("q_id", pa.string(), nullable=False),
        pa.field("question_type", pa.string(), nullable=False),
        pa.field("choice_type", pa.string(), nullable=False),
        pa.field("options", pa.list_(pa.string()), nullable=False),
        pa.field("answer", pa.string(), nullable=False),
        pa.field("trial", pa.int64(), nullable=False),
        pa.field("pred", pa.string()),
        pa.field("error", pa.string()),
        pa.field("cost_usd", pa.float64(), nullable=False),
    ]
)

TRIAL_SCHEMA = pa.schema(
    list(TRIAL_CORE_SCHEMA)
    + [
        pa.field("cutoff", pa.date32()),
        pa.field("delta_days", pa.int64()),
        pa.field("prediction_cutoff", pa.date32()),
        pa.field("end_time", pa.date32()),
        pa.field("raw_output", pa.string()),
        pa.field("messages", pa.string()),  # JSON: the full chat trace (canonical form)
        pa.field("tools", pa.string()),  # JSON: the tool schemas offered to the model
        pa.field("search_calls", pa.string()),  # JSON: one entry per search with audit fields
        pa.field("react_steps", pa.int64()),
        pa.field("tool_calls_count", pa.int64()),
        pa.field("prompt_tokens", pa.int64()),
        pa.field("completion_tokens", pa.int64()),
        pa.field("reasoning_tokens", pa.int64()),
        pa.field("latency_ms", pa.int64()),
        pa.field("finish_reason", pa.string()),
        pa.field("response_id", pa.string()),
        pa.field("system_fingerprint", pa.string()),
        pa.field("belief", pa.list_(pa.float64())),
        pa.field("nudges_used", pa.int64()),  # minimum-search nudges given (Budgets.min_search_calls)
        pa.field("final_answer_retry_used", pa.bool_()),  # the bail-out retry fired
        pa.field("invalid_usage", pa.list_(pa.string())),  # provider usage fields out of range: stored as null
        pa.field("search_errors", pa.int64()),  # searches that failed (so "0 errors" means 0)
        pa.field("detector_errors", pa.int64()),  # searches whose leak-detector calls failed
    ]
)

# ---------------------------------------------------------------------------------------
# Trajectory exports (export → publish → trainers): the TRL conversational SFT traces and
# the verl RL prompts. JSON values are Arrow's json extension type.
JSON_TYPE = pa.json_()
TOOL_CALL_TYPE = pa.struct(
    [
        ("id", pa.string()),
        ("type", pa.string()),
        ("function", pa.struct([("name", pa.string()), ("arguments", JSON_TYPE)])),
    ]
)
MESSAGE_TYPE = pa.struct(
    [
        ("role", pa.string()),
        ("content", pa.string()),
        ("tool_calls", pa.list_(TOOL_CALL_TYPE)),
        ("tool_call_id", pa.string()),
        ("name", pa.string()),
    ]
)
PROMPT_MESSAGE_TYPE = pa.struct([("role", pa.string()), ("content", pa.string())])
RETRIEVED_DOC_TYPE = pa.struct([("url", pa.string()), ("sha256", pa.string())])

SFT_SCHEMA = pa.schema(
    [
        pa.field("messages", pa.list_(MESSAGE_TYPE), nullable=False),
        pa.field("tools", pa.list_(JSON_TYPE), nullable=False),
        pa.field("model", pa.string(), nullable=False),
        pa.field("q_id", pa.string(), nullable=False),
        pa.field("trial", pa.int64(), nullable=False),
        pa.field("question_type", pa.string(), nullable=False),
        pa.field("choice_type", pa.string(), nullable=False),
        pa.field("answer", pa.string(), nullable=False),
        pa.field("pred", pa.string(), nullable=False),
        pa.field("exam_score", pa.float64(), nullable=False),
        pa.field("cutoff", pa.date32()),
        pa.field("prediction_cutoff", pa.date32()),
        pa.field("end_time", pa.date32()),
        pa.field("split", pa.string()),
        pa.field("detector_verdicts", pa.list_(pa.list_(pa.string())), nullable=False),
        pa.field("retrieved_docs", pa.list_(RETRIEVED_DOC_TYPE), nullable=False),
        pa.field("raw_tool_arguments", pa.list_(pa.string()), nullable=False),  # what the model sent
        pa.field("schema_violations", pa.list_(pa.string()), nullable=False),
    ]
)

RL_EXTRA_INFO_TYPE = pa.struct(
    [
        ("split", pa.string()),
        ("index", pa.int64()),
        ("q_id", pa.string()),
        ("question_type", pa.string()),
        ("choice_type", pa.string()),
        ("options", pa.list_(pa.string())),
        ("end_time", pa.string()),
        ("prediction_cutoff", pa.string()),
        ("cutoff", pa.string()),
        # verl's multi-turn rollouts create each tool with these kwargs: the search tool is
        # given χ (end_date) by the trainer, exactly as the harness injects it
        ("tools_kwargs", pa.struct([(WEB_SEARCH, pa.struct([("create_kwargs", pa.struct([("end_date", pa.string())]))]))])),
    ]
)
RL_SCHEMA = pa.schema(
    [
        pa.field("data_source", pa.string(), nullable=False),
        pa.field("prompt", pa.list_(PROMPT_MESSAGE_TYPE), nullable=False),
        pa.field("ability", pa.string(), nullable=False),
        pa.field("reward_model", pa.struct([("style", pa.string()), ("ground_truth", pa.string())]), nullable=False),
        pa.field("extra_info", RL_EXTRA_INFO_TYPE, nullable=False),
        pa.field("q_id", pa.string(), nullable=False),
        pa.field("question_type", pa.string(), nullable=False),
        pa.field("choice_type", pa.string(), nullable=False),
        pa.field("options", pa.list_(pa.string()), nullable=False),
        pa.field("answer", pa.string(), nullable=False),
        pa.field("cutoff", pa.date32(), nullable=False),
        pa.field("tools", pa.list_(JSON_TYPE), nullable=False),  # OpenAI function format; [] when closed-book
    ]
)
