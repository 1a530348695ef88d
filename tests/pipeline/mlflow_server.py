"""A real ``mlflow server`` on 127.0.0.1 for tests, and its clean stop.

The server gets a free loopback port, a sqlite backend store and a served artifact destination
inside its own temp folder (artifacts travel over http, as from a cluster driver). It is started
in a NEW SESSION, so it and every helper it spawns (uvicorn, the job runner and its huey
consumers) share one process group whose id is the server's pid. :meth:`MlflowServer.stop`
signals that group (TERM, then KILL after a grace period) and then any remaining descendant pid
it recorded, and checks they are gone: it never looks processes up by name.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        tree.setdefault(ppid, []).append(int(entry.name))
    return tree


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (by parent links in /proc)."""
    tree, out, todo = _children(), set(), [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            if child not in out:
                out.add(child)
                todo.append(child)
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


class MlflowServer:
    """``mlflow server`` with sqlite backend + artifact folder under ``root``; ``uri`` is http."""

    def __init__(self, root: Path, *, workers: int = 1) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.uri = f"http://127.0.0.1:{self.port}"
        self.workers = workers
        self.log_path = self.root / "server.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.seen: set[int] = set()

    def start(self, timeout: float = 240.0) -> MlflowServer:
        cmd = [
            sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(self.port),
            "--workers", str(self.workers),
            "--backend-store-uri", f"sqlite:///{self.root / 'backend.db'}",
            "--artifacts-destination", str(self.root / "artifacts"),
        ]
        env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
        with open(self.log_path, "wb") as out:
            self.proc = subprocess.Popen(cmd, cwd=self.root, env=env, stdout=out, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"mlflow server exited with {self.proc.returncode}:\n{self.log_tail()}")
            self.seen |= descendants(self.proc.pid)
            try:
                with urllib.request.urlopen(f"{self.uri}/health", timeout=2) as r:
                    if r.status == 200:
                        self.seen |= descendants(self.proc.pid)
                        return self
            except OSError:
                pass
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"mlflow server did not answer within {timeout} s:\n{self.log_tail()}")

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def pids(self) -> set[int]:
        """The server and every process it started (those seen so far and those alive now)."""
        if self.proc is None:
            return set()
        self.seen |= descendants(self.proc.pid)
        return {self.proc.pid, *self.seen}

    def stop(self, grace: float = 15.0) -> None:
        """Stop the server's process group and every recorded helper; wait until all are gone."""
        if self.proc is None:
            return
        pids = self.pids()
        pgid = self.proc.pid  # start_new_session: the group id is the server's pid
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and (self.proc.poll() is None or any(_alive(p) for p in pids)):
            time.sleep(0.2)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
        for pid in pids:
            if _alive(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(_alive(p) for p in pids):
            time.sleep(0.2)
        left = sorted(p for p in pids if _alive(p))
        self.proc = None
        if left:
            raise RuntimeError(f"mlflow server processes still alive after stop: {left}")

    def __enter__(self) -> MlflowServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextlib.contextmanager
def running_server(root: Path) -> Iterator[MlflowServer]:
    """Start a server under ``root`` and always stop it (and its helpers) afterwards."""
    server = MlflowServer(root)
    try:
        yield server.start()
    finally:
        server.stop()
