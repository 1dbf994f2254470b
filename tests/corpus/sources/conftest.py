"""Fixtures of the source tests: the shared real data (never copied into the repo), no Hub."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import SHARED_DATA

FORECASTBENCH_DIR = SHARED_DATA / "forecastbench"


@pytest.fixture
def forecastbench_dir() -> Path:
    if not (FORECASTBENCH_DIR / "resolution_sets").is_dir():
        pytest.skip(f"{FORECASTBENCH_DIR} not present")
    return FORECASTBENCH_DIR


@pytest.fixture
def offline_hub(tmp_path, monkeypatch):
    """No Hub traffic and an empty cache, so nothing a test reads comes from the network."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_home"))
