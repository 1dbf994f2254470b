"""Reward functions for RL on the exported prompts: a completion scores exactly what the
evaluator would give it — parser Ψ (:func:`oracleproto.parse.parse_answer`) then the exam
score of Eq. 18 (:func:`oracleproto.exam.exam_score`). Nothing here re-implements
either rule, so a change to the parser or the scorer changes the reward with it.

Two entry points, one per trainer:

* verl (0.9) — ``reward.custom_reward_function.path=<this file>``, ``reward.custom_reward_function.name=compute_score`` (examples/verl/run_grpo.sh);
  ``extra_info`` is the row's ``extra_info`` struct of the exported RL parquet.
* TRL — ``GRPOTrainer(reward_funcs=[forecast_reward])``; the RL parquet's ``answer``,
  ``question_type``, ``options`` and ``choice_type`` columns arrive as keyword arguments.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from oracleproto.exam import exam_score
from oracleproto.parse import parse_answer

# What the parser needs besides the text; the RL export puts these into extra_info.
QUESTION_KEYS = ("question_type", "options", "choice_type")


def final_answer_text(completion: str | Sequence[Mapping[str, Any]] | None) -> str | None:
    """The text the evaluator parses: a plain completion as is; for a conversational one,
    the content of the last assistant turn without tool calls (the evaluator ignores the
    content of tool-call turns and keeps the last content turn as the final answer)."""
    if completion is None or isinstance(completion, str):
        return completion
    for message in reversed(list(completion)):
        if message.get("role") == "assistant" and not message.get("tool_calls"):
            content = message.get("content")
            return content if isinstance(content, str) else None
    return None


def score_completion(
    completion: str | Sequence[Mapping[str, Any]] | None,
    answer: str,
    question_type: str,
    options: Sequence[str],
    choice_type: str,
) -> float:
    """Exam score of one completion against the gold letters ``answer`` ("A" or "A, C")."""
    pred = parse_answer(final_answer_text(completion), question_type, list(options), choice_type)
    return exam_score(pred, answer)


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: str,
    extra_info: Mapping[str, Any] | None = None,
    **_: Any,
) -> float:
    """verl reward: ``data_source`` is informative only (every OracleProto row is scored
    the same way); ``extra_info`` must carry question_type, options and choice_type."""
    info = extra_info or {}
    missing = [key for key in QUESTION_KEYS if info.get(key) is None]
    if missing:
        raise ValueError(
            f"compute_score({data_source!r}): extra_info lacks {', '.join(missing)}; "
            "use the extra_info column of the OracleProto RL parquet"
        )
    return score_completion(solution_str, ground_truth, info["question_type"], info["options"], info["choice_type"])


def forecast_reward(
    completions: Sequence[str | Sequence[Mapping[str, Any]]],
    answer: Sequence[str],
    question_type: Sequence[str],
    options: Sequence[Sequence[str]],
    choice_type: Sequence[str],
    **_: Any,
) -> list[float]:
    """TRL reward function (GRPO): one exam score per completion, plain or conversational."""
    columns = {"answer": answer, "question_type": question_type, "options": options, "choice_type": choice_type}
    for name, values in columns.items():
        if len(values) != len(completions):
            raise ValueError(f"forecast_reward: {len(completions)} completions but {len(values)} values of {name!r}")
    return [
        score_completion(completion, gold, qtype, opts, ctype)
        for completion, gold, qtype, opts, ctype in zip(completions, answer, question_type, options, choice_type)
    ]
