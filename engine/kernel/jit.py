"""``njit`` for the kernels: numba's ``njit``, with ``cache=True`` caches in a folder of their own.

numba's on-disk cache is invalidated only when a function's own source file changes, not when a
kernel it calls (in another file) does; a stale cache then silently runs old code. So the
kernels' cache lives in a folder named after a hash of numba's version and every kernel source
file (:data:`KERNEL_CACHE_DIR`): any change to any kernel gives a fresh cache. The folder is
``engine/kernel/__pycache__/numba-<hash>``, or ``$NUMBA_CACHE_DIR/numba-<hash>`` when that is set.

numba picks a function's cache folder from ``numba.config.CACHE_DIR`` once, when the function
is decorated, and has no per-function setting. So :func:`njit` sets that value for the moment of
decoration only and restores it at once: numba code outside the engine keeps its own cache
location, and nothing stays changed after the kernels are imported.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import numba

_F = TypeVar("_F", bound=Callable[..., Any])


def kernel_cache_dir() -> Path:
    """The cache folder of this exact set of kernel sources and this numba version."""
    here = Path(__file__).resolve().parent
    digest = hashlib.sha256(numba.__version__.encode())
    for source in sorted(here.glob("*.py")):
        digest.update(source.name.encode())
        digest.update(source.read_bytes())
    base = os.environ.get("NUMBA_CACHE_DIR") or str(here / "__pycache__")
    return Path(base) / f"numba-{digest.hexdigest()[:16]}"


KERNEL_CACHE_DIR = kernel_cache_dir()


@contextmanager
def _kernel_cache() -> Iterator[None]:
    config: Any = numba.config
    saved = config.CACHE_DIR
    config.CACHE_DIR = str(KERNEL_CACHE_DIR)
    try:
        yield
    finally:
        config.CACHE_DIR = saved


def njit(*signature: Any, **options: Any) -> Callable[[_F], _F]:
    """``numba.njit(*signature, **options)`` whose cache (with ``cache=True``) is the kernels' own.

    Always called with parentheses, as ``@njit(cache=True)`` or ``@njit(SIG, cache=True)``.
    """

    def decorate(function: _F) -> _F:
        with _kernel_cache():
            compiled: _F = numba.njit(*signature, **options)(function)
        return compiled

    return decorate
