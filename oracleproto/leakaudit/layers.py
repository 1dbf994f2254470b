"""Every search result of an evaluation run, placed in the layer that decided its fate.

The leakage barrier is a pipeline, and each result leaves it at one layer:

1. ``dropped_by_date_filter`` — withheld for its *published date*: the backend's date mask
   (the archive's hard filter: ``masked_results`` in the audit) or the heuristic layer's
   date-metadata check (``drop:published_after_cutoff:…``, ``drop:undated``,
   ``drop:unreadable_published_date``);
2. ``dropped_by_heuristic`` — its date passed, but its title or text names a date after χ
   (``drop:date_after_cutoff:…``);
3. ``dropped_by_detector`` — passed both, and the LLM detector said drop (or failed, which
   drops: fail closed);
4. ``shown_to_model`` — in the tool message the model read.

A trial's ``search_calls`` entries (the audit, Table 18 plus ``dropped_results`` and
``masked_results``) say what each layer did; the text of a shown result comes from the
tool message itself. The k-th search call of a trial answered the k-th tool message that
carries a ``results`` list (the loop appends both together; refused tool calls get a tool
message with no ``results`` and no search call).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from oracleproto.errors import OracleProtoError
from oracleproto.harness.detector import KEEP

DATE_FILTER, HEURISTIC, DETECTOR, SHOWN = (
    "dropped_by_date_filter",
    "dropped_by_heuristic",
    "dropped_by_detector",
    "shown_to_model",
)
LAYERS = (DATE_FILTER, HEURISTIC, DETECTOR, SHOWN)  # pipeline order
# Each filter and the layer holding what it dropped.
FILTER_LAYERS = {"date_filter": DATE_FILTER, "heuristic": HEURISTIC, "detector": DETECTOR}
DATE_METADATA_REASONS = ("drop:published_after_cutoff", "drop:undated", "drop:unreadable_published_date")
NOT_REACHED = ""  # a layer that never saw the result (an earlier one dropped it, or it was off)


class RunTraceError(OracleProtoError, ValueError):
    """A run's traces cannot be read as search results (names the trial and search)."""


@dataclass(frozen=True)
class AuditedResult:
    """One search result as the label sheet shows it (never the question's answer)."""

    result_id: str
    layer: str
    model: str
    q_id: str
    trial: int
    search: int  # 1-based position of the search call in the trial
    position: str  # "r<i>": raw index i of the backend's results; "m<j>": j-th date-masked result
    prediction_cutoff: str
    url: str
    published_date: str
    title: str
    text: str
    date_filter_verdict: str
    heuristic_verdict: str
    detector_verdict: str
    detector_reason: str


def result_id(model: str, q_id: str, trial: int, search: int, position: str) -> str:
    """A stable id for a result of a run: sha256-16 of where it was found."""
    return hashlib.sha256("\x1f".join((model, q_id, str(trial), str(search), position)).encode()).hexdigest()[:16]


def layer_columns(heuristic: str | None, detector: str | None) -> tuple[str, str, str, str]:
    """``(layer, date_filter_verdict, heuristic_verdict, detector_verdict)`` of a screened result.

    ``heuristic`` is the heuristic layer's verdict (None when it was off), ``detector``
    the LLM detector's (None when it did not judge the result).
    """
    detector_verdict = detector if detector is not None else NOT_REACHED
    if heuristic is None:
        return (SHOWN if detector in (None, KEEP) else DETECTOR), NOT_REACHED, NOT_REACHED, detector_verdict
    if heuristic.startswith(DATE_METADATA_REASONS):
        return DATE_FILTER, heuristic, NOT_REACHED, NOT_REACHED
    if heuristic != KEEP:
        return HEURISTIC, KEEP, heuristic, NOT_REACHED
    return (SHOWN if detector in (None, KEEP) else DETECTOR), KEEP, KEEP, detector_verdict


def readable_text(payload: Mapping[str, Any]) -> str:
    """The text of a result as the model reads it: content, then raw content if any."""
    content = str(payload.get("content") or "")
    raw = payload.get("raw_content")
    return f"{content}\n\n[raw_content]\n{raw}" if raw else content


