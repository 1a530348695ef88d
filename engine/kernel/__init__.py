"""Scalar, compiled (numba) rules and search over the shared geometry tables."""
