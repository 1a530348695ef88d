"""``python -m engine pdn FILE``: replay every game of a PDN file and report each one.

One line per game (plies replayed, recorded result, how the rules end the final position);
the first illegal or ambiguous move, or a result the final position contradicts, fails the
command with one line naming the game, the move and its position (exit status 2).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

from engine.cli import EXIT_OK, Command, register
from engine.errors import PdnError, quote


def _pdn_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="PDN file to replay")
    parser.add_argument("--variant", default=None,
                        help="rule set for every game (default: from each game's Variant/GameType tags)")
    parser.add_argument("--json", action="store_true", help="print one JSON object per game")


def _run_pdn(args: argparse.Namespace) -> int:
    from engine.pdn import parse_pdn, replay_report

    path = Path(args.file)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise PdnError(f"cannot read PDN file {quote(str(path))}: {err}") from None
    try:
        games = parse_pdn(text)
    except PdnError as err:
        raise PdnError(f"{path}: {err}") from None
    first_failure = None
    for number, game in enumerate(games, start=1):
        report = replay_report(game, number, args.variant)
        if args.json:
            print(json.dumps(dataclasses.asdict(report)))
        else:
            ending = f", position ends the game by {report.termination}" if report.termination else ""
            status = "ok" if report.ok else "FAILED"
            print(f"game {number} ({report.label}, {report.variant}): {report.plies} plies replayed, "
                  f"result {report.result}{ending}: {status}")
        if not report.ok and first_failure is None:
            first_failure = report
    if first_failure is not None:
        raise PdnError(f"{path}: game {first_failure.number} ({first_failure.label}): {first_failure.error}")
    return EXIT_OK


register(Command("pdn", "replay every game of a PDN file and report illegal or ambiguous moves",
                 _pdn_arguments, _run_pdn))
