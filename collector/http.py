"""HTTP endpoints: ``/metrics`` (Prometheus text), ``/healthz`` (process alive), ``/readyz``.

Served from a daemon thread with the standard library; readiness is a callable so each source
decides what "ready" means (a replay is ready at once, a Kafka consumer once assigned and caught
up).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4

log = logging.getLogger(__name__)


class MetricsServer:
    def __init__(self, registry: CollectorRegistry, host: str, port: int,
                 ready: Callable[[], tuple[bool, str]] = lambda: (True, "ready")) -> None:
        handler = _handler(registry, ready)
        self._server = ThreadingHTTPServer((host, port), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="metrics-http",
                                        daemon=True)

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    def start(self) -> MetricsServer:
        self._thread.start()
        log.info("serving /metrics, /healthz, /readyz on port %d", self.port)
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def _handler(registry: CollectorRegistry,
             ready: Callable[[], tuple[bool, str]]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path == "/metrics":
                # 0.0.4: the text format every Prometheus 2.x negotiates (Debian ships 2.42).
                self._send(200, generate_latest(registry), CONTENT_TYPE_PLAIN_0_0_4)
            elif path == "/healthz":
                self._send(200, b"ok\n")
            elif path == "/readyz":
                is_ready, why = ready()
                self._send(200 if is_ready else 503, why.encode() + b"\n")
            else:
                self._send(404, b"not found: try /metrics, /healthz or /readyz\n")

        def _send(self, status: int, body: bytes,
                  content_type: str = "text/plain; charset=utf-8") -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            log.debug("http: " + format, *args)

    return Handler
