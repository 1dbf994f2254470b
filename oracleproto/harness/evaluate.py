"""Evaluation orchestration (paper Algorithm 1, B.6–B.7): plan, admit, run, resume, export.

A run evaluates *jobs* (a model spec + its question set, plus the train split for
``baseline:base_rate``) into ``out_dir``:

```
out_dir/manifest.json        hash chain (Table 22) + redacted config snapshot
out_dir/trials.parquet       canonical export, exactly TRIAL_SCHEMA, sorted (model, q_id, trial)
out_dir/db/<label>.<h>.db    one SQLite run store per model label (resume state, created_at)
out_dir/calls.sqlite         record/replay cache of every outbound call (unless mode "off")
out_dir/logs/evaluate.log    the run's log (times live here, never in artifacts)
```

Start-up checks happen before any work: unique labels, no ``:online`` slug, every key
present (unless replaying), search settings valid. Then, per job, questions outside
κ ≤ χ < τ get a ``skipped_training_cutoff`` row for every trial, written before any LLM
work, and (q_id, trial) pairs already accounted for (Eq. 36) are skipped. The remaining
trials run as asyncio tasks: the main-LLM and search channels each have their own
semaphore (Table 20) and twice as many trials as LLM slots are kept in flight so the LLM
channel stays busy while other trials search. An auth failure or a replay miss cancels
everything in flight and aborts the run (:class:`RunAborted`); so does a channel whose
live calls fail on transport ``evaluate.max_consecutive_failures`` times in a row
(:mod:`oracleproto.harness.streaks`): the trials that met those failures are forgotten, so
the same command resumes them. Any other failure of a trial becomes an error row with its
classified kind.

A replay (``cache: replay``) reads nothing from the environment: model clients get no
endpoint and no key, and the leak detector's model and the redacted keys come from the
recorded run's manifest (the ``manifest.json`` beside the call cache).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import datetime as dt
import functools
import logging
import os
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from oracleproto.admission import admissible
from oracleproto.config import SearchOptions
from oracleproto.errors import ConfigError, InputError, RunAborted
from oracleproto.harness.bounded_http import ChannelSlots
from oracleproto.harness.faults import AuthError, classify
from oracleproto.harness.llm import BrowsingBarrierError, ChannelMeter, ChatClient
from oracleproto.harness.manifest import (
    build_manifest,
    detector_snapshot,
    job_fingerprint,
    recorded_snapshot,
    replayed_detector_snapshot,
)
from oracleproto.harness.plan import CACHE_FILE, LOG_FILE, MANIFEST_FILE, TRIALS_FILE
from oracleproto.harness.preflight import check_endpoints, every_problem
from oracleproto.harness.progress import EvalSummary, ProgressCallback, ProgressState
from oracleproto.harness.providers import (
    ModelProvider,
    OfflineQuestion,
    ProviderInputs,
    offline_prefix,
    offline_provider,
)
from oracleproto.harness.questions import EvalJob, QuestionRecord
from oracleproto.harness.react import LoopConfig, LoopResult, run_react
from oracleproto.harness.replay import CallCache, CallContext, ReplayMissError
from oracleproto.harness.rows import cutoff_row, loop_row
from oracleproto.harness.runstore import (
    RunStore,
    export_trials,
    store_filename,
    write_manifest,
)
from oracleproto.harness.settings import (
    SECRETS,
    Endpoint,
    EvalSettings,
    ScrubSecretsFilter,
    config_snapshot,
    replay_endpoint,
    resolve_endpoint,
    search_key_envs,
)
from oracleproto.harness.streaks import ChannelDown, FailureStreaks
from oracleproto.io import sha256_file
from oracleproto.prompts import render_user_prompt

log = logging.getLogger("oracleproto.harness.evaluate")

SEARCH_CHANNEL = "search"




# ---------------------------------------------------------------------------------------
# Channels


class MeteredSearch:
    """The search backend behind the search-channel semaphore, counted in flight."""

    def __init__(self, backend: Any, semaphore: asyncio.Semaphore, meter: ChannelMeter) -> None:
        self._backend = backend
        self._semaphore = semaphore
        self._meter = meter

    async def search(self, query: str, end_date: dt.date, context: CallContext) -> Any:
        async with self._semaphore, self._meter.track(SEARCH_CHANNEL):
            return await self._backend.search(query, end_date, context)


SearchFactory = Callable[[CallCache, EvalSettings, Mapping[str, str]], Any]


def default_search_factory(
    cache: CallCache,
    settings: EvalSettings,
    env: Mapping[str, str],
    meter: ChannelMeter | None = None,
    detector_snapshot: Mapping[str, Any] | None = None,
) -> Any:
    """The configured backend (``archive`` / ``tavily``) and, for mode ``llm``, its leak detector
    (its calls counted in flight on ``meter``, for the progress bar).

    The backends read their own variables (``TAVILY_API_KEY``, ``TAVILY_BASE_URL``) from the
    process environment; the detector reads ``DETECTOR_*`` from ``env``, except in a replay:
    then it is the one ``detector_snapshot`` (the run's config snapshot) names.
    """
    from oracleproto.harness.detector import DetectorSettings, LeakDetector
    from oracleproto.harness.search import SearchSettings, make_backend

    search_settings = SearchSettings(
        **settings.search_options.fields_of(SearchOptions),
        max_results=settings.budgets.max_results,
        detector_mode=settings.detector,
        archive_path=settings.archive_path,
    )
    try:
        detector = None
        if settings.detector == "llm":
            if cache.mode == "replay" and detector_snapshot is not None:
                detector_settings = DetectorSettings.from_snapshot(detector_snapshot)
            else:
                detector_settings = DetectorSettings.from_env(env, require_endpoint=cache.mode != "replay")
            detector_settings = dataclasses.replace(detector_settings, concurrency=settings.concurrency.detector)
            detector = LeakDetector(detector_settings, cache, meter=meter)
        return make_backend(settings.search_backend, search_settings, cache, detector)
    except (ValueError, OSError) as exc:
        raise ConfigError(f"search backend {settings.search_backend!r}: {exc}") from exc


# ---------------------------------------------------------------------------------------
# The run


def check_jobs(jobs: Sequence[EvalJob]) -> None:
    if not jobs:
        raise InputError("nothing to evaluate: no model given")
    labels = [job.label for job in jobs]
    duplicates = sorted({label for label in labels if labels.count(label) > 1})
    if duplicates:
        raise InputError(f"model label(s) {duplicates} appear twice; give each evaluated model a unique label")
    for job in jobs:
        if job.spec.slug == "baseline:base_rate" and job.train is None:
            raise InputError(f"{job.label}: baseline:base_rate needs the train split of its cutoff")


@dataclass
class _Run:
    """The state of one run: model providers, search, stores, prompt cache, progress."""

    settings: EvalSettings
    providers: dict[str, ModelProvider]
    search: MeteredSearch | None
    stores: dict[str, RunStore]
    state: ProgressState
    progress: ProgressCallback | None
    cache: CallCache | None = None
    streaks: FailureStreaks | None = None
    prompts: dict[tuple[str, str, bool], str] = field(default_factory=dict)

    def searches(self, job: EvalJob) -> bool:
        return self.search is not None and getattr(self.providers[job.label], "uses_tools", True)

    def prompt_for(self, job: EvalJob, question: QuestionRecord) -> str:
        searchable = self.settings.search_enabled and getattr(self.providers[job.label], "uses_tools", True)
        key = (job.questions.path, question.q_id, searchable)
        if key not in self.prompts:
            budgets = self.settings.budgets
            self.prompts[key] = render_user_prompt(
                question.prompt_view(),
                job.questions.templates,
                max_steps=budgets.max_steps,
                max_search_calls=budgets.max_search_calls if searchable else 0,
                protocols=self.settings.protocols,
            )
        return self.prompts[key]

    async def run_trial(self, job: EvalJob, question: QuestionRecord, trial: int) -> dict[str, Any]:
        prompt = self.prompt_for(job, question)
        searches = self.searches(job)
        config = LoopConfig(self.settings.budgets, searches, self.settings.protocols.belief)
        try:
            loop = await run_react(
                spec=job.spec,
                label=job.label,
                question=question.loop_view(),
                trial=trial,
                prompt=prompt,
                config=config,
                model=self.providers[job.label],
                search=self.search if searches else None,
            )
        except (AuthError, RunAborted):  # replay miss, browsing barrier
            raise
        except Exception as exc:
            # a bug or an unexpected backend failure: keep the run going, record the kind
            log.exception("trial %s/%s/%d failed", job.label, question.q_id, trial)
            loop = LoopResult(messages=[{"role": "user", "content": prompt}], tools=[], error=classify(exc))
        if loop.error:
            log.warning("trial %s/%s/%d: %s: %s", job.label, question.q_id, trial, loop.error, loop.error_message)
        return loop_row(job, question, trial, self.settings.budgets.delta_days, loop)

    def forget(self, trials: Iterable[tuple[str, str, int]]) -> int:
        """Remove the stored rows of ``trials`` ((label, q_id, trial)): a rerun does them again."""
        return sum(self.stores[label].discard(q_id, trial) for label, q_id, trial in trials if label in self.stores)

    def write(self, row: Mapping[str, Any]) -> None:
        if self.cache is not None:
            self.cache.flush()  # the trial's recorded calls are durable before the trial is
        self.stores[row["model"]].put(row)
        self.state.record(row)
        if self.progress is not None:
            self.progress(self.state)

    async def run_all(self, pending: collections.deque[tuple[EvalJob, QuestionRecord, int]]) -> None:
        async def worker() -> None:
            while pending:
                job, question, trial = pending.popleft()
                self.write(await self.run_trial(job, question, trial))

        workers = [asyncio.create_task(worker()) for _ in range(max(1, 2 * self.settings.concurrency.llm))]
        # a channel that goes down stops every worker at once, even one sitting in a backoff
        watchers = [asyncio.create_task(self.streaks.tripped())] if self.streaks is not None else []
        all_done = asyncio.gather(*workers)
        try:
            await asyncio.wait([all_done, *watchers], return_when=asyncio.FIRST_COMPLETED)
            # every exception retrieved (an unretrieved one is printed at exit), the channel's first
            errors = [task.exception() for task in (*watchers, all_done) if task.done() and not task.cancelled()]
            first = next((error for error in errors if error is not None), None)
            if first is not None:
                raise first
        finally:
            all_done.cancel()
            for task in [*workers, *watchers]:
                task.cancel()
            await asyncio.gather(all_done, *workers, *watchers, return_exceptions=True)  # every outcome retrieved


def offline_providers(jobs: Sequence[EvalJob], seed: int) -> dict[str, ModelProvider]:
    """The in-process providers (baselines, scripted models) of ``jobs``, by label."""
    providers = {}
    for job in jobs:
        if offline_prefix(job.spec.slug) is None:
            continue
        questions = {r.q_id: OfflineQuestion(r.question_type, r.choice_type, r.options) for r in job.questions.records}
        train = [(r.question_type, r.choice_type, r.answer) for r in job.train.records] if job.train else None
        providers[job.label] = offline_provider(job.spec.slug, ProviderInputs(seed, questions, train))
    return providers


def _attach_log(out: Path) -> Callable[[], None]:
    path = out / LOG_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(ScrubSecretsFilter())
    logger = logging.getLogger("oracleproto")
    logger.addHandler(handler)
    if logger.level == logging.NOTSET or logger.level > logging.INFO:
        logger.setLevel(logging.INFO)

    def detach() -> None:
        logger.removeHandler(handler)
        handler.close()

    return detach


@dataclass(frozen=True)
class _Start:
    """What the start-up checks settle before any file is written."""

    providers: dict[str, ModelProvider]  # the offline ones; API clients come with the channels
    api_jobs: list[EvalJob]
    endpoints: dict[str, Endpoint]
    snapshot: dict[str, Any]
    searching: bool  # some model will be offered web_search


def _start(jobs: Sequence[EvalJob], settings: EvalSettings, env: Mapping[str, str], cache_path: Path) -> _Start:
    """Unique labels, no ``:online`` slug, every key present (unless replaying), search ready.

    A replay reads no variable: what the recorded run's calls were made with (leak detector,
    redacted keys) comes from the manifest beside ``cache_path``.
    """
    check_jobs(jobs)
    providers = offline_providers(jobs, settings.seed)
    api_jobs = [job for job in jobs if job.label not in providers]
    searching = settings.search_enabled and (bool(api_jobs) or any(getattr(p, "uses_tools", True) for p in providers.values()))
    if searching:
        settings.check_search_ready()
    key_envs = search_key_envs(settings) if searching else []
    specs = [job.spec for job in jobs]
    if settings.cache_mode == "replay":
        manifest = cache_path.parent / MANIFEST_FILE
        recorded = recorded_snapshot(manifest)
        endpoints = {job.label: replay_endpoint(job.spec) for job in api_jobs}
        detector = replayed_detector_snapshot(settings, searching, recorded, manifest, env)
        keys = recorded.get("keys") if recorded is not None and isinstance(recorded.get("keys"), Mapping) else None
        return _Start(providers, api_jobs, endpoints, config_snapshot(settings, specs, env, key_envs, detector, keys), searching)
    endpoints, problems = {}, []
    for job in api_jobs:
        try:
            endpoints[job.label] = resolve_endpoint(job.spec, env)
        except ConfigError as exc:
            problems.append(str(exc))
    every_problem(problems)
    snapshot = config_snapshot(settings, specs, env, key_envs, detector_snapshot(settings, env, searching))
    return _Start(providers, api_jobs, endpoints, snapshot, searching)


async def _open_channels(
    start: _Start,
    settings: EvalSettings,
    env: Mapping[str, str],
    stack: contextlib.AsyncExitStack,
    options: Mapping[str, Any],
) -> tuple[dict[str, ModelProvider], MeteredSearch | None, CallCache | None, ChannelMeter]:
    """The call cache, the search channel and one client per API model; ``stack`` closes them."""
    meter = ChannelMeter()
    if not (start.api_jobs or start.searching):
        return dict(start.providers), None, None, meter
    cache = CallCache(options["cache_path"], settings.cache_mode, deferred=True)
    stack.callback(cache.close)
    cache.observer = options["streaks"].report  # live calls only: a replay reports none
    search = None
    if start.searching:
        factory = options["search_factory"] or functools.partial(
            default_search_factory, meter=meter, detector_snapshot=start.snapshot["detector"]
        )
        backend = factory(cache, settings, env)
        stack.push_async_callback(backend.aclose)
        search = MeteredSearch(backend, asyncio.Semaphore(settings.concurrency.search), meter)
    clients = _model_clients(start.endpoints, settings, cache, meter, options["transport"], options["sleep"])
    for client in clients.values():
        stack.push_async_callback(client.aclose)
    return {**start.providers, **clients}, search, cache, meter


def _plan_trials(run: _Run, jobs: Sequence[EvalJob], snapshot: Mapping[str, Any], out: Path) -> collections.deque:
    """Open each model's run store; write cutoff rows; queue the trials still to run."""
    settings, state = run.settings, run.state
    pending: collections.deque[tuple[EvalJob, QuestionRecord, int]] = collections.deque()
    delta = settings.budgets.delta_days
    for job in sorted(jobs, key=lambda j: j.label):
        store = RunStore(out / "db" / store_filename(job.label), job.label)
        run.stores[job.label] = store
        store.bind_fingerprint(job_fingerprint(job, snapshot, settings))
        # a replay re-derives every trial from the recorded calls (it is free and offline)
        accounted = set() if settings.cache_mode == "replay" else store.accounted()
        for question in job.questions.records:
            admitted = admissible(job.spec.cutoff, question.end_time, delta)
            for trial in range(1, settings.budgets.trials + 1):
                state.total += 1
                if (question.q_id, trial) in accounted:
                    state.resumed += 1
                elif not admitted:
                    run.write(cutoff_row(job, question, trial, delta))
                else:
                    pending.append((job, question, trial))
    return pending


