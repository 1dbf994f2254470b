"""Small builders shared by the source tests."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa

from oracleproto.corpus.sources import open_source
from oracleproto.corpus.sources.futurex import ground_truth_literal, render_prompt

SEVEN = [
    {"id": "q1", "choice_type": "single", "question_type": "yes_no", "event": "Will A?", "options": ["Yes", "No"], "answer": "A", "end_time": "2024-05-01"},
    {"id": "q2", "choice_type": "multi", "question_type": "multiple_choice", "event": "Which B?", "options": ["x", "y", "z"], "answer": "A, C", "end_time": "2024-06-01"},
]


def futurex_row(i: int, event: str, options: list[str], qtype: str, answer: str, end: str = "2025-01-02", **extra) -> dict:
    """One record in FutureX-Past's raw layout."""
    return {
        "id": f"{i:024x}",
        "prompt": render_prompt(event, options, end, qtype),
        "ground_truth": ground_truth_literal(qtype, options, answer),
        "end_time": end,
        "level": 1 if qtype != "multiple_choice" else 2,
        **extra,
    }


FUTUREX = [
    futurex_row(0, "Will X happen by June?", ["Yes", "No"], "yes_no", "B", title="t0"),
    futurex_row(1, "Who wins the final (2025)?", ["Team Ä", "Team B"], "binary_named", "A", title="t1"),
    futurex_row(2, "Which films win?", ["P", "Q", "R", "S"], "multiple_choice", "B, D", title="t2"),
    futurex_row(3, "Which of many?", [f"opt {i}" for i in range(30)], "multiple_choice", "[, \\", title="t3"),
]


def read_raw(uri: str, **options) -> tuple[pa.Table, object]:
    """All raw rows of a source, and its SourceData."""
    data = open_source(uri, options)
    batches = list(data.batches)
    return (pa.concat_tables(batches) if batches else pa.table({})), data


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def reasons(table: pa.Table) -> list[str | None]:
    return table.column("parse_error").to_pylist()
