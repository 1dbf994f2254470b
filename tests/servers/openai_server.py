"""A loopback OpenAI-compatible chat-completions server for tests and benchmarks.

It speaks the wire format exactly (``POST /chat/completions``: tools, ``tool_calls`` with
string arguments, ``finish_reason``, ``usage``), records every request (headers and body)
for assertions, and can be given latency and faults:

- a *brain* decides each reply from the request (default :class:`SearchThenAnswer`: ``k``
  web_search calls while tools are offered, then the first ``\\boxed{…}`` example of the
  prompt, so every question type gets a parseable answer);
- a *fault plan* may answer a request with an HTTP error (optionally with Retry-After), a
  non-JSON 200, a stall longer than the client timeout, or a dropped connection. Faults
  are decided from the request body and how many times that same body was seen, so a
  storm is the same whatever the concurrency.

Run it in a thread (``with OpenAIServer(...) as server``) or as a process for benchmarks:
``python -m tests.servers.openai_server --latency 0.05`` prints ``PORT <n>``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

BOXED_EXAMPLE = re.compile(r"\\boxed\{([^}]*)\}")


# ---------------------------------------------------------------------------------------
# Reply builders


def request_digest(body: dict[str, Any], extra: str = "") -> str:
    """A cheap deterministic fingerprint of a request (for ids): first prompt, turn count, extra."""
    messages = body.get("messages", [])
    first = messages[0].get("content") or "" if messages else ""
    return hashlib.sha256(f"{len(messages)}|{first}|{extra}".encode()).hexdigest()


def completion(message: dict[str, Any], finish_reason: str, body: dict[str, Any], cost: float | None = None) -> dict:
    prompt_chars = sum(len(m.get("content") or "") for m in body.get("messages", []))
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_chars // 4,
        "completion_tokens": 12,
        "total_tokens": prompt_chars // 4 + 12,
        "completion_tokens_details": {"reasoning_tokens": 3},
    }
    if cost is not None:
        usage["cost"] = cost
    return {
        "id": f"chatcmpl-{request_digest(body)[:16]}",
        "object": "chat.completion",
        "created": 1700000000,
        "model": body.get("model"),
        "system_fingerprint": "fp_loopback",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}],
        "usage": usage,
    }


def content_reply(text: str, body: dict[str, Any], cost: float | None = None) -> dict:
    return completion({"role": "assistant", "content": text}, "stop", body, cost)


def tool_call_reply(name: str, arguments: str, body: dict[str, Any], call_id: str | None = None, content=None) -> dict:
    call = {"id": call_id or f"call_{request_digest(body, arguments)[:12]}", "type": "function", "function": {"name": name, "arguments": arguments}}
    return completion({"role": "assistant", "content": content, "tool_calls": [call]}, "tool_calls", body)


def first_user_text(body: dict[str, Any]) -> str:
    for message in body.get("messages", []):
        if message.get("role") == "user":
            return message.get("content") or ""
    return ""


def searches_done(body: dict[str, Any]) -> int:
    return sum(1 for m in body.get("messages", []) if m.get("role") == "tool")


@dataclass
class SearchThenAnswer:
    """Search ``searches`` times while the tool is offered, then answer with the prompt's first box example."""

    searches: int = 2
    cost: float | None = None

    def __call__(self, body: dict[str, Any]) -> dict:
        done = searches_done(body)
        if body.get("tools") and done < self.searches:
            event = first_user_text(body)[:40]
            return tool_call_reply("web_search", json.dumps({"query": f"search {done + 1}: {event}"}), body)
        examples = BOXED_EXAMPLE.findall(first_user_text(body))
        answer = examples[0] if examples else "A"
        return content_reply(f"Weighing the evidence. \\boxed{{{answer}}}", body, self.cost)


# ---------------------------------------------------------------------------------------
# Faults


@dataclass(frozen=True)
class Fault:
    kind: str  # "status" | "malformed" | "stall" | "drop"
    status: int = 500
    body: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    stall_s: float = 0.0


def status_fault(status: int, body: str = "", retry_after: str | None = None) -> Fault:
    headers = (("Retry-After", retry_after),) if retry_after is not None else ()
    return Fault("status", status=status, body=body, headers=headers)


@dataclass
class FaultStorm:
    """Fault a ``rate`` share of first attempts (and fewer retries), chosen by body hash.

    ``faults`` cycles through the fault kinds; the n-th sight of the same body is faulted
    with probability ``rate / 2**n``, so retries mostly succeed and the run completes.
    """

    faults: tuple[Fault, ...]
    rate: float = 0.3

    def __call__(self, body: dict[str, Any], seen: int) -> Fault | None:
        digest = hashlib.sha256((json.dumps(body, sort_keys=True) + f"#{seen}").encode()).digest()
        draw = int.from_bytes(digest[:4], "big") / 2**32
        if draw >= self.rate / (2**seen):
            return None
        return self.faults[digest[4] % len(self.faults)]


@dataclass
class InOrder:
    """Serve each fault once, in order, to the first requests seen for the first time."""

    faults: list[Fault]

    def __post_init__(self) -> None:
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any], seen: int) -> Fault | None:
        with self._lock:
            return self.faults.pop(0) if seen == 0 and self.faults else None


# ---------------------------------------------------------------------------------------
# The server


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: dict[str, Any] | None
    raw: bytes


