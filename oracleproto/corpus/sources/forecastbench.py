"""``forecastbench:DIR`` — ForecastBench's question and resolution sets
(``DIR/question_sets/*.json`` + ``DIR/resolution_sets/*.json``, as in
github.com/forecastingresearch/forecastbench-datasets ``datasets/``).

Each resolution entry is one raw row. A resolved (question, resolution date) pair with an
outcome of 0 or 1 is a yes/no question: the text's ``{forecast_due_date}`` and
``{resolution_date}`` filled in, options ["Yes", "No"], answer A for 1 and B for 0,
``end_time`` the resolution date, and an id derived from (source, id, resolution date) —
dataset questions repeat one id with several dates. The background, the resolution
criteria and, for market questions, the crowd's probability at the freeze date are kept as
extra raw columns. Unresolved market rows (whose ``resolved_to`` is a market price) and
combination questions are rows with a reason, so the audit quarantines them.

The data is CC BY-SA 4.0: the licence and attribution travel in the source metadata.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from oracleproto.corpus.sources.raw import raw_table
from oracleproto.corpus.sources.registry import SourceData, register_source
from oracleproto.corpus.sources.values import table_from_records
from oracleproto.errors import InputError
from oracleproto.io import sha256_file

LICENSE = {
    "license": "cc-by-sa-4.0",
    "license_name": "CC BY-SA 4.0",
    "attribution": (
        "Forecasting Research Institute, ForecastBench — Karger, Bastani, Yueh-Han, Jacobs, Halawi, Zhang, "
        'Tetlock, "ForecastBench: A Dynamic Benchmark of AI Forecasting Capabilities", ICLR 2025. '
        "A derived dataset must carry the same licence and this attribution."
    ),
    "homepage": "https://github.com/forecastingresearch/forecastbench-datasets",
}
# Sources whose freeze-date value is the crowd's probability (for dataset sources it is a
# reference value of the series, e.g. a fatality count).
MARKET_SOURCES = frozenset({"manifold", "metaculus", "polymarket", "infer"})
_ID_LENGTH = 24


def _load(path: Path, key: str, where: str) -> tuple[dict[str, Any], list[Any]]:
    """A set file's top-level object and its list under ``key``."""
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError) as exc:
        raise InputError(f"cannot read source {where}: {path.name} is not readable JSON ({exc})") from exc
    entries = data.get(key) if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise InputError(f"cannot read source {where}: {path.name} has no {key!r} list")
    return data, entries


def _question_index(questions: list[Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (q["source"], q["id"]): q
        for q in questions
        if isinstance(q, dict) and isinstance(q.get("source"), str) and isinstance(q.get("id"), str)
    }


def stable_id(source: Any, question_id: Any, resolution_date: Any) -> str:
    """The question id of one (source, id, resolution date) pair: 24 hex digits of sha256."""
    key = json.dumps(["forecastbench", source, question_id, resolution_date], ensure_ascii=False, default=str)
    # surrogatepass: a lone surrogate (JSON may escape one) still hashes; valid text as UTF-8.
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:_ID_LENGTH]


def _problem(resolution: dict[str, Any], question: dict[str, Any] | None) -> str | None:
    """Why a resolution entry is not a resolved yes/no question (None: it is one)."""
    qid = resolution.get("id")
    if isinstance(qid, list):
        return f"combination question of {len(qid)} questions (direction {resolution.get('direction')}): not a single yes/no question"
    if question is None:
        return f"question {resolution.get('source')}/{qid} is not in its question set"
    outcome = resolution.get("resolved_to")
    if resolution.get("resolved") is not True:
        return f"not resolved: resolved_to {outcome!r} is the market's probability, not an outcome"
    if isinstance(outcome, bool) or outcome not in (0, 1):
        return f"resolved_to {outcome!r} is not an outcome of 0 or 1"
    if not isinstance(question.get("question"), str) or not isinstance(resolution.get("resolution_date"), str):
        return "question text or resolution date is not text"
    texts = (question.get(key) for key in ("question", "background", "resolution_criteria"))
    if not all(_valid_unicode(text) for text in (*texts, resolution["resolution_date"])):
        return "question text, background, resolution criteria or resolution date is not valid Unicode text"
    return None


def _valid_unicode(text: Any) -> bool:
    """Text UTF-8 can hold (JSON may escape a lone surrogate, "\\ud800"); a non-text value is
    judged where it is used."""
    if not isinstance(text, str):
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _filled(text: Any, due_date: str, resolution_date: str) -> str | None:
    if not isinstance(text, str):
        return None
    return text.replace("{forecast_due_date}", due_date).replace("{resolution_date}", resolution_date)


def _crowd_probability(question: dict[str, Any]) -> float | None:
    if question.get("source") not in MARKET_SOURCES:
        return None
    try:
        value = float(question.get("freeze_datetime_value"))
    except (TypeError, ValueError):
        return None
    return value if 0.0 <= value <= 1.0 else None


