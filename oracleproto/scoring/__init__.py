"""Scoring: every metric of METRICS.md as pure functions over the trial table.

    from oracleproto.scoring import score_table, summary, leaderboard_markdown, METRICS
    result = score_table(trials)            # validate (TrialSchema) → metrics → bootstrap
    summary(result)["my-model"]["composite_accuracy"]
    METRICS["fss"].higher_is_better, METRICS["fss"].compute(result.context)

The per-trial rules (``exam_score``, Tversky, Hamming) live in :mod:`oracleproto.exam`, shared
with the export stage's reward. Everything here is loaded on first use, so importing the
package does not pull in pandera.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "METRICS": "registry",
    "Metric": "registry",
    "ScoreContext": "registry",
    "composite_from_bucket_means": "registry",
    "ScoreResult": "scorer",
    "score_table": "scorer",
    "score_file": "scorer",
    "read_trials": "scorer",
    "write_outputs": "scorer",
    "summary": "scorer",
    "leaderboard_markdown": "scorer",
    "bootstrap": "statistics",
    "TrialSchema": "validate",
    "InputError": "validate",
    "validate_trials": "validate",
}

__all__ = ["exam_score", "exam_scores", *_LAZY]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'oracleproto.scoring' has no attribute {name!r}")
    return getattr(importlib.import_module(f"oracleproto.scoring.{_LAZY[name]}"), name)
