"""Command line: ``python -m pipeline VERB ...``.

The parser is built from the verbs registered in :mod:`pipeline.cli.common` by
:mod:`pipeline.cli.selfplay_verbs` and :mod:`pipeline.cli.job_verbs`; ``--help`` also lists every
run-config key, knob and evaluation feature from their declarations. Bad input (a config, a
spec, a path) ends with exit status 2 and a one-line ``error: ...`` on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import NoReturn

import pipeline.cli.job_verbs
import pipeline.cli.selfplay_verbs
import pipeline.config.job_sections  # registers the main job's sections for the key list
from engine.errors import DraughtsError
from engine.features import FEATURES
from engine.params import PARAMS
from pipeline.cli.common import COMMANDS, EXIT_USAGE, UsageError
from pipeline.config.run_config import key_rows

# the verb modules register their verbs in COMMANDS when imported
VERB_MODULES = (pipeline.cli.selfplay_verbs, pipeline.cli.job_verbs)


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error and exit status 2."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


def reference() -> str:
    """Every run-config key (type and default), knob and evaluation feature, for ``--help``."""
    rows = key_rows()
    width = max(len(key) for key, *_ in rows)
    lines = ["run config keys (TOML; meanings in docs/mainjob.md):"]
    lines += [f"  {key:<{width}}  {kind}, {'required' if default == 'required' else 'default ' + default}"
              for key, kind, default, _ in rows]
    lines.append("knobs of a level (calibrate.levels knobs; a profile's search and weakening):")
    lines += [f"  {p.name:<{width}}  {p.kind if p.kind == 'bool' else f'{p.kind} in [{p.low}, {p.high}]'}, "
              f"default {p.default}: {p.meaning}" for p in PARAMS]
    lines.append("evaluation features (tune.weights; a profile's weights):")
    lines += [f"  {f.name:<{width}}  [{f.low:g}, {f.high:g}]: {f.meaning}" for f in FEATURES]
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m pipeline", description="Draughts self-play and tuning pipeline.",
                     epilog=reference(), formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=_Parser)
    sub.required = True
    for cmd in COMMANDS.values():
        p = sub.add_parser(cmd.name, help=cmd.help, description=cmd.help)
        cmd.add_arguments(p)
        p.set_defaults(handler=cmd.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` and run the verb; returns the exit status."""

    try:
        args = build_parser().parse_args(argv)
        return int(args.handler(args))
    except (UsageError, DraughtsError, ValueError, OSError) as err:  # OSError: paths, network
        print(f"error: {_one_line(err)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("error: interrupted (finished batches are kept; rerun with --resume)", file=sys.stderr)
        return 130


def _one_line(err: BaseException) -> str:
    return " ".join(str(err).split()) or type(err).__name__
