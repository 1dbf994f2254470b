"""``oracleproto evaluate``: run models on a question table in the time-masked ReAct loop."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, Optional

import typer

from oracleproto.cli.app import PARAMS_HELP, app, fail, from_params, user_errors
from oracleproto.config import load_params


def _cutoff_overrides(values: list[str]) -> dict[str, str]:
    cutoffs = {}
    for value in values:
        slug, sep, date = value.rpartition("=")
        if not sep or not slug or not date:
            raise ValueError(f"--cutoff expects SLUG=YYYY-MM-DD (or YYYY-MM), got {value!r}")
        cutoffs[slug] = date
    return cutoffs


def _train_beside(questions: Path) -> Path | None:
    """``…/test.parquet`` → ``…/train.parquet`` when it exists (for baseline:base_rate)."""
    candidate = questions.with_name("train" + questions.suffix)
    return candidate if questions.stem == "test" and candidate.exists() else None


class _ProgressDisplay:
    """A rich progress bar: done/total, calls in flight per channel, cost so far."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            ProgressColumn,
            TextColumn,
            TimeElapsedColumn,
        )
        from rich.text import Text

        self.state: Any = None
        display = self

        class ChannelsColumn(ProgressColumn):
            def render(self, task: Any) -> Text:
                state = display.state
                if state is None:
                    return Text("")
                flights = " ".join(f"{name} {count}" for name, count in sorted(state.in_flight.items()))
                errors = sum(state.errors.values())
                return Text(f"{flights or 'idle'} · err {errors} · ${state.cost_usd:.4f}")

        self.progress = Progress(
            TextColumn("evaluate"),
            BarColumn(bar_width=24),
            MofNCompleteColumn(),
            ChannelsColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            refresh_per_second=4,
        )
        self.task = self.progress.add_task("evaluate", total=None)

    def __call__(self, state: Any) -> None:
        self.state = state
        self.progress.update(self.task, total=state.total, completed=state.completed)

    def __enter__(self) -> _ProgressDisplay:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()


def progress_line(state: Any, elapsed_s: float) -> str:
    """One line of progress: trials done of planned, calls in flight per channel, errors, cost, ETA."""
    flights = " ".join(f"{name} {count}" for name, count in sorted(state.in_flight.items())) or "idle"
    rate = state.done / elapsed_s if elapsed_s > 0 else 0.0
    left = state.total - state.completed
    eta = f"{left / rate:.0f} s" if rate > 0 and left else "–"
    return (
        f"evaluate: {state.completed}/{state.total} trials · in flight {flights} · "
        f"errors {sum(state.errors.values())} · ${state.cost_usd:.4f} · {elapsed_s:.0f} s elapsed, ETA {eta}"
    )


class _ProgressLog:
    """Without a terminal (CI logs, nohup): one progress line every ``every_s`` seconds, and at the end."""

    def __init__(self, every_s: float = 10.0) -> None:
        self.every_s, self.state = every_s, None
        self.started = self.last = time.monotonic()

    def __call__(self, state: Any) -> None:
        self.state = state
        now = time.monotonic()
        if now - self.last >= self.every_s:
            self.last = now
            typer.echo(progress_line(state, now - self.started), err=True)

    def __enter__(self) -> _ProgressLog:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.state is not None:
            typer.echo(progress_line(self.state, time.monotonic() - self.started), err=True)


