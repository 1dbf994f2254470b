"""``hf:REPO_OR_DIR`` — a Hugging Face dataset in FutureX-Past's layout, read with
``datasets.load_dataset(..., streaming=True)`` (``hf:futurex-ai/Futurex-Past`` on the Hub, or a
local folder in the same layout, which is how the tests exercise this code offline)."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from oracleproto.corpus.sources import SourceData, SourceError, register_source
from oracleproto.corpus.sources.files import BATCH_ROWS, raw_batches

FUTUREX_PAST = "futurex-ai/Futurex-Past"


def _stream(name: str, split: str, revision: str | None) -> Iterator[pa.Table]:
    import datasets  # heavy import: only when this source is used

    try:
        ds = datasets.load_dataset(name, split=split, streaming=True, revision=revision)
        rows = iter(ds)
        while True:
            chunk = list(itertools.islice(rows, BATCH_ROWS))
            if not chunk:
                return
            yield pa.Table.from_pylist(chunk)
    except SourceError:
        raise
    except Exception as exc:  # datasets raises many kinds (FileNotFound, ConnectionError, ValueError…)
        raise SourceError(f"cannot read source hf:{name}: {type(exc).__name__}: {exc}") from exc


@register_source("hf")
def read_hf_source(arg: str, options: dict[str, Any]) -> SourceData:
    if not arg:
        raise SourceError(f"hf source needs a dataset name, e.g. hf:{FUTUREX_PAST}")
    split, revision = options["hf_split"], options["hf_revision"]
    # The batches are materialised once so the source hash covers exactly what was read.
    tables = list(_stream(arg, split, revision))
    digest = hashlib.sha256()
    for table in tables:
        for column in table.columns:
            digest.update(str(column.to_pylist()).encode())
    return SourceData(
        uri=f"hf:{arg}" + (f"@{revision}" if revision else ""),
        batches=raw_batches(iter(tables)),
        source_hash=digest.hexdigest(),
        metadata={"timezone": "Asia/Shanghai", "hf_split": split},
    )
