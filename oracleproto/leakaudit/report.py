"""``leak-audit report``: leak rates per layer, the residual rate and each filter's precision
and recall, from a labelled sheet.

- per layer: labelled n (leak + clean; ``unsure`` and blank rows are counted, not used),
  leaks, rate and its Wilson 95 % interval;
- the residual leak rate: leaks among ``shown_to_model``, with its interval and n — the
  paper's per-audit-item figure, here measured on what the model actually read;
- per filter (date filter, heuristic, detector), when its dropped side and every populated
  layer after it were labelled: precision = leak rate of what it dropped (Wilson), recall =
  the population-weighted share of the leaks reaching it that it dropped (Jeffreys interval,
  see :mod:`~oracleproto.leakaudit.stats`), since layers are sampled at different rates;
- the leak-conditional pass-through (the paper's 1 − recall of Table 19): the weighted
  share of all leaks that reached the model.

A sheet is used only if its rows still hash to the ``audit_hash`` they carry (no row added,
removed or moved to another layer); with ``run_dir`` the sample is also drawn again from
the run and must be the same.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from oracleproto.io import write_json, write_text
from oracleproto.leakaudit.layers import FILTER_LAYERS, LAYERS, SHOWN
from oracleproto.leakaudit.sample import (
    SHEET_COLUMNS,
    LeakAuditError,
    audit_hash,
    draw_sample,
    run_results,
)
from oracleproto.leakaudit.stats import Stratum, proportion, stratified_share
from oracleproto.publish.hub import interval_text, leak_audit_text, percent

LEAK, CLEAN, UNSURE = "leak", "clean", "unsure"
LABELS = (LEAK, CLEAN, UNSURE)
REPORT_JSON, REPORT_MD = "report.json", "report.md"


def read_sheet(path: str | os.PathLike[str]) -> list[dict[str, str]]:
    """The rows of a label sheet; an unknown or missing column is an error naming it."""
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            reader = csv.DictReader(fh)
            header = reader.fieldnames or []
            rows = list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise LeakAuditError(f"cannot read sheet {path}: {exc}") from exc
    missing = [name for name in SHEET_COLUMNS if name not in header]
    if missing:
        raise LeakAuditError(f"{path}: not a leak-audit sheet, missing column(s) {missing}")
    return rows


def _label(row: Mapping[str, str], path: str | os.PathLike[str]) -> str:
    value = (row["label"] or "").strip().lower()
    if value and value not in LABELS:
        raise LeakAuditError(f"{path}: sample {row['sample_id']}: label {row['label']!r} is not one of {list(LABELS)} (or blank)")
    return value


def _constant(rows: Sequence[Mapping[str, str]], column: str, path: str | os.PathLike[str]) -> str:
    values = {row[column] for row in rows}
    if len(values) != 1:
        raise LeakAuditError(f"{path}: column {column} must hold one value on every row, found {len(values)}")
    return values.pop()


def sheet_binding(rows: Sequence[Mapping[str, str]], path: str | os.PathLike[str]) -> dict[str, Any]:
    """The run and draw a sheet belongs to, after checking its rows still hash to ``audit_hash``."""
    if not rows:
        raise LeakAuditError(f"{path}: the sheet has no rows")
    run_sha256, seed, per_layer, stored = (_constant(rows, name, path) for name in ("run_sha256", "seed", "per_layer", "audit_hash"))
    populations: dict[str, int] = {}
    for row in rows:
        if row["layer"] not in LAYERS:
            raise LeakAuditError(f"{path}: sample {row['sample_id']}: layer {row['layer']!r} is not one of {list(LAYERS)}")
        populations[row["layer"]] = int(row["layer_population"])
    try:
        recomputed = audit_hash(run_sha256, int(seed), int(per_layer), populations, [(r["sample_id"], r["layer"]) for r in rows])
    except ValueError as exc:
        raise LeakAuditError(f"{path}: seed and per_layer must be integers: {exc}") from exc
    if recomputed != stored:
        raise LeakAuditError(
            f"{path}: the rows do not match the sample drawn from run {run_sha256[:12]} (audit hash {stored[:12]}, rows hash to "
            f"{recomputed[:12]}): rows were added, removed or changed layer; draw a new sheet with `leak-audit sample`"
        )
    return {"run_sha256": run_sha256, "seed": int(seed), "per_layer": int(per_layer), "audit_hash": stored, "populations": populations}


def check_against_run(binding: Mapping[str, Any], rows: Sequence[Mapping[str, str]], run_dir: str | os.PathLike[str]) -> None:
    """The sheet's rows are exactly the sample ``leak-audit sample`` draws from ``run_dir``."""
    results = run_results(run_dir)
    if results.run_sha256 != binding["run_sha256"]:
        raise LeakAuditError(f"{run_dir}: trials.parquet is not the run this sheet was drawn from (sha256 {results.run_sha256[:12]} ≠ {binding['run_sha256'][:12]})")
    expected = {r.result_id for r in draw_sample(results, binding["per_layer"], binding["seed"])}
    if expected != {row["sample_id"] for row in rows}:
        raise LeakAuditError(f"{run_dir}: the sheet's sample ids are not the sample drawn from this run with seed {binding['seed']}")


