"""The one tool a forecasting model is offered, ``web_search``, and its schema.

The harness offers it, the SFT export rewrites every call to its arguments, and RL rows ship
it. The schema exposes only ``query``: the prediction cutoff χ is injected by whoever runs
the search (the harness, or a trainer's tool via ``create_kwargs``), never set by the model.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

WEB_SEARCH = "web_search"

WEB_SEARCH_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": WEB_SEARCH,
        "description": "Search the web for information relevant to the question.",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string", "description": "What to search for."}},
            "required": ["query"],
            "additionalProperties": False,
        },
    },
}


def _lock_tool_schema(tool: Mapping[str, Any]) -> None:
    """The model may set only ``query``: an argument such as ``end_date`` would let it move χ."""
    parameters = tool["function"]["parameters"]
    if set(parameters["properties"]) != {"query"} or parameters["required"] != ["query"]:
        raise AssertionError("web_search schema drifted: it must expose exactly one argument, 'query'")


_lock_tool_schema(WEB_SEARCH_TOOL)  # checked at import, and not removable by python -O
