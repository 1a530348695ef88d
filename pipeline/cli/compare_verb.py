"""Verb ``compare``: the levels of several runs or profiles side by side (text, JSON, one PNG ladder).

The handler imports :mod:`pipeline.job.compare` when it runs: it pulls in matplotlib and the
calibration records (seconds), which ``--help`` and a bad argument should not wait for.

Registered in :data:`pipeline.cli.common.COMMANDS` on import (``pipeline.cli.main`` imports this
module); a bad input ends like every verb: exit status 2 and one ``error: ...`` line.
"""

from __future__ import annotations

import argparse
import sys

from pipeline.cli.common import EXIT_OK, command


def _compare_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("inputs", nargs="+", metavar="RUN_OR_PROFILE",
                   help="a run id (under --output), a run folder (holding calibrate/result.json) or a "
                        "profile file such as engine/profiles/english.json")
    p.add_argument("--output", help="output root holding the runs named by id (default: runs)")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON instead of a table")
    p.add_argument("--png", metavar="PATH", help="also write one Elo ladder of every input's levels (PNG)")


@command("compare", "levels of several runs or profiles side by side: Elo with CI, expected scores, "
         "nodes per move, depth, blunder rate, games; warns when their Elo scales differ", _compare_args)
def _compare(args: argparse.Namespace) -> int:
    from pipeline.job.compare import compare, json_text, text_table, write_ladder  # heavy, see docstring

    comparison = compare(args.inputs, args.output)
    sys.stdout.write(json_text(comparison) if args.json else text_table(comparison))
    if args.png:
        path = write_ladder(comparison, args.png)
        print(f"ladder written to {path}", file=sys.stderr if args.json else sys.stdout)
    return EXIT_OK