def layer_counts(rows: Sequence[Mapping[str, str]], path: str | os.PathLike[str]) -> dict[str, dict[str, int]]:
    counts = {layer: {"sampled": 0, LEAK: 0, CLEAN: 0, UNSURE: 0, "unlabelled": 0} for layer in LAYERS}
    for row in rows:
        label = _label(row, path)
        counts[row["layer"]]["sampled"] += 1
        counts[row["layer"]][label or "unlabelled"] += 1
    return counts


def summarise(counts: Mapping[str, Mapping[str, int]], populations: Mapping[str, int]) -> dict[str, Any]:
    """The report's numbers from per-layer label counts and layer populations (pure)."""
    strata = {layer: Stratum(populations.get(layer, 0), counts[layer][LEAK], counts[layer][LEAK] + counts[layer][CLEAN]) for layer in LAYERS}
    layers = {
        layer: {
            "population": strata[layer].population,
            **counts[layer],
            "labelled": strata[layer].labelled,
            "leak_rate": proportion(strata[layer].positives, strata[layer].labelled).to_json(),
        }
        for layer in LAYERS
    }
    filters = {}
    for name, dropped_layer in FILTER_LAYERS.items():
        downstream = LAYERS[LAYERS.index(dropped_layer) :]
        reaching = {layer: strata[layer] for layer in downstream}
        filters[name] = {
            "dropped_layer": dropped_layer,
            "precision": proportion(strata[dropped_layer].positives, strata[dropped_layer].labelled).to_json(),
            "recall": stratified_share(reaching, [dropped_layer]).to_json(),
        }
    shown = strata[SHOWN]
    return {
        "layers": layers,
        "residual_leak_rate": proportion(shown.positives, shown.labelled).to_json(),
        "filters": filters,
        "leak_pass_through": stratified_share(strata, [SHOWN]).to_json(),
        "method": {
            "interval": "Wilson 95 % for rates and precision; Jeffreys 95 % posterior interval for population-weighted shares (recall, pass-through)",
            "labelled": "leak + clean; unsure and blank labels are counted but not used",
        },
    }


def build_report(sheet: str | os.PathLike[str], run_dir: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    rows = read_sheet(sheet)
    binding = sheet_binding(rows, sheet)
    if run_dir is not None:
        check_against_run(binding, rows, run_dir)
    report = summarise(layer_counts(rows, sheet), binding["populations"])
    return {"sheet": {k: v for k, v in binding.items() if k != "populations"}, "checked_against_run": run_dir is not None, **report}


def report_markdown(report: Mapping[str, Any]) -> str:
    """report.md: the layer table, the residual rate, the filters."""
    lines = [
        "# Leak audit",
        "",
        (
            f"Sheet drawn from run `{report['sheet']['run_sha256'][:12]}` (seed {report['sheet']['seed']}, "
            f"{report['sheet']['per_layer']} per layer), audit hash `{report['sheet']['audit_hash'][:12]}`."
        ),
        "",
        "| layer | population | sampled | labelled | leaks | unsure | unlabelled | leak rate | Wilson 95 % |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for layer, stats in report["layers"].items():
        lines.append(
            f"| {layer} | {stats['population']} | {stats['sampled']} | {stats['labelled']} | {stats[LEAK]} | {stats[UNSURE]} "
            f"| {stats['unlabelled']} | {percent(stats['leak_rate']['rate'])} | {interval_text(stats['leak_rate'])} |"
        )
    lines += ["", leak_audit_text(report), "", "| filter | precision | Wilson 95 % | recall | Jeffreys 95 % |", "|---|---:|---|---:|---|"]
    for name, stats in report["filters"].items():
        recall = stats["recall"]
        recall_text = percent(recall["estimate"]) if recall["estimate"] is not None else f"– ({recall['undefined_because']})"
        lines.append(f"| {name} | {percent(stats['precision']['rate'])} | {interval_text(stats['precision'])} | {recall_text} | {interval_text(recall)} |")
    lines += ["", f"Intervals: {report['method']['interval']}. Labelled: {report['method']['labelled']}.", ""]
    return "\n".join(lines)


def write_report(report: Mapping[str, Any], out_dir: str | os.PathLike[str]) -> Path:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    write_json(report, out / REPORT_JSON)
    write_text(report_markdown(report), out / REPORT_MD)
    return out
