"""The move decision of one level (numba): search plus weakening, random streams by counter.

One compiled function decides a move for the engine's Player and for the batch game runner,
so both choose the same move for the same position, history, level and seed.

Randomness is counter-based: the stream of a decision is keyed by (seed, ply, position hash)
and its k-th uniform is a hash of (key, k). Draws are independent of what ran before in the
process, of the batch a game runs in and of how many draws other decisions made.

Weakening, in order: with probability ``random_move_prob`` a uniformly random legal move (no
search); otherwise search, and when any of noise, top-k or temperature is set, take exact root
scores, add N(0, sigma) noise, keep the ``top_k`` best, and choose by softmax(score /
temperature) (or the best, ties to the first in generator order).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

from engine.kernel.movegen import generate
from engine.kernel.search import C_GEN, position_hash, search_root

# knob slots of a level's float64 knob array
K_MAX_DEPTH = 0
K_RANDOM_MOVE_PROB = 1
K_NOISE_SIGMA = 2
K_TOP_K = 3
K_TEMPERATURE = 4
K_SIZE = 5

# slots of the decision's output array (int64)
O_INDEX = 0  # chosen root move, generator order (-1: no legal move)
O_SCORE = 1
O_DEPTH = 2
O_NODES = 3
O_KIND = 4  # KIND_* below
O_PV_LEN = 5  # principal variation length in ctx[C_PV:] (valid when the best move was chosen)
O_SIZE = 6

KIND_NONE = 0  # no legal move
KIND_FORCED = 1  # a single legal move: played without search
KIND_RANDOM = 2  # the random-move knob fired
KIND_SEARCHED = 3

# draw counters within a decision's stream
_D_RANDOM_GATE = 0
_D_RANDOM_INDEX = 1
_D_SOFTMAX = 2
_D_NOISE = 16  # two uniforms per root move from here

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_TWO_PI = 2.0 * np.pi
_GEN_MOD = 1 << 40


@njit(inline="always", cache=True)
def mix64(z: np.uint64) -> np.uint64:
    """splitmix64's finaliser: a bijective 64-bit hash."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit(cache=True)
def stream_key(seed: int, ply: int, h: int) -> np.uint64:
    """The key of one decision's random stream: (seed, ply, position hash)."""
    k = mix64(np.uint64(seed) + _GOLDEN)
    k = mix64(k ^ np.uint64(ply))
    return mix64(k ^ np.uint64(h))


@njit(inline="always", cache=True)
def uniform(key: np.uint64, counter: int) -> float:
    """The ``counter``-th uniform of a stream, in [0, 1) with 53 bits."""
    x = mix64(key + (np.uint64(counter) + np.uint64(1)) * _GOLDEN)
    return float(x >> _S11) * (1.0 / 9007199254740992.0)


@njit(inline="always", cache=True)
def normal(key: np.uint64, counter: int) -> float:
    """A standard normal from uniforms ``counter`` and ``counter + 1`` (Box-Muller)."""
    u1 = 1.0 - uniform(key, counter)  # (0, 1]: the logarithm stays finite
    u2 = uniform(key, counter + 1)
    return float(np.sqrt(-2.0 * np.log(u1)) * np.cos(_TWO_PI * u2))


@njit(cache=True)
def pick_weakened(scores: npt.NDArray[np.int64], n: int, noise_sigma: float, top_k: int,
                  temperature: float, key: np.uint64) -> int:
    """Index of the move chosen from exact root ``scores[:n]`` by noise, top-k and softmax."""
    values = np.empty(n, dtype=np.float64)
    for i in range(n):
        values[i] = float(scores[i])
        if noise_sigma > 0.0:
            values[i] += noise_sigma * normal(key, _D_NOISE + 2 * i)
    if 0 < top_k < n:
        keep = np.sort(np.argsort(-values, kind="mergesort")[:top_k])
    else:
        keep = np.arange(n)
    m = keep.shape[0]
    best = 0
    for j in range(1, m):
        if values[keep[j]] > values[keep[best]]:
            best = j
    if temperature <= 0.0:
        return int(keep[best])
    top = values[keep[best]]
    cumulative = np.empty(m, dtype=np.float64)
    total = 0.0
    for j in range(m):
        total += np.exp((values[keep[j]] - top) / temperature)
        cumulative[j] = total
    target = uniform(key, _D_SOFTMAX) * total
    for j in range(m):
        if target < cumulative[j]:
            return int(keep[j])
    return int(keep[m - 1])


@njit(cache=True)
def decide(
    white: np.uint64, black: np.uint64, kings: np.uint64, side: int, quiet: int, eg_rule: int, eg_left: int,
    road_rule: int, road_left: int, ply: int, seed: int, knobs: npt.NDArray[np.float64],
    tab: npt.NDArray[np.int64], weights: npt.NDArray[np.float64], moves: npt.NDArray[np.int64],
    frames: npt.NDArray[np.int64], tt: npt.NDArray[np.int64], ctx: npt.NDArray[np.int64],
    root_scores: npt.NDArray[np.int64], result: npt.NDArray[np.int64], out: npt.NDArray[np.int64],
) -> int:
    """Choose a move; returns the number of root moves (``moves[0]``, -1: buffer overflow).

    The caller has put the game history's hashes into ``ctx`` (``C_HASHES``, ``C_HIST_BASE``)
    and the level's budget, quiescence and table mask; ``eg_rule``/``eg_left`` and
    ``road_rule``/``road_left`` are the game's small-endgame draw count (the two slots of
    ``engine.endgame.EndgameCount``); ``out`` gets the ``O_*`` fields.
    """
    for i in range(O_SIZE):
        out[i] = 0
    out[O_INDEX] = -1
    n = generate(white, black, kings, side, tab, frames, moves, 0)
    if n <= 0:
        return n
    if n == 1:
        out[O_INDEX] = 0
        out[O_KIND] = KIND_FORCED
        return n
    key = stream_key(seed, ply, position_hash(white, black, kings, side, tab))
    random_prob = knobs[K_RANDOM_MOVE_PROB]
    if random_prob > 0.0 and uniform(key, _D_RANDOM_GATE) < random_prob:
        out[O_INDEX] = min(n - 1, int(uniform(key, _D_RANDOM_INDEX) * n))
        out[O_KIND] = KIND_RANDOM
        return n
    noise_sigma = knobs[K_NOISE_SIGMA]
    top_k = int(knobs[K_TOP_K])
    temperature = knobs[K_TEMPERATURE]
    weaken = noise_sigma > 0.0 or top_k > 0 or temperature > 0.0
    ctx[C_GEN] = (ctx[C_GEN] + 1) % _GEN_MOD
    n = search_root(white, black, kings, side, quiet, 0, eg_rule, eg_left, road_rule, road_left,
                    int(knobs[K_MAX_DEPTH]), weaken, tab, weights, moves, frames, tt, ctx, root_scores,
                    result)
    if n <= 0:
        return n
    index = int(result[0])
    score = int(result[1])
    out[O_PV_LEN] = result[4]
    if weaken:
        index = pick_weakened(root_scores, n, noise_sigma, top_k, temperature, key)
        score = int(root_scores[index])
        if index != result[0]:
            out[O_PV_LEN] = 0
    out[O_INDEX] = index
    out[O_SCORE] = score
    out[O_DEPTH] = result[2]
    out[O_NODES] = result[3]
    out[O_KIND] = KIND_SEARCHED
    return n
