"""The corpus build, stage by stage, as file-to-file functions.

Each function reads its inputs from disk and writes its outputs under an output root,
so the DVC stages (``pipeline/``) and ``oracleproto build`` produce the same layout:

    raw/rows.parquet, raw/source.json          ingest
    questions.parquet, audit/{quarantine.parquet,collapsed.parquet,report.json}   audit
    splits/cutoff-YYYY-MM-DD/{train,test}.parquet, splits/{admission_log.parquet,summary.json}   admit
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from oracleproto.config import Audit, EndTimeRange, Ingest, Params
from oracleproto.corpus import admit as adm
from oracleproto.corpus.audit import AuditConfig, audit, quarantine_with_originals
from oracleproto.corpus.sources import RAW_COLUMNS, open_source
from oracleproto.errors import InputError
from oracleproto.io import (
    atomic_path,
    json_text,
    read_parquet,
    table_metadata,
    write_json,
    write_parquet,
    write_parquet_parts,
)
from oracleproto.parallel import ordered_map
from oracleproto.prompts import prompt_templates_hash
from oracleproto.schema import (
    ADMISSION_LOG_SCHEMA,
    COLLAPSED_SCHEMA,
    QUARANTINE_SCHEMA,
    QUESTION_SCHEMA,
    RAW_SCHEMA,
)
from oracleproto.validation import check_questions

RAW_ROWS = Path("raw/rows.parquet")
RAW_SOURCE = Path("raw/source.json")
QUESTIONS = Path("questions.parquet")
QUARANTINE = Path("audit/quarantine.parquet")
COLLAPSED = Path("audit/collapsed.parquet")
AUDIT_REPORT = Path("audit/report.json")
SPLITS = Path("splits")


def templates_hash(templates: Mapping[str, str] | None) -> str | None:
    """The prompt templates' hash (Table 22), None when the source carries none."""
    return prompt_templates_hash(templates) if templates else None


# ---------------------------------------------------------------------------------------- ingest
def ingest(settings: Ingest, out: Path) -> dict[str, Any]:
    """Read ``settings.source`` into ``raw/rows.parquet`` (streamed batch by batch) + ``raw/source.json``."""
    source_uri = settings.source
    data = open_source(source_uri, settings)
    schema: pa.Schema | None = None

    def parts():
        nonlocal schema
        for batch in data.batches:
            if schema is None:
                schema = batch.schema
            elif batch.schema != schema:
                try:
                    batch = batch.cast(schema)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError) as exc:
                    raise InputError(f"cannot read source {source_uri}: batches disagree on column types ({exc})") from exc
            yield batch

    batches = parts()
    first = next(batches, None)
    if first is None:
        raise InputError(f"cannot read source {source_uri}: it holds no rows")
    out_schema = pa.schema(list(RAW_SCHEMA.remove(RAW_SCHEMA.get_field_index("raw"))) + [first.schema.field("original")])
    rows = 0

    def counted():
        nonlocal rows
        for batch in itertools.chain([first], batches):
            rows += batch.num_rows
            yield batch

    write_parquet_parts(counted(), out / RAW_ROWS, out_schema, metadata={"source": data.uri})
    info = {
        "source": data.uri,
        "source_hash": data.source_hash,
        "rows": rows,
        "prompt_templates": data.prompt_templates,
        "metadata": data.metadata,
    }
    write_json(info, out / RAW_SOURCE)
    return info


# ---------------------------------------------------------------------------------------- audit
def _originals(raw_path: Path, source_rows: pa.Array) -> dict[int, dict[str, Any]]:
    """Original source records of ``source_rows``, read row group by row group."""
    if len(source_rows) == 0:
        return {}
    wanted = pa.array(source_rows)
    found: dict[int, dict[str, Any]] = {}
    parquet = pq.ParquetFile(raw_path)
    for index in range(parquet.num_row_groups):
        group = parquet.read_row_group(index, columns=["source_row", "original"])
        mask = pc.is_in(group.column("source_row"), value_set=wanted)
        for rec in _python_records(group.filter(mask)):
            found[rec["source_row"]] = rec["original"]
    return found


def _temporal_as_text(typ: pa.DataType) -> pa.DataType:
    """``typ`` with every date, time, timestamp and duration inside it as text."""
    if pa.types.is_temporal(typ):
        return pa.string()
    if pa.types.is_struct(typ):
        return pa.struct([field.with_type(_temporal_as_text(field.type)) for field in typ])
    if pa.types.is_map(typ):
        return pa.map_(_temporal_as_text(typ.key_type), _temporal_as_text(typ.item_type))
    if pa.types.is_list(typ):
        return pa.list_(typ.value_field.with_type(_temporal_as_text(typ.value_type)))
    return typ


def _python_records(table: pa.Table) -> list[dict[str, Any]]:
    """Rows as Python values; a date or time no Python value holds (year 0, year 300000, a
    timestamp past 9999) as the text Arrow writes for it, so its record is still kept."""
    try:
        return table.to_pylist()
    except (OverflowError, ValueError):
        return table.cast(pa.schema([field.with_type(_temporal_as_text(field.type)) for field in table.schema])).to_pylist()


def audit_config(params: Params) -> AuditConfig:
    """The audit section plus the ingest levels (the level rule is applied by the audit)."""
    cues = {name: getattr(params.audit, name) for name in set(Audit.model_fields) - set(EndTimeRange.model_fields)}
    return AuditConfig(levels=params.ingest.levels, end_times=params.audit, **cues)


