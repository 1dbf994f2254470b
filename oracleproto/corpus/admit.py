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


def split_sets(questions: pa.Table, config: AdmissionConfig) -> Iterator[tuple[str, pa.Table, pa.Table]]:
    """(split name, train, test) per distinct cutoff: the admitted questions in (end_time, id)
    order, the newest round(n·f) of them the test split. In that order a cutoff admits a
    suffix of the table (τ ≥ κ + δ), so every split is a slice, not a copy."""
    ordered = questions if _sorted_chronologically(questions) else questions.sort_by([("end_time", "ascending"), ("id", "ascending")])
    days = end_days(ordered.column("end_time"))
    for cutoff in config.cutoffs:
        admitted = ordered.slice(int(np.searchsorted(days, first_admitted_day(cutoff, config.delta_days))))
        n = admitted.num_rows
        n_test = int(np.floor(n * config.test_fraction + 0.5))
        yield split_name(cutoff), admitted.slice(0, n - n_test), admitted.slice(n - n_test)


def summary(questions: pa.Table, config: AdmissionConfig) -> dict[str, dict]:
    """{model: {cutoff, split, admitted, excluded_by_cutoff}}."""
    admitted_by_cutoff = {
        cutoff: int(admitted_mask(questions.column("end_time"), cutoff, config.delta_days).sum()) for cutoff in config.cutoffs
    }
    return {
        model: {
            "cutoff": cutoff.isoformat(),
            "split": split_name(cutoff),
            "admitted": admitted_by_cutoff[cutoff],
            "excluded_by_cutoff": questions.num_rows - admitted_by_cutoff[cutoff],
        }
        for model, cutoff in sorted(config.models.items())
    }


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

