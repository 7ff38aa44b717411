"""docker-compose.yml checked without a Docker engine (none runs here): statically, and loaded by
compose-go, the library docker compose reads its files with (scripts/compose-check.sh)."""

from __future__ import annotations

import fnmatch
import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).parents[1]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]
DOCKERFILE = (ROOT / "collector" / "Dockerfile").read_text()
OURS = [name for name, service in SERVICES.items()
        if service.get("image", "").startswith("searchpulse:")]


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


def test_every_image_of_ours_is_built_from_the_repository():
    assert sorted(OURS) == ["collector", "feedback", "simulator"]
    for name in OURS:
        assert SERVICES[name]["build"] == {"context": ".", "dockerfile": "collector/Dockerfile"}


def test_the_feedback_job_writes_to_a_volume_its_user_owns():
    """The image runs as a system user; a bind mount of a missing ./feedback-out is created by
    the engine as root, so the job could not write it. A named volume starts as the image's
    /out, which the Dockerfile creates owned by that user."""
    user = re.search(r"^USER (\S+)$", DOCKERFILE, re.M).group(1)
    assert user != "root"
    assert re.search(rf"mkdir /out && chown {user}: /out", DOCKERFILE)
    assert SERVICES["feedback"]["volumes"] == ["feedback-out:/out"]
    assert "feedback-out" in COMPOSE["volumes"]
    assert SERVICES["feedback"]["command"][-2:] == ["--out", "/out"]


def _ignored(path: str, patterns: list[str]) -> bool:
    """.dockerignore's rule for the patterns used here: a match of the path or of a parent."""
    parts = path.split("/")
    prefixes = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
    return any(fnmatch.fnmatch(prefix, pattern.removeprefix("**/"))
               or fnmatch.fnmatch(prefix.rsplit("/", 1)[-1], pattern.removeprefix("**/"))
               for pattern in patterns for prefix in prefixes)


def test_the_build_context_leaves_out_the_environment_but_not_what_the_image_copies():
    patterns = [line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()
                if line.strip() and not line.startswith("#")]
    for heavy in (".venv", ".cache", ".git", "collector/__pycache__"):
        assert _ignored(heavy, patterns), heavy
    copied = [source for line in DOCKERFILE.splitlines()
              if (match := re.fullmatch(r"COPY (.+) \S+", line.strip()))
              for source in match.group(1).split()]
    assert {"pyproject.toml", "README.md", "collector", "feedback", "alerts",
            "dashboards"} <= set(copied)
    for source in copied:
        assert not _ignored(source, patterns), source
        for path in (ROOT / source).rglob("*.py") if (ROOT / source).is_dir() else ():
            assert "__pycache__" in path.parts or not _ignored(
                str(path.relative_to(ROOT)), patterns), path


def test_the_collector_stops_by_itself_before_compose_kills_it():
    """collect ends at most Shutdown.GRACE_S after SIGTERM (its last step given up, logs
    flushed, exit 0); compose sends SIGKILL after stop_grace_period, which must come later,
    with room for a loaded host. The measured stop is checked against both in
    tests/integration/test_kafka_collector.py."""
    from collector.sources.kafka.run import Shutdown

    grace = SERVICES["collector"]["stop_grace_period"]
    assert re.fullmatch(r"\d+s", grace)
    assert int(grace.removesuffix("s")) >= 2 * Shutdown.GRACE_S


@pytest.mark.integration  # builds compose-go from the Go module proxy once
def test_compose_go_loads_the_file_as_docker_compose_would():
    done = subprocess.run([str(ROOT / "scripts" / "compose-check.sh"),
                           str(ROOT / "docker-compose.yml")],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    project = json.loads(done.stdout)
    services = project["services"]
    assert set(services) == set(SERVICES)
    for name in OURS:
        assert services[name]["build"]["context"] == str(ROOT)
        assert services[name]["build"]["dockerfile"] == "collector/Dockerfile"
    (out,) = services["feedback"]["volumes"]
    assert (out["type"], out["source"], out["target"]) == ("volume", "feedback-out", "/out")
    assert services["feedback"]["profiles"] == ["jobs"]
    assert services["collector"]["stop_grace_period"] == SERVICES["collector"][
        "stop_grace_period"]
    assert {"postgres-data", "feedback-out"} <= set(project["volumes"])
