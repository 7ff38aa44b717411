"""Prometheus and Alertmanager from the Debian packages, configured for one test run."""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import yaml

from testbed.process import Service, free_port, require


class Prometheus(Service):
    def __init__(self, workdir: Path, scrape_targets: list[str], rule_files: list[Path],
                 alertmanager: str | None = None, interval: str = "1s") -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config: dict[str, Any] = {
            "global": {"scrape_interval": interval, "evaluation_interval": interval},
            "rule_files": [str(p) for p in rule_files],
            "scrape_configs": [{"job_name": "searchpulse",
                                "static_configs": [{"targets": scrape_targets}]}],
        }
        if alertmanager:
            config["alerting"] = {"alertmanagers": [{"static_configs": [
                {"targets": [alertmanager.removeprefix("http://")]}]}]}
        workdir.mkdir(parents=True, exist_ok=True)
        (workdir / "prometheus.yml").write_text(yaml.safe_dump(config))
        super().__init__("prometheus", [
            require("prometheus"), f"--config.file={workdir / 'prometheus.yml'}",
            f"--storage.tsdb.path={workdir / 'data'}",
            f"--web.listen-address=127.0.0.1:{self.port}", "--web.enable-lifecycle",
        ], workdir, f"{self.url}/-/ready")

    def query(self, expr: str) -> list[dict[str, Any]]:
        url = f"{self.url}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
        with urllib.request.urlopen(url, timeout=10) as response:
            body = json.load(response)
        if body["status"] != "success":
            raise RuntimeError(f"{expr}: {body}")
        return body["data"]["result"]

    def alerts(self) -> list[dict[str, Any]]:
        with urllib.request.urlopen(f"{self.url}/api/v1/alerts", timeout=10) as response:
            return json.load(response)["data"]["alerts"]


class Alertmanager(Service):
    def __init__(self, workdir: Path, config_file: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        super().__init__("alertmanager", [
            require("prometheus-alertmanager"), f"--config.file={config_file}",
            f"--storage.path={workdir / 'am-data'}",
            f"--web.listen-address=127.0.0.1:{self.port}", "--cluster.listen-address=",
        ], workdir, f"{self.url}/-/ready")

    def alerts(self, filter: tuple[str, ...] | list[str] = ()) -> list[dict[str, Any]]:
        query = urllib.parse.urlencode([("filter", f) for f in filter])
        with urllib.request.urlopen(f"{self.url}/api/v2/alerts?{query}", timeout=10) as response:
            return json.load(response)

    def post(self, alerts: list[dict[str, Any]]) -> None:
        request = urllib.request.Request(f"{self.url}/api/v2/alerts",
                                         data=json.dumps(alerts).encode(),
                                         headers={"Content-Type": "application/json"})
        urllib.request.urlopen(request, timeout=10).close()
