"""A real Apache Kafka 4.x broker (KRaft, combined mode) from Maven Central jars — no tarball.

    python -m testbed.kafka up      # fetch jars once, format, start; last line: bootstrap=HOST:PORT
    python -m testbed.kafka down    # stop the broker started by `up`
    python -m testbed.kafka fetch   # only fetch the jars (scripts/setup.sh)

The jars are fetched once by Maven (testbed/kafka/pom.xml) into .cache/kafka/<version>/libs.
The broker runs in .cache/kafka/run (or a directory a test passes) with a server.properties on
free loopback ports; `up` waits until the broker answers a metadata request.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

from testbed.process import free_port, require, terminate

ROOT = Path(__file__).resolve().parents[1]
VERSION = "4.1.1"
CACHE = ROOT / ".cache" / "kafka"
LIBS = CACHE / VERSION / "libs"
RUN = CACHE / "run"
POM = Path(__file__).parent / "kafka" / "pom.xml"

LOG4J = """<?xml version="1.0" encoding="UTF-8"?>
<Configuration status="WARN">
  <Appenders>
    <File name="file" fileName="{log}"><PatternLayout pattern="%d %p %c: %m%n"/></File>
  </Appenders>
  <Loggers><Root level="INFO"><AppenderRef ref="file"/></Root></Loggers>
</Configuration>
"""


def fetch_jars() -> Path:
    if not (LIBS / f"kafka_2.13-{VERSION}.jar").exists():
        print(f"kafka: fetching Apache Kafka {VERSION} jars from Maven Central", file=sys.stderr)
        subprocess.run([require("mvn"), "-q", "-B", "-f", str(POM),
                        "dependency:copy-dependencies", f"-DoutputDirectory={LIBS}",
                        "-DincludeScope=runtime", f"-Dkafka.version={VERSION}"], check=True)
    return LIBS


class KafkaBroker:
    """One broker; ``stop``/``start`` again keep its data (for broker-outage tests)."""

    def __init__(self, workdir: Path = RUN, heap: str = "512m") -> None:
        self.workdir = workdir
        self.heap = heap
        self.port = free_port()
        self.controller_port = free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def _java(self, main: str, *args: str) -> list[str]:
        classpath = os.pathsep.join(str(p) for p in sorted(fetch_jars().glob("*.jar")))
        return [require("java"), f"-Xmx{self.heap}", f"-Xms{self.heap}", "-XX:+UseG1GC",
                f"-Dlog4j2.configurationFile={self.workdir / 'log4j2.xml'}",
                "-cp", classpath, main, *args]

    def _configure(self) -> Path:
        self.workdir.mkdir(parents=True, exist_ok=True)
        (self.workdir / "log4j2.xml").write_text(LOG4J.format(log=self.workdir / "broker.log"))
        properties = self.workdir / "server.properties"
        properties.write_text("\n".join([
            "process.roles=broker,controller",
            "node.id=1",
            f"controller.quorum.bootstrap.servers=127.0.0.1:{self.controller_port}",
            f"listeners=PLAINTEXT://127.0.0.1:{self.port},"
            f"CONTROLLER://127.0.0.1:{self.controller_port}",
            f"advertised.listeners=PLAINTEXT://127.0.0.1:{self.port}",
            "controller.listener.names=CONTROLLER",
            "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "inter.broker.listener.name=PLAINTEXT",
            f"log.dirs={self.workdir / 'data'}",
            "num.partitions=4",
            "offsets.topic.replication.factor=1",
            "offsets.topic.num.partitions=4",
            "transaction.state.log.replication.factor=1",
            "transaction.state.log.min.isr=1",
            "share.coordinator.state.topic.replication.factor=1",
            "share.coordinator.state.topic.min.isr=1",
            "group.initial.rebalance.delay.ms=0",
            "auto.create.topics.enable=true",
            "log.retention.hours=168",
        ]) + "\n")
        return properties

    def start(self, timeout: float = 90.0) -> KafkaBroker:
        properties = self.workdir / "server.properties"
        if not (self.workdir / "data" / "meta.properties").exists():
            properties = self._configure()
            subprocess.run(self._java("kafka.tools.StorageTool", "format", "--standalone",
                                      "-t", str(uuid.uuid4()), "-c", str(properties)),
                           check=True, capture_output=True)
        log = open(self.workdir / "broker.stdout", "ab")
        self.process = subprocess.Popen(self._java("kafka.Kafka", str(properties)),
                                        stdout=log, stderr=subprocess.STDOUT)
        log.close()
        (self.workdir / "broker.pid").write_text(str(self.process.pid))
        self._wait_ready(timeout)
        return self

    def _wait_ready(self, timeout: float) -> None:
        from kafka import KafkaAdminClient
        from kafka.errors import KafkaError

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"kafka exited with {self.process.returncode}; see "
                                   f"{self.workdir / 'broker.log'}")
            try:
                admin = KafkaAdminClient(bootstrap_servers=self.bootstrap,
                                         request_timeout_ms=3000)
                admin.list_topics()
                admin.close()
                return
            except (KafkaError, OSError, ValueError):
                time.sleep(0.5)
        raise RuntimeError(f"kafka not ready after {timeout}s; see {self.workdir / 'broker.log'}")

    def stop(self, timeout: float = 30.0) -> None:
        terminate(self.process, timeout)


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "up"
    pid_file = RUN / "broker.pid"
    if command == "fetch":
        print(fetch_jars())
        return 0
    if command == "up":
        if RUN.exists():
            subprocess.run(["rm", "-rf", str(RUN)], check=True)
        broker = KafkaBroker(RUN).start()
        (RUN / "bootstrap").write_text(broker.bootstrap)
        print(f"bootstrap={broker.bootstrap}")
        return 0
    if command == "down":
        if pid_file.exists():
            try:
                os.kill(int(pid_file.read_text()), signal.SIGTERM)
            except ProcessLookupError:
                pass
            pid_file.unlink()
        return 0
    print("usage: python -m testbed.kafka up|down|fetch", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
