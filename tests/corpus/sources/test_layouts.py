"""Whatever wrote a file and whichever Arrow layout holds its text, every adapter gives the
raw table JSONL gives: pandas (large_string, Python-literal lists in CSV), pyarrow in each
string layout, the project's own reader path, and an HF folder holding the same file."""

import json
from functools import partial

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from oracleproto.config import load_params
from oracleproto.corpus.build import build
from oracleproto.corpus.sources import RAW_COLUMNS
from oracleproto.io import read_parquet
from tests.corpus.sources.helpers import FUTUREX, SEVEN, read_raw, write_jsonl
from tests.corpus.sources.writers import in_layout

FIELDS = [name for name in RAW_COLUMNS if name != "split"]


def _pyarrow_parquet(records: list[dict], path, layout: str) -> None:
    table = pa.Table.from_pylist(records)
    table = table.cast(pa.schema([pa.field(f.name, in_layout(f.type, layout)) for f in table.schema]))
    pq.write_table(table, path)


def _pandas_csv(records: list[dict], path) -> None:
    pd.DataFrame(records).to_csv(path, index=False)  # a list cell is written as "['a', 'b']"


def _pyarrow_csv(records: list[dict], path) -> None:
    as_text = [{k: json.dumps(v) if isinstance(v, list) else v for k, v in r.items()} for r in records]
    pacsv.write_csv(pa.Table.from_pylist(as_text), path)


WRITERS = {
    **{f"pyarrow-{layout}.parquet": partial(_pyarrow_parquet, layout=layout) for layout in ("string", "large_string", "string_view", "dictionary")},
    "pandas.parquet": lambda r, p: pd.DataFrame(r).to_parquet(p),
    "pandas.csv": _pandas_csv,
    "pyarrow.csv": _pyarrow_csv,
}


@pytest.mark.parametrize("shape", ["futurex", "seven"])
@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_every_writer_and_layout_gives_the_jsonl_raw_table(tmp_path, offline_hub, shape, writer):
    records = FUTUREX if shape == "futurex" else SEVEN
    expected, _ = read_raw(f"jsonl:{write_jsonl(tmp_path / 'q.jsonl', records)}")
    assert expected.column("parse_error").null_count == len(records)
    path = tmp_path / writer
    WRITERS[writer](records, path)
    kind = path.suffix.lstrip(".")
    table, _ = read_raw(f"{kind}:{path}")
    assert table.select(FIELDS).equals(expected.select(FIELDS))
    if kind == "parquet":  # CSV holds text only, so there the original record differs (level "1")
        assert table.column("original").equals(expected.column("original"))
    (tmp_path / "hub").mkdir()
    path.rename(tmp_path / "hub" / f"train{path.suffix}")
    from_hf, _ = read_raw(f"hf:{tmp_path / 'hub'}")
    assert from_hf.select(FIELDS).equals(expected.select(FIELDS))
    assert set(from_hf.column("split").to_pylist()) == {"train"}


def test_a_pandas_parquet_of_the_sample_builds_the_same_questions(tmp_path, project_root):
    """The issue's report: pandas 3 writes large_string, and 81 rows became 25, 24 of them
    with another question's event and options."""
    sample = project_root / "data" / "sample" / "futurex_sample.jsonl"
    pd.read_json(sample, lines=True).to_parquet(tmp_path / "s.parquet")
    assert pq.read_schema(tmp_path / "s.parquet").field("prompt").type == pa.large_string()
    params = load_params(project_root / "params.yaml")
    from_jsonl = build(params.overridden({"ingest": {"source": f"jsonl:{sample}"}}), tmp_path / "jsonl")
    from_parquet = build(params.overridden({"ingest": {"source": f"parquet:{tmp_path / 's.parquet'}"}}), tmp_path / "parquet")
    assert from_parquet["audit"]["rows_out"] == from_jsonl["audit"]["rows_out"] == 81
    assert read_parquet(tmp_path / "parquet" / "questions.parquet").equals(read_parquet(tmp_path / "jsonl" / "questions.parquet"))
