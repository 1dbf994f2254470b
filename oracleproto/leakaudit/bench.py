"""``leak-audit bench``: a detector layer scored on a labelled set of (document, χ) pairs.

Each pair is a document (title, url, published date, content) and a prediction cutoff χ,
labelled ``leak`` or ``clean`` by the set's written rule (data/leak_audit/README.md). A
layer *drops* a pair it judges to leak. Scored:

- precision: leaks among the dropped pairs; recall: dropped among the leaks;
- residual leak rate: leaks among the pairs the layer keeps (what a model would read) —
  on this set, whose leak share is fixed by its composition, not by a search engine;
- pass-through: kept among the leaks (1 − recall, the paper's Table 19 figure);

each a Wilson 95 % interval, overall, by difficulty and by kind of case.

Layers: ``heuristic`` (dates only, free), ``llm`` (the LLM detector alone on every pair, its
calls through the record/replay cache, so a recorded bench replays offline with no key),
``heuristic+llm`` (the pipeline of detector mode ``llm``: the LLM judges only what the
heuristic kept). A failed LLM verdict drops, as in a run (fail closed), and is counted.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from oracleproto.errors import InputError
from oracleproto.harness.detector import (
    KEEP,
    DetectorSettings,
    LeakDetector,
    heuristic_verdict,
)
from oracleproto.harness.replay import CallCache, CallContext
from oracleproto.harness.search import SearchHit
from oracleproto.io import read_jsonl
from oracleproto.leakaudit.sample import LeakAuditError
from oracleproto.leakaudit.stats import proportion

LAYER_CHOICES = ("heuristic", "llm", "heuristic+llm")
PAIR_FIELDS = ("pair_id", "kind", "difficulty", "chi", "label", "title", "url", "published_date", "content")
BENCH_CONTEXT_MODEL = "leak-audit-bench"


@dataclass(frozen=True)
class AuditPair:
    pair_id: str
    kind: str
    difficulty: str
    chi: dt.date
    leaks: bool
    hit: SearchHit


def load_pairs(path: str | os.PathLike[str]) -> list[AuditPair]:
    """The pairs of a labelled set (JSON lines); a bad row is an error naming its line."""
    try:
        records = read_jsonl(path)
    except InputError as exc:
        raise LeakAuditError(str(exc)) from exc
    pairs, seen = [], set()
    for line, record in enumerate(records, start=1):
        missing = [name for name in PAIR_FIELDS if name not in record]
        if missing:
            raise LeakAuditError(f"{path}: line {line}: missing field(s) {missing}")
        if record["label"] not in ("leak", "clean"):
            raise LeakAuditError(f"{path}: line {line}: label {record['label']!r} is not leak or clean")
        if record["pair_id"] in seen:
            raise LeakAuditError(f"{path}: line {line}: pair_id {record['pair_id']!r} repeats")
        seen.add(record["pair_id"])
        try:
            chi = dt.date.fromisoformat(record["chi"])
        except (TypeError, ValueError) as exc:
            raise LeakAuditError(f"{path}: line {line}: chi {record['chi']!r} is not an ISO date") from exc
        hit = SearchHit(title=record["title"], url=record["url"], content=record["content"], published_date=record["published_date"])
        pairs.append(AuditPair(record["pair_id"], record["kind"], record["difficulty"], chi, record["label"] == "leak", hit))
    if not pairs:
        raise LeakAuditError(f"{path}: the set has no pairs")
    return pairs


def heuristic_drops(pairs: Sequence[AuditPair], undated: str = "drop") -> list[str]:
    """The heuristic layer's verdict per pair (``keep`` or ``drop:<reason>``)."""
    return [heuristic_verdict(p.hit, p.chi, undated) for p in pairs]


async def llm_verdicts(pairs: Sequence[AuditPair], detector: LeakDetector) -> list[str]:
    """The LLM detector's verdict per pair (``keep``, ``drop`` or ``failed:<kind>``); each call
    is keyed by its pair id in the detector's call cache."""
    contexts = [CallContext(BENCH_CONTEXT_MODEL, p.pair_id, 0, 0) for p in pairs]
    verdicts = await asyncio.gather(*(detector.judge(p.hit, p.chi, c) for p, c in zip(pairs, contexts, strict=True)))
    return [v.verdict for v in verdicts]


async def layer_verdicts(pairs: Sequence[AuditPair], layer: str, detector: LeakDetector | None, undated: str = "drop") -> list[str]:
    """Verdicts of ``layer`` (one of :data:`LAYER_CHOICES`) per pair."""
    if layer not in LAYER_CHOICES:
        raise LeakAuditError(f"detector layer must be one of {list(LAYER_CHOICES)}, got {layer!r}")
    if layer == "heuristic":
        return heuristic_drops(pairs, undated)
    if detector is None:
        raise LeakAuditError(f"detector layer {layer!r} needs an LLM detector")
    if layer == "llm":
        return await llm_verdicts(pairs, detector)
    first = heuristic_drops(pairs, undated)
    passed = [p for p, v in zip(pairs, first, strict=True) if v == KEEP]
    second = iter(await llm_verdicts(passed, detector))
    return [next(second) if v == KEEP else v for v in first]