def run_audit(raw_dir: Path, config: AuditConfig, out: Path) -> dict[str, Any]:
    raw_path = raw_dir / RAW_ROWS
    info = json.loads((raw_dir / RAW_SOURCE).read_text())
    raw = read_parquet(raw_path, columns=list(RAW_COLUMNS))
    result = audit(raw, config)
    del raw
    templates = info.get("prompt_templates")
    metadata = {
        "source": info["source"],
        "source_hash": info["source_hash"],
        "source_metadata": info.get("metadata") or {},
        "timezone": (info.get("metadata") or {}).get("timezone", "Asia/Shanghai"),
        "prompt_templates": templates,
        "prompt_templates_hash": templates_hash(templates),
        "counts_by_type": result.report["counts_by_type"],
        "rows": result.questions.num_rows,
    }
    # Three things at once (parquet encoding, pyarrow kernels and the re-read release the
    # GIL): questions.parquet is encoded into a staged file that becomes questions.parquet
    # only once validation against the question contract has passed; the validation runs
    # on another thread; the main thread re-reads the quarantined rows' originals.
    with atomic_path(out / QUESTIONS) as staged, ThreadPoolExecutor(max_workers=2) as pool:
        # audit() returns the questions in QUESTION_SORT order already.
        written = pool.submit(write_parquet, result.questions, staged, QUESTION_SCHEMA, metadata=metadata)
        validated = pool.submit(check_questions, result.questions, config.end_times)
        quarantine = quarantine_with_originals(result.quarantine, _originals(raw_path, result.quarantine.column("source_row")))
        validated.result()
        written.result()
        write_parquet(quarantine, out / QUARANTINE, QUARANTINE_SCHEMA, sort_by=("source_row",), metadata={"source": info["source"]})
        write_parquet(result.collapsed, out / COLLAPSED, COLLAPSED_SCHEMA, sort_by=("source_row",), metadata={"source": info["source"]})
    report = {**result.report, "source": info["source"], "source_hash": info["source_hash"]}
    if result.questions.num_rows:
        ends = result.questions.column("end_time")
        report["end_time_range"] = {"min": pc.min(ends).as_py().isoformat(), "max": pc.max(ends).as_py().isoformat()}
    write_json(report, out / AUDIT_REPORT)
    return report


# ---------------------------------------------------------------------------------------- admit
def run_admit(questions_path: Path, config: adm.AdmissionConfig, out: Path) -> dict[str, Any]:
    questions = read_parquet(questions_path)
    base_meta = table_metadata(questions_path)
    splits_dir = out / SPLITS
    if splits_dir.exists():
        shutil.rmtree(splits_dir)  # a cutoff dropped from params must not leave a stale split behind

    def write_split_set(split_set: tuple[str, pa.Table, pa.Table]) -> None:
        name, train, test = split_set
        models = sorted(m for m, c in config.models.items() if adm.split_name(c) == name)
        for split, table in (("train", train), ("test", test)):
            meta = {**base_meta, "split": split, "config": name, "models": models, "delta_days": config.delta_days, "rows": table.num_rows}
            # Already in (end_time, id) order: admission keeps the audited order.
            write_parquet(table, splits_dir / name / f"{split}.parquet", QUESTION_SCHEMA, metadata=meta)

    # Parquet encoding releases the GIL and dominates this stage: the log and the split sets
    # are written on other threads at once (each file's bytes do not depend on the order).
    with ThreadPoolExecutor(max_workers=1) as log_writer:
        log_written = log_writer.submit(
            write_parquet_parts,
            adm.admission_log(questions, config),
            splits_dir / "admission_log.parquet",
            ADMISSION_LOG_SCHEMA,
            metadata={"delta_days": config.delta_days},
        )
        for _ in ordered_map(write_split_set, adm.split_sets(questions, config)):
            pass
        log_written.result()
    summary = adm.summary(questions, config)
    write_json(summary, splits_dir / "summary.json")
    return summary


def _staging_paths(out: Path) -> tuple[Path, Path]:
    """(where a build is assembled, where the previous output waits during the swap)."""
    return out.parent / f".{out.name}.staging", out.parent / f".{out.name}.previous"


def _recover(out: Path) -> None:
    """Undo what a killed build left: a previous output mid-swap goes back, debris goes."""
    staging, previous = _staging_paths(out)
    if previous.exists() and not out.exists():
        os.replace(previous, out)
    for debris in (staging, previous):
        if debris.exists():
            shutil.rmtree(debris)


def build(params: Params, out: Path) -> dict[str, Any]:
    """ingest → audit → admit, assembled in a staging folder beside ``out`` and swapped in
    only when every stage succeeded: a failed or killed build leaves the previous complete
    output (a rerun first restores it if the kill fell between the two renames of the swap,
    and removes staging debris). Returns the audit report and admission summary."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    _recover(out)
    staging, previous = _staging_paths(out)
    pool = pa.default_memory_pool()
    try:
        ingest(params.ingest, staging)
        pool.release_unused()  # stages run in one process here: hand freed memory back between them
        report = run_audit(staging, audit_config(params), staging)
        pool.release_unused()
        summary = run_admit(staging / QUESTIONS, adm.admission_config(params), staging)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if out.exists():
        os.replace(out, previous)
    os.replace(staging, out)
    shutil.rmtree(previous, ignore_errors=True)
    return {"audit": report, "admission": summary}


__all__ = ["build", "ingest", "run_audit", "run_admit", "templates_hash", "json_text"]
