"""verl tool for OracleProto RL rollouts: the time-masked ``web_search``.

verl creates one tool instance per call with the row's ``extra_info.tools_kwargs`` —
``{"web_search": {"create_kwargs": {"end_date": χ}}}`` in every OracleProto RL row — so the
search is masked to documents dated ≤ χ exactly as in evaluation. The model sets only
``query`` (the schema has no other argument, and any other key it sends is ignored).

Searches run on oracleproto's offline dated archive (``config.archive``, default the
committed sample). Requires verl (``pip install verl==0.9.1``); see run_grpo.sh.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any
from uuid import uuid4

from verl.tools.base_tool import BaseTool
from verl.tools.schemas import OpenAIFunctionToolSchema, ToolResponse

from oracleproto.harness.replay import CallCache, CallContext
from oracleproto.harness.search import SearchSettings, make_backend


class MaskedWebSearch(BaseTool):
    def __init__(self, config: dict, tool_schema: OpenAIFunctionToolSchema):
        super().__init__(config, tool_schema)
        settings = SearchSettings.from_mapping(
            {"archive_path": config.get("archive", "data/sample/archive.jsonl"), "detector_mode": "heuristic", "max_results": 5}
        )
        self._backend = make_backend("archive", settings, CallCache(None, "off"), None)
        self._end_dates: dict[str, dt.date] = {}

    async def create(self, instance_id: str | None = None, **kwargs: Any) -> tuple[str, ToolResponse]:
        instance_id = instance_id or str(uuid4())
        end_date = (kwargs.get("create_kwargs") or {}).get("end_date")
        if end_date is None:
            raise ValueError("web_search needs create_kwargs.end_date (the row's prediction cutoff χ)")
        self._end_dates[instance_id] = dt.date.fromisoformat(end_date)
        return instance_id, ToolResponse()

    async def execute(self, instance_id: str, parameters: dict[str, Any], **kwargs: Any) -> tuple[ToolResponse, float, dict]:
        query = parameters.get("query")
        if not isinstance(query, str) or not query.strip():
            return ToolResponse(text=json.dumps({"error": "query must be a non-empty string"})), 0.0, {}
        context = CallContext(model="verl", q_id=instance_id, trial=0, step=0)
        outcome = await self._backend.search(query.strip(), self._end_dates[instance_id], context)
        return ToolResponse(text=json.dumps(outcome.to_llm_payload(), ensure_ascii=False)), 0.0, {"hits": len(outcome.hits)}

    async def release(self, instance_id: str, **kwargs: Any) -> None:
        self._end_dates.pop(instance_id, None)
