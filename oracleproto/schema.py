"""Arrow schemas and pandera models for every table that crosses a stage boundary.

The Arrow schemas fix column order and types for the canonical writer (``oracleproto.io``);
the pandera models check the rules of DESIGN.md §3 and report failures by row id, column
and check.
"""

from __future__ import annotations

import pyarrow as pa

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
    ]
)
