"""Vectorised (numpy) rules over many positions at once: movegen, perft, random playouts.

Positions are struct-of-arrays bitboards (:class:`PositionBatch`); moves come back as
flat CSR arrays with a batch index (:class:`MoveBatch`). Worth it from ~1k positions;
never call it per search node (that is the numba kernel's job).

Importing this package raises glibc's mmap and trim thresholds (see
:func:`tune_allocator`): the generator makes many short-lived temporaries of 0.1-10 MB,
and glibc's defaults hand each of them to ``mmap``/``munmap``, page-faulting every one
(measured: 5-10x slower array operations at 16k-64k rows). Set ``DRAUGHTS_NO_MALLOPT=1``
to opt out.
"""

from __future__ import annotations

import ctypes
import os
import sys

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_tuned = False


def tune_allocator(mmap_threshold: int = 64 << 20, trim_threshold: int = 512 << 20) -> bool:
    """Keep numpy temporaries below ``mmap_threshold`` bytes on the reusable heap.

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


tune_allocator()

from engine.batch.movegen import MoveBatch, count_moves, generate_moves, successors  # noqa: E402
from engine.batch.positions import PositionBatch  # noqa: E402

__all__ = ["MoveBatch", "PositionBatch", "count_moves", "generate_moves", "successors", "tune_allocator"]