def search_payloads(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The tool-message payloads that answered a search, in order (refusals left out)."""
    payloads = []
    for message in messages:
        if message.get("role") != "tool":
            continue
        try:
            payload = json.loads(message.get("content") or "")
        except (TypeError, ValueError):
            continue
        if isinstance(payload, dict) and isinstance(payload.get("results"), list):
            payloads.append(payload)
    return payloads


@dataclass(frozen=True)
class _Where:
    model: str
    q_id: str
    trial: int
    search: int
    cutoff: str

    def describe(self) -> str:
        return f"model {self.model}, q_id {self.q_id}, trial {self.trial}, search {self.search}"

    def result(self, position: str, layer: str, payload: Mapping[str, Any], verdicts: tuple[str, str, str], reason: str) -> AuditedResult:
        return AuditedResult(
            result_id=result_id(self.model, self.q_id, self.trial, self.search, position),
            layer=layer,
            model=self.model,
            q_id=self.q_id,
            trial=self.trial,
            search=self.search,
            position=position,
            prediction_cutoff=self.cutoff,
            url=str(payload.get("url") or ""),
            published_date=str(payload.get("published_date") or ""),
            title=str(payload.get("title") or ""),
            text=readable_text(payload),
            date_filter_verdict=verdicts[0],
            heuristic_verdict=verdicts[1],
            detector_verdict=verdicts[2],
            detector_reason=reason,
        )


def _verdict_list(entry: Mapping[str, Any], key: str, n_raw: int, where: _Where) -> list[Any]:
    values = entry.get(key)
    if values is None:
        return [None] * n_raw
    if not isinstance(values, list) or len(values) != n_raw:
        raise RunTraceError(f"{where.describe()}: {key} does not hold one verdict per raw result")
    return values


def call_results(entry: Mapping[str, Any], payload: Mapping[str, Any], where: _Where) -> list[AuditedResult]:
    """The results of one search call: the date-masked ones, then the raw results in order."""
    if entry.get("error") is not None:
        return []
    shown = iter(payload["results"])
    n_raw = int(entry.get("n_results_raw", len(payload["results"])))
    if "dropped_results" not in entry and n_raw != len(payload["results"]):
        raise RunTraceError(
            f"{where.describe()}: the run does not record the results its filters dropped "
            "(evaluate again with this version of oracleproto to audit it)"
        )
    dropped = {d["index"]: d for d in entry.get("dropped_results", [])}
    heuristic = _verdict_list(entry, "heuristic_verdicts", n_raw, where)
    detector = _verdict_list(entry, "detector_verdicts", n_raw, where)
    reasons = _verdict_list(entry, "detector_reasons", n_raw, where)
    results = [
        where.result(f"m{j}", DATE_FILTER, masked, (masked["verdict"], NOT_REACHED, NOT_REACHED), "")
        for j, masked in enumerate(entry.get("masked_results", []), start=1)
    ]
    for index in range(n_raw):
        layer, *verdicts = layer_columns(heuristic[index], detector[index])
        result = next(shown, None) if layer == SHOWN else dropped.get(index)
        if result is None:
            raise RunTraceError(f"{where.describe()}: result {index} is neither in the tool message nor recorded as dropped")
        results.append(where.result(f"r{index}", layer, result, tuple(verdicts), str(reasons[index] or "")))
    if next(shown, None) is not None:
        raise RunTraceError(f"{where.describe()}: the tool message holds more results than the audit kept")
    return results


def trial_results(row: Mapping[str, Any]) -> list[AuditedResult]:
    """Every search result of one trial row (``model, q_id, trial, search_calls, messages``)."""
    calls = json.loads(row["search_calls"]) if row.get("search_calls") else []
    if not calls:
        return []
    payloads = search_payloads(json.loads(row["messages"]) if row.get("messages") else [])
    model, q_id, trial = str(row["model"]), str(row["q_id"]), int(row["trial"])
    if len(payloads) != len(calls):
        raise RunTraceError(f"model {model}, q_id {q_id}, trial {trial}: {len(calls)} search call(s) but {len(payloads)} search result message(s)")
    results = []
    for search, (entry, payload) in enumerate(zip(calls, payloads, strict=True), start=1):
        results.extend(call_results(entry, payload, _Where(model, q_id, trial, search, str(entry.get("end_date") or ""))))
    return results
