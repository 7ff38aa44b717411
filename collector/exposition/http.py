"""HTTP endpoints: ``/metrics`` (Prometheus text), ``/healthz`` (process alive), ``/readyz``.

``render`` writes the /metrics body (``metrics.Exposition.render``). Served the way Prometheus
exporters serve them, by hypercorn (an asyncio HTTP server): an idle
connection, or one that stalls mid-request, costs no thread and is closed after
``IDLE_TIMEOUT_S``; exposition text is rendered by a fixed pool of ``WORKERS`` threads; the
listen backlog is a normal one. (The standard library's server keeps each idle connection in a
thread of its own forever; cheroot hands every new connection to a worker, so 150 silent
connections delayed a scrape by minutes; uvicorn never closes a silent connection.) Optional TLS
and basic auth come from a web configuration file in the exporter-toolkit format
(``--web.config.file``)::

    tls_server_config:
      cert_file: server.crt
      key_file: server.key
    basic_auth_users:
      prometheus: $2y$10$…   # bcrypt hash (htpasswd -nBC 10 "" | tr -d ':')

Basic auth (``collector/exposition/basic_auth.py``) remembers verdicts and runs bcrypt on a pool of
its own behind a bounded queue: wrong passwords cannot starve scrapes.

Readiness is a callable so each source decides what "ready" means (a replay is ready at once,
a Kafka consumer once assigned and caught up).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import socket
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from hypercorn.asyncio import serve
from hypercorn.config import Config as ServerConfig
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4

from collector.config import Config
from collector.errors import ConfigError, WebConfigError
from collector.exposition.basic_auth import BasicAuth, Verdict
from collector.text_files import not_text

log = logging.getLogger(__name__)

WORKERS = 4  # threads rendering exposition text at once
IDLE_TIMEOUT_S = 10.0  # an idle connection (or a client that stalls mid-request) is closed
BACKLOG = 128
BUSY_DELAY_S = 1.0  # before a 429 (basic auth's bcrypt queue full): its Retry-After
# $2a$ / $2b$ / $2y$, a cost of 4-31, 53 characters of salt and hash (what bcrypt.Cost accepts)
_BCRYPT_HASH = re.compile(r"\$2[aby]\$(0[4-9]|[12]\d|3[01])\$[./A-Za-z0-9]{53}")



@dataclass
class WebConfig:
    cert_file: str = ""
    key_file: str = ""
    users: dict[str, bytes] = field(default_factory=dict)  # user → bcrypt hash

    @classmethod
    def load(cls, path: str) -> WebConfig:
        data = _web_config_mapping(path)
        tls = data.get("tls_server_config") or {}
        users = data.get("basic_auth_users") or {}
        if tls and not (tls.get("cert_file") and tls.get("key_file")):
            raise WebConfigError(f"web config {path}: tls_server_config needs cert_file and "
                                 "key_file")
        for user, hashed in users.items():
            if not _BCRYPT_HASH.fullmatch(str(hashed)):
                raise WebConfigError(f"web config {path}: basic_auth_users.{user} must be a "
                                     "bcrypt hash")
        base = Path(path).parent
        return cls(str(base / tls["cert_file"]) if tls else "",
                   str(base / tls["key_file"]) if tls else "",
                   {str(u): str(h).replace("$2y$", "$2b$", 1).encode() for u, h in users.items()})


def _web_config_mapping(path: str) -> dict[str, Any]:
    """The web config file's YAML mapping, holding only the keys we implement: an exporter
    option we ignored silently (http_server_config, say) would be a setting that does nothing."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    except UnicodeDecodeError as error:
        raise WebConfigError(f"web config {path}: {not_text(path, error)}") from None
    except (OSError, yaml.YAMLError) as error:
        raise WebConfigError(f"web config {path}: {error}") from None
    if not isinstance(data, dict):
        raise WebConfigError(f"web config {path}: expected a mapping")
    unknown = set(data) - {"tls_server_config", "basic_auth_users"}
    if unknown:
        raise WebConfigError(f"web config {path}: unsupported keys {sorted(unknown)}")
    return data


def listen_address(value: str) -> tuple[str, int]:
    """``HOST:PORT``, ``:PORT`` (all interfaces) or ``[IPv6]:PORT``."""
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise ConfigError(f"--web.listen-address {value!r}: expected HOST:PORT or :PORT")
    return host.strip("[]") or "0.0.0.0", int(port)


