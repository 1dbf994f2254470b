"""One typed configuration: ``params.yaml`` as pydantic models, one per section.

:func:`load_params` reads the file as YAML 1.2 (the dialect DVC writes back in
``dvc exp run -S``, where ``no`` stays the string "no") and returns :class:`Params`. Every
model forbids unknown keys and is frozen, every constraint is a field type, and **every
default is written here, once**: the library's records (``Budgets``, ``EvalSettings``,
``ModelSpec``, ``SearchSettings``, ``ExportSettings``, ``AdmissionConfig``) extend these
models rather than restate them, and CLI flags override fields through
:meth:`Params.overridden`, which validates exactly as the file is validated.

A failed validation is one :class:`ConfigError` line naming the key and the rule, e.g.
``admit.delta_dayz: unknown key (did you mean delta_days?)`` or
``admit.delta_days: must be an integer >= 1, got 0``.
"""

from __future__ import annotations

import datetime as dt
import difflib
import re
import types
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, Self, Union, get_args, get_origin

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from oracleproto.admission import parse_cutoff, probed_cutoff
from oracleproto.errors import ConfigError

DEFAULT_PARAMS = Path("params.yaml")
ONLINE_SUFFIX = ":online"
BASELINE_PREFIX = "baseline:"
DEFAULT_BASE_URL_ENV = "OPENAI_BASE_URL"
DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"


class Section(BaseModel):
    """A params model: unknown keys are errors, values never change after validation."""

    # validate_default: a default is checked against the values given beside it
    # (``max_steps: 1`` with the default lookahead of 2 is an error, not a silent cap).
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, validate_default=True)

    @classmethod
    def checked(cls, **data: Any) -> Self:
        """``cls(**data)`` for values a user typed: a failure is one :class:`ConfigError` line
        (``cls(**data)`` itself raises pydantic's ValidationError)."""
        try:
            return cls(**data)
        except ValidationError as exc:
            raise config_error(exc, cls) from None

    def fields_of(self, part: type[Section]) -> dict[str, Any]:
        """This model's values of the fields declared by ``part`` (a model it extends)."""
        return {name: getattr(self, name) for name in part.model_fields}


# ---------------------------------------------------------------------------------------
# Value types


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


def _env_name(value: str) -> str:
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value):
        raise ValueError(f"must be an environment variable name (letters, digits, _), got {value!r}")
    return value


def _cutoff(value: Any) -> dt.date:
    try:
        return parse_cutoff(value)
    except ConfigError:
        raise ValueError(f"must be YYYY-MM-DD, or YYYY-MM for that month's last day, got {value!r}") from None


def _day(value: Any) -> dt.date:
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value
    try:
        return dt.date.fromisoformat(value) if isinstance(value, str) and len(value) == 10 else _no_day(value)
    except ValueError:
        return _no_day(value)


def _no_day(value: Any) -> dt.date:
    raise ValueError(f"must be a date YYYY-MM-DD, got {value!r}")


def check_slug(slug: str) -> str:
    """A model slug sent to a provider: non-empty, and never a browsing (``:online``) variant."""
    _not_blank(slug)
    if slug.endswith(ONLINE_SUFFIX):
        raise ValueError(f"':online' slugs enable provider-side browsing and break the time mask, got {slug!r}")
    return slug


def _api_slug(slug: str) -> str:
    if slug.startswith(BASELINE_PREFIX):
        raise ValueError(f"baselines are listed under evaluate.baselines, not as models, got {slug!r}")
    return check_slug(slug)


def _distinct(values: tuple) -> tuple:
    repeated = sorted({str(v) for v in values if values.count(v) > 1})
    if repeated:
        raise ValueError(f"lists {', '.join(repeated)} more than once")
    return values


def _true_means(value: str) -> Callable[[Any], Any]:
    return lambda given: value if given is True else given


