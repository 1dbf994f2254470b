import datetime as dt
import json
import logging
from typing import get_args

import pytest
from pydantic import ValidationError

from oracleproto.config import (
    Baseline,
    Concurrency,
    Sampling,
    SearchOptions,
    parse_params,
)
from oracleproto.errors import ConfigError
from oracleproto.harness.plan import eval_settings
from oracleproto.harness.settings import (
    BASELINES,
    SECRETS,
    Budgets,
    EvalSettings,
    ModelSpec,
    ScrubSecretsFilter,
    config_snapshot,
    read_key,
    redact_key,
    resolve_endpoint,
    resume_fingerprint,
)

KEY = "sk-or-v1-0123456789abcdef0123456789abcdef"


def test_paper_defaults():
    b = Budgets()
    assert (b.max_steps, b.max_search_calls, b.max_results, b.trials, b.delta_days) == (6, 4, 5, 3, 1)
    s = Sampling()
    assert (s.temperature, s.top_p, s.max_tokens, s.timeout_s) == (0.7, 1.0, 12000, 240.0)
    assert s.max_response_bytes == 8 * 1024 * 1024
    assert Concurrency() == Concurrency(llm=5, search=5, detector=5)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [({"timeout_s": 0}, "timeout_s"), ({"timeout_s": "60"}, "timeout_s"), ({"max_response_bytes": 0}, "max_response_bytes"),
     ({"max_response_bytes": 1.5}, "max_response_bytes"), ({"max_response_bytes": True}, "max_response_bytes")],
)
def test_call_limits_must_be_positive(kwargs, name):
    with pytest.raises(ConfigError, match=name):
        Sampling.checked(**kwargs)


def test_call_limits_come_from_params():
    settings = eval_settings(parse_params({"evaluate": {"sampling": {"timeout_s": 30.0, "max_response_bytes": 1024}}}))
    assert (settings.sampling.timeout_s, settings.sampling.max_response_bytes) == (30, 1024)
    with pytest.raises(ConfigError, match="max_response_bytes"):
        parse_params({"evaluate": {"sampling": {"max_response_bytes": -1}}})


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [({"max_steps": 0}, "max_steps"), ({"trials": 0}, "trials"), ({"delta_days": 0}, "delta_days"),
     ({"max_search_calls": -1}, "max_search_calls"), ({"lookahead": 7}, "lookahead")],
)
def test_budget_validation_names_the_field(kwargs, name):
    with pytest.raises(ValidationError, match=name):
        Budgets(**kwargs)


def test_model_spec_rules():
    with pytest.raises(ConfigError, match="^slug: unknown baseline 'baseline:oracle'; known: baseline:uniform, "):
        ModelSpec(label="b", slug="baseline:oracle")
    with pytest.raises(ConfigError, match="^max_tokens_param: must be one of 'max_tokens' or 'max_completion_tokens'"):
        ModelSpec(label="x", slug="x", max_tokens_param="tokens")
    with pytest.raises(ConfigError, match=r"^omit_sampling\[0\]: must be one of 'temperature' or 'top_p', got 'seed'$"):
        ModelSpec(label="x", slug="x", omit_sampling=("seed",))
    with pytest.raises(ConfigError, match="^slug: ':online' slugs enable provider-side browsing"):
        ModelSpec(label="x", slug="x:online")
    assert ModelSpec(label="b", slug="baseline:uniform").is_baseline
    assert ModelSpec(label="x", slug="Org/QwQ-32B").is_reasoning(Sampling().reasoning_patterns)
    assert not ModelSpec(label="x", slug="org/qwq", reasoning=False).is_reasoning(["qwq"])


def test_every_params_baseline_has_a_harness_name():
    (names, _always_no_alias) = get_args(Baseline)
    assert set(get_args(names)) == set(BASELINES)
    assert BASELINES["always_no"] == "no"  # the label baseline:no@cutoff-… of earlier runs


def test_eval_settings_rules():
    with pytest.raises(ConfigError, match="archive path"):
        EvalSettings(search_backend="archive").check_search_ready()
    EvalSettings(search_backend="archive", budgets=Budgets(max_search_calls=0)).check_search_ready()
    with pytest.raises(ValidationError, match="detector"):
        EvalSettings(search_backend="none", detector="magic")
    assert not EvalSettings(search_backend="none").search_enabled