class MetricsServer:
    @classmethod
    def from_config(cls, render: Callable[[], bytes], config: Config,
                    ready: Callable[[], tuple[bool, str]] = lambda: (True, "ready"),
                    ) -> MetricsServer:
        path = config["http.web_config_file"]
        return cls(render, config["http.host"], config["http.port"], ready,
                   WebConfig.load(path) if path else None)

    def __init__(self, render: Callable[[], bytes], host: str, port: int,
                 ready: Callable[[], tuple[bool, str]] = lambda: (True, "ready"),
                 web_config: WebConfig | None = None,
                 idle_timeout_s: float = IDLE_TIMEOUT_S) -> None:
        web_config = web_config or WebConfig()
        self._pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="metrics-http")
        self._auth = BasicAuth(web_config.users) if web_config.users else None
        self._app = _App(render, ready, self._auth, self._pool)
        # Bound here: a taken port fails now, not in the server's thread; port 0 is resolved.
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._socket = socket.socket(family, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self._socket.bind((host, port))
            self._socket.listen(BACKLOG)
        except OSError as error:  # taken, privileged, or a host that is not this machine's
            self._socket.close()
            self._pool.shutdown()
            raise ConfigError(
                f"http.port {port} on {host}: cannot listen ({error.strerror}): choose a free "
                "port (http.port: collect's --metrics-port, demo's --port, or "
                "--web.listen-address; 0 picks one) or an address of this machine "
                "(http.host)") from None
        self.port: int = self._socket.getsockname()[1]
        self._config = ServerConfig()
        self._config.bind = [f"fd://{self._socket.fileno()}"]
        self._config.backlog = BACKLOG
        self._config.keep_alive_timeout = idle_timeout_s
        self._config.read_timeout = idle_timeout_s
        self._config.h11_max_incomplete_size = 16 * 1024
        self._config.include_server_header = False
        self._config.accesslog = None
        self._config.errorlog = log
        if web_config.cert_file:
            self._config.certfile = web_config.cert_file
            self._config.keyfile = web_config.key_file
        self._address = host
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._started = threading.Event()
        self._thread = threading.Thread(target=asyncio.run, args=(self._serve(),),
                                        name="metrics-http", daemon=True)

    def start(self) -> MetricsServer:
        self._thread.start()
        self._started.wait(10)
        log.info("serving /metrics, /healthz, /readyz on %s:%d", self._address, self.port)
        return self

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        self._started.set()
        await serve(self._app, self._config, shutdown_trigger=self._stop.wait)

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
            self._thread.join(timeout=5)
        self._pool.shutdown(wait=False)
        if self._auth is not None:
            self._auth.close()
        with contextlib.suppress(OSError):  # hypercorn closes the descriptor it was given
            self._socket.close()


Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


class _App:
    """The ASGI application: three paths, basic auth when users are configured. Anything that
    takes CPU runs off the event loop: rendering on the worker pool, bcrypt on the basic
    auth's own."""

    def __init__(self, render: Callable[[], bytes], ready: Callable[[], tuple[bool, str]],
                 auth: BasicAuth | None, pool: ThreadPoolExecutor) -> None:
        self.render = render
        self.ready = ready
        self.auth = auth
        self.pool = pool

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        if scope["type"] != "http":
            return
        loop = asyncio.get_running_loop()
        if self.auth is not None:
            header = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
            verdict = await self.auth.verdict(header)
            if verdict is Verdict.BUSY:  # answered late (no thread held): a flood slows
                await asyncio.sleep(BUSY_DELAY_S)  # down to what bcrypt can check
                await _respond(send, 429, b"too many new credentials to check: retry\n",
                               [(b"retry-after", b"1")])
                return
            if verdict is Verdict.REFUSED:
                await _respond(send, 401, b"unauthorized\n",
                               [(b"www-authenticate", b'Basic realm="searchpulse"')])
                return
        path = scope["path"]
        if path == "/metrics":
            body = await loop.run_in_executor(self.pool, self.render)
            # 0.0.4: the text format every Prometheus 2.x negotiates (Debian ships 2.42).
            await _respond(send, 200, body, content_type=CONTENT_TYPE_PLAIN_0_0_4)
        elif path == "/healthz":
            await _respond(send, 200, b"ok\n")
        elif path == "/readyz":
            is_ready, why = self.ready()
            await _respond(send, 200 if is_ready else 503, why.encode() + b"\n")
        else:
            await _respond(send, 404, b"not found: try /metrics, /healthz or /readyz\n")


async def _respond(send: Send, status: int, body: bytes,
                   headers: list[tuple[bytes, bytes]] | None = None,
                   content_type: str = "text/plain; charset=utf-8") -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", content_type.encode()),
                            (b"content-length", str(len(body)).encode()), *(headers or [])]})
    await send({"type": "http.response.body", "body": body})