PositiveInt = Annotated[int, Strict(), Field(ge=1)]
Count = Annotated[int, Strict(), Field(ge=0)]
Seed = Annotated[int, Strict()]
Flag = Annotated[bool, Strict()]
Seconds = Annotated[float, Strict(), Field(gt=0.0)]
Price = Annotated[float, Strict(), Field(ge=0.0)]
Text = Annotated[str, Strict(), AfterValidator(_not_blank)]
EnvName = Annotated[str, Strict(), AfterValidator(_env_name)]
Cutoff = Annotated[dt.date, BeforeValidator(_cutoff)]
Day = Annotated[dt.date, BeforeValidator(_day)]
Slug = Annotated[str, Strict(), AfterValidator(_api_slug)]
SearchBackend = Literal["archive", "tavily", "none"]
DetectorMode = Literal["llm", "heuristic", "off"]
CacheMode = Literal["record", "replay", "off"]
SftMode = Literal["correct", "all", "best_of_n"]
Split = Literal["train", "test"]
# The composite's buckets (Eq. 19), as score.weights names them.
Bucket = Literal["yes_no", "binary_named", "mc"]
# `always_no` is spelt so that no YAML dialect reads it as false; `no` is accepted for it.
Baseline = Annotated[
    Literal["uniform", "first", "always_no", "base_rate"], BeforeValidator(lambda name: "always_no" if name == "no" else name)
]


# ---------------------------------------------------------------------------------------
# ingest, audit, admit


class Ingest(Section):
    # sample | hf:REPO_OR_DIR | forecastbench:DIR | sqlite:PATH | jsonl:PATH | parquet:PATH | csv:PATH
    source: Text = "sample"
    levels: tuple[PositiveInt, ...] | None = (1, 2)  # FutureX levels kept (null: all); applied by the audit
    hf_split: Text | None = None  # null: every split (each row records its own); or one split's name
    hf_config: Text | None = None  # the dataset card's config (null: its default)
    hf_revision: Text | None = None  # a commit sha of the HF dataset, for reproducible ingests


class EndTimeRange(Section):
    """The plausible resolution dates: a question table's end_time lies in [min, max] (the
    audit quarantines, and validate, evaluate and score refuse, any other)."""

    end_time_min: Day = dt.date(1900, 1, 1)
    end_time_max: Day = dt.date(2100, 12, 31)

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        if self.end_time_min > self.end_time_max:
            raise ValueError(f"end_time_min {self.end_time_min} is after end_time_max {self.end_time_max}")
        return self


class Audit(EndTimeRange):
    post_resolution_phrases: tuple[Text, ...] = ()  # stem-side leak cues, matched on word boundaries
    outcome_markers: tuple[Text, ...] = ()  # option labels that already encode the outcome


class Delta(Section):
    delta_days: PositiveInt = 1  # δ: the prediction cutoff is χ = τ − δ (δ ≥ 1 keeps χ < τ)


class Admit(Delta):
    test_fraction: Annotated[float, Strict(), Field(ge=0.0, le=1.0)] = 0.2  # newest share of each split set


# ---------------------------------------------------------------------------------------
# models


class ModelOptions(Section):
    """How one API model is called and priced (its endpoint and key come from the environment)."""

    base_url_env: EnvName = DEFAULT_BASE_URL_ENV
    api_key_env: EnvName = DEFAULT_API_KEY_ENV
    max_tokens_param: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    omit_sampling: tuple[Literal["temperature", "top_p"], ...] = ()
    reasoning: Flag | None = None  # None: decided by evaluate.sampling.reasoning_patterns
    price_prompt_per_mtok: Price | None = None
    price_completion_per_mtok: Price | None = None


class ModelEntry(ModelOptions):
    """One entry of ``models:``; ``slug: "2025-09"`` is short for ``slug: {cutoff: "2025-09"}``."""

    cutoff: Cutoff  # disclosed knowledge cutoff κ
    label: Text | None = None  # the trial table's model value (default: the slug)
    # probed: admit with the later of κ and the effective cutoff an `oracleproto probe`
    # found (probe_report: its report.json or output folder); a probe never loosens admission
    cutoff_source: Literal["disclosed", "probed"] = "disclosed"
    probe_report: Text | None = None

    @model_validator(mode="after")
    def _probed_needs_a_report(self) -> Self:
        if self.cutoff_source == "probed" and self.probe_report is None:
            raise ValueError("cutoff_source probed needs probe_report (the probe's report.json or folder)")
        return self


