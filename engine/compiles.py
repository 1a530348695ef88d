"""Which engine kernels this process compiled, as opposed to loaded from numba's cache.

numba counts, per jitted function and signature, the compilations its cache could not spare
(``Dispatcher.stats.cache_misses``; a function without a cache counts every compilation there).
A program that runs many processes on one machine (a Ray node's workers) uses these counts to
show that the machine compiled each kernel once and its other processes loaded the cache.
Only the engine's modules already imported are looked at: reading the counts imports nothing.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any


def kernel_compiles() -> dict[str, int]:
    """Compilations so far in this process, by ``module.function(signature)`` (only those > 0)."""
    if "numba" not in sys.modules:
        return {}
    from numba.core.dispatcher import Dispatcher

    counts: dict[str, int] = {}
    seen: set[int] = set()
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "engine" or name.startswith("engine.")):
            continue
        for obj in list(vars(module).values()):
            if not isinstance(obj, Dispatcher) or id(obj) in seen:
                continue
            seen.add(id(obj))
            func: Any = obj.py_func
            for signature, misses in obj.stats.cache_misses.items():
                if misses:
                    types = getattr(signature, "args", signature)  # a tuple, or a Signature
                    args = ", ".join(str(t) for t in types)
                    key = f"{func.__module__}.{func.__qualname__}({args})"
                    counts[key] = counts.get(key, 0) + int(misses)
    return counts


def compiles_since(before: Mapping[str, int]) -> dict[str, int]:
    """The compilations made since ``before`` (an earlier :func:`kernel_compiles`)."""
    return {k: n - before.get(k, 0) for k, n in kernel_compiles().items() if n > before.get(k, 0)}