def test_snapshot_keeps_the_search_options_as_given():
    given = EvalSettings(search_options=SearchOptions(search_depth="advanced"))
    assert config_snapshot(given, [], {})["settings"]["search_options"] == {"search_depth": "advanced"}
    assert config_snapshot(EvalSettings(), [], {})["settings"]["search_options"] == {}


def test_redaction_hides_the_key():
    red = redact_key(KEY)
    assert red.startswith("sk-o…sha256:") and len(red.split(":")[-1]) == 12
    assert KEY not in red and KEY[4:12] not in red
    assert redact_key("short").startswith("…")


def test_missing_and_placeholder_keys_name_the_variable():
    with pytest.raises(ConfigError, match="MY_KEY is not set"):
        read_key({}, "MY_KEY", "x")
    for placeholder in ("REPLACE_ME", "changeme", "<your key>", "put-your-api-key-here"):
        with pytest.raises(ConfigError, match="MY_KEY holds a placeholder"):
            read_key({"MY_KEY": placeholder}, "MY_KEY", "x")


def test_resolve_endpoint():
    spec = ModelSpec(label="m", slug="m")
    endpoint = resolve_endpoint(spec, {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": "http://127.0.0.1:8000/v1/"})
    assert endpoint.base_url == "http://127.0.0.1:8000/v1" and endpoint.api_key == KEY
    assert KEY not in repr(endpoint)
    assert resolve_endpoint(spec, {"OPENAI_API_KEY": KEY}).base_url == "https://api.openai.com/v1"
    custom = ModelSpec(label="m", slug="m", base_url_env="VLLM_URL", api_key_env="VLLM_KEY")
    with pytest.raises(ConfigError, match="VLLM_URL"):
        resolve_endpoint(custom, {"VLLM_KEY": KEY})
    with pytest.raises(ConfigError, match="VLLM_KEY"):
        resolve_endpoint(custom, {"VLLM_URL": "http://127.0.0.1:1"})
    assert resolve_endpoint(custom, {"VLLM_URL": "http://127.0.0.1:1"}, need_key=False).api_key is None
    with pytest.raises(ConfigError, match="http"):
        resolve_endpoint(spec, {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": "ftp://x"})


def test_snapshot_redacts_keys_and_hides_pool_size():
    pool_small = "tvly-aaaaaaaaaaaaaaaaaaaa"
    pool_large = "tvly-aaaaaaaaaaaaaaaaaaaa,tvly-bbbbbbbbbbbbbbbbbbbb,tvly-cccccccccccccccccccc"
    spec = ModelSpec(label="m", slug="m", cutoff=dt.date(2024, 6, 30))
    settings = EvalSettings(search_backend="tavily")
    small = config_snapshot(settings, [spec], {"OPENAI_API_KEY": KEY, "TAVILY_API_KEY": pool_small}, ["TAVILY_API_KEY"])
    large = config_snapshot(settings, [spec], {"OPENAI_API_KEY": KEY, "TAVILY_API_KEY": pool_large}, ["TAVILY_API_KEY"])
    text = json.dumps(large)
    assert KEY not in text and "bbbb" not in text
    assert isinstance(large["keys"]["TAVILY_API_KEY"], str)  # one value, whatever the pool size
    assert len(json.dumps(small)) == len(text)
    assert large["models"][0]["cutoff"] == "2024-06-30"


def test_resume_fingerprint_ignores_concurrency_cache_and_keys():
    spec = ModelSpec(label="m", slug="m")
    a = config_snapshot(EvalSettings(search_backend="none"), [spec], {"OPENAI_API_KEY": KEY})
    b = config_snapshot(EvalSettings(search_backend="none", cache_mode="off", concurrency=Concurrency(llm=9)), [spec],
                        {"OPENAI_API_KEY": KEY + "x"})
    assert resume_fingerprint(a) == resume_fingerprint(b)
    c = config_snapshot(EvalSettings(search_backend="none", budgets=Budgets(max_steps=7, lookahead=2)), [spec], {})
    assert resume_fingerprint(a) != resume_fingerprint(c)


def test_log_filter_scrubs_registered_keys(caplog):
    SECRETS.register(KEY)
    logger = logging.getLogger("oracleproto.test_settings")
    logger.addFilter(ScrubSecretsFilter())
    with caplog.at_level(logging.INFO, logger="oracleproto.test_settings"):
        logger.info("calling with %s", KEY)
    assert KEY not in caplog.text and "sha256:" in caplog.text