def _entry_shorthand(value: Any) -> Any:
    return value if isinstance(value, (Mapping, ModelEntry)) else {"cutoff": value}


ModelEntries = dict[Slug, Annotated[ModelEntry, BeforeValidator(_entry_shorthand)]]


# ---------------------------------------------------------------------------------------
# evaluate


# Size cap of one response body (model, detector and search calls): a chat completion of 12,000
# tokens is well under 1 MiB, so 8 MiB only ever stops a runaway or hostile server.
DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024


class Sampling(Section):
    """Main-LLM request parameters (Table 12)."""

    temperature: Annotated[float, Strict(), Field(ge=0.0)] = 0.7
    top_p: Annotated[float, Strict(), Field(ge=0.0, le=1.0)] = 1.0
    max_tokens: PositiveInt = 12000
    timeout_s: Seconds = 240.0  # wall-clock limit of one call, connect to last byte
    reasoning_patterns: tuple[Text, ...] = ("o1", "o3", "o4", "r1", "qwq")  # slugs that get no temperature/top_p
    max_response_bytes: PositiveInt = DEFAULT_MAX_RESPONSE_BYTES  # a larger body is a response_too_large fault


class ProtocolSwitches(Section):
    """Which tails the first message carries."""

    budget_awareness: Flag = True
    reflection: Flag = True
    belief: Flag = False


class Concurrency(Section):
    """Per-channel caps (Table 20)."""

    llm: PositiveInt = 5
    search: PositiveInt = 5
    detector: PositiveInt = 5


class SearchOptions(Section):
    """The search side's knobs (``evaluate.search_options``; Table 12)."""

    search_depth: Literal["basic", "advanced", "fast", "ultra-fast"] = "basic"
    include_raw_content: Annotated[Literal[False, "markdown", "text"], BeforeValidator(_true_means("markdown"))] = "markdown"
    include_answer: Annotated[Literal[False, "basic", "advanced"], BeforeValidator(_true_means("basic"))] = False
    raw_content_max_chars: Count = 8000  # 0 = no truncation
    timeout_s: Seconds = 60.0
    # a search body carries up to 20 pages of raw content, not a chat turn: its own cap
    max_response_bytes: PositiveInt = DEFAULT_MAX_RESPONSE_BYTES  # a larger body is a response_too_large fault
    key_cooldown_s: Seconds = 60.0
    usd_per_credit: Price = 0.008  # Tavily pay-as-you-go price of one API credit
    undated: Literal["drop", "keep"] = "drop"  # what the date heuristic does with an undated result


class PromptBudgets(Section):
    """The budgets the first message states."""

    max_steps: PositiveInt = 6  # T
    max_search_calls: Count = 4  # C


class ResultsPerSearch(Section):
    # R; Tavily's API accepts at most 20, and the detector reserves 100 call slots per search
    max_results: Annotated[int, Strict(), Field(ge=1, le=20)] = 5


class LoopBudgets(PromptBudgets, ResultsPerSearch):
    """The ReAct loop's budgets (paper §4.1.3)."""

    trials: PositiveInt = 3  # n
    lookahead: PositiveInt = 2  # steps before the last one that get the soft warning
    drop_tools_when_spent: Flag = True
    force_final: Flag = True
    min_search_calls: Count = 0  # > 0: a reply before this many searches gets a nudge
    max_nudges: Count = 2
    final_answer_retry: Flag = False  # one extra tool-less call when the loop ends unanswered

    @field_validator("lookahead")
    @classmethod
    def _lookahead_within_steps(cls, value: int, info: ValidationInfo) -> int:
        return _at_most(value, "max_steps", info)

    @field_validator("min_search_calls")
    @classmethod
    def _minimum_within_cap(cls, value: int, info: ValidationInfo) -> int:
        return _at_most(value, "max_search_calls", info)


