"""Search-side costs: archive BM25 (index build, masked queries), the date heuristic, and the
tavily backend + LLM leak detector against loopback stand-ins (overhead of our code and the
clients, not of the real services).

    python bench/search.py [--docs 50000] [--queries 300] [--searches 200]

Prints one line per measurement. Everything runs on 127.0.0.1; nothing sleeps for real.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from oracleproto.harness.archive import build_index  # noqa: E402
from oracleproto.harness.detector import (  # noqa: E402
    DetectorSettings,
    LeakDetector,
    heuristic_verdict,
)
from oracleproto.harness.keypool import KeyPool  # noqa: E402
from oracleproto.harness.replay import CallCache, CallContext  # noqa: E402
from oracleproto.harness.search import SearchHit, SearchSettings  # noqa: E402
from oracleproto.harness.tavily import TavilyBackend  # noqa: E402
from tests.servers.openai_server import OpenAIServer, content_reply  # noqa: E402
from tests.servers.tavily_server import TavilyStub, result  # noqa: E402

CHI = date(2025, 3, 1)


def words(rng: random.Random, vocabulary: list[str], n: int) -> str:
    return " ".join(rng.choice(vocabulary) for _ in range(n))


def bench_archive(n_docs: int, n_queries: int) -> None:
    import pyarrow as pa

    rng = random.Random(7)
    vocabulary = [f"w{i}" for i in range(20_000)]
    start_day = date(2020, 1, 1)
    docs = [
        {
            "doc_id": f"doc{i:07d}",
            "url": f"https://archive/{i}",
            "title": words(rng, vocabulary, 8),
            "published_date": (start_day + timedelta(days=rng.randrange(2300))).isoformat() if i % 50 else None,
            "content": words(rng, vocabulary, 150),
        }
        for i in range(n_docs)
    ]
    table = pa.Table.from_pylist(docs)
    t0 = time.perf_counter()
    index = build_index(table)
    build_s = time.perf_counter() - t0
    latencies = []
    for _ in range(n_queries):
        query = words(rng, vocabulary, 4)
        chi = start_day + timedelta(days=rng.randrange(2300))
        t0 = time.perf_counter()
        index.search(query, chi, 5)
        latencies.append((time.perf_counter() - t0) * 1000)
    print(
        f"archive: {n_docs} docs × 158 words: index build {build_s:.2f} s; "
        f"query (mask + top-5) mean {statistics.mean(latencies):.2f} ms, p95 {sorted(latencies)[int(0.95 * len(latencies))]:.2f} ms"
    )


def bench_heuristic(n_hits: int) -> None:
    rng = random.Random(3)
    vocabulary = ["market", "rates", "2024", "January 5, 2024", "2025-02-01", "Feb", "report", "the", "3 March 2024", "12"]
    hits = [
        SearchHit(f"title {i}", "https://x", words(rng, vocabulary, 60), "2025-01-01", raw_content=words(rng, vocabulary, 1300)[:8000])
        for i in range(n_hits)
    ]
    t0 = time.perf_counter()
    verdicts = [heuristic_verdict(h, CHI) for h in hits]
    per_hit_us = (time.perf_counter() - t0) / n_hits * 1e6
    print(f"heuristic: {per_hit_us:.0f} µs per result with 8 000-char raw_content ({verdicts.count('keep')}/{n_hits} kept)")


def judge_keep(body: dict) -> dict:
    return content_reply(json.dumps({"verdict": "keep", "reason": "all earlier"}), body)


async def bench_tavily(n_searches: int, mode: str, cache_path: Path | None) -> float:
    with TavilyStub() as stub, OpenAIServer(judge_keep) as chat:
        stub.script("q", [result(f"r{i}", f"https://r/{i}", "calm markets", "2025-01-10") for i in range(5)])
        cache = CallCache(cache_path, "record") if cache_path else CallCache(None, "off")
        detector = None
        if mode == "llm":
            detector = LeakDetector(DetectorSettings(model="d", base_url=chat.base_url, api_key="bench-key-0123456789"), cache)
        backend = TavilyBackend(
            SearchSettings(detector_mode=mode),
            cache,
            detector,
            environ={"TAVILY_BASE_URL": stub.url},
            pool=KeyPool(["tvly-bench-1", "tvly-bench-2"]),
        )
        t0 = time.perf_counter()
        for i in range(n_searches):
            await backend.search("q", CHI, CallContext("m", f"q{i}", 1, 0, 1))
        elapsed = time.perf_counter() - t0
        await backend.aclose()
        if detector is not None:
            await detector.aclose()
        cache.close()
    return elapsed / n_searches * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=50_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--searches", type=int, default=200)
    args = parser.parse_args()
    bench_archive(args.docs, args.queries)
    bench_heuristic(2_000)
    for mode in ("heuristic", "llm"):
        ms = asyncio.run(bench_tavily(args.searches, mode, None))
        print(f"tavily backend (loopback), mode {mode}: {ms:.1f} ms per search (5 results)")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "calls.sqlite"
        ms_record = asyncio.run(bench_tavily(args.searches, "llm", path))
        ms_replay = _replay(path, args.searches)
        print(f"tavily backend, mode llm, record to cache: {ms_record:.1f} ms per search; replay: {ms_replay:.2f} ms per search")


def _replay(path: Path, n_searches: int) -> float:
    async def go() -> float:
        cache = CallCache(path, "replay")
        detector = LeakDetector(DetectorSettings.from_env({"DETECTOR_MODEL": "d"}, require_endpoint=False), cache)
        backend = TavilyBackend(SearchSettings(detector_mode="llm"), cache, detector, environ={})
        t0 = time.perf_counter()
        for i in range(n_searches):
            await backend.search("q", CHI, CallContext("m", f"q{i}", 1, 0, 1))
        return (time.perf_counter() - t0) / n_searches * 1000

    return asyncio.run(go())


if __name__ == "__main__":
    main()
