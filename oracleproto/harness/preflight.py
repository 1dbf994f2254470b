"""Fail fast: before any run folder exists, every model endpoint answers one cheap request.

An unreachable host, a refused connection or a rejected key is one ``error:`` line naming the
endpoint's variables within seconds — not hours of retries later. Any HTTP answer other
than 401/403 counts as reachable (a server without ``/models`` still serves chat). Replays
call nothing, so they skip this.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

import httpx

from oracleproto.errors import ConfigError, ExternalServiceError
from oracleproto.harness.bounded_http import make_http_client
from oracleproto.harness.settings import Endpoint

PREFLIGHT_TIMEOUT_S = 5.0


async def check_endpoint(endpoint: Endpoint, base_url_env: str, transport: httpx.AsyncBaseTransport | None = None) -> None:
    headers = {"Authorization": f"Bearer {endpoint.api_key}"} if endpoint.api_key else {}
    where = f"the endpoint of {base_url_env} / {endpoint.key_env}"
    async with make_http_client(headers, transport) as client:
        try:
            async with asyncio.timeout(PREFLIGHT_TIMEOUT_S):
                response = await client.get(f"{endpoint.base_url}/models")
        except (httpx.TransportError, TimeoutError) as exc:
            kind = "timeout" if isinstance(exc, (TimeoutError, httpx.TimeoutException)) else "network"
            raise ExternalServiceError(f"{where} is unreachable ({type(exc).__name__}); check {base_url_env}", kind) from None
    if response.status_code in (401, 403):
        raise ExternalServiceError(f"{where} rejected the key (HTTP {response.status_code}); check {endpoint.key_env}", "auth")


async def check_endpoints(endpoints: Iterable[tuple[Endpoint, str]], transport: httpx.AsyncBaseTransport | None = None) -> None:
    """One request per distinct (URL, key variable); all run at once."""
    distinct = {(e.base_url, e.key_env): (e, env) for e, env in endpoints}
    await asyncio.gather(*(check_endpoint(e, env, transport) for e, env in distinct.values()))


def every_problem(problems: list[str]) -> None:
    """Raise once, naming every missing or placeholder variable, not only the first."""
    if problems:
        raise ConfigError("; ".join(dict.fromkeys(problems)))