def _finish(run: _Run, jobs: Sequence[EvalJob], snapshot: Mapping[str, Any], out: Path) -> EvalSummary:
    """Export the trial table, seal the manifest and summarise."""
    ordered = sorted(jobs, key=lambda j: j.label)
    rows = [row for job in ordered for row in run.stores[job.label].rows()]
    trials_path = out / TRIALS_FILE
    export_trials(rows, trials_path)
    counts = {
        job.label: dict(collections.Counter(row["error"] or "ok" for row in rows if row["model"] == job.label)) for job in jobs
    }
    trials_meta = {"path": TRIALS_FILE, "rows": len(rows), "sha256": sha256_file(trials_path)}
    write_manifest(build_manifest(jobs, run.settings, snapshot, counts, trials_meta), out / MANIFEST_FILE)
    state = run.state
    return EvalSummary(
        out_dir=out,
        trials_path=trials_path,
        rows=len(rows),
        ran=state.done,
        resumed=state.resumed,
        skipped_cutoff=state.skipped_cutoff,
        parsed=state.parsed,
        errors=dict(state.errors),
        cost_usd=state.cost_usd,
        search_errors=state.search_errors,
        detector_errors=state.detector_errors,
    )


def _model_clients(
    endpoints: Mapping[str, Endpoint],
    settings: EvalSettings,
    cache: CallCache,
    meter: ChannelMeter,
    transport: httpx.AsyncBaseTransport | None,
    sleep: Callable[[float], Awaitable[Any]],
) -> dict[str, ChatClient]:
    """One chat client per API model label; all of them share the main-LLM slots (Table 20)."""
    llm_slots = ChannelSlots(settings.concurrency.llm)
    return {
        label: ChatClient(
            endpoint,
            settings.sampling,
            cache,
            slots=llm_slots,
            max_connections=settings.concurrency.llm,
            transport=transport,
            meter=meter,
            sleep=sleep,
        )
        for label, endpoint in endpoints.items()
    }


