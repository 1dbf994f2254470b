"""Source adapters: each turns a source into batches of *raw rows* for the audit.

A source is named by a URI: ``sample``, ``hf:REPO_OR_DIR`` (a Hugging Face dataset on the Hub
or a local folder in any split layout), ``forecastbench:DIR``, ``sqlite:PATH``,
``jsonl:PATH``, ``parquet:PATH``, ``csv:PATH``. Adapters register by scheme in
:mod:`~oracleproto.corpus.sources.registry` behind one small protocol:
``read(arg, options) -> SourceData``. The raw-row contract is in
:mod:`~oracleproto.corpus.sources.raw`.
"""

from __future__ import annotations

# Importing an adapter registers it; adapters import the registry, never this package.
from oracleproto.corpus.sources import files, forecastbench, hf, sqlite  # noqa: F401
from oracleproto.corpus.sources.raw import RAW_COLUMNS, raw_table
from oracleproto.corpus.sources.registry import (
    SourceData,
    open_source,
    register_source,
    source_schemes,
    split_uri,
)
from oracleproto.errors import InputError

__all__ = [
    "RAW_COLUMNS",
    "SourceData",
    "InputError",
    "open_source",
    "raw_table",
    "register_source",
    "source_schemes",
    "split_uri",
]
