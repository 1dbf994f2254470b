"""In-process stand-ins for the model and the search backend (unit tests of the loop)."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from oracleproto.harness.faults import CallError
from oracleproto.harness.llm import ChatResult
from oracleproto.harness.providers import ScriptedProvider
from oracleproto.harness.replay import CallContext
from oracleproto.harness.search import SearchHit, SearchOutcome
from oracleproto.harness.settings import ModelSpec


def say(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def search_call(query: str | None = "q", *, arguments: str | None = None, name: str = "web_search", call_id: str = "c1") -> dict:
    args = arguments if arguments is not None else json.dumps({"query": query})
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}


def calls(*tool_calls: dict, content: str | None = None) -> dict[str, Any]:
    return {"role": "assistant", "content": content, "tool_calls": list(tool_calls)}


class ScriptedModel(ScriptedProvider):
    """The package's scripted provider, also checking that the pre-encoded trace the loop
    hands over is exactly the messages."""

    async def complete(
        self,
        spec: ModelSpec,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
        context: CallContext,
        messages_json: str | None = None,
    ) -> ChatResult:
        assert messages_json is None or json.loads(messages_json) == list(messages)
        return await super().complete(spec, messages, tools, context, messages_json)


@dataclass
class FakeSearch:
    """A SearchBackend returning two dated hits per query; records (query, end_date, context)."""

    name: str = "fake"
    hits_per_call: int = 2
    cost_usd: float = 0.0
    calls: list[tuple[str, dt.date, CallContext]] = field(default_factory=list)

    async def search(self, query: str, end_date: dt.date, context: CallContext) -> SearchOutcome:
        self.calls.append((query, end_date, context))
        hits = [
            SearchHit(
                title=f"Report {i} on {query}",
                url=f"https://news.example/{i}",
                content=f"Background note {i} written before the cutoff.",
                published_date=(end_date - dt.timedelta(days=3 + i)).isoformat(),
            )
            for i in range(self.hits_per_call)
        ]
        audit = {"n_results_raw": len(hits), "n_results_kept": len(hits), "published_dates": [h.published_date for h in hits]}
        return SearchOutcome(query=query, end_date=end_date, hits=hits, answer=None, error=None, audit=audit, cost_usd=self.cost_usd)

    async def aclose(self) -> None:
        pass


def call_error(kind: str) -> CallError:
    return CallError(kind, f"scripted {kind}")
