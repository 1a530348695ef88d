"""``python -m engine``: command-line verbs (perft, moves; more registered by other modules).

Verbs live in a registry of :class:`Command` records. A new verb (bestmove, play, bench, ...)
is added without touching this file: put ``register(Command(...))`` at import time in a
module named ``engine/<package>/cli.py`` or ``engine/<name>_cli.py`` (found automatically), or
list any other module in ``EXTENSION_MODULES``. Keep heavy imports inside the run function.
Bad input of any kind exits with status 2 and one line on stderr (no usage dump, no traceback).
"""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from engine.errors import DraughtsError
from engine.variants import Variant, get_variant, variant_names

#: Extra modules imported before parsing so that they can :func:`register` their verbs.
EXTENSION_MODULES: tuple[str, ...] = ("engine.cli_engine",)

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_UNAVAILABLE = 1


@dataclass(frozen=True)
class Command:
    """One CLI verb: its name, one-line help, argument setup and the function that runs it."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


COMMANDS: list[Command] = []


def register(command: Command) -> None:
    """Add a verb (re-registering a name replaces the earlier command)."""
    for index, existing in enumerate(COMMANDS):
        if existing.name == command.name:
            COMMANDS[index] = command
            return
    COMMANDS.append(command)


class UsageError(DraughtsError):
    """A command-line argument that argparse or a verb rejected."""


class Unavailable(Exception):
    """A verb's back end (e.g. the batch generator) is not installed or not built yet."""


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors raise (and so end up as one line from :func:`main`)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


def add_variant_argument(parser: argparse.ArgumentParser) -> None:
    """``--variant`` (name or alias; checked when the command runs, so errors quote it)."""
    parser.add_argument(
        "--variant", required=True, help=f"rule set: {', '.join(variant_names())} (or an alias)"
    )


def add_fen_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--fen", default=None, help="PDN FEN of the position (default: the start position)")


def _position_args(args: argparse.Namespace) -> tuple[Variant, str | None]:
    return get_variant(args.variant), args.fen


# -- perft ------------------------------------------------------------------------------------
def _perft_arguments(parser: argparse.ArgumentParser) -> None:
    add_variant_argument(parser)
    parser.add_argument("--depth", required=True, type=int, help="plies to enumerate (>= 0)")
    add_fen_argument(parser)
    parser.add_argument("--mode", choices=("kernel", "batch"), default="kernel", help="generator to use")
    parser.add_argument("--full", action="store_true", help="play the last ply too (no bulk counting)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _run_perft(args: argparse.Namespace) -> int:
    from engine.board import Board

    variant, fen = _position_args(args)
    if args.depth < 0:
        raise UsageError(f"perft: --depth must be >= 0, got {args.depth!r}")
    position = Board(variant, fen).position
    bulk = not args.full
    module = "engine.batch.perft" if args.mode == "batch" else "engine.kernel.perft"
    try:
        counter = importlib.import_module(module).perft
    except (ImportError, AttributeError) as err:
        raise Unavailable(f"perft --mode {args.mode} is not available: {err}") from None
    if args.depth > 0:
        counter(variant, position, 1, bulk=bulk)  # load the compiled kernel outside the timing
    started = time.perf_counter()
    nodes = 1 if args.depth == 0 else int(counter(variant, position, args.depth, bulk=bulk))
    seconds = time.perf_counter() - started
    nps = nodes / seconds if seconds > 0 else 0.0
    from engine.fen import format_fen

    report = {
        "variant": variant.name,
        "depth": args.depth,
        "nodes": nodes,
        "seconds": round(seconds, 6),
        "mode": args.mode,
        "bulk": bulk,
        "nps": round(nps),
        "fen": format_fen(variant, position),
    }
    if args.json:
        print(json.dumps(report))
    else:
        print(
            f"perft {variant.name} depth {args.depth} ({args.mode}{', bulk' if bulk else ''}): "
            f"{nodes} nodes in {seconds:.3f} s ({nps:,.0f} nodes/s)"
        )
    return EXIT_OK


# -- moves ------------------------------------------------------------------------------------
def _moves_arguments(parser: argparse.ArgumentParser) -> None:
    add_variant_argument(parser)
    add_fen_argument(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--algebraic", action="store_true", help="text output in algebraic squares (8x8 international rules)"
    )


def _run_moves(args: argparse.Namespace) -> int:
    from engine.board import Board

    variant, fen = _position_args(args)
    board = Board(variant, fen)
    moves = sorted(board.legal_moves, key=lambda move: move.pdn)
    if args.json:
        payload = {
            "moves": [{"pdn": m.pdn, "path": list(m.path), "captures": list(m.captures)} for m in moves]
        }
        print(json.dumps(payload))
    else:
        for move in moves:
            print(board.move_to_text(move, algebraic=args.algebraic))
    return EXIT_OK


register(Command("perft", "count move paths to a depth (rules test)", _perft_arguments, _run_perft))
register(Command("moves", "list the legal moves of a position", _moves_arguments, _run_moves))


# -- entry point ------------------------------------------------------------------------------
def _extension_modules() -> list[str]:
    """Modules that register verbs: ``engine/<pkg>/cli.py``, ``engine/<name>_cli.py``, extras."""
    import engine

    names = list(EXTENSION_MODULES)
    for info in pkgutil.iter_modules(engine.__path__):
        if info.ispkg:
            sub = Path(engine.__path__[0]) / info.name / "cli.py"
            if sub.is_file():
                names.append(f"engine.{info.name}.cli")
        elif info.name.endswith("_cli"):
            names.append(f"engine.{info.name}")
    return sorted(set(names))


def _load_extensions() -> None:
    for name in _extension_modules():
        importlib.import_module(name)


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with one subparser per registered verb."""
    parser = _Parser(prog="python -m engine", description="Draughts engine command line.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for command in COMMANDS:
        verb = sub.add_parser(command.name, help=command.help, description=command.help)
        command.add_arguments(verb)
        verb.set_defaults(_run=command.run)
    return parser


def main(argv: Sequence[str] | None = None, *, configure: bool = False) -> int:
    """Run one verb; DraughtsError (bad input from anywhere) -> one line on stderr, exit 2.

    ``configure``: once the arguments parse, apply :func:`engine.runtime.configure_process`
    (process-wide tuning). ``python -m engine`` owns its process and passes True; in-process
    callers (tests, other programs) keep the default and their process untouched.
    """
    try:
        _load_extensions()
        parser = build_parser()
        args = parser.parse_args(argv)
        if configure:
            from engine.runtime import configure_process

            configure_process()
        run: Callable[[argparse.Namespace], int] = args._run
        return run(args)
    except DraughtsError as err:
        print(f"error: {_one_line(str(err))}", file=sys.stderr)
        return EXIT_USAGE
    except Unavailable as err:
        print(f"error: {_one_line(str(err))}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK


def _one_line(message: str) -> str:
    return " ".join(message.split())
