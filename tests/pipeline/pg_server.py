"""A throwaway PostgreSQL server on a loopback port for tests, and its clean stop."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


PG_BIN = Path("/usr/lib/postgresql")


def _pg_tool(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(PG_BIN.glob(f"*/bin/{name}")) if PG_BIN.is_dir() else []
    return str(candidates[-1]) if candidates else None


def _pg_dialect() -> str | None:
    """The SQLAlchemy dialect of an installed driver (SQLAlchemy 2.1's default is psycopg 3)."""
    for module, dialect in (("psycopg", "postgresql+psycopg"), ("psycopg2", "postgresql+psycopg2")):
        try:
            __import__(module)
        except ImportError:
            continue
        return dialect
    return None


def _missing(reason: str) -> None:
    """Skip on a developer's machine without PostgreSQL; fail in CI, whose run installs it."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI needs PostgreSQL for this test: {reason} (.ci/run installs it)")
    pytest.skip(reason)


@contextlib.contextmanager
def throwaway_postgres(root: Path) -> Iterator[str]:
    """A PostgreSQL cluster in ``root`` on a loopback port (as user postgres when we are root)."""
    initdb, pg_ctl = _pg_tool("initdb"), _pg_tool("pg_ctl")
    if not (initdb and pg_ctl):
        _missing("PostgreSQL server binaries (initdb, pg_ctl) are not installed")
    dialect = _pg_dialect()
    if dialect is None:
        _missing("no PostgreSQL driver for SQLAlchemy (psycopg or psycopg2) is installed")
    prefix: list[str] = []
    if os.geteuid() == 0:
        import pwd

        try:
            user = pwd.getpwnam("postgres")
        except KeyError:
            _missing("running as root and there is no 'postgres' user to run the server as")
        runuser = shutil.which("runuser")
        if runuser is None:
            _missing("running as root and runuser is missing")
        prefix = [runuser, "-u", "postgres", "--"]
        os.chown(root, user.pw_uid, user.pw_gid)
    data, port = root / "data", _free_port()
    subprocess.run([*prefix, initdb, "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync"],
                   check=True, capture_output=True, timeout=120)
    options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off"
    subprocess.run([*prefix, pg_ctl, "-D", str(data), "-l", str(root / "log"), "-w", "-o", options, "start"],
                   check=True, capture_output=True, timeout=120)
    try:
        yield f"{dialect}://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*prefix, pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop"],
                       capture_output=True, timeout=60)
        pid_file = data / "postmaster.pid"  # pg_ctl failed to stop it: kill the pid it recorded
        if pid_file.exists():
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid_file.read_text().split()[0]), signal.SIGKILL)
