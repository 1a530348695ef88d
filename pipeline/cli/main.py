"""Command line: ``python -m pipeline VERB ...``.

The parser is built from the verbs that :mod:`pipeline.cli.selfplay_verbs`,
:mod:`pipeline.cli.job_verbs`, :mod:`pipeline.cli.compare_verb` and :mod:`pipeline.cli.keys_verb` register in
:mod:`pipeline.cli.common`. Bad input (a config, a spec, a path) ends with exit status 2 and a
one-line ``error: ...`` on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import NoReturn

import pipeline.cli.compare_verb
import pipeline.cli.job_verbs
import pipeline.cli.keys_verb
import pipeline.cli.selfplay_verbs
from engine.errors import DraughtsError
from engine.runtime import configure_process
from pipeline.cli.common import COMMANDS, EXIT_USAGE, UsageError
from pipeline.games.stopping import stop_on_interrupt

# the verb modules register their verbs in COMMANDS when imported
VERB_MODULES = (pipeline.cli.selfplay_verbs, pipeline.cli.job_verbs, pipeline.cli.compare_verb,
                pipeline.cli.keys_verb)


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error and exit status 2."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m pipeline", description="Draughts self-play and tuning pipeline.",
                     epilog="python -m pipeline keys: every run-config key, level knob and feature")
    sub = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=_Parser)
    sub.required = True
    for cmd in COMMANDS.values():
        # argparse %-formats a sub-command's help line but prints its description as written
        p = sub.add_parser(cmd.name, help=cmd.help.replace("%", "%%"), description=cmd.help)
        cmd.add_arguments(p)
        p.set_defaults(handler=cmd.run)
    return parser


def main(argv: Sequence[str] | None = None, *, configure: bool = False) -> int:
    """Parse ``argv`` and run the verb; returns the exit status.

    ``configure``: once the arguments parse, apply :func:`engine.runtime.configure_process`
    (allocator thresholds for the batch generator, no BLAS probe at numba's start-up).
    ``python -m pipeline`` owns its process and passes True; in-process callers keep theirs as is.
    """
    try:
        args = build_parser().parse_args(argv)
        if configure:
            configure_process()
        with stop_on_interrupt():  # Ctrl-C stops the threads playing games too
            return int(args.handler(args))
    except (UsageError, DraughtsError, ValueError, OSError) as err:  # OSError: paths, network
        print(f"error: {_one_line(err)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("error: interrupted (finished batches are kept; rerun with --resume)", file=sys.stderr)
        return 130


def _one_line(err: BaseException) -> str:
    return " ".join(str(err).split()) or type(err).__name__
