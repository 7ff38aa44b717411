#!/usr/bin/env bash
# Installs everything the tests need on a fresh Debian machine, idempotently:
#   Debian packages (Prometheus + promtool, Alertmanager + amtool, PostgreSQL, and Chromium with
#   its chromedriver, which the report pages' tests open the pages in),
#   the Python package with its test extras, and Apache Kafka's jars (Java 17 and Maven are on
#   the machine; no Kafka download site is reachable, Maven Central is).
# Services are not started here: the test set-up (testbed/, tests/conftest.py) starts and stops them.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
DEBIAN_PACKAGES=(prometheus prometheus-alertmanager postgresql chromium chromium-driver)

missing=()
for package in "${DEBIAN_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$package")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  # The packages' own services are not wanted: tests run private instances on free ports.
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
  for service in prometheus prometheus-alertmanager postgresql; do
    $SUDO service "$service" stop >/dev/null 2>&1 || true
  done
fi

echo "setup: installing the searchpulse Python package and its test dependencies"
"$PYTHON" -m pip install --quiet --disable-pip-version-check -e ".[test]"

echo "setup: Apache Kafka broker jars (Maven Central, cached in .cache/kafka)"
"$PYTHON" -m testbed.kafka fetch >/dev/null
echo "setup: done"
