"""Fixtures of the source tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def offline_hub(tmp_path, monkeypatch):
    """No Hub traffic and an empty cache, so nothing a test reads comes from the network."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_home"))
