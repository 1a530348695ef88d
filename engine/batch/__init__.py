"""Vectorised (numpy) rules over many positions at once: movegen, perft, random playouts.

Positions are struct-of-arrays bitboards (:class:`PositionBatch`); moves come back as
flat CSR arrays with a batch index (:class:`MoveBatch`). Worth it from ~1k positions;
never call it per search node (that is the numba kernel's job).

The generator makes many short-lived temporaries of 0.1-10 MB; under glibc's default malloc
thresholds each goes to ``mmap``/``munmap`` and is page-faulted anew. A program that owns its
process and uses this package heavily should call :func:`engine.runtime.configure_process`
(or :func:`engine.runtime.tune_allocator`) once at start; importing changes nothing.
"""

from __future__ import annotations

from engine.batch.movegen import MoveBatch, count_moves, generate_moves, successors
from engine.batch.positions import PositionBatch

__all__ = ["MoveBatch", "PositionBatch", "count_moves", "generate_moves", "successors"]
