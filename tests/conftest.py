"""Shared fixtures: paths to the project root and to the paper's released 80 questions."""

from __future__ import annotations

from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = PROJECT_ROOT.parent / "shared" / "data"
PAPER_DB = SHARED_DATA / "forecast_eval_set_80.db"
PAPER_JSONL = SHARED_DATA / "forecast_eval_set_80.jsonl"


@pytest.fixture
def paper_db() -> Path:
    if not PAPER_DB.exists():
        pytest.skip(f"{PAPER_DB} not present")
    return PAPER_DB


@pytest.fixture(scope="session")
def project_root() -> Path:
    return PROJECT_ROOT