def _at_most(value: int, other: str, info: ValidationInfo) -> int:
    limit = info.data.get(other)  # absent when that field failed its own check
    if limit is not None and value > limit:
        raise ValueError(f"must be <= {other} ({limit}), got {value}")
    return value


class ArchivePath(Section):
    archive_path: str | None = Field(default=None, alias="archive")  # dated-document archive (.jsonl or .parquet)


class RunKnobs(ArchivePath):
    """What an evaluation run is configured with besides its budgets."""

    search_backend: SearchBackend = Field(default="archive", alias="search")
    detector: DetectorMode = "heuristic"
    cache_mode: CacheMode = Field(default="record", alias="cache")
    seed: Seed = 0  # of baseline:uniform
    sampling: Sampling = Sampling()
    protocols: ProtocolSwitches = ProtocolSwitches()
    concurrency: Concurrency = Concurrency()
    search_options: SearchOptions = SearchOptions()
    # a channel (a model's endpoint, search, the leak detector) whose calls fail this many
    # times in a row on transport (network, timeout, 5xx, after retries) stops the run, resumably
    max_consecutive_failures: PositiveInt = 10


def search_offered(search_backend: str, max_search_calls: int) -> bool:
    """Whether a model is offered web_search (and told its budget) at all."""
    return search_backend != "none" and max_search_calls > 0


class Evaluate(LoopBudgets, RunKnobs):
    baselines: Annotated[tuple[Baseline, ...], AfterValidator(_distinct)] = ("uniform", "first", "always_no", "base_rate")
    # the splits API models run on (baselines always run on test, the leaderboard's split);
    # add train to generate SFT trajectories from train questions
    splits: Annotated[tuple[Split, ...], AfterValidator(_distinct)] = ("test",)
    models: Annotated[tuple[Slug, ...], AfterValidator(_distinct)] = ()  # API models run (opt-in), from models:


# ---------------------------------------------------------------------------------------
# score, export, publish


def _weights_text(value: Any) -> Any:
    """``"yes_no=0.15,mc=0.85"`` (the CLI's form) as a mapping."""
    if not isinstance(value, str):
        return value
    pairs = {}
    for item in filter(None, (part.strip() for part in value.split(","))):
        name, sep, weight = item.partition("=")
        if not sep:
            raise ValueError(f"{item!r} is not bucket=value")
        pairs[name.strip()] = weight.strip()
    return pairs


def _every_bucket(weights: dict[str, float]) -> dict[str, float]:
    """All buckets, in order (a bucket left out weighs 0); at least one weighs more than 0."""
    if not any(weights.values()):
        raise ValueError("at least one bucket needs a weight > 0")
    return {bucket: weights.get(bucket, 0.0) for bucket in get_args(Bucket)}


Weights = Annotated[
    dict[Bucket, Annotated[float, Field(ge=0.0, allow_inf_nan=False)]],
    BeforeValidator(_weights_text),
    AfterValidator(_every_bucket),
]


class Score(Section):
    weights: Weights = Field(default_factory=lambda: {"yes_no": 0.15, "binary_named": 0.15, "mc": 0.70})  # Eq. 19
    bootstrap: Count = 5000  # question resamples for intervals and paired tests (0 = off)
    seed: Count = 0
    fallback_belief: Annotated[float, Strict(), Field(gt=0.0, lt=1.0)] | None = None  # EPS for belief vectors from boxes


class Export(Section):
    sft_mode: SftMode = "correct"
    sft_models: tuple[Text, ...] | None = None  # None: every evaluated model except baseline:*
    # a trial whose tool calls broke the offered schema: exported with the canonical
    # arguments and flagged (flag), or left out (drop)
    sft_violations: Literal["flag", "drop"] = "flag"
    rl_tools: Flag = True  # false: closed-book RL prompts (no budget line, no tools column)


class Publish(Section):
    repo_id: Text = "MaYiding/OracleProto"
    pretty_name: Text = "OracleProto"
    license: Text = "apache-2.0"
    language: tuple[Text, ...] = ("en",)
    # shown in the card when given (add them to the publish stage's deps too)
    leak_audit_report: Text | None = None  # report.json of `oracleproto leak-audit report`
    probe_reports: tuple[Text, ...] = ()  # report.json files (or folders) of `oracleproto probe`


