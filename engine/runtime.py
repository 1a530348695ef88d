"""Process-wide tuning for a program built on the engine: one explicit call, never an import.

Importing an engine module changes nothing outside the engine. The two settings below are the
process owner's to choose, so they happen only in :func:`configure_process`, which
``python -m engine`` calls once before running a verb (a game server or a benchmark script
that owns its process may call it too; a library embedding the engine need not):

- :func:`tune_allocator` raises glibc's mmap and trim thresholds. The batch generator makes
  many short-lived temporaries of 0.1-10 MB, and under glibc's defaults each one goes to
  ``mmap``/``munmap`` and is page-faulted anew: batch perft runs about 1.5x slower without it.
- :func:`skip_blas_probe` answers numba's BLAS probe with "no BLAS". When
  ``numba.np.arraymath`` first loads, numba imports ``scipy.linalg`` (about 0.4 s) only to
  choose how a fallback inner product is computed; the kernels use no BLAS, so the probe is
  pure start-up time (the first move of a fresh ``python -m engine bestmove``). numba's
  linear-algebra functions still check for BLAS themselves when used.

``DRAUGHTS_NO_MALLOPT=1`` and ``DRAUGHTS_NUMBA_BLAS_PROBE=1`` opt out of each.
"""

from __future__ import annotations

import ctypes
import importlib
import os
import sys
from dataclasses import dataclass
from typing import Any

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_tuned = False


@dataclass(frozen=True)
class ProcessSettings:
    """What :func:`configure_process` found or changed."""

    allocator_tuned: bool  # glibc thresholds raised (now or by an earlier call)
    blas_probe_skipped: bool  # this call loaded numba.np.arraymath without the scipy probe


def tune_allocator(mmap_threshold: int = 64 << 20, trim_threshold: int = 512 << 20) -> bool:
    """Keep temporaries below ``mmap_threshold`` bytes on glibc's reusable heap.

    Process-wide and idempotent; a no-op (returns False) off glibc or when
    ``DRAUGHTS_NO_MALLOPT`` is set. Costs at most ``trim_threshold`` bytes of freed
    memory kept for reuse instead of being returned to the OS.
    """
    global _tuned
    if _tuned:
        return True
    if os.environ.get("DRAUGHTS_NO_MALLOPT") or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        ok = bool(libc.mallopt(_M_MMAP_THRESHOLD, mmap_threshold)) and bool(
            libc.mallopt(_M_TRIM_THRESHOLD, trim_threshold)
        )
    except (OSError, AttributeError):
        return False
    _tuned = ok
    return ok


def skip_blas_probe() -> bool:
    """Load ``numba.np.arraymath`` with its BLAS probe answered "no BLAS"; True if done now.

    A no-op when arraymath is already loaded (too late), when scipy.linalg is loaded (the
    probe is then free), or when ``DRAUGHTS_NUMBA_BLAS_PROBE`` is set.
    """
    if (os.environ.get("DRAUGHTS_NUMBA_BLAS_PROBE") or "numba.np.arraymath" in sys.modules
            or "scipy.linalg" in sys.modules):
        return False
    try:
        numba_linalg: Any = importlib.import_module("numba.np.linalg")
        original = numba_linalg.ensure_blas
    except (ImportError, AttributeError):  # another numba layout: keep its behaviour
        return False

    def _no_blas() -> None:
        raise ImportError("BLAS probe skipped by engine.runtime.skip_blas_probe")

    numba_linalg.ensure_blas = _no_blas
    try:
        arraymath: Any = importlib.import_module("numba.np.arraymath")  # runs the probe now
    finally:
        numba_linalg.ensure_blas = original
    if getattr(arraymath, "ensure_blas", None) is _no_blas:
        arraymath.ensure_blas = original
    return True


def configure_process() -> ProcessSettings:
    """Apply both settings of this module; call once, early, from a program's entry point."""
    return ProcessSettings(allocator_tuned=tune_allocator(), blas_probe_skipped=skip_blas_probe())