@app.command(
    epilog=(
        "Examples:\n\n"
        "  oracleproto evaluate --questions data/splits/cutoff-2024-06-30/test.parquet --model baseline:uniform "
        "--model baseline:base_rate --out runs/base\n\n"
        "  OPENAI_BASE_URL=https://openrouter.ai/api/v1 OPENAI_API_KEY=... oracleproto evaluate "
        "--questions data/splits/cutoff-2024-06-30/test.parquet --model openai/gpt-4.1 --search archive "
        "--archive data/sample/archive.jsonl --detector heuristic --out runs/gpt41\n\n"
        "  oracleproto evaluate --questions q.parquet --model my/model --cutoff my/model=2024-06 --search tavily "
        "--detector llm --out runs/x            # TAVILY_API_KEY, DETECTOR_MODEL from the environment\n\n"
        "  oracleproto evaluate ... --out runs/x --cache replay          "
        "# offline, no keys: every trial re-derived from runs/x/calls.sqlite, byte-identical trials.parquet\n\n"
        "  oracleproto evaluate ... --cache replay --cache-file runs/x/calls.sqlite --out runs/x-replay"
    )
)
def evaluate(
    questions: Path = typer.Option(..., help="Question table (.parquet or .jsonl, seven columns); prompt templates come from its metadata."),
    model: list[str] = typer.Option(..., help="Model slug (its cutoff and options from params models:), or baseline:uniform|first|no|base_rate; repeat for several."),
    out: Path = typer.Option(..., help="Run directory: trials.parquet, manifest.json, db/, calls.sqlite, logs/. Re-running resumes."),
    trials: Optional[int] = typer.Option(None, help=from_params("Trials per question n.", "evaluate.trials")),
    search: Optional[str] = typer.Option(None, help=from_params("Search backend: archive | tavily | none.", "evaluate.search")),
    archive: Optional[Path] = typer.Option(None, help=from_params("Dated-document archive for --search archive (.jsonl or .parquet).", "evaluate.archive")),
    detector: Optional[str] = typer.Option(None, help=from_params("Leak detector: llm | heuristic | off.", "evaluate.detector")),
    cache: Optional[str] = typer.Option(None, help=from_params("Call cache: record | replay (offline, no keys or variables; re-derives every trial) | off.", "evaluate.cache")),
    cache_file: Optional[Path] = typer.Option(None, help="Call cache file (default OUT/calls.sqlite); replay another run's cache with it."),
    cutoff: list[str] = typer.Option([], help="SLUG=YYYY-MM-DD (or YYYY-MM) knowledge cutoff of a model, over its params models: entry."),
    train: Optional[Path] = typer.Option(None, help="Train split for baseline:base_rate (default: train.parquet beside a test.parquet)."),
    max_steps: Optional[int] = typer.Option(None, help=from_params("Step cap T.", "evaluate.max_steps")),
    max_search_calls: Optional[int] = typer.Option(None, help=from_params("Search cap C.", "evaluate.max_search_calls")),
    max_results: Optional[int] = typer.Option(None, help=from_params("Results per search R.", "evaluate.max_results")),
    min_search_calls: Optional[int] = typer.Option(
        None, help=from_params("Nudge a reply given before this many searches (at most max_nudges times; 0 = off).", "evaluate.min_search_calls")
    ),
    final_answer_retry: Optional[bool] = typer.Option(
        None, "--final-answer-retry/--no-final-answer-retry",
        help=from_params("One extra tool-less call when a trial ends unanswered.", "evaluate.final_answer_retry"),
    ),
    delta: Optional[int] = typer.Option(None, help=from_params("Days δ between prediction cutoff and resolution.", "admit.delta_days")),
    seed: Optional[int] = typer.Option(None, help=from_params("Seed of baseline:uniform.", "evaluate.seed")),
    params: Optional[Path] = typer.Option(None, help=PARAMS_HELP),
    progress: bool = typer.Option(True, help="Show a progress bar on stderr."),
) -> None:
    """Evaluate MODEL(s) on QUESTIONS: n trials per question, search masked to τ − δ, resumable, recorded."""
    from oracleproto.errors import OracleProtoError
    from oracleproto.harness.evaluate import evaluate as run_evaluation
    from oracleproto.harness.plan import eval_settings, model_spec
    from oracleproto.harness.questions import EvalJob, QuestionSet

    flags = {
        "trials": trials, "search": search, "archive": str(archive) if archive else None, "detector": detector, "cache": cache,
        "max_steps": max_steps, "max_search_calls": max_search_calls, "max_results": max_results,
        "min_search_calls": min_search_calls, "final_answer_retry": final_answer_retry, "seed": seed,
    }  # fmt: skip
    try:
        config = load_params(params).overridden({
            "evaluate": flags,
            "admit": {"delta_days": delta},
            "models": {slug: {"cutoff": date} for slug, date in _cutoff_overrides(cutoff).items()},
        })  # fmt: skip
        settings = eval_settings(config)
        question_set = QuestionSet.load(questions, config.audit)
        train_path = train or _train_beside(questions)
        train_set = QuestionSet.load(train_path, config.audit) if train_path and any(m == "baseline:base_rate" for m in model) else None
        jobs = [EvalJob(spec=model_spec(slug, config.models), questions=question_set, train=train_set) for slug in model]
    except (OracleProtoError, ValueError) as exc:
        fail(str(exc))
        return

    with user_errors():  # a stopped run (auth, replay miss) exits 4: RunAborted.exit_code
        if progress:
            with _ProgressDisplay() if sys.stderr.isatty() else _ProgressLog() as display:
                summary = run_evaluation(jobs, settings, out, cache_path=cache_file, progress=display)
        else:
            summary = run_evaluation(jobs, settings, out, cache_path=cache_file)
    typer.echo(summary.line())
