"""What every verb shares: the registry, exit statuses and the usage error.

Verbs register themselves in :data:`COMMANDS` through :func:`command` (name, help, an
argument-adder and a handler), so a verb module adds verbs without touching the parser.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2


class UsageError(ValueError):
    """Bad command-line input (exit status 2)."""


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


COMMANDS: dict[str, Command] = {}


def command(name: str, help: str, add_arguments: Callable[[argparse.ArgumentParser], None]) -> Callable[
    [Callable[[argparse.Namespace], int]], Callable[[argparse.Namespace], int]
]:
    """Decorator registering a handler as verb ``name``."""

    def register(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
        COMMANDS[name] = Command(name, help, add_arguments, run)
        return run

    return register