# ---------------------------------------------------------------------------------------
# The file


class Params(Section):
    """``params.yaml``: one section per stage, and the models admit and evaluate share."""

    ingest: Ingest = Ingest()
    audit: Audit = Audit()
    models: ModelEntries = Field(default_factory=dict)
    admit: Admit = Admit()
    evaluate: Evaluate = Evaluate()
    score: Score = Score()
    export: Export = Export()
    publish: Publish = Publish()

    @model_validator(mode="before")
    @classmethod
    def _empty_sections_take_the_defaults(cls, data: Any) -> Any:
        return {key: {} if value is None else value for key, value in data.items()} if isinstance(data, Mapping) else data

    @model_validator(mode="after")
    def _evaluated_models_are_listed(self) -> Params:
        for index, slug in enumerate(self.evaluate.models):
            if slug not in self.models:
                raise ValueError(f"evaluate.models[{index}]: {slug!r} has no entry under models{_suggestion(slug, self.models)}")
        return self

    @model_validator(mode="after")
    def _cutoff_of_the_earliest_question_is_a_date(self) -> Params:
        # χ = τ − δ of a question on end_time_min must itself be a date (year 1 or later)
        if (self.audit.end_time_min - dt.date.min).days < self.admit.delta_days:
            raise ValueError(
                f"audit.end_time_min: {self.audit.end_time_min} leaves no room for admit.delta_days = "
                f"{self.admit.delta_days} (τ − δ would fall before the year 1)"
            )
        return self

    @property
    def cutoffs(self) -> dict[str, dt.date]:
        """Each model's cutoff as admission uses it: disclosed, or probed (its probe report)."""
        return {
            slug: probed_cutoff(entry.probe_report, slug) if entry.cutoff_source == "probed" else entry.cutoff
            for slug, entry in self.models.items()
        }

    def overridden(self, changes: Mapping[str, Any]) -> Params:
        """These params with ``changes`` (nested as in the file, spelt as in the file; a None
        value means "not given") laid over them, validated exactly as the file is."""
        return parse_params(_merged(self.model_dump(by_alias=True, exclude_unset=True), _given(changes)))


def _given(changes: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _given(v) if isinstance(v, Mapping) else v for k, v in changes.items() if v is not None}