@dataclass
class ServerState:
    brain: Callable[[dict[str, Any]], dict]
    latency_s: float = 0.0
    sleep_overshoot_s: float = 0.0  # how late time.sleep wakes on this host (timer slack), measured at start
    fault_plan: Callable[[dict[str, Any], int], Fault | None] | None = None
    requests: list[RecordedRequest] = field(default_factory=list)
    seen: dict[str, int] = field(default_factory=dict)
    faults_served: list[str] = field(default_factory=list)
    record: bool = True
    lock: threading.Lock = field(default_factory=threading.Lock)
    accepted_key: str | None = None  # set: GET /models answers 401 to any other bearer key


def sleep_overshoot(nap_s: float, samples: int = 11) -> float:
    """The median time ``time.sleep`` wakes late here (timer slack; ~0.2 ms in a VM): taken
    off each reply's sleep, so a reply leaves ``latency_s`` after arrival, not 0.2 ms later."""
    late = []
    for _ in range(samples):
        started = time.perf_counter()
        time.sleep(nap_s)
        late.append(time.perf_counter() - started - nap_s)
    return sorted(late)[samples // 2]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # else the body waits for the client's delayed ACK (~40 ms)
    state: ServerState  # set on the subclass made per server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def parse_request(self) -> bool:
        # the request line has just been read: the latency counts from here, not from after
        # the stdlib's header parsing (a few hundred microseconds, under the GIL of 5 threads)
        self.arrived = time.perf_counter()
        return super().parse_request()

    def _send(self, status: int, payload: bytes, headers: tuple[tuple[str, str], ...] = ()) -> None:
        # status line, headers and body in one write, as production servers do for small replies
        phrase = HTTPStatus(status).phrase if status in HTTPStatus._value2member_map_ else ""
        lines = [f"HTTP/1.1 {status} {phrase}", "Content-Type: application/json", f"Content-Length: {len(payload)}"]
        lines += [f"{name}: {value}" for name, value in headers]
        self.wfile.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + payload)

    def do_GET(self) -> None:  # noqa: N802
        """``/models``: what a client may ask first to check the endpoint and its key."""
        accepted = self.state.accepted_key
        if accepted is not None and self.headers.get("Authorization") != f"Bearer {accepted}":
            self._send(401, b'{"error": {"message": "invalid api key"}}')
        elif self.path.rstrip("/") == "/models":
            self._send(200, b'{"object": "list", "data": [{"id": "vendor/model", "object": "model"}]}')
        else:
            self._send(404, b'{"error": {"message": "not found"}}')

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        arrived = self.arrived
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            body = None
        state = self.state
        key = hashlib.sha256(raw).hexdigest()
        with state.lock:
            if state.record:
                state.requests.append(RecordedRequest(self.path, dict(self.headers.items()), body, raw))
            seen = state.seen.get(key, 0)
            state.seen[key] = seen + 1
        if self.path.rstrip("/") != "/chat/completions" or body is None:
            self._send(404, b'{"error": {"message": "not found"}}')
            return
        fault = state.fault_plan(body, seen) if state.fault_plan else None
        try:
            if fault is not None:
                time.sleep(state.latency_s)
                with state.lock:
                    state.faults_served.append(fault.kind if fault.kind != "status" else str(fault.status))
                self._serve_fault(fault)
                return
            reply = json.dumps(state.brain(body)).encode()
            # the reply leaves `latency_s` after the request arrived, whatever the brain cost
            time.sleep(max(0.0, state.latency_s - state.sleep_overshoot_s - (time.perf_counter() - arrived)))
            self._send(200, reply)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _serve_fault(self, fault: Fault) -> None:
        if fault.kind == "status":
            body = fault.body or json.dumps({"error": {"message": f"scripted {fault.status}"}})
            self._send(fault.status, body.encode(), fault.headers)
        elif fault.kind == "malformed":
            self._send(200, b'{"id": "x", "choices": [{"message": ')
        elif fault.kind == "stall":
            time.sleep(fault.stall_s)
            self._send(200, json.dumps(content_reply("late", {})).encode())
        elif fault.kind == "drop":
            self.close_connection = True
            self.connection.shutdown(2)
        else:
            raise ValueError(f"unknown fault kind {fault.kind!r}")


class OpenAIServer:
    """Threaded loopback server; ``base_url`` ends in ``/v1``-less root (``http://127.0.0.1:PORT``)."""

    def __init__(
        self,
        brain: Callable[[dict[str, Any]], dict] | None = None,
        *,
        latency_s: float = 0.0,
        fault_plan: Callable[[dict[str, Any], int], Fault | None] | None = None,
        port: int = 0,
        record: bool = True,
    ) -> None:
        self.state = ServerState(brain=brain or SearchThenAnswer(), latency_s=latency_s, fault_plan=fault_plan, record=record)
        if latency_s > 0:
            self.state.sleep_overshoot_s = sleep_overshoot(min(latency_s, 0.02))  # it grows with the nap
        handler = type("Handler", (_Handler,), {"state": self.state})
        self._server = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def requests(self) -> list[RecordedRequest]:
        return self.state.requests

    def chat_bodies(self) -> list[dict[str, Any]]:
        return [r.body for r in self.state.requests if r.body is not None]

    def start(self) -> OpenAIServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per reply")
    parser.add_argument("--searches", type=int, default=2, help="web_search calls before answering")
    args = parser.parse_args()
    server = OpenAIServer(SearchThenAnswer(searches=args.searches), latency_s=args.latency, port=args.port, record=False)
    server.start()
    print(f"PORT {server.port}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
