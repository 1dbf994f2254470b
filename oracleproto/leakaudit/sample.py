"""``leak-audit sample``: a seeded sample of a run's search results, stratified by layer,
written as a label sheet.

The sheet is a CSV a person fills in: one row per sampled result (its layer, where it was
found, χ, url, published date, title, the text the model would have read, every layer's
verdict) with empty ``label`` (leak | clean | unsure) and ``note`` columns. The question's
gold answer is never in it: labellers judge a document against χ, as the detector does.

Each layer's sample is ``min(per_layer, population)`` results drawn without replacement
by ``random.Random(f"{seed}|{layer}")`` from the layer's results sorted by id, so the same
run, seed and size give the same sheet. The trailing columns bind the sheet to its run:
``run_sha256`` (of trials.parquet), ``seed``, ``per_layer``, ``layer_population`` and
``audit_hash``, a sha256 over all of them and every sampled id with its layer; the report
refuses a sheet whose rows no longer hash to it.
"""

from __future__ import annotations

import hashlib
import os
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from oracleproto.errors import InputError, OracleProtoError
from oracleproto.harness.plan import TRIALS_FILE
from oracleproto.io import read_parquet, sha256_file, write_csv
from oracleproto.leakaudit.layers import LAYERS, AuditedResult, trial_results

RESULT_COLUMNS = (
    "result_id", "layer", "model", "q_id", "trial", "search", "position", "prediction_cutoff", "url",
    "published_date", "title", "text", "date_filter_verdict", "heuristic_verdict", "detector_verdict", "detector_reason",
)  # fmt: skip
LABEL_COLUMNS = ("label", "note")
BINDING_COLUMNS = ("layer_population", "run_sha256", "seed", "per_layer", "audit_hash")
SHEET_COLUMNS = ("sample_id", *RESULT_COLUMNS[1:], *LABEL_COLUMNS, *BINDING_COLUMNS)
TRACE_COLUMNS = ["model", "q_id", "trial", "search_calls", "messages"]


class LeakAuditError(OracleProtoError, ValueError):
    """Bad leak-audit input (a run, a sheet, a set); the message names the file and the rule."""


@dataclass(frozen=True)
class RunResults:
    """A run's search results by layer, and the sha256 of the trial table they came from."""

    run_sha256: str
    by_layer: dict[str, list[AuditedResult]]

    @property
    def populations(self) -> dict[str, int]:
        return {layer: len(self.by_layer[layer]) for layer in LAYERS}


def run_results(run_dir: str | os.PathLike[str]) -> RunResults:
    """Every search result of the run in ``run_dir`` (its trials.parquet), by layer."""
    path = Path(run_dir) / TRIALS_FILE
    if not path.exists():
        raise LeakAuditError(f"{run_dir}: no {TRIALS_FILE} (give the folder `oracleproto evaluate --out` wrote)")
    try:
        table = read_parquet(path, columns=TRACE_COLUMNS)
    except InputError as exc:
        raise LeakAuditError(f"{path}: {exc} (a trial table needs the columns {TRACE_COLUMNS})") from exc
    by_layer: dict[str, list[AuditedResult]] = {layer: [] for layer in LAYERS}
    for row in table.to_pylist():
        for result in trial_results(row):
            by_layer[result.layer].append(result)
    for results in by_layer.values():
        results.sort(key=lambda r: r.result_id)
    return RunResults(sha256_file(path), by_layer)


def draw_sample(results: RunResults, per_layer: int, seed: int) -> list[AuditedResult]:
    """``min(per_layer, population)`` results of each layer, seeded per layer; sorted by id."""
    if per_layer < 1:
        raise LeakAuditError(f"--per-layer must be >= 1, got {per_layer}")
    sample: list[AuditedResult] = []
    for layer in LAYERS:
        population = results.by_layer[layer]
        sample.extend(random.Random(f"{seed}|{layer}").sample(population, min(per_layer, len(population))))
    return sorted(sample, key=lambda r: r.result_id)


def audit_hash(run_sha256: str, seed: int, per_layer: int, populations: Mapping[str, int], sampled: Iterable[tuple[str, str]]) -> str:
    """sha256 binding a sheet to its run: the run, the draw, the populations, every (id, layer)."""
    digest = hashlib.sha256(f"{run_sha256}\n{seed}\n{per_layer}\n".encode())
    for layer in LAYERS:
        digest.update(f"{layer}={populations.get(layer, 0)}\n".encode())
    for sample_id, layer in sorted(sampled):
        digest.update(f"{sample_id}\t{layer}\n".encode())
    return digest.hexdigest()


def sheet_rows(results: RunResults, sample: Sequence[AuditedResult], seed: int, per_layer: int) -> list[list[object]]:
    populations = results.populations
    binding = audit_hash(results.run_sha256, seed, per_layer, populations, [(r.result_id, r.layer) for r in sample])
    rows = []
    for result in sample:
        values = asdict(result)
        rows.append(
            [values[name] for name in RESULT_COLUMNS]
            + ["", ""]
            + [populations[result.layer], results.run_sha256, seed, per_layer, binding]
        )
    return rows


def write_sheet(run_dir: str | os.PathLike[str], per_layer: int, seed: int, out: str | os.PathLike[str]) -> dict[str, tuple[int, int]]:
    """Draw the sample of ``run_dir`` and write its label sheet; ``{layer: (sampled, population)}``."""
    results = run_results(run_dir)
    if not any(results.populations.values()):
        raise LeakAuditError(f"{run_dir}: no trial of this run searched, so there is nothing to audit")
    sample = draw_sample(results, per_layer, seed)
    write_csv(SHEET_COLUMNS, sheet_rows(results, sample, seed, per_layer), out)
    sampled = {layer: sum(1 for r in sample if r.layer == layer) for layer in LAYERS}
    return {layer: (sampled[layer], results.populations[layer]) for layer in LAYERS}