async def evaluate_async(
    jobs: Sequence[EvalJob],
    settings: EvalSettings,
    out_dir: str | os.PathLike[str],
    *,
    env: Mapping[str, str] | None = None,
    cache_path: str | os.PathLike[str] | None = None,
    search_factory: SearchFactory | None = None,
    progress: ProgressCallback | None = None,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    transport: httpx.AsyncBaseTransport | None = None,
) -> EvalSummary:
    """Run (or resume) an evaluation; see the module docstring for the layout.

    ``transport`` replaces httpx's network transport for the model calls (tests).
    """
    env = os.environ if env is None else env
    out = Path(out_dir)
    cache_file = Path(cache_path) if cache_path is not None else out / CACHE_FILE
    start = _start(jobs, settings, env, cache_file)
    if settings.cache_mode != "replay":
        specs = {job.label: job.spec for job in start.api_jobs}
        await check_endpoints(((e, specs[label].base_url_env) for label, e in start.endpoints.items()), transport)
    out.mkdir(parents=True, exist_ok=True)
    streaks = FailureStreaks(settings.max_consecutive_failures)
    options = dict(cache_path=cache_file, search_factory=search_factory, sleep=sleep, transport=transport, streaks=streaks)
    async with contextlib.AsyncExitStack() as stack:
        stack.callback(_attach_log(out))
        providers, search, cache, meter = await _open_channels(start, settings, env, stack, options)
        state = ProgressState(in_flight=meter.in_flight)
        run = _Run(settings, providers, search, {}, state, progress, cache, streaks)
        stack.callback(lambda: [store.close() for store in run.stores.values()])
        pending = _plan_trials(run, jobs, start.snapshot, out)
        write_manifest(build_manifest(jobs, settings, start.snapshot), out / MANIFEST_FILE)
        log.info("evaluate: %d trial(s) planned, %d already done, %d to run", run.state.total, run.state.resumed, len(pending))
        if progress is not None:
            progress(run.state)
        try:
            await run.run_all(pending)
        except ChannelDown as down:
            forgotten = run.forget(down.trials)
            log.error("%s (%d trial(s) that met those failures forgotten)", down, forgotten)
            raise RunAborted(str(down)) from None
        except AuthError as exc:
            raise RunAborted(f"authentication failed, run aborted: {exc.message}") from None
        except (ReplayMissError, BrowsingBarrierError) as exc:
            raise RunAborted(f"run aborted: {SECRETS.scrub(str(exc))}") from None
        summary = _finish(run, jobs, start.snapshot, out)
        log.info("%s", summary.line())
        return summary


def evaluate(jobs: Sequence[EvalJob], settings: EvalSettings, out_dir: str | os.PathLike[str], **kwargs: Any) -> EvalSummary:
    """Synchronous :func:`evaluate_async`, on uvloop where it exists (a C event loop: a
    tenth of the harness CPU per trial goes to asyncio's own scheduling otherwise)."""
    try:
        import uvloop
    except ImportError:  # Windows: uvloop is not built there
        return asyncio.run(evaluate_async(jobs, settings, out_dir, **kwargs))
    return uvloop.run(evaluate_async(jobs, settings, out_dir, **kwargs))


# ---------------------------------------------------------------------------------------
# Params (the ``evaluate`` section of params.yaml) → settings and model specs


# ---------------------------------------------------------------------------------------
# The DVC stage: baselines on every cutoff's split, plus opt-in API models


