"""The questions an evaluation runs on: a question table read and checked, with the prompt
templates and fingerprints it travels with, and the jobs (a model + its question set)."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from oracleproto.config import EndTimeRange
from oracleproto.errors import InputError
from oracleproto.harness.react import TrialQuestion
from oracleproto.harness.replay import canonical_json
from oracleproto.harness.settings import ModelSpec
from oracleproto.io import read_table, sha256_file
from oracleproto.prompts import (
    PromptQuestion,
    prompt_templates_hash,
    templates_from_schema,
)
from oracleproto.schema import QUESTION_SCHEMA, TABLE_METADATA_KEY
from oracleproto.validation import check_failures, failure_count, report_lines


@dataclass(frozen=True)
class QuestionRecord:
    q_id: str
    question_type: str
    choice_type: str
    event: str
    options: tuple[str, ...]
    answer: str
    end_time: dt.date

    def prompt_view(self) -> PromptQuestion:
        """What the renderer may see: everything but the answer."""
        return PromptQuestion(self.q_id, self.question_type, self.choice_type, self.event, self.options, self.end_time)

    def loop_view(self) -> TrialQuestion:
        return TrialQuestion(self.q_id, self.question_type, self.choice_type, self.options, self.end_time)


def question_records(table: pa.Table, source: str, end_times: EndTimeRange | None = None) -> list[QuestionRecord]:
    """Rows of a question table, checked against the question contract (``end_times``: the
    ``audit`` params section's plausible end_time range; None: its defaults), sorted by id."""
    missing = [name for name in QUESTION_SCHEMA.names if name not in table.column_names]
    if missing:
        raise InputError(f"{source}: question table lacks column(s) {missing}")
    table = table.select(QUESTION_SCHEMA.names)
    groups = check_failures(table, end_times)
    if groups:
        named = "\n  ".join(report_lines(groups))
        raise InputError(f"{source}: question table breaks the question contract ({failure_count(groups)} failure(s)):\n  {named}")
    try:
        table = table.cast(QUESTION_SCHEMA.remove_metadata())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        raise InputError(f"{source}: columns do not match the question schema: {exc}") from exc
    records = [
        QuestionRecord(row["id"], row["question_type"], row["choice_type"], row["event"], tuple(row["options"]), row["answer"], row["end_time"])
        for row in table.to_pylist()
    ]
    return sorted(records, key=lambda r: r.q_id)


@dataclass(frozen=True)
class QuestionSet:
    """A question table with the templates and fingerprints it travels with."""

    path: str
    records: tuple[QuestionRecord, ...]
    templates: dict[str, str]
    templates_from_corpus: bool
    source_hash: str
    metadata_hash: str | None

    @classmethod
    def load(cls, path: str | os.PathLike[str], end_times: EndTimeRange | None = None) -> QuestionSet:
        try:
            table = read_table(path)
        except InputError as exc:
            raise InputError(str(exc)) from exc
        try:
            templates, from_corpus = templates_from_schema(table.schema)
        except InputError as exc:
            raise InputError(f"{path}: {exc}") from exc
        raw_meta = (table.schema.metadata or {}).get(TABLE_METADATA_KEY)
        metadata_hash = None
        if raw_meta is not None:
            try:
                metadata_hash = hashlib.sha256(canonical_json(json.loads(raw_meta)).encode()).hexdigest()
            except json.JSONDecodeError:
                metadata_hash = hashlib.sha256(raw_meta).hexdigest()
        return cls(
            path=str(path),
            records=tuple(question_records(table, str(path), end_times)),
            templates=templates,
            templates_from_corpus=from_corpus,
            source_hash=sha256_file(path),
            metadata_hash=metadata_hash,
        )

    @property
    def templates_hash(self) -> str:
        return prompt_templates_hash(self.templates)

    def fingerprint(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "source_hash": self.source_hash,
            "metadata_hash": self.metadata_hash,
            "prompt_templates_hash": self.templates_hash,
            "templates_from_corpus": self.templates_from_corpus,
            "rows": len(self.records),
        }


@dataclass(frozen=True)
class EvalJob:
    spec: ModelSpec
    questions: QuestionSet
    train: QuestionSet | None = None

    @property
    def label(self) -> str:
        return self.spec.label

