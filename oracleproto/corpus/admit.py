"""The admit stage's tables: one split set per distinct model cutoff (the admitted questions,
split chronologically: test = the newest ``test_fraction`` by (end_time, id)), the summary,
and a log with one row per (model, question) saying whether it was admitted and why not."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from oracleproto.admission import (
    admitted_mask,
    end_days,
    first_admitted_day,
    split_name,
)
from oracleproto.config import Admit, Cutoff, Params
from oracleproto.schema import ADMISSION_LOG_SCHEMA

ADMITTED = "admitted"
CUTOFF_TOO_LATE = "cutoff_after_prediction_cutoff"


class AdmissionConfig(Admit):
    """The ``admit`` section with the cutoffs of ``models``."""

    models: dict[str, Cutoff]

    @property
    def cutoffs(self) -> list[dt.date]:
        return sorted(set(self.models.values()))


def admission_config(params: Params) -> AdmissionConfig:
    """The admit section, with each model's cutoff: disclosed, or probed (its probe report)."""
    return AdmissionConfig(**params.admit.fields_of(Admit), models=params.cutoffs)


def _sorted_chronologically(questions: pa.Table) -> bool:
    if questions.num_rows < 2:
        return True
    step = np.diff(end_days(questions.column("end_time")))
    if (step < 0).any():
        return False
    ties = np.flatnonzero(step == 0)
    if len(ties) == 0:
        return True
    ids = questions.column("id")
    return bool(pc.all(pc.less(ids.take(pa.array(ties)), ids.take(pa.array(ties + 1)))).as_py())


def chronological(questions: pa.Table) -> pa.Table:
    """The table in (end_time, id) order (the audit already writes it so: no copy then)."""
    if _sorted_chronologically(questions):
        return questions
    return questions.sort_by([("end_time", "ascending"), ("id", "ascending")])


def test_boundary(n_questions: int, test_fraction: float) -> int:
    """Row index (in (end_time, id) order) of the first test question of the corpus: the
    newest round(N·f) questions are test in every configuration that admits them."""
    return n_questions - int(np.floor(n_questions * test_fraction + 0.5))


def boundary_record(ordered: pa.Table, test_fraction: float) -> dict:
    """Where the corpus' train/test boundary lies, for the summary and the card."""
    start = test_boundary(ordered.num_rows, test_fraction)
    first = ordered.slice(start, 1).to_pylist()[:1]
    return {
        "test_fraction": test_fraction,
        "test_questions": ordered.num_rows - start,
        "train_questions": start,
        "first_test_end_time": first[0]["end_time"].isoformat() if first else None,
        "first_test_id": first[0]["id"] if first else None,
        "rule": "test = the newest test_fraction of the whole audited corpus by (end_time, id), in every configuration",
    }


def split_sets(questions: pa.Table, config: AdmissionConfig) -> Iterator[tuple[str, pa.Table, pa.Table]]:
    """(split name, train, test) per distinct cutoff: the admitted questions on each side of
    the corpus' one train/test boundary (so a question is test everywhere it is admitted,
    or nowhere). In (end_time, id) order a cutoff admits a suffix of the table (τ ≥ κ + δ),
    so every split is a slice, not a copy."""
    ordered = chronological(questions)
    days = end_days(ordered.column("end_time"))
    boundary = test_boundary(ordered.num_rows, config.test_fraction)
    for cutoff in config.cutoffs:
        start = int(np.searchsorted(days, first_admitted_day(cutoff, config.delta_days)))
        middle = max(start, boundary)
        yield split_name(cutoff), ordered.slice(start, middle - start), ordered.slice(middle)


def summary(questions: pa.Table, config: AdmissionConfig) -> dict[str, dict]:
    """``{"test_boundary": {…}, "models": {model: {cutoff, split, admitted, train, test,
    excluded_by_cutoff}}}``."""
    ordered = chronological(questions)
    days = end_days(ordered.column("end_time"))
    boundary = test_boundary(ordered.num_rows, config.test_fraction)
    starts = {cutoff: int(np.searchsorted(days, first_admitted_day(cutoff, config.delta_days))) for cutoff in config.cutoffs}
    models = {
        model: {
            "cutoff": cutoff.isoformat(),
            "split": split_name(cutoff),
            "admitted": ordered.num_rows - starts[cutoff],
            "train": max(boundary - starts[cutoff], 0),
            "test": ordered.num_rows - max(starts[cutoff], boundary),
            "excluded_by_cutoff": starts[cutoff],
        }
        for model, cutoff in sorted(config.models.items())
    }
    return {"test_boundary": boundary_record(ordered, config.test_fraction), "models": models}


def admission_log(questions: pa.Table, config: AdmissionConfig) -> Iterator[pa.Table]:
    """One block per model (models sorted), rows in the question table's (end_time, id)
    order: the full (model, q) log."""
    ordered = questions.select(["id", "end_time"])
    ids = ordered.column("id")
    n = ordered.num_rows
    for model, cutoff in sorted(config.models.items()):
        mask = admitted_mask(ordered.column("end_time"), cutoff, config.delta_days)
        admitted = pa.array(mask)
        yield pa.table(
            {
                "model": pa.repeat(pa.scalar(model, pa.string()), n),
                "cutoff": pa.repeat(pa.scalar(cutoff, pa.date32()), n),
                "q_id": ids,
                "admitted": admitted,
                "reason": pc.if_else(admitted, ADMITTED, CUTOFF_TOO_LATE),
            },
            schema=ADMISSION_LOG_SCHEMA,
        )

