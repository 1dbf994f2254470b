"""Live progress counters of a run and the summary it ends with."""

from __future__ import annotations

import collections
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oracleproto.schema import CUTOFF_SKIP


@dataclass
class ProgressState:
    """Live counters for a progress display."""

    total: int = 0
    resumed: int = 0  # accounted for by an earlier run
    done: int = 0  # written by this run
    skipped_cutoff: int = 0
    errors: collections.Counter[str] = field(default_factory=collections.Counter)
    parsed: int = 0
    cost_usd: float = 0.0
    in_flight: dict[str, int] = field(default_factory=dict)
    search_errors: int = 0
    detector_errors: int = 0

    def record(self, row: Mapping[str, Any]) -> None:
        self.done += 1
        if row["error"] == CUTOFF_SKIP:
            self.skipped_cutoff += 1
        elif row["error"] is not None:
            self.errors[row["error"]] += 1
        elif row["pred"] is not None:
            self.parsed += 1
        self.cost_usd += row["cost_usd"]
        self.search_errors += row.get("search_errors") or 0
        self.detector_errors += row.get("detector_errors") or 0

    @property
    def completed(self) -> int:
        return self.resumed + self.done


ProgressCallback = Callable[[ProgressState], None]


@dataclass(frozen=True)
class EvalSummary:
    out_dir: Path
    trials_path: Path
    rows: int
    ran: int
    resumed: int
    skipped_cutoff: int
    parsed: int
    errors: dict[str, int]
    cost_usd: float
    search_errors: int = 0
    detector_errors: int = 0

    def line(self) -> str:
        errors = sum(self.errors.values())
        kinds = ", ".join(f"{k}={v}" for k, v in sorted(self.errors.items()))
        return (
            f"evaluated {self.ran} trial(s) ({self.resumed} already done, {self.skipped_cutoff} skipped by cutoff): "
            f"{self.parsed} parsed, {errors} error(s){' (' + kinds + ')' if kinds else ''}, "
            f"{self.search_errors} failed search(es), {self.detector_errors} with a failed leak detector, "
            f"cost ${self.cost_usd:.4f}; {self.rows} rows in {self.trials_path}"
        )

