"""A Tavily-compatible search server on 127.0.0.1 for tests.

``TavilyStub`` answers ``POST /search`` like the real API: scripted results per query
(cut to the request's ``max_results``), an optional quick answer, 401 for a request with
no bearer key or a key marked bad. Faults are scripted in order (``fail_next``): any
status with any body and headers (429 + Retry-After, 432 quota, 5xx, ...), a slow reply
(``delay_s``, for client timeouts) or a malformed 200 body; a fault can be pinned to one
key. Every request is recorded (path, headers, JSON body) for assertions.

``LoopbackServer`` is the generic part (a threaded stdlib HTTP server whose replies come
from a handler function); other scripted stubs can reuse it.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class RecordedRequest:
    path: str
    headers: dict[str, str]  # lower-cased names
    raw: bytes
    body: Any  # decoded JSON, or None when the body is not JSON

    @property
    def bearer(self) -> str | None:
        value = self.headers.get("authorization", "")
        return value[len("Bearer ") :] if value.startswith("Bearer ") else None


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: Any = None  # dict/list → JSON; str/bytes sent as is
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0

    def encoded(self) -> bytes:
        if isinstance(self.body, bytes):
            return self.body
        if isinstance(self.body, str):
            return self.body.encode()
        return json.dumps(self.body).encode()


class LoopbackServer:
    """A threaded HTTP server on 127.0.0.1 (free port) that records every POST."""

    def __init__(self, handler: Callable[[RecordedRequest], Reply]):
        self._handler = handler
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> LoopbackServer:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body are separate writes: no 40 ms ACK stall

            def do_POST(self) -> None:  # noqa: N802 (stdlib name)
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                request = RecordedRequest(self.path, {k.lower(): v for k, v in self.headers.items()}, raw, body)
                with outer._lock:
                    outer.requests.append(request)
                reply = outer._handler(request)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                payload = reply.encoded()
                try:
                    self.send_response(reply.status)
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test): nothing to answer

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass  # keep test output clean

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@dataclass(frozen=True)
class Fault(Reply):
    """A scripted failure for the next matching request; ``key`` pins it to one bearer key."""

    status: int = 500
    body: Any = field(default_factory=lambda: {"detail": {"error": "scripted fault"}})
    key: str | None = None


def result(title: str, url: str, content: str = "", published_date: str | None = None, **extra: Any) -> dict[str, Any]:
    """One Tavily result item."""
    item = {"title": title, "url": url, "content": content or title, "score": 0.5, "raw_content": None}
    if published_date is not None:
        item["published_date"] = published_date
    return {**item, **extra}


class TavilyStub(LoopbackServer):
    """Scripted Tavily: ``script(query, results, answer)``, ``fail_next(*faults)``, ``bad_keys``."""

    def __init__(self) -> None:
        super().__init__(self._reply)
        self.results: dict[str, list[dict[str, Any]]] = {}
        self.answers: dict[str, str] = {}
        self.faults: list[Fault] = []
        self.bad_keys: dict[str, int] = {}  # key -> status returned for it every time

    def script(self, query: str, results: list[dict[str, Any]], answer: str | None = None) -> None:
        self.results[query] = results
        if answer is not None:
            self.answers[query] = answer

    def fail_next(self, *faults: Fault) -> None:
        with self._lock:
            self.faults.extend(faults)

    def searches(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path == "/search"]

    def _reply(self, request: RecordedRequest) -> Reply:
        key = request.bearer
        if request.path != "/search":
            return Reply(404, {"detail": {"error": f"no route {request.path}"}})
        if not key:
            return Reply(401, {"detail": {"error": "Unauthorized: missing or invalid API key."}})
        if key in self.bad_keys:
            return Reply(self.bad_keys[key], {"detail": {"error": "Unauthorized: missing or invalid API key."}})
        with self._lock:
            fault = next((f for f in self.faults if f.key in (None, key)), None)
            if fault is not None:
                self.faults.remove(fault)
        if fault is not None:
            return fault
        body = request.body if isinstance(request.body, dict) else {}
        query = body.get("query", "")
        results = self.results.get(query, [])[: int(body.get("max_results", 5))]
        return Reply(
            200,
            {
                "query": query,
                "answer": self.answers.get(query) if body.get("include_answer") else None,
                "images": [],
                "follow_up_questions": None,
                "results": results,
                "response_time": 0.01,
                "request_id": "stub",
            },
        )
