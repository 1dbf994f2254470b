"""The ``archive`` search backend: BM25 over an offline dated-document archive.

The archive is a parquet or JSON-lines file with ``doc_id, url, title, published_date,
content``. A search scores every document with BM25 (``bm25s``, on title + content),
applies the **hard filter** ``published_date <= χ`` *before* taking the top R, so masked
documents never crowd out admissible ones, and ranks by score, ties by ``doc_id``.
Documents without a ``published_date`` are excluded by the hard filter: an archive is
curated data, so an undated document is treated as unsafe rather than passed on as
"unknown". Documents with no query term in common (score 0) are not results.

For the leak audit, each search also records the documents the hard filter withheld from
its top R (``masked_results`` in the audit, with the verdict ``drop:published_after_cutoff:…``
or ``drop:undated``): they are what the date filter kept from the model.

The index is built once per process per archive file (keyed by path, size and mtime)
and shared. Runs on an archive are free and reproducible, so searches are not put in the
call cache; the leak detector's calls on archive hits still are.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import bm25s
import numpy as np
import pyarrow as pa
from bm25s.stopwords import STOPWORDS_EN

from oracleproto.errors import ConfigError, InputError
from oracleproto.harness.detector import (
    LeakDetector,
    published_date_verdict,
    screened_outcome,
)
from oracleproto.harness.replay import CallCache, CallContext
from oracleproto.harness.search import (
    SearchHit,
    SearchOutcome,
    SearchSettings,
    check_detector,
    check_end_date,
    register_backend,
    truncate,
)
from oracleproto.io import read_table

ARCHIVE_COLUMNS = ("doc_id", "url", "title", "published_date", "content")
SCORE_DECIMALS = 4  # scores are shown rounded so float noise never reorders or changes bytes
# The index is built with bm25s.tokenize(stopwords="en"): lower-cased, its default token
# pattern, English stopwords removed. Queries get the same tokens from these, compiled
# once (bm25s.tokenize sets them up anew on every call: ≈0.2 ms a query).
_TOKEN_PATTERN = re.compile(r"(?u)\b\w\w+\b")
_STOPWORDS = frozenset(STOPWORDS_EN)




@dataclass(frozen=True)
class ArchiveIndex:
    """Documents sorted by ``doc_id`` and their BM25 index."""

    doc_ids: tuple[str, ...]
    urls: tuple[str, ...]
    titles: tuple[str, ...]
    contents: tuple[str, ...]
    published: np.ndarray  # datetime64[D]; NaT for undated documents
    retriever: bm25s.BM25 | None  # None when no document has an indexable word

    def search(self, query: str, end_date: date, k: int) -> list[tuple[int, float]]:
        """Top ``k`` (row, score) among documents dated <= ``end_date`` with score > 0."""
        return self.search_with_masked(query, end_date, k)[0]

    def search_with_masked(
        self, query: str, end_date: date, k: int
    ) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
        """:meth:`search`, and the documents the date mask withheld: those of the top ``k``
        of the same search without the mask that are undated or dated after ``end_date``."""
        if self.retriever is None:
            return [], []
        token_ids = self.retriever.get_tokens_ids(query_tokens(query))
        if not token_ids:
            return [], []
        scores = self.retriever.get_scores_from_ids(token_ids)
        admissible = ~np.isnat(self.published) & (self.published <= np.datetime64(end_date, "D"))
        matching = scores > 0
        unmasked = _top(np.flatnonzero(matching), scores, k)
        masked = [(row, score) for row, score in unmasked if not admissible[row]]
        return _top(np.flatnonzero(admissible & matching), scores, k), masked


def _top(rows: np.ndarray, scores: np.ndarray, k: int) -> list[tuple[int, float]]:
    """The ``k`` best ``rows`` by score; rows are in doc_id order, so a stable sort on
    -score breaks ties by doc_id."""
    ranked = rows[np.argsort(-scores[rows], kind="stable")][:k]
    return [(int(row), round(float(scores[row]), SCORE_DECIMALS)) for row in ranked]


def query_tokens(text: str) -> list[str]:
    """The tokens ``bm25s.tokenize(text, stopwords="en")`` gives (the index's tokenisation)."""
    return [word for word in _TOKEN_PATTERN.findall(text.lower()) if word not in _STOPWORDS]


def build_index(table: pa.Table, source: str = "archive") -> ArchiveIndex:
    """Validate an archive table and index it; errors name the row, doc_id and field."""
    missing = [c for c in ARCHIVE_COLUMNS if c not in table.column_names]
    if missing:
        raise InputError(f"{source}: missing column(s) {missing}; an archive needs {list(ARCHIVE_COLUMNS)}")
    records = table.select(list(ARCHIVE_COLUMNS)).to_pylist()
    seen: dict[str, int] = {}
    for row, record in enumerate(records, start=1):
        doc_id = record["doc_id"]
        if not isinstance(doc_id, str) or not doc_id.strip():
            raise InputError(f"{source}: row {row}: doc_id must be a non-empty string, got {doc_id!r}")
        if doc_id in seen:
            raise InputError(f"{source}: row {row}: doc_id {doc_id!r} repeats row {seen[doc_id]}")
        seen[doc_id] = row
        for name in ("url", "title", "content"):
            if record[name] is not None and not isinstance(record[name], str):
                raise InputError(f"{source}: row {row} (doc_id={doc_id}): {name} must be a string")
        record["published_date"] = _as_date(record["published_date"], f"{source}: row {row} (doc_id={doc_id})")
    records.sort(key=lambda r: r["doc_id"])
    texts = [f"{r['title'] or ''}\n{r['content'] or ''}" for r in records]
    tokenized = bm25s.tokenize(texts, stopwords="en", show_progress=False)
    retriever = None
    if tokenized.vocab:
        retriever = bm25s.BM25()
        retriever.index(tokenized, show_progress=False)
    return ArchiveIndex(
        doc_ids=tuple(r["doc_id"] for r in records),
        urls=tuple(r["url"] or "" for r in records),
        titles=tuple(r["title"] or "" for r in records),
        contents=tuple(r["content"] or "" for r in records),
        published=np.array([r["published_date"] or "NaT" for r in records], dtype="datetime64[D]"),
        retriever=retriever,
    )


def _as_date(value: object, where: str) -> str | None:
    """ISO date text of a published_date cell (date, datetime or ISO string); None if null."""
    if value is None:
        return None
    if isinstance(value, date):  # also datetime: its date part
        return value.isoformat()[:10]
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        try:
            return date.fromisoformat(text[:10]).isoformat()
        except ValueError:
            pass
    raise InputError(f"{where}: published_date {value!r} is not an ISO date (YYYY-MM-DD)")


_INDEXES: dict[tuple[str, int, int], ArchiveIndex] = {}


def load_index(path: str | os.PathLike[str]) -> ArchiveIndex:
    """The index of the archive at ``path``, built on first use in this process."""
    resolved = Path(path).resolve()
    try:
        stat = resolved.stat()
    except OSError as exc:
        raise InputError(f"cannot read archive {path}: {exc.strerror or exc}") from exc
    signature = (str(resolved), stat.st_size, stat.st_mtime_ns)
    index = _INDEXES.get(signature)
    if index is None:
        index = _INDEXES[signature] = build_index(read_table(resolved), source=str(path))
    return index


class ArchiveBackend:
    name = "archive"

    def __init__(self, settings: SearchSettings, detector: LeakDetector | None, index: ArchiveIndex):
        check_detector(settings, detector)
        self.settings = settings
        self._detector = detector
        self._index = index

    async def search(self, query: str, end_date: date, context: CallContext) -> SearchOutcome:
        cutoff = check_end_date(end_date)
        found, withheld = self._index.search_with_masked(query, cutoff, self.settings.max_results)
        hits = [self._hit(row, score) for row, score in found]
        masked = [(hit, _mask_verdict(hit, cutoff)) for hit in (self._hit(row, score) for row, score in withheld)]
        return await screened_outcome(
            query, cutoff, hits, None, settings=self.settings, detector=self._detector, context=context,
            audit={"backend": self.name, "faults": [], "error_kind": None}, masked=masked,
        )

    def _hit(self, row: int, score: float) -> SearchHit:
        index = self._index
        published = index.published[row]
        return SearchHit(
            title=index.titles[row],
            url=index.urls[row],
            content=truncate(index.contents[row], self.settings.raw_content_max_chars) or "",
            published_date=None if np.isnat(published) else str(published),
            score=score,
        )

    async def aclose(self) -> None:
        """Nothing to release: the index is shared by the process."""


def _mask_verdict(hit: SearchHit, cutoff: date) -> str:
    """The hard filter's verdict in the heuristic's words (undated: dropped whatever the
    undated policy, see the module docstring)."""
    verdict = published_date_verdict(hit.published_date, cutoff, undated="drop")
    assert verdict is not None, "the hard filter withholds only undated documents and those dated after χ"
    return verdict


@register_backend("archive")
def _make_archive(settings: SearchSettings, cache: CallCache, detector: LeakDetector | None) -> ArchiveBackend:
    if not settings.archive_path:
        raise ConfigError("search settings: backend 'archive' needs archive_path (a .parquet or .jsonl file)")
    return ArchiveBackend(settings, detector, load_index(settings.archive_path))
