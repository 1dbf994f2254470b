"""A raw TCP server on 127.0.0.1 for tests of HTTP the stdlib server would never send.

It reads each request (head + Content-Length body) and hands the socket to a *script*
that writes whatever bytes it likes: a trickled header, an endless body, a bogus status
line, a well-formed reply. ``response_bytes`` builds a well-formed one.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterable

Script = Callable[[socket.socket], None]


def response_bytes(status: int, body: bytes, headers: Iterable[tuple[str, str]] = (), reason: str = "OK") -> bytes:
    """One HTTP/1.1 response with a Content-Length body."""
    lines = [f"HTTP/1.1 {status} {reason}", "Content-Type: application/json", f"Content-Length: {len(body)}"]
    lines += [f"{name}: {value}" for name, value in headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def read_request(conn: socket.socket) -> tuple[bytes, bytes] | None:
    """One request's (head, body), or None when the client closed first."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), 0)
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        body += chunk
    return head, body


class RawServer:
    """One thread per connection; ``script`` answers each request on the socket.

    A script that returns has answered, and the connection waits for the next request
    (unless ``close_after_reply``: then it is closed, as a server's keep-alive timeout
    would). A script that writes forever ends when the client hangs up and a write fails.
    """

    def __init__(self, script: Script, *, close_after_reply: bool = False) -> None:
        self.script = script
        self.close_after_reply = close_after_reply
        self.requests = 0
        self.received: list[tuple[bytes, bytes]] = []  # (head, body) of every request, in order
        self.closed_connections = threading.Semaphore(0)  # released once per connection the server closed
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.05)  # so the accept loop sees the stop flag
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        conn.settimeout(None)
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            with conn:
                while (request := read_request(conn)) is not None:
                    with self._lock:
                        self.requests += 1
                        self.received.append(request)
                    self.script(conn)
                    if self.close_after_reply:
                        return
        except OSError:
            pass  # the client hung up: that is how every endless script ends
        finally:
            self.closed_connections.release()

    def __enter__(self) -> RawServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopped.set()
        self._thread.join()
        self._listener.close()
