"""Scalar, compiled (numba) rules, evaluation and search over the shared geometry tables.

numba's on-disk cache is invalidated only when a function's own source file
changes, not when a kernel it calls (in another file) does; a stale cache
then silently runs old code. So the cache lives in a folder named after a
hash of every kernel source file: any change to any kernel gives a fresh cache.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numba


def _kernel_cache_dir() -> Path:
    here = Path(__file__).resolve().parent
    digest = hashlib.sha256(numba.__version__.encode())
    for source in sorted(here.glob("*.py")):
        digest.update(source.name.encode())
        digest.update(source.read_bytes())
    base = os.environ.get("NUMBA_CACHE_DIR") or str(here / "__pycache__")
    return Path(base) / f"numba-{digest.hexdigest()[:16]}"


numba.config.CACHE_DIR = str(_kernel_cache_dir())  # type: ignore[attr-defined]
