"""How the test process ends: every crash gets a traceback, and native libraries' static
destructors do not decide the exit status.

A segmentation fault while the interpreter shuts down (after pytest printed its summary and
switched its fault handler off) would fail the run with no trace of where. So:

- the fault handler is on from the start (pytest then keeps it on after the session), so a crash
  anywhere prints every thread's Python stack;
- when pytest is the program, after its last hook the process collects its garbage (objects
  holding S3 clients, Ray handles) and runs the interpreter's exit functions itself (pyarrow's S3
  finalisation, Ray's shutdown, logging), still under the fault handler, so a crash in them
  is reported with its stack and fails the run;
- it then ends with pytest's exit status through ``os._exit``, skipping only what is left: the
  interpreter's own teardown and the C++ static destructors of the native libraries loaded
  (Arrow, Ray, numba's LLVM), which are no part of the code under test. The project's own
  programs, run by the tests as subprocesses, still exit the normal way and their status is
  checked.
"""

from __future__ import annotations

import atexit
import faulthandler
import gc
import os
import sys

import pytest

faulthandler.enable()

#: the session of a configuration, for its final exit status
_SESSION = pytest.StashKey[pytest.Session]()


def _pytest_is_the_program() -> bool:
    """``python -m pytest`` or the ``pytest`` script, not ``pytest.main()`` inside another program."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if spec is not None and spec.name in ("pytest", "pytest.__main__"):
        return True
    return os.path.basename(sys.argv[0]) in ("pytest", "py.test")


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    session = config.stash.get(_SESSION, None)
    if session is None or not _pytest_is_the_program():
        return
    status = int(session.exitstatus)
    faulthandler.enable()  # pytest's own handler was switched off just before this hook
    gc.collect()
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[_SESSION] = session