def _row(resolution: dict[str, Any], question: dict[str, Any] | None, due_date: str) -> dict[str, Any]:
    """One raw row's fields (null where the pair is not a resolved yes/no question)."""
    row: dict[str, Any] = {"id": stable_id(resolution.get("source"), resolution.get("id"), resolution.get("resolution_date"))}
    problem = _problem(resolution, question)
    # A problem quoting a value quotes it as UTF-8 can hold (a lone surrogate escaped).
    row["parse_error"] = None if problem is None else problem.encode("utf-8", "backslashreplace").decode("utf-8")
    if problem is None:
        date = resolution["resolution_date"]
        row.update(
            choice_type="single",
            question_type="yes_no",
            event=_filled(question["question"], due_date, date),
            options=["Yes", "No"],
            answer="A" if resolution["resolved_to"] == 1 else "B",
            end_time=date,
            background=_filled(question.get("background"), due_date, date),
            resolution_criteria=_filled(question.get("resolution_criteria"), due_date, date),
            crowd_probability=_crowd_probability(question),
        )
    return row


def _original(resolution: dict[str, Any], question: dict[str, Any] | None, set_name: str, due_date: str) -> dict[str, Any]:
    """The source record of a row: the resolution entry, its question's fields, its set."""
    return {**(question or {}), **resolution, "question_set": set_name, "forecast_due_date": due_date}


def _resolution_set(path: Path, question_dir: Path, where: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]], Path]:
    """(raw-row fields, original records, question-set file) of one resolution set."""
    data, resolutions = _load(path, "resolutions", where)
    set_name, due_date = data.get("question_set"), data.get("forecast_due_date")
    if not isinstance(set_name, str) or not isinstance(due_date, str) or Path(set_name).name != set_name:
        raise InputError(f"cannot read source {where}: {path.name} names no question_set file and forecast_due_date")
    question_path = question_dir / set_name
    if not question_path.is_file():
        raise InputError(f"cannot read source {where}: {path.name} resolves {set_name}, which is not in {question_dir}")
    questions = _question_index(_load(question_path, "questions", where)[1])
    rows, originals = [], []
    for resolution in resolutions:
        if not isinstance(resolution, dict):
            rows.append({"parse_error": f"a resolution entry of {path.name} is not an object"})
            originals.append({"question_set": set_name, "forecast_due_date": due_date})
            continue
        qid, source = resolution.get("id"), resolution.get("source")
        question = questions.get((source, qid)) if isinstance(qid, str) and isinstance(source, str) else None
        rows.append(_row(resolution, question, due_date))
        originals.append(_original(resolution, question, set_name, due_date))
    return rows, originals, question_path


def _counts(rows: list[dict[str, Any]]) -> dict[str, int]:
    problems = [row.get("parse_error") or "" for row in rows]
    return {
        "resolution_rows": len(rows),
        "resolved_yes_no": problems.count(""),
        "distinct_resolved_yes_no": len({row["id"] for row in rows if not row.get("parse_error")}),
        "unresolved": sum(p.startswith("not resolved") for p in problems),
        "combination": sum(p.startswith("combination") for p in problems),
        "other_problems": sum(bool(p) and not p.startswith(("not resolved", "combination")) for p in problems),
    }


def _raw_batch(rows: list[dict[str, Any]], originals: list[dict[str, Any]]) -> pa.Table:
    columns = {name: [row.get(name) for row in rows] for name in (
        "id", "choice_type", "question_type", "event", "options", "answer", "end_time",
        "parse_error", "background", "resolution_criteria", "crowd_probability",
    )}
    return raw_table(source_row=np.arange(len(rows), dtype=np.int64), original=table_from_records(originals)[0], **columns)


@register_source("forecastbench")
def read_forecastbench_source(arg: str, options: dict[str, Any]) -> SourceData:
    where = f"forecastbench:{arg}"
    root = Path(arg)
    resolution_paths = sorted((root / "resolution_sets").glob("*.json")) if arg else []
    if not resolution_paths:
        raise InputError(f"cannot read source {where}: no resolution_sets/*.json under {arg or '(no folder given)'}")
    rows, originals, read = [], [], []
    for path in resolution_paths:
        set_rows, set_originals, question_path = _resolution_set(path, root / "question_sets", where)
        rows += set_rows
        originals += set_originals
        read += [path, question_path]
    digest = hashlib.sha256()
    for path in dict.fromkeys(read):
        digest.update(f"{path.relative_to(root)}\t{sha256_file(path)}\n".encode())
    metadata = {
        **LICENSE,
        "timezone": "UTC",
        "resolution_sets": [p.name for p in resolution_paths],
        "question_sets": sorted({p.name for p in read if p.parent.name == "question_sets"}),
        "counts": _counts(rows),
    }
    return SourceData(uri=where, batches=iter([_raw_batch(rows, originals)]), source_hash=digest.hexdigest(), metadata=metadata)
