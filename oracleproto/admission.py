"""Admission by knowledge cutoff — the one home of δ, χ and the predicate.

q is admitted for a model with knowledge cutoff κ iff κ ≤ χ < τ, where τ is the
question's resolution date (``end_time``) and χ = τ − δ its prediction cutoff (paper Eq. 3).
Scalar and vectorised forms stand side by side; the corpus' split sets, the harness and the
exports all ask here.
"""

from __future__ import annotations

import calendar
import datetime as dt
import json
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from oracleproto.errors import ConfigError, InputError

DEFAULT_DELTA_DAYS = 1
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_MONTH = re.compile(r"^\d{4}-\d{2}$")




def parse_cutoff(value: str | dt.date, model: str = "?") -> dt.date:
    """``YYYY-MM-DD``, or ``YYYY-MM`` meaning the last day of that month (the paper's
    conservative rounding of month-level disclosures)."""
    if isinstance(value, dt.date):
        return value
    text = str(value).strip()
    try:
        if _DAY.match(text):
            return dt.date.fromisoformat(text)
        if _MONTH.match(text):
            year, month = int(text[:4]), int(text[5:])
            return dt.date(year, month, calendar.monthrange(year, month)[1])
    except ValueError:
        pass
    raise ConfigError(f"model {model!r}: cutoff {value!r} is not YYYY-MM-DD or YYYY-MM")


def prediction_cutoff(end_time: dt.date, delta_days: int) -> dt.date:
    """χ = τ − δ."""
    return end_time - dt.timedelta(days=delta_days)


def admissible(cutoff: dt.date | None, end_time: dt.date, delta_days: int) -> bool:
    """κ ≤ χ < τ with χ = τ − δ; no cutoff (baselines) admits everything."""
    chi = prediction_cutoff(end_time, delta_days)
    return (cutoff is None or cutoff <= chi) and chi < end_time


def split_name(cutoff: dt.date) -> str:
    return f"cutoff-{cutoff.isoformat()}"


def end_days(end_time: pa.Array | pa.ChunkedArray) -> np.ndarray:
    return pc.cast(end_time, pa.int32()).to_numpy(zero_copy_only=False).astype(np.int64) if len(end_time) else np.zeros(0, np.int64)


def first_admitted_day(cutoff: dt.date, delta_days: int) -> int:
    """κ ≤ τ − δ ⟺ τ ≥ κ + δ, as days since the epoch (τ − δ < τ holds since δ ≥ 1)."""
    return (cutoff - dt.date(1970, 1, 1)).days + delta_days


def admitted_mask(end_time: pa.Array | pa.ChunkedArray, cutoff: dt.date, delta_days: int) -> np.ndarray:
    """κ ≤ τ − δ, vectorised over date32 ``end_time``."""
    return end_days(end_time) >= first_admitted_day(cutoff, delta_days)



PROBE_REPORT = "report.json"


def load_probe_report(path: str | Path) -> dict:
    """A cutoff probe's report.json (``path`` is the file or the probe's output folder)."""
    file = Path(path)
    file = file / PROBE_REPORT if file.is_dir() else file
    try:
        report = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read probe report {file}: {exc}") from exc
    if not isinstance(report, dict) or not {"model", "disclosed_cutoff", "effective_cutoff", "flagged"} <= set(report):
        raise InputError(f"{file}: not a probe report (needs model, disclosed_cutoff, effective_cutoff, flagged)")
    return report


def probed_cutoff(path: str | Path, model: str | None = None) -> dt.date:
    """The cutoff admission uses for a model with ``cutoff_source: probed``: the later of its
    disclosed cutoff and the probe's effective cutoff, and only when the probe flagged it
    (a probe can only make admission stricter). ``model`` must be the report's model."""
    report = load_probe_report(path)
    if model is not None and report["model"] != model:
        raise InputError(f"{path}: probe report is about {report['model']!r}, not {model!r}")
    disclosed = dt.date.fromisoformat(report["disclosed_cutoff"])
    effective = dt.date.fromisoformat(report["effective_cutoff"]) if report["effective_cutoff"] else disclosed
    return max(disclosed, effective) if report["flagged"] else disclosed
