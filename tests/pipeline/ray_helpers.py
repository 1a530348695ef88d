"""Helpers for the Ray tests: a batch function that reports its worker, and a loopback cluster.

The cluster is made of real ``ray start`` processes on 127.0.0.2 (head) and 127.0.0.3 (second
node) with token authentication (docs: /work/shared/NOTES.md). Its processes are found by the
test's own unique temp folder in their command lines or its own unique auth token in their
environment (daemons such as Ray's client server are re-parented and name no folder), plus their
children, and stopped by process id, never by name.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa

from pipeline.games.match import BatchSpec, play_batch


def pid_reporting_batch(pid_dir: str, delay: float, spec: BatchSpec) -> pa.Table:
    """Play a batch, leaving ``<batch>-<pid>`` in ``pid_dir`` first and lingering ``delay`` s."""
    (Path(pid_dir) / f"{spec.batch_id}-{os.getpid()}").write_text("")
    table = play_batch(spec)
    time.sleep(delay)
    return table


def free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _environ(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return b""


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return -1


class LoopbackCluster:
    """A two-node Ray cluster on loopback addresses, started with ``ray start``."""

    def __init__(self) -> None:
        # short path: Ray's unix sockets live below it (108-byte limit)
        self.root = Path(tempfile.mkdtemp(prefix="rc", dir="/tmp"))
        self.token = secrets.token_hex(32)
        self.port = free_port("127.0.0.2")
        self.address = f"127.0.0.2:{self.port}"
        self.dashboard_port = free_port("127.0.0.2")
        self.env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": self.token}
        self.env.pop("RAY_ADDRESS", None)

    def _ray_start(self, *args: str, log: str) -> None:
        beside_python = Path(sys.executable).parent / "ray"  # the ray CLI of this interpreter
        ray_cli = str(beside_python) if beside_python.exists() else "ray"
        with open(self.root / log, "w") as out:
            subprocess.run([ray_cli, "start", *args, "--disable-usage-stats"], env=self.env, stdout=out,
                           stderr=subprocess.STDOUT, timeout=180, check=True)

    def start_head(self, *, cpus: int = 1, dashboard: bool = False) -> None:
        """The head node; with ``dashboard`` it serves ``ray job submit`` at :attr:`dashboard_url`."""
        extra = (["--dashboard-host=127.0.0.2", f"--dashboard-port={self.dashboard_port}"]
                 if dashboard else [])
        self._ray_start(
            "--head", "--node-ip-address=127.0.0.2", f"--port={self.port}", f"--num-cpus={cpus}",
            f"--ray-client-server-port={free_port('127.0.0.2')}",
            f"--dashboard-agent-listen-port={free_port('127.0.0.2')}",
            f"--include-dashboard={'true' if dashboard else 'false'}", *extra,
            f"--temp-dir={self.root}/head", log="head.log",
        )

    @property
    def dashboard_url(self) -> str:
        return f"http://127.0.0.2:{self.dashboard_port}"

    def start(self) -> None:
        self.start_head()
        self.start_node()

    def start_node(self, *, cpus: int = 1) -> None:
        """The second node, on 127.0.0.3, joining the head."""
        self._ray_start(
            f"--address={self.address}", "--node-ip-address=127.0.0.3", f"--num-cpus={cpus}",
            f"--dashboard-agent-listen-port={free_port('127.0.0.3')}", f"--temp-dir={self.root}/node",
            log="node.log",
        )

    def pids(self) -> set[int]:
        """Processes of this cluster: the command line names our temp folder, the environment holds
        our token, or a parent is one of those."""
        procs = [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()]
        token = f"RAY_AUTH_TOKEN={self.token}".encode()
        ours = {pid for pid in procs
                if str(self.root) in _cmdline(pid) or token in _environ(pid).split(b"\0")}
        parents = {pid: _parent(pid) for pid in procs}
        grew = True
        while grew:
            children = {pid for pid, ppid in parents.items() if ppid in ours} - ours
            grew = bool(children)
            ours |= children
        ours.discard(os.getpid())
        return ours

    def stop(self) -> None:
        """SIGTERM every process of the cluster by id, then SIGKILL what is left after a grace period."""
        pids = self.pids()
        for sig, wait in ((signal.SIGTERM, 8.0), (signal.SIGKILL, 3.0)):
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline and any(Path(f"/proc/{p}").exists() for p in pids):
                time.sleep(0.2)
            pids = {p for p in pids if Path(f"/proc/{p}").exists() and _is_running(p)}
            if not pids:
                break
        shutil.rmtree(self.root, ignore_errors=True)


def _is_running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"
