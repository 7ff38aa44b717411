"""docker-compose.yml validated statically (no Docker engine runs here)."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).parents[1]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]


def test_the_stack_is_complete():
    assert {"kafka", "simulator", "collector", "prometheus", "alertmanager", "grafana",
            "postgres", "feedback"} <= set(SERVICES)
    grafana = SERVICES["grafana"]["environment"]
    assert grafana["GF_AUTH_ANONYMOUS_ENABLED"] == "true"
    assert grafana["GF_AUTH_ANONYMOUS_ORG_ROLE"] == "Viewer"
    assert SERVICES["collector"]["command"] == ["collect"]
    assert SERVICES["simulator"]["command"][:3] == ["simulate", "--kafka", "kafka:9092"]


def test_images_are_pinned_and_builds_exist():
    for name, service in SERVICES.items():
        image = service.get("image", "")
        assert ":" in image and not image.endswith(":latest"), name
        if "build" in service:
            assert (ROOT / service["build"]["context"] / service["build"]["dockerfile"]).is_file()


def test_every_mounted_path_exists_and_services_have_healthchecks():
    for name, service in SERVICES.items():
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            if source.startswith("./feedback-out"):
                continue  # the feedback job's output, created by the run
            if not source.startswith((".", "/")):
                assert source in COMPOSE.get("volumes", {}), f"{name}: volume {source}"
            else:
                assert (ROOT / source).exists(), f"{name}: {source} does not exist"
        if name not in ("simulator", "feedback"):  # a producer and a job: nothing to probe
            assert "healthcheck" in service, name


def test_collector_and_feedback_share_the_postgresql_store():
    url = SERVICES["collector"]["environment"]["SEARCHPULSE_STORE_URL"]
    assert url.startswith("postgresql://") and "@postgres:5432/" in url
    assert SERVICES["feedback"]["environment"]["SEARCHPULSE_STORE_URL"] == url
    assert SERVICES["feedback"]["command"][0] == "feedback"
    assert SERVICES["collector"]["depends_on"]["postgres"] == {"condition": "service_healthy"}


def test_environment_overrides_name_real_settings():
    from collector.config import describe

    known = {setting.env for setting in describe()}
    for service in SERVICES.values():
        for variable in service.get("environment", {}):
            if variable.startswith("SEARCHPULSE_"):
                assert variable in known, variable
