"""Importing the engine leaves the process alone; :func:`engine.runtime.configure_process` is the
one place that tunes it, and the kernels' numba cache still goes to its own folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from engine.kernel.jit import KERNEL_CACHE_DIR, kernel_cache_dir

REPO = Path(__file__).resolve().parents[2]

IMPORT_EVERYTHING = r"""
import ctypes, importlib, pkgutil, sys
called = []


class Recorder(ctypes.CDLL):  # ctypes.CDLL that records every look-up of glibc's mallopt
    def __getattr__(self, name):
        if name == "mallopt":
            called.append(name)
        return super().__getattr__(name)


ctypes.CDLL = Recorder
import numba
import numba.np.linalg as linalg

cache_dir, probe = numba.config.CACHE_DIR, linalg.ensure_blas
import engine

names = [m.name for m in pkgutil.walk_packages(engine.__path__, "engine.") if m.name != "engine.__main__"]
for name in names:
    importlib.import_module(name)
assert "engine.kernel.search" in names and "engine.batch.movegen" in names and "engine.cli_engine" in names
assert numba.config.CACHE_DIR == cache_dir, numba.config.CACHE_DIR
assert linalg.ensure_blas is probe
assert called == [], called
from engine.runtime import configure_process

configure_process()
assert called == ["mallopt"], called  # looked up once, then cached by ctypes
print("ok")
"""

PROBE = r"""
import sys
if sys.argv[1] == "configure":
    from engine.runtime import configure_process

    settings = configure_process()
    assert settings.blas_probe_skipped, settings
from engine.kernel.perft import perft
from engine.position import initial_position
from engine.variants import get_variant

english = get_variant("english")
assert perft(english, initial_position(english), 3) == 302
print("scipy.linalg" in sys.modules)
"""

ENTRY = r"""
import os, runpy, sys

argv = ["perft", "--variant", "english", "--depth", "3"]
if os.environ["ENTRY"] == "main":  # an in-process caller of engine.cli.main
    from engine.cli import main

    code = main(argv)
else:  # python -m engine
    sys.argv = ["python -m engine", *argv]
    try:
        runpy.run_module("engine", run_name="__main__", alter_sys=True)
    except SystemExit as done:
        code = done.code
import engine.runtime

print(code, "scipy.linalg" in sys.modules, engine.runtime._tuned)
"""


def _python(script: str, *args: str, **env: str) -> str:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("DRAUGHTS_")}, **env}
    done = subprocess.run([sys.executable, "-c", script, *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip()


def test_importing_every_engine_module_changes_no_process_setting() -> None:
    assert _python(IMPORT_EVERYTHING) == "ok"


def test_configure_process_spares_the_scipy_blas_probe() -> None:
    assert _python(PROBE, "configure") == "False"
    assert _python(PROBE, "plain") == "True"  # numba's own probe imports scipy.linalg


def test_python_m_engine_configures_its_process_and_main_alone_does_not() -> None:
    assert _python(ENTRY, ENTRY="python -m engine").splitlines()[-1] == "0 False True"
    assert _python(ENTRY, ENTRY="main").splitlines()[-1] == "0 True False"


def test_kernel_cache_folder_names_every_kernel_source() -> None:
    from engine.kernel.perft import perft
    from engine.position import initial_position
    from engine.variants import get_variant

    english = get_variant("english")
    assert perft(english, initial_position(english), 2) == 49
    assert kernel_cache_dir() == KERNEL_CACHE_DIR
    assert KERNEL_CACHE_DIR.name.startswith("numba-")
    indexes = {path.name.partition(".")[0] for path in KERNEL_CACHE_DIR.rglob("*.nbi")}
    assert {"movegen", "perft"} <= indexes, indexes
