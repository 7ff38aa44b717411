"""A webhook receiver for Alertmanager notifications: keeps every payload it gets, per path."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class WebhookReceiver:
    def __init__(self) -> None:
        self.received: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with receiver._lock:
                    receiver.received.append((self.path, json.loads(body)))
                self.send_response(200)
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:
                return None

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def payloads(self, path: str) -> list[dict[str, Any]]:
        with self._lock:
            return [payload for p, payload in self.received if p == path]

    def wait_for(self, path: str, predicate: Callable[[dict[str, Any]], bool],
                 timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for payload in self.payloads(path):
                if predicate(payload):
                    return payload
            time.sleep(0.25)
        raise AssertionError(f"no notification on {path} matched within {timeout}s; got "
                             f"{json.dumps(self.payloads(path))[:2000]}")

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
