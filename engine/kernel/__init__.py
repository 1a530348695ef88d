"""Scalar, compiled (numba) rules, evaluation and search over the shared geometry tables.

numba's on-disk cache is invalidated only when a function's own source file
changes, not when a kernel it calls (in another file) does; a stale cache
then silently runs old code. So the cache lives in a folder named after a
hash of every kernel source file: any change to any kernel gives a fresh cache.

Start-up: when ``numba.np.arraymath`` loads, numba probes for BLAS by importing
``scipy.linalg`` (about a quarter of a second here), only to choose how a
fallback inner product is computed. The kernels use no BLAS, so unless scipy is
already loaded (then the probe is free) the probe is answered "no BLAS" once;
numba's linear-algebra functions still check for BLAS themselves when used.
``DRAUGHTS_NUMBA_BLAS_PROBE=1`` keeps numba's own probe.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import numba


def _skip_blas_probe() -> None:
    if (os.environ.get("DRAUGHTS_NUMBA_BLAS_PROBE") or "numba.np.arraymath" in sys.modules
            or "scipy.linalg" in sys.modules):
        return
    try:
        import numba.np.linalg as numba_linalg

        original = numba_linalg.ensure_blas
    except (ImportError, AttributeError):  # another numba layout: keep its behaviour
        return

    def _no_blas() -> None:
        raise ImportError("BLAS probe skipped at engine start-up")

    numba_linalg.ensure_blas = _no_blas
    try:
        import numba.np.arraymath  # noqa: F401  (runs the probe now)
    finally:
        numba_linalg.ensure_blas = original


_skip_blas_probe()


def _kernel_cache_dir() -> Path:
    here = Path(__file__).resolve().parent
    digest = hashlib.sha256(numba.__version__.encode())
    for source in sorted(here.glob("*.py")):
        digest.update(source.name.encode())
        digest.update(source.read_bytes())
    base = os.environ.get("NUMBA_CACHE_DIR") or str(here / "__pycache__")
    return Path(base) / f"numba-{digest.hexdigest()[:16]}"


numba.config.CACHE_DIR = str(_kernel_cache_dir())  # type: ignore[attr-defined]
