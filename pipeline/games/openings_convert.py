"""Convert pydraughts ballot files into the project's opening-deck format (run once, by hand).

    python -m pipeline.games.openings_convert data/ballots pipeline/data/openings

Source layout (pydraughts 0.6.7 ``draughts/ballot_files``): ``{"all": {key: fen}, "standard":
[key, ...], "lost": [key, ...]}``. Keys are ``"001 09-13 21-17 05-09"`` (english) or
``"I-3: ab4 ba5 ba3 ab6"`` (brazilian/russian: short moves, file of the moving piece plus the
landing square) or ``"II-2: a1-a5 a7-h4"`` (a set-up: pieces relocated, not legal moves).
Played openings are replayed on the engine's Board to write every move as full PDN and to check
that they reach the published FEN; set-ups keep their text and are checked for a valid FEN.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from engine.board import Board
from engine.fen import format_fen, parse_fen
from engine.variants import get_variant
from pipeline.games.openings import OPENINGS_SCHEMA_VERSION, validate_deck

ATTRIBUTION = (
    "Ballot positions from the pydraughts package (version 0.6.7, folder draughts/ballot_files), "
    "MIT licence, copyright (c) AttackingOrDefending and pydraughts contributors."
)
ENGLISH_ATTRIBUTION = " The English 3-move deck traces back to Ed Gilbert's KingsRow (ACF 3-move ballot)."

SOURCES = {"english": "english-3move.json", "brazilian": "brazilian.json", "russian": "russian.json"}
_SHORT = re.compile(r"^([a-h])([a-h][1-8])$")


def _english_entry(key: str, fen: str, lost: bool) -> dict[str, Any]:
    number, *moves = key.split()
    moves = ["-".join(str(int(sq)) for sq in m.split("-")) for m in moves]
    return {"id": number, "name": f"ACF {number}: {' '.join(moves)}", "moves": moves, "fen": fen,
            "kind": "play", "lost": lost}


def _international_rules_entry(key: str, fen: str) -> dict[str, Any]:
    code, _, text = key.partition(":")
    tokens = text.split()
    kind = "play" if tokens and all(_SHORT.match(t) for t in tokens) else "setup"
    return {"id": code.strip(), "name": key, "moves": tokens, "fen": fen, "kind": kind, "lost": False}


def _replay(variant: str, entry: dict[str, Any]) -> tuple[list[str], Any]:
    """Full PDN moves of a played opening and the position they reach."""

    rules = get_variant(variant)
    board = Board(rules)
    full = []
    for token in entry["moves"]:
        short = _SHORT.match(token)
        if short:  # file of the moving piece + landing square
            candidates = [
                m for m in board.legal_moves
                if board.move_to_text(m, True).startswith(short.group(1))
                and board.move_to_text(m, True).endswith(short.group(2))
            ]
            if len(candidates) != 1:
                raise ValueError(
                    f"opening {entry['name']!r}: move {token!r} matches {len(candidates)} legal moves"
                )
            move = candidates[0]
        else:
            try:
                move = board.parse_move(token)
            except ValueError:  # ballot lists write captures with '-' too ("13-22")
                move = board.parse_move(token.replace("-", "x"))
        full.append(board.move_to_text(move, rules.algebraic_notation))
        board.push(move)
    return full, board.position


def _position(variant: str, fen: str) -> Any:

    return parse_fen(get_variant(variant), fen)


def convert(source_dir: Path, variant: str) -> dict[str, Any]:
    """The project's deck document for ``variant`` from a pydraughts ballot file."""

    rules = get_variant(variant)
    src = json.loads((source_dir / SOURCES[variant]).read_text(encoding="utf-8"))
    lost = set(src.get("lost", []))
    entries = []
    notes = []
    for key, fen in src["all"].items():
        canonical = format_fen(rules, _position(variant, fen), rules.algebraic_notation)
        if variant == "english":
            entry = _english_entry(key, canonical, key in lost)
        else:
            entry = _international_rules_entry(key, canonical)
        if entry["kind"] == "play":
            entry["moves"], reached = _replay(variant, entry)
            given = _position(variant, fen)
            if reached != given:
                same_pieces = (reached.white, reached.black, reached.kings) == (given.white, given.black,
                                                                                given.kings)
                if not same_pieces:
                    raise ValueError(f"opening {key!r}: its moves do not reach its FEN {fen!r}")
                # The source has the wrong side to move; the moves are authoritative.
                entry["fen"] = format_fen(rules, reached, rules.algebraic_notation)
                notes.append(f"{entry['id']}: side to move corrected to the one its moves give "
                             f"(source FEN {fen!r})")
        entries.append(entry)
    attribution = ATTRIBUTION + (ENGLISH_ATTRIBUTION if variant == "english" else "")
    doc = {
        "schema_version": OPENINGS_SCHEMA_VERSION,
        "variant": variant,
        "deck": "acf-3move" if variant == "english" else f"{variant}-ballots",
        "source": {
            "package": "pydraughts",
            "version": "0.6.7",
            "file": f"draughts/ballot_files/{SOURCES[variant]}",
            "licence": "MIT",
            "attribution": attribution,
        },
        "notes": notes,
        "openings": entries,
    }
    validate_deck(doc, variant)
    return doc


def format_deck(doc: dict[str, Any]) -> str:
    """JSON text with one opening per line (small diffs, readable)."""
    head = {k: v for k, v in doc.items() if k != "openings"}
    lines = json.dumps(head, indent=2, ensure_ascii=False)[:-2].rstrip()
    body = ",\n".join("    " + json.dumps(e, ensure_ascii=False) for e in doc["openings"])
    return f'{lines},\n  "openings": [\n{body}\n  ]\n}}\n'


def main(argv: list[str]) -> int:
    source_dir, out_dir = Path(argv[0]), Path(argv[1])
    out_dir.mkdir(parents=True, exist_ok=True)
    for variant in SOURCES:
        doc = convert(source_dir, variant)
        text = format_deck(doc)
        (out_dir / f"{variant}.json").write_text(text, encoding="utf-8")
        kinds = {k: sum(e["kind"] == k for e in doc["openings"]) for k in ("play", "setup")}
        lost = sum(e["lost"] for e in doc["openings"])
        print(f"{variant}: {len(doc['openings'])} openings {kinds}, lost {lost}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
