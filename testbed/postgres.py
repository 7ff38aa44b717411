"""A private PostgreSQL server for tests, from the Debian `postgresql` package.

``initdb`` into a fresh directory, ``postgres`` on a free port (trust authentication, local
only), one database ``searchpulse``. PostgreSQL refuses to run as root, so as root it runs as
the package's ``postgres`` user. ``python -m testbed.postgres`` starts one until Ctrl-C.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from testbed.process import free_port, terminate

DATABASE = USER = "searchpulse"


def bin_dir() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(Path(p).parts[-3]))
    if not found:
        raise RuntimeError("PostgreSQL is not installed: run `make setup` (scripts/setup.sh)")
    return Path(found[-1]).parent


class PostgresServer:
    def __init__(self) -> None:
        self.bin = bin_dir()
        self.workdir = Path(tempfile.mkdtemp(prefix="searchpulse-pg-"))
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.as_user: list[str] = []
        if os.geteuid() == 0:
            shutil.chown(self.workdir, "postgres", "postgres")
            self.as_user = ["runuser", "-u", "postgres", "--"]

    @property
    def url(self) -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{DATABASE}"

    def _run(self, *args: str) -> None:
        subprocess.run([*self.as_user, str(self.bin / args[0]), *args[1:]], check=True,
                       capture_output=True, cwd=self.workdir)

    def start(self, timeout: float = 30.0) -> PostgresServer:
        self._run("initdb", "-D", str(self.workdir / "data"), "--auth=trust",
                  f"--username={USER}", "--encoding=UTF8", "--no-sync")
        self._launch(timeout)
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", USER, DATABASE)
        return self

    def _launch(self, timeout: float) -> None:
        """``postgres`` on the data directory, until ``pg_isready`` says it accepts
        connections."""
        log = open(self.workdir / "postgres.log", "ab")
        self.process = subprocess.Popen(
            [*self.as_user, str(self.bin / "postgres"), "-D", str(self.workdir / "data"),
             "-p", str(self.port), "-k", str(self.workdir), "-c", "listen_addresses=127.0.0.1",
             "-c", "fsync=off"],
            stdout=log, stderr=subprocess.STDOUT, cwd=self.workdir)
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"postgres exited:\n{self.log()}")
            ready = subprocess.run([str(self.bin / "pg_isready"), "-h", "127.0.0.1", "-p",
                                    str(self.port)], capture_output=True)
            if ready.returncode == 0:
                return
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"postgres not ready after {timeout}s:\n{self.log()}")

    def halt(self) -> None:
        """Stop the server as an outage would (fast shutdown: every connection is closed),
        keeping its data: ``resume`` starts it again on the same port. ``pg_ctl`` signals the
        postmaster itself and waits until it is gone (as root, ``runuser`` stands between:
        a signal to it would reach the postmaster as a smart shutdown, which waits for every
        client, and then kill it, leaving its lock file)."""
        if self.process is not None and self.process.poll() is None:
            try:
                self._run("pg_ctl", "stop", "-D", str(self.workdir / "data"), "-m", "fast",
                          "-w", "-t", "15")
            except subprocess.CalledProcessError:
                self.process.send_signal(2)  # SIGINT: fast shutdown
        terminate(self.process, 15.0)

    def resume(self, timeout: float = 30.0) -> PostgresServer:
        """Start a halted server again, on its data and port."""
        self._launch(timeout)
        return self

    def stop(self) -> None:
        self.halt()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def log(self) -> str:
        try:
            return (self.workdir / "postgres.log").read_text(errors="replace")[-4000:]
        except OSError:
            return ""


if __name__ == "__main__":
    server = PostgresServer().start()
    print(server.url, flush=True)
    try:
        server.process.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    sys.exit(0)
