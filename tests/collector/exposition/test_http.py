"""The /metrics endpoint behaves like a Prometheus exporter's: many idle or stalled connections
cost no worker and never delay a scrape, idle connections are closed, basic auth and TLS come
from an exporter-toolkit web config, and the listen address is a flag."""

from __future__ import annotations

import base64
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable

import bcrypt
import pytest
from prometheus_client import CollectorRegistry, Counter, generate_latest

from collector.config import ConfigError
from collector.exposition.http import MetricsServer, WebConfig, WebConfigError, listen_address


def registry() -> Callable[[], bytes]:
    built = CollectorRegistry()
    Counter("demo_total", "a counter", registry=built).inc(3)
    return lambda: generate_latest(built)


def scrape_seconds(url: str, **kw) -> tuple[float, bytes]:
    started = time.perf_counter()
    with urllib.request.urlopen(url, timeout=5, **kw) as response:
        body = response.read()
    return time.perf_counter() - started, body


def test_many_idle_and_stalled_connections_do_not_delay_a_scrape():
    server = MetricsServer(registry(), "127.0.0.1", 0).start()
    idle: list[socket.socket] = []
    try:
        for n in range(300):
            conn = socket.create_connection(("127.0.0.1", server.port))
            if n % 3 == 1:  # a finished keep-alive exchange, then silence
                conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                assert conn.recv(4096).startswith(b"HTTP/1.1 200")
            elif n % 3 == 2:  # headers that never end (slow loris)
                conn.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
            idle.append(conn)
        time.sleep(0.2)
        elapsed, body = scrape_seconds(f"http://127.0.0.1:{server.port}/metrics")
        assert b"demo_total 3.0" in body
        assert elapsed < 0.5, elapsed
    finally:
        for conn in idle:
            conn.close()
        server.stop()


def test_idle_connections_are_closed_after_the_timeout():
    server = MetricsServer(registry(), "127.0.0.1", 0, idle_timeout_s=0.5).start()
    try:
        conn = socket.create_connection(("127.0.0.1", server.port))
        conn.settimeout(5)
        started = time.perf_counter()
        conn.recv(1024)  # returns when the server closes the connection
        closed_after = time.perf_counter() - started
        assert 0.3 < closed_after < 3, closed_after
        conn.close()
    finally:
        server.stop()


@pytest.fixture
def web_config(tmp_path) -> str:
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(tmp_path / "server.key"), "-out",
                    str(tmp_path / "server.crt")], check=True, capture_output=True)
    hashed = bcrypt.hashpw(b"s3cret", bcrypt.gensalt(rounds=4)).decode().replace("$2b$", "$2y$")
    path = tmp_path / "web.yml"
    path.write_text("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
                    f"basic_auth_users:\n  prometheus: '{hashed}'\n")
    return str(path)


def test_tls_and_basic_auth_from_an_exporter_web_config(web_config, tmp_path):
    server = MetricsServer(registry(), "127.0.0.1", 0,
                           web_config=WebConfig.load(web_config)).start()
    url = f"https://127.0.0.1:{server.port}/metrics"
    context = ssl.create_default_context(cafile=str(tmp_path / "server.crt"))
    try:
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(url, timeout=5, context=context)
        assert refused.value.code == 401
        for password, expected in ((b"wrong", 401), (b"s3cret", 200), (b"s3cret", 200)):
            request = urllib.request.Request(url, headers={
                "Authorization": "Basic " + base64.b64encode(b"prometheus:" + password).decode()})
            try:
                with urllib.request.urlopen(request, timeout=5, context=context) as response:
                    status, body = response.status, response.read()
            except urllib.error.HTTPError as error:
                status, body = error.code, b""
            assert status == expected
        assert b"demo_total 3.0" in body
        with pytest.raises(OSError):  # plain HTTP is not served
            urllib.request.urlopen(f"http://127.0.0.1:{server.port}/metrics", timeout=5)
    finally:
        server.stop()


def test_web_config_errors_name_the_file_and_key(tmp_path):
    path = tmp_path / "web.yml"
    path.write_text("basic_auth_users:\n  alice: plaintext\n")
    with pytest.raises(WebConfigError, match="basic_auth_users.alice must be a bcrypt hash"):
        WebConfig.load(str(path))
    path.write_text("tls_server_config:\n  cert_file: a.crt\n")
    with pytest.raises(WebConfigError, match="needs cert_file and key_file"):
        WebConfig.load(str(path))
    path.write_text("http_server_config:\n  http2: true\n")
    with pytest.raises(WebConfigError, match="unsupported keys"):
        WebConfig.load(str(path))


def test_listen_address_forms():
    assert listen_address(":9464") == ("0.0.0.0", 9464)
    assert listen_address("127.0.0.1:9100") == ("127.0.0.1", 9100)
    assert listen_address("[::1]:9100") == ("::1", 9100)
    for bad in ("9464", "host:", "host:99999"):
        with pytest.raises(ConfigError, match="web.listen-address"):
            listen_address(bad)


@pytest.mark.parametrize("command", ["collect", "demo"])
def test_every_serving_command_takes_the_exporter_flags(command, tmp_path):
    from searchpulse import build_parser
    from searchpulse.live import _web
    from searchpulse.options import read_settings as _settings

    args = build_parser().parse_args([command, "--web.listen-address", "127.0.0.1:9100",
                                      "--web.config.file", str(tmp_path / "web.yml")])
    config = _settings(args, **_web(args))
    assert (config["http.host"], config["http.port"]) == ("127.0.0.1", 9100)
    assert config["http.web_config_file"] == str(tmp_path / "web.yml")
