"""Scalar, compiled (numba) rules, evaluation and search over the shared geometry tables.

Importing the kernels changes no process-wide setting: their on-disk cache folder is chosen per
function by :func:`engine.kernel.jit.njit`. Process-level tuning (numba's BLAS probe, the
allocator) is :func:`engine.runtime.configure_process`, called by ``python -m engine``.
"""
