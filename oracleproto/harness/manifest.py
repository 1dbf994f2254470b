"""The run manifest (paper Table 22's hash chain + the redacted config snapshot) and the
fingerprints that decide whether two runs may resume each other."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from oracleproto import SCHEMA_VERSION
from oracleproto.errors import ConfigError, InputError
from oracleproto.harness.questions import EvalJob
from oracleproto.harness.replay import canonical_json
from oracleproto.harness.runstore import store_filename
from oracleproto.harness.settings import EvalSettings, resume_fingerprint
from oracleproto.prompts import belief_text, reflection_text, text_hash16


def detector_snapshot(settings: EvalSettings, env: Mapping[str, str], searching: bool) -> dict[str, Any] | None:
    """The LLM leak detector's snapshot fields (model, prompt hash, call parameters), or None."""
    if not searching or settings.detector != "llm" or not settings.search_enabled:
        return None
    from oracleproto.harness.detector import DetectorSettings

    return DetectorSettings.from_env(env, require_endpoint=False).snapshot()


def recorded_snapshot(manifest: Path) -> dict[str, Any] | None:
    """The config snapshot in the manifest of the run that recorded a call cache (the
    manifest beside the cache file), or None when there is no manifest there."""
    if not manifest.exists():
        return None
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"{manifest} is not a readable run manifest ({exc}); it tells a replay what the run was recorded with") from None
    snapshot = data.get("config_snapshot") if isinstance(data, dict) else None
    if not isinstance(snapshot, dict):
        raise InputError(f"{manifest} has no config_snapshot: it cannot tell a replay what the run was recorded with")
    return snapshot


def replayed_detector_snapshot(
    settings: EvalSettings, searching: bool, recorded: Mapping[str, Any] | None, manifest: Path, env: Mapping[str, str]
) -> dict[str, Any] | None:
    """The leak detector a replay re-derives trials with: the recorded run's (model, prompt
    hash, call parameters), so a replay needs no environment. Without a recorded manifest
    (a cache file copied alone) ``DETECTOR_MODEL`` still names it."""
    if not searching or settings.detector != "llm" or not settings.search_enabled:
        return None
    from oracleproto.harness.detector import DetectorSettings, detector_prompt_hash

    if recorded is None:
        if not env.get("DETECTOR_MODEL", "").strip():
            raise ConfigError(
                f"cannot replay the LLM leak detector: there is no {manifest.name} beside the call cache "
                f"({manifest}) to name its model, and DETECTOR_MODEL is not set"
            )
        return DetectorSettings.from_env(env, require_endpoint=False).snapshot()
    detector = recorded.get("detector")
    if not isinstance(detector, Mapping) or not detector.get("leak_detector_model"):
        raise ConfigError(
            f"cannot replay the LLM leak detector: {manifest} names none (config_snapshot.detector.leak_detector_model); "
            "replay with the --detector the run was recorded with"
        )
    if detector.get("leak_detector_prompt_hash") != detector_prompt_hash():
        raise ConfigError(
            f"cannot replay the LLM leak detector: its prompt changed since the run in {manifest.parent} was recorded "
            f"(prompt hash {detector.get('leak_detector_prompt_hash')} then, {detector_prompt_hash()} now)"
        )
    return DetectorSettings.from_snapshot(detector).snapshot()


def detector_fingerprint(settings: EvalSettings) -> str | None:
    if settings.detector != "llm" or not settings.search_enabled:
        return None
    from oracleproto.harness.detector import detector_prompt_hash

    return detector_prompt_hash()


def job_fingerprint(job: EvalJob, snapshot: Mapping[str, Any], settings: EvalSettings) -> dict[str, Any]:
    fingerprint = resume_fingerprint(snapshot)
    return {
        "settings": fingerprint["settings"],
        "model": next(m for m in fingerprint["models"] if m["label"] == job.label),
        "questions": job.questions.fingerprint(),
        "train": job.train.fingerprint() if job.train else None,
        "reflection_protocol_hash": text_hash16(reflection_text(settings.protocols)),
        "belief_protocol_hash": text_hash16(belief_text(settings.protocols)),
        "leak_detector_prompt_hash": detector_fingerprint(settings),
    }


def build_manifest(
    jobs: Sequence[EvalJob],
    settings: EvalSettings,
    snapshot: Mapping[str, Any],
    counts: Mapping[str, Mapping[str, int]] | None = None,
    trials: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    sources: dict[str, Any] = {}
    for job in jobs:
        for qs in (job.questions, job.train):
            if qs is not None:
                sources[qs.path] = qs.fingerprint()
    models = {
        job.label: {
            "slug": job.spec.slug,
            "cutoff": job.spec.cutoff.isoformat() if job.spec.cutoff else None,
            "questions": job.questions.path,
            "train": job.train.path if job.train else None,
            "store": f"db/{store_filename(job.label)}",
            **({"counts": dict(counts[job.label])} if counts and job.label in counts else {}),
        }
        for job in sorted(jobs, key=lambda j: j.label)
    }
    return {
        "schema_version": SCHEMA_VERSION,
        "budgets": snapshot["settings"]["budgets"],
        "models": models,
        "hash_chain": {
            "sources": sources,
            "reflection_protocol_hash": text_hash16(reflection_text(settings.protocols)),
            "belief_protocol_hash": text_hash16(belief_text(settings.protocols)),
            "leak_detector_prompt_hash": detector_fingerprint(settings),
            "config_snapshot_hash": hashlib.sha256(canonical_json(snapshot).encode()).hexdigest(),
        },
        "config_snapshot": snapshot,
        "trials": dict(trials) if trials else None,
    }


def run_key(jobs: Sequence[EvalJob], settings: EvalSettings, snapshot: Mapping[str, Any]) -> str:
    """12 hex characters naming a run by everything that shapes its trials.

    Two runs with the same key may resume each other; a changed param or input gives a
    new key (so a DVC re-run after a param change starts fresh instead of failing).
    """
    fingerprints = [job_fingerprint(job, snapshot, settings) for job in sorted(jobs, key=lambda j: j.label)]
    return hashlib.sha256(canonical_json(fingerprints).encode()).hexdigest()[:12]