def _merged(base: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in changes.items():
        both_mappings = isinstance(value, Mapping) and isinstance(merged.get(key), Mapping)
        merged[key] = _merged(merged[key], value) if both_mappings else value
    return merged


def parse_params(data: Any) -> Params:
    """:class:`Params` from the file's data (None, an empty file, means every default)."""
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise ConfigError(f"params must be a mapping of sections, got {_shown(data)}")
    try:
        return Params.model_validate(data)
    except ValidationError as exc:
        raise config_error(exc, Params) from None


def load_params(path: str | Path | None = None) -> Params:
    """The params file at ``path``; without one, ``./params.yaml`` if present, else the defaults."""
    file = Path(path) if path is not None else DEFAULT_PARAMS
    if not file.exists():
        if path is not None:
            raise ConfigError(f"params file {file} not found")
        return Params()
    try:
        data = YAML(typ="safe", pure=True).load(file.read_text(encoding="utf-8"))
    except YAMLError as exc:
        raise ConfigError(f"{file}: not valid YAML: {_yaml_problem(exc)}") from None
    return parse_params(data)


def _yaml_problem(exc: YAMLError) -> str:
    if isinstance(exc, MarkedYAMLError) and exc.problem_mark is not None:
        mark = exc.problem_mark
        return f"{exc.problem} (line {mark.line + 1}, column {mark.column + 1})"
    return " ".join(str(exc).split())


def default_of(key: str) -> Any:
    """The default of a dotted params key as the file spells it (``"evaluate.search"``)."""
    value: Any = Params().model_dump(by_alias=True)
    for part in key.split("."):
        value = value[part]
    return value


# ---------------------------------------------------------------------------------------
# One line per validation error

_RULES = {
    "int_type": "must be an integer",
    "bool_type": "must be true or false",
    "string_type": "must be a string",
    "float_type": "must be a number",
    "float_parsing": "must be a number",
    "finite_number": "must be a finite number",
    "date_type": "must be a date",
    "dict_type": "must be a mapping",
    "model_type": "must be a mapping",
    "model_attributes_type": "must be a mapping",
    "tuple_type": "must be a list",
    "list_type": "must be a list",
    "missing": "is required",
}
_BOUNDS = {"greater_than_equal": ("ge", ">="), "greater_than": ("gt", ">"), "less_than_equal": ("le", "<="), "less_than": ("lt", "<")}

def config_error(exc: ValidationError, model: type[BaseModel]) -> ConfigError:
    """One line (several errors joined by "; ") naming each key and its rule."""
    return ConfigError("; ".join(_describe(error, model) for error in exc.errors(include_url=False)))


def _describe(error: Mapping[str, Any], model: type[BaseModel]) -> str:
    loc, kind = tuple(error["loc"]), error["type"]
    if kind == "extra_forbidden" or (loc[-1:] == ("[key]",) and kind == "literal_error"):
        key_path = loc[:-1] if kind == "extra_forbidden" else loc[:-2]
        key = loc[-1] if kind == "extra_forbidden" else loc[-2]
        return f"{_path(loc)}: unknown key{_suggestion(str(key), _keys_at(model, key_path))}"
    return f"{_path(loc)}: {_rule(error)}" if loc else _rule(error)


def _rule(error: Mapping[str, Any]) -> str:
    kind, ctx, got = error["type"], error.get("ctx") or {}, f", got {_shown(error.get('input'))}"
    if kind == "value_error":
        return str(ctx["error"])
    if kind in _BOUNDS:
        name, sign = _BOUNDS[kind]
        bound = ctx[name]
        kind = "an integer" if isinstance(bound, int) else "a number"
        return f"must be {kind} {sign} {bound:g}{got}"
    if kind == "literal_error":
        return f"must be one of {ctx['expected']}{got}"
    if kind in _RULES:
        return _RULES[kind] + ("" if kind == "missing" else got)
    return error["msg"][0].lower() + error["msg"][1:] + got


def _path(loc: Sequence[Any]) -> str:
    parts = [f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc if part != "[key]"]
    return "".join(parts).lstrip(".")


def _shown(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _suggestion(key: str, known: Sequence[str] | Mapping[str, Any]) -> str:
    close = difflib.get_close_matches(key, list(known), n=1)
    if close:
        return f" (did you mean {close[0]}?)"
    return f" (known: {', '.join(known)})" if known else ""


def _keys_at(model: type[BaseModel], path: Sequence[Any]) -> list[str]:
    """The keys allowed at ``path`` below ``model``, as the file spells them."""
    current = _type_at(model, path)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return [field.alias or name for name, field in current.model_fields.items()]
    if get_origin(current) is dict:
        return [str(key) for key in get_args(_bare(get_args(current)[0]))]
    return []


def _type_at(model: type[BaseModel], path: Sequence[Any]) -> Any:
    current: Any = model
    for step in path:
        current = _bare(current)
        if isinstance(current, type) and issubclass(current, BaseModel):
            fields = {field.alias or name: field for name, field in current.model_fields.items()}
            fields.update(current.model_fields)
            if step not in fields:
                return None
            current = fields[step].annotation
        elif get_origin(current) in (dict, tuple):
            current = get_args(current)[-1 if get_origin(current) is dict else 0]
        else:
            return None
    return _bare(current)


def _bare(annotation: Any) -> Any:
    """``annotation`` without Annotated metadata and without ``| None``."""
    while True:
        if get_origin(annotation) is Annotated:
            annotation = get_args(annotation)[0]
        elif get_origin(annotation) in (Union, types.UnionType):
            kept = [arg for arg in get_args(annotation) if arg is not type(None)]
            if len(kept) != 1:
                return annotation
            annotation = kept[0]
        else:
            return annotation
