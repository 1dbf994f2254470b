"""Scoring: every metric of METRICS.md as pure functions over the trial table.

``exam_score`` / ``exam_scores`` score single trials exactly as the scorer does (the export
stage's reward calls them).
"""

from oracleproto.metrics.trial_scores import exam_score, exam_scores

__all__ = ["exam_score", "exam_scores"]
