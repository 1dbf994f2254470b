"""Loading a configuration of a dataset repo — a local ``hub/`` folder or a Hub id.

``datasets`` keys its cache for a local folder by folder name and config only, so after a
rebuild ``load_dataset("hub", cfg)`` returns the rows of an earlier build (and two folders
named ``hub`` share an entry). A local folder is therefore read through the packaged
parquet builder with the card's data files, cached under a key made of the files' sha256:
new bytes, new cache entry; the same bytes load from cache.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import yaml

from oracleproto.errors import InputError
from oracleproto.io import sha256_file
from oracleproto.publish.hub import HubError, check_hub_reachable

README = "README.md"




def looks_local(source: str) -> bool:
    """A path, never a Hub id: it exists, starts with ``.`` or ``/``, or has no ``/``."""
    return Path(source).exists() or source.startswith((".", "/", "~")) or "/" not in source


def card_configs(hub_dir: Path) -> dict[str, list[dict[str, Any]]]:
    """``{config_name: data_files}`` from the YAML header of the folder's card."""
    card = hub_dir / README
    if not card.is_file():
        raise InputError(f"{hub_dir} has no {README}: not a dataset repo folder")
    text = card.read_text(encoding="utf-8")
    if not text.startswith("---\n") or "\n---" not in text[4:]:
        raise InputError(f"{card} has no YAML header")
    header = yaml.safe_load(text[4 : text.index("\n---", 4)]) or {}
    return {entry["config_name"]: entry.get("data_files") or [] for entry in header.get("configs") or []}


def local_data_files(hub_dir: str | os.PathLike[str], config: str) -> dict[str, list[str]]:
    """``{split: [absolute parquet paths]}`` of one configuration of a local repo folder."""
    root = Path(hub_dir).resolve()
    configs = card_configs(root)
    if config not in configs:
        raise InputError(f"config {config!r} is not in {root / README}; it has {sorted(configs)}")
    files: dict[str, list[str]] = {}
    for entry in configs[config]:
        matches = sorted(p for p in root.glob(entry["path"]) if p.is_file() and p.resolve().is_relative_to(root))
        if not matches:
            raise InputError(f"config {config!r} split {entry['split']!r}: no file matches {entry['path']} in {root}")
        files[entry["split"]] = [str(p) for p in matches]
    return files


def content_key(files: dict[str, list[str]]) -> str:
    digest = hashlib.sha256()
    for split in sorted(files):
        for path in files[split]:
            digest.update(f"{split}\0{Path(path).name}\0{sha256_file(path)}\n".encode())
    return digest.hexdigest()[:16]


def load_config(source: str, config: str, revision: str | None = None) -> Any:
    """A ``DatasetDict`` of one configuration: from a local folder as its files are now, or
    from a Hub repo at ``revision``."""
    from datasets import config as datasets_config
    from datasets import load_dataset

    if not looks_local(source):
        try:
            check_hub_reachable(f"loading {source}")
        except HubError as exc:
            raise InputError(str(exc)) from None
        return load_dataset(source, config, revision=revision)
    if not Path(source).is_dir():
        raise InputError(f"{source} is not a folder (a Hub id looks like ORG/NAME)")
    files = local_data_files(source, config)
    cache_dir = Path(datasets_config.HF_DATASETS_CACHE) / "oracleproto-local" / content_key(files)
    return load_dataset("parquet", data_files=files, cache_dir=str(cache_dir))
