"""The source registry: adapters register a reader per URI scheme; ``open_source`` dispatches.

Adapters import this module (never the package), and the package imports the adapters, so
registration has no import cycle.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from oracleproto.config import Ingest
from oracleproto.errors import InputError


@dataclass
class SourceData:
    """What an adapter returns: raw-row batches plus the metadata that travels with the table."""

    uri: str
    batches: Iterator[pa.Table]
    source_hash: str
    prompt_templates: dict[str, str] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


SourceReader = Callable[[str, dict[str, Any]], SourceData]
_READERS: dict[str, SourceReader] = {}


def register_source(scheme: str) -> Callable[[SourceReader], SourceReader]:
    def decorate(reader: SourceReader) -> SourceReader:
        _READERS[scheme] = reader
        return reader

    return decorate


def source_schemes() -> list[str]:
    return sorted(_READERS)


def one_line(exc: BaseException | str, limit: int = 300) -> str:
    """An error's text as one printable line: a parser may quote the bytes it choked on
    (newlines, NULs), and an ``error:`` line must stay one line."""
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(exc).strip())
    return text if len(text) <= limit else text[:limit] + "…"


def split_uri(uri: str) -> tuple[str, str]:
    scheme, sep, arg = uri.partition(":")
    if not sep:
        return uri, ""
    return scheme, arg


def open_source(uri: str, options: Ingest | Mapping[str, Any] | None = None) -> SourceData:
    """Open the source named by ``uri``; unknown schemes and unreadable sources raise InputError.

    Readers get the ``ingest`` params as a dict with every key (defaults: oracleproto.config).
    """
    scheme, arg = split_uri(uri)
    reader = _READERS.get(scheme)
    if reader is None:
        known = ", ".join(s if s == "sample" else s + ":" for s in source_schemes())
        raise InputError(f"unknown source {uri!r}: use one of {known}")
    settings = options if isinstance(options, Ingest) else Ingest.checked(**(options or {}))
    return reader(arg, settings.model_dump())
