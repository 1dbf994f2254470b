"""Reading ``params.yaml``: one section per stage, absent sections mean defaults."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from oracleproto.errors import OracleProtoError

DEFAULT_PARAMS = Path("params.yaml")


class ParamsError(OracleProtoError, ValueError):
    pass


def load_params(path: str | Path | None = None) -> dict[str, Any]:
    """All sections of the params file (``{}`` when the default file is absent)."""
    p = Path(path) if path is not None else DEFAULT_PARAMS
    if not p.exists():
        if path is not None:
            raise ParamsError(f"params file {p} not found")
        return {}
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ParamsError(f"params file {p} is not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise ParamsError(f"params file {p} must be a mapping of stage sections")
    return data


def section(params: dict[str, Any], name: str) -> dict[str, Any]:
    value = params.get(name) or {}
    if not isinstance(value, dict):
        raise ParamsError(f"params section {name!r} must be a mapping")
    return value
