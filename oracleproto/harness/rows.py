"""Trial rows: what the run store keeps for a trial that ran, and for one outside κ ≤ χ < τ."""

from __future__ import annotations

import json
from typing import Any

from oracleproto.admission import prediction_cutoff
from oracleproto.harness.llm import encode_json
from oracleproto.harness.questions import EvalJob, QuestionRecord
from oracleproto.harness.react import LoopResult
from oracleproto.schema import CUTOFF_SKIP


def base_row(job: EvalJob, question: QuestionRecord, trial: int, delta_days: int) -> dict[str, Any]:
    return {
        "model": job.label,
        "q_id": question.q_id,
        "question_type": question.question_type,
        "choice_type": question.choice_type,
        "options": list(question.options),
        "answer": question.answer,
        "trial": trial,
        "cutoff": job.spec.cutoff,
        "delta_days": delta_days,
        "prediction_cutoff": prediction_cutoff(question.end_time, delta_days),
        "end_time": question.end_time,
    }


def cutoff_row(job: EvalJob, question: QuestionRecord, trial: int, delta_days: int) -> dict[str, Any]:
    """A trial outside κ ≤ χ < τ: recorded, never run."""
    return {
        **base_row(job, question, trial, delta_days),
        "pred": None,
        "error": CUTOFF_SKIP,
        "cost_usd": 0.0,
        "raw_output": None,
        "messages": None,
        "tools": None,
        "search_calls": None,
        "react_steps": 0,
        "tool_calls_count": 0,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "reasoning_tokens": 0,
        "invalid_usage": [],
        "search_errors": 0,
        "detector_errors": 0,
        "latency_ms": 0,
        "finish_reason": None,
        "response_id": None,
        "system_fingerprint": None,
        "belief": None,
        "nudges_used": 0,
        "final_answer_retry_used": False,
    }


def loop_row(job: EvalJob, question: QuestionRecord, trial: int, delta_days: int, loop: LoopResult) -> dict[str, Any]:
    return {
        **base_row(job, question, trial, delta_days),
        "pred": None if loop.error else loop.pred,
        "error": loop.error,
        "cost_usd": loop.cost_usd,
        "raw_output": loop.raw_output,
        "messages": loop.messages_json(),
        "tools": encode_json(loop.tools),
        "search_calls": json.dumps(loop.search_calls, ensure_ascii=False, sort_keys=True),
        "react_steps": loop.react_steps,
        "tool_calls_count": loop.tool_calls_count,
        **{name: None if name in loop.invalid_usage else getattr(loop, name) for name in ("prompt_tokens", "completion_tokens", "reasoning_tokens")},
        "invalid_usage": sorted(loop.invalid_usage),
        "search_errors": loop.search_errors,
        "detector_errors": loop.detector_errors,
        "latency_ms": loop.latency_ms,
        "finish_reason": loop.finish_reason,
        "response_id": loop.response_id,
        "system_fingerprint": loop.system_fingerprint,
        "belief": loop.belief,
        "nudges_used": loop.nudges_used,
        "final_answer_retry_used": loop.final_answer_retry_used,
    }