def confusion(leaks: Iterable[bool], drops: Iterable[bool]) -> dict[str, Any]:
    """Counts and the four rates (Wilson 95 %) of a layer's drops against the labels."""
    outcomes = Counter(zip(leaks, drops, strict=True))
    tp, fp, fn, tn = outcomes[True, True], outcomes[False, True], outcomes[True, False], outcomes[False, False]
    return {
        "n": tp + fp + fn + tn,
        "counts": {"leak_dropped": tp, "clean_dropped": fp, "leak_kept": fn, "clean_kept": tn},
        "precision": proportion(tp, tp + fp).to_json(),
        "recall": proportion(tp, tp + fn).to_json(),
        "residual_leak_rate": proportion(fn, fn + tn).to_json(),
        "pass_through": proportion(fn, tp + fn).to_json(),
    }


def score_layer(pairs: Sequence[AuditPair], verdicts: Sequence[str]) -> dict[str, Any]:
    """Overall, by difficulty and by kind; failed LLM verdicts count as drops."""
    drops = [v != KEEP for v in verdicts]

    def subset(key: str) -> dict[str, Any]:
        groups = sorted({getattr(p, key) for p in pairs})
        return {g: confusion([p.leaks for p in pairs if getattr(p, key) == g], [d for p, d in zip(pairs, drops, strict=True) if getattr(p, key) == g]) for g in groups}

    return {
        "overall": confusion([p.leaks for p in pairs], drops),
        "by_difficulty": subset("difficulty"),
        "by_kind": subset("kind"),
        "failed_verdicts": sum(v.startswith("failed:") for v in verdicts),
        "composition": {"pairs": len(pairs), "leak": sum(p.leaks for p in pairs), "clean": sum(not p.leaks for p in pairs)},
    }


def _rate(stat: Mapping[str, Any]) -> str:
    if stat["rate"] is None:
        return "–"
    return f"{100 * stat['rate']:.1f} % [{100 * stat['ci_low']:.1f}, {100 * stat['ci_high']:.1f}] ({stat['successes']}/{stat['n']})"


def bench_lines(result: Mapping[str, Any]) -> list[str]:
    """The figures as the command prints them."""
    overall, composition = result["overall"], result["composition"]
    return [
        f"layer {result['layer']} on {result['set']}: {composition['pairs']} pairs ({composition['leak']} leak, {composition['clean']} clean)",
        f"precision           {_rate(overall['precision'])}",
        f"recall              {_rate(overall['recall'])}",
        f"residual leak rate  {_rate(overall['residual_leak_rate'])}   (leaks among kept pairs)",
        f"pass-through        {_rate(overall['pass_through'])}   (leaks kept, 1 - recall)",
        *(f"  {name:<5} recall {_rate(c['recall'])}, precision {_rate(c['precision'])}" for name, c in result["by_difficulty"].items()),
        *([f"failed LLM verdicts (dropped, fail closed): {result['failed_verdicts']}"] if result["failed_verdicts"] else []),
    ]


def bench_markdown(result: Mapping[str, Any]) -> str:
    """bench.md: the overall figures and a table by kind of case."""
    lines = ["# Leak detector bench", "", *(f"    {line}" for line in bench_lines(result)), "", "| kind | pairs | leak | dropped | kept |", "|---|---:|---:|---:|---:|"]
    for kind, stats in result["by_kind"].items():
        c = stats["counts"]
        lines.append(f"| {kind} | {stats['n']} | {c['leak_dropped'] + c['leak_kept']} | {c['leak_dropped'] + c['clean_dropped']} | {c['leak_kept'] + c['clean_kept']} |")
    return "\n".join([*lines, ""])


def bench(
    set_path: str | os.PathLike[str],
    layer: str,
    *,
    undated: str = "drop",
    cache_path: str | os.PathLike[str] | None = None,
    cache_mode: str = "record",
    detector_model: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Score ``layer`` on the set at ``set_path``. The LLM layers read ``DETECTOR_*`` (falling
    back to ``OPENAI_*``) from ``environ`` and record or replay every call at ``cache_path``;
    a replay needs neither endpoint nor key."""
    if layer not in LAYER_CHOICES:
        raise LeakAuditError(f"--detector must be one of {list(LAYER_CHOICES)}, got {layer!r}")
    pairs = load_pairs(set_path)
    if undated not in ("drop", "keep"):
        raise LeakAuditError(f"--undated must be drop or keep, got {undated!r}")
    if layer == "heuristic":
        verdicts = asyncio.run(layer_verdicts(pairs, layer, None, undated))
    else:
        if cache_path is None:
            raise LeakAuditError(f"detector layer {layer!r} needs --cache (the file its calls are recorded in, replayed from)")
        environ = os.environ if environ is None else environ
        settings = DetectorSettings.from_env(environ, model=detector_model, require_endpoint=cache_mode != "replay")
        verdicts = asyncio.run(_with_detector(pairs, layer, settings, CallCache(cache_path, cache_mode), undated))  # type: ignore[arg-type]
    result = score_layer(pairs, verdicts)
    return {"set": str(set_path), "layer": layer, "undated": undated, **result}


async def _with_detector(pairs: Sequence[AuditPair], layer: str, settings: DetectorSettings, cache: CallCache, undated: str) -> list[str]:
    detector = LeakDetector(settings, cache)
    try:
        return await layer_verdicts(pairs, layer, detector, undated)
    finally:
        await detector.aclose()
        cache.close()
