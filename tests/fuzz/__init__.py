"""Systematic fuzzing of every parser and command line (see tests/fuzz/conftest.py)."""
