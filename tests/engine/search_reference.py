"""A plain minimax (no pruning, no table) over the kernel's rules: the search's oracle."""

from __future__ import annotations

import numpy as np

from engine.kernel.evaluate import evaluate
from engine.kernel.movegen import has_capture, legal_moves
from engine.kernel.search import MATE
from engine.kernel.tables import kernel_tables
from engine.position import Position, apply_move
from engine.variants import Variant


def minimax(variant: Variant, position: Position, depth: int, weights: np.ndarray,
            quiescence: bool = True, ply: int = 0) -> int:
    """Negamax value with the kernel's conventions (mate = MATE - ply, forced captures extended)."""
    tab = kernel_tables(variant).packed
    w, b, k, s = (np.uint64(position.white), np.uint64(position.black), np.uint64(position.kings),
                  int(position.side_to_move))
    if depth <= 0 and (not quiescence or not has_capture(w, b, k, s, tab)):
        return int(evaluate(w, b, k, s, tab, weights))
    moves = legal_moves(variant, position)
    if not moves:
        return (MATE - ply) if variant.outcome_inverted else -(MATE - ply)
    best = -10**9
    for m in moves:
        child = apply_move(position, m.from_bit, m.to_bit, m.captured, m.promotes)
        best = max(best, -minimax(variant, child, depth - 1, weights, quiescence, ply + 1))
    return best
