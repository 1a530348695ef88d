"""Vectorised legal-move generation for many positions at once (numpy, no per-position loop).

Quiet moves come from whole-board shifts (``shift by delta, & board_mask``), so counting
them is a handful of popcounts. Captures:

* short pieces (english): every first jump comes from whole-board shifts too, and whether
  its landing square can jump again is read off the same bitboards; only the sequences
  that go on get rows of their own;
* then (and for flying kings from the start) sequences are extended breadth-first over a
  flat array of *partial sequences*, one row per piece mid-capture and one jump per loop
  round for every row at once; rows that cannot go on become finished moves.

Python loops only run over directions, ray-fill rounds, capture depth and bit-extraction
rounds. Moves are returned CSR-style (:class:`MoveBatch`); ``from_bb``/``to_bb`` are
single-bit masks and ``captured`` a mask, so playing a move (:func:`successors`) is pure
bit arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
import numpy.typing as npt

from engine.batch.positions import PositionBatch
from engine.geometry import geometry
from engine.variants import CapturePromotion, Color, Variant

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]
Paths = npt.NDArray[np.int8]

#: Width of ``MoveBatch.path``: the start square plus up to 20 landings (10x10 maximum).
MAX_PATH = 21
_ZERO = np.uint64(0)
_ONE = np.uint64(1)


@dataclass(frozen=True)
class _Rules:
    """A variant's rules and geometry in the shape the vectorised code wants."""

    board: np.uint64
    size: int
    deltas: tuple[int, int, int, int]
    promo: tuple[np.uint64, np.uint64]  # crowning row of white men, of black men
    forward: tuple[tuple[int, ...], tuple[int, ...]]  # directions men of each side move in
    men_capture: tuple[tuple[int, ...], tuple[int, ...]]  # directions men of each side capture in
    flying: bool
    majority: bool
    distinct_orders: bool
    stop_on_promotion: bool
    crown_mid_capture: bool

    @property
    def short_first_jumps(self) -> bool:
        """Whether first jumps can be taken off whole-board shifts (short kings, free choice,
        every capture order its own move)."""
        return not self.flying and self.distinct_orders and not self.majority

    @property
    def men_chains_countable(self) -> bool:
        """Whether men's capture chains only depend on the static board (forward-only jumps,
        still a man at the end), so they can be counted without enumeration."""
        return self.men_capture == self.forward and not self.crown_mid_capture


@cache
def _rules(variant: Variant) -> _Rules:
    geo = geometry(variant)
    forward = ((0, 1), (2, 3))  # white moves up, black moves down
    all_dirs = (0, 1, 2, 3)
    return _Rules(
        board=np.uint64(geo.board_mask),
        size=geo.size,
        deltas=geo.deltas,
        promo=(np.uint64(geo.promotion_mask(Color.WHITE)), np.uint64(geo.promotion_mask(Color.BLACK))),
        forward=forward,
        men_capture=(all_dirs, all_dirs) if variant.men_capture_backward else forward,
        flying=variant.flying_kings,
        majority=variant.majority_capture,
        distinct_orders=variant.distinct_capture_orders,
        stop_on_promotion=variant.promotion_during_capture is CapturePromotion.STOP,
        crown_mid_capture=variant.promotion_during_capture is CapturePromotion.CONTINUE_AS_KING,
    )


def _back(d: int) -> int:
    """The opposite direction (UL<->DR, UR<->DL)."""
    return 3 - d


# --------------------------------------------------------------------------- bit helpers


def _shift(x: U64, delta: int, board: np.uint64) -> U64:
    """Move every bit ``delta`` places; bits leaving the board (ghost bits) vanish."""
    if delta > 0:
        return (x << np.uint64(delta)) & board
    return (x >> np.uint64(-delta)) & board


def _raw_shift(x: U64, delta: int) -> U64:
    """Shift without the board mask: only for results that are then and-ed with on-board
    sets (a real square plus ``delta`` that is a real square is its true neighbour)."""
    if delta > 0:
        return x << np.uint64(delta)
    return x >> np.uint64(-delta)


def _fill(r: _Rules, gen: U64, pro: U64, delta: int) -> U64:
    """``gen`` plus every square reached from it by steps of ``delta`` through ``pro`` squares.

    Kogge-Stone doubling: 3 rounds cover an 8x8 diagonal, 4 a 10x10 one. Exact with the
    ghost-bit layout because ``pro`` is re-masked by the board after every shift.
    """
    step = 1
    while True:
        gen = gen | (pro & _shift(gen, step * delta, r.board))
        if 2 * step >= r.size - 1:
            return gen
        pro = pro & _shift(pro, step * delta, r.board)
        step *= 2


def bit_index(x: U64) -> I64:
    """Index of the single set bit of each entry (entries must be powers of two)."""
    out: I64 = np.bitwise_count(x - _ONE).astype(np.int64)
    return out


def _bool_mask(flags: Bools) -> U64:
    """All-ones where ``flags`` is True, zero elsewhere (branch-free select)."""
    return _ZERO - flags.astype(np.uint64)


def _union(masks: list[U64], like: U64) -> U64:
    if not masks:
        return np.zeros_like(like)
    out = masks[0]
    for m in masks[1:]:
        out = out | m
    return out


def _explode(masks: U64, single: bool = False) -> tuple[I64, U64, I64]:
    """One entry per set bit: (owner row, single-bit mask, rank of the bit within its row).

    ``single`` promises at most one bit per row (skips the extraction rounds). Rounds
    work on a shrinking array, so the total work is proportional to the bits emitted.
    """
    owner = np.flatnonzero(masks)
    x = masks[owner]
    if single:
        return owner, x, np.zeros(len(owner), dtype=np.int64)
    owners: list[I64] = []
    bits: list[U64] = []
    ranks: list[I64] = []
    j = 0
    while len(x):
        rest = x & (x - _ONE)
        owners.append(owner)
        bits.append(x ^ rest)
        ranks.append(np.full(len(x), j, dtype=np.int64))
        keep = np.flatnonzero(rest)
        x = rest[keep]
        owner = owner[keep]
        j += 1
    if len(owners) == 1:
        return owners[0], bits[0], ranks[0]
    if not owners:
        return owner, x, np.zeros(0, dtype=np.int64)
    return np.concatenate(owners), np.concatenate(bits), np.concatenate(ranks)


# --------------------------------------------------------------------------- results


@dataclass
class MoveBatch:
    """Legal moves of a batch of positions, CSR style: moves of position ``i`` are
    ``offsets[i]:offsets[i+1]``; ``index[j]`` is the position of move ``j``."""

    offsets: I64  # [N+1]
    index: I64  # [M] batch row of each move
    from_bb: U64  # [M] single bit: start square
    to_bb: U64  # [M] single bit: end square
    captured: U64  # [M] mask of captured pieces (0 for quiet moves)
    promotes: Bools  # [M] the moving man is crowned
    path: Paths | None = None  # [M, MAX_PATH] start bit, then each landing bit; -1 padded
    path_len: I64 | None = None  # [M]

    def __len__(self) -> int:
        return len(self.index)

    @property
    def counts(self) -> I64:
        """Number of legal moves per position."""
        return np.diff(self.offsets)

    @property
    def from_bit(self) -> I64:
        """Bit index of each move's start square."""
        return bit_index(self.from_bb)

    @property
    def to_bit(self) -> I64:
        """Bit index of each move's end square."""
        return bit_index(self.to_bb)

    def take(self, moves: I64) -> MoveBatch:
        """The selected moves, re-indexed as one move per row (row ``k`` = ``moves[k]``).

        Plays chosen moves: ``successors(batch.take(mb.index[sel]), mb.take(sel))``.
        """
        n = len(moves)
        return MoveBatch(
            offsets=np.arange(n + 1, dtype=np.int64),
            index=np.arange(n, dtype=np.int64),
            from_bb=self.from_bb[moves],
            to_bb=self.to_bb[moves],
            captured=self.captured[moves],
            promotes=self.promotes[moves],
            path=None if self.path is None else self.path[moves],
            path_len=None if self.path_len is None else self.path_len[moves],
        )


@dataclass
class _Captures:
    """Finished capture sequences, grouped by row (rows: the positions of the caller)."""

    row: I64
    frm: U64
    to: U64
    caps: U64
    promotes: Bools
    path: Paths | None
    path_len: I64 | None


# --------------------------------------------------------------------------- captures


def _jump_sources(r: _Rules, opp: U64, empty: U64, dirs: tuple[int, ...] = (0, 1, 2, 3)) -> list[U64 | None]:
    """Per direction (None if not asked for): squares from which a short jump exists.

    May hold off-board bits; only ever and-ed with on-board sets.
    """
    out: list[U64 | None] = [None, None, None, None]
    for d in dirs:
        delta = r.deltas[d]
        out[d] = _raw_shift(opp & _raw_shift(empty, -delta), -delta)
    return out


def _capturers(r: _Rules, men: U64, kown: U64, opp: U64, empty: U64, side: int) -> U64:
    """Pieces that have at least one jump, per position (bitboards)."""
    out = np.zeros_like(men)
    with_kings = bool(kown.any())
    for d, before in enumerate(_jump_sources(r, opp, empty)):
        assert before is not None
        if d in r.men_capture[side]:
            out |= men & before
        if not with_kings:
            continue
        if not r.flying:
            out |= kown & before
        else:
            delta = r.deltas[d]
            # empty squares from which a slide in d reaches a square just before a target
            reach = _fill(r, before & empty, empty, -delta)
            out |= kown & (before | _shift(reach, -delta, r.board))
    return out


@dataclass
class _Frontier:
    """Pieces in the middle of a capture: one row per partial sequence."""

    row: I64  # position (in the enumerator's arrays)
    frm: U64  # start square
    cur: U64  # square the piece stands on now
    caps: U64  # pieces jumped so far (still on the board)
    king: Bools  # moves as a king now (crowned mid-capture included)
    man_start: Bools  # started the move as a man
    stopped: Bools  # reached the far row under the STOP rule: the move ends here
    group: I64  # rows made by the same jump share a group (flying landing rule)
    path: Paths | None  # [rows, jumps + 1] bit indices


def _start_frontier(kings: U64, starters: U64, with_paths: bool) -> _Frontier:
    """Every piece of ``starters`` standing on its square, nothing captured yet."""
    row, cur, _ = _explode(starters)
    king = (kings[row] & cur) != 0
    return _Frontier(
        row=row, frm=cur, cur=cur, caps=np.zeros(len(row), dtype=np.uint64), king=king,
        man_start=~king, stopped=np.zeros(len(row), dtype=np.bool_),
        group=np.arange(len(row), dtype=np.int64),
        path=bit_index(cur).astype(np.int8)[:, None] if with_paths else None,
    )


_Done = tuple[I64, U64, U64, U64, Bools, Paths | None]


def _enumerate_captures(
    r: _Rules, own: U64, opp: U64, side: int, f: _Frontier, step: int, with_paths: bool
) -> _Captures:
    """Every legal completion of the partial captures in ``f`` (made of ``step`` jumps).

    Breadth-first, one jump per round for every row at once. Captured pieces stay on the
    board until the move ends (Turkish strike): they block and cannot be jumped again;
    the start square counts as empty.
    """
    board = r.board
    promo = r.promo[side]
    men_dirs = r.men_capture[side]
    row, frm, cur, caps, king = f.row, f.frm, f.cur, f.caps, f.king
    man_start, stopped, group, path = f.man_start, f.stopped, f.group, f.path
    done: list[_Done] = []
    while len(row):
        empty_p = ~((own[row] | opp[row]) & ~frm) & board
        jumpable = opp[row] & ~caps
        cur_k = cur & _bool_mask(king & ~stopped)
        cur_m = cur & _bool_mask(~king & ~stopped)
        flying = r.flying and bool(cur_k.any())  # slides only when some row is a king
        lands: list[U64] = []
        victims: list[U64] = []
        for d in range(4):
            delta = r.deltas[d]
            if r.flying:
                src = cur_m if d in men_dirs else None
            else:
                src = (cur_m | cur_k) if d in men_dirs else cur_k
            if src is None:
                v = np.zeros_like(cur)
                land = np.zeros_like(cur)
            else:
                v = _shift(src, delta, board) & jumpable
                land = _shift(v, delta, board) & empty_p
            if flying:
                slide = _fill(r, cur_k, empty_p, delta)
                vf = _shift(slide, delta, board) & jumpable
                v = v | vf
                land = land | _fill(r, _shift(vf, delta, board) & empty_p, empty_p, delta)
            lands.append(land)
            victims.append(v)
        has_next = (lands[0] | lands[1] | lands[2] | lands[3]) != 0
        if step > 0:
            if r.flying:
                # a flying king must land where it can go on capturing, if any such square exists
                group_next = np.bincount(group, weights=has_next, minlength=int(group.max()) + 1) > 0
                finished = ~group_next[group]
            else:
                finished = ~has_next
            fin = np.flatnonzero(finished)
            if len(fin):
                promotes = man_start[fin] & (king[fin] | ((cur[fin] & promo) != 0))
                done.append(
                    (row[fin], frm[fin], cur[fin], caps[fin], promotes, None if path is None else path[fin])
                )
        # every row that can jump again makes one child per landing square
        parts: list[tuple[I64, U64, U64, I64]] = []
        for d in range(4):
            owner, land_bits, _ = _explode(lands[d], single=not r.flying)
            if len(owner):
                parts.append((owner, land_bits, victims[d][owner], owner * 4 + d))
        if not parts:
            break
        owner = np.concatenate([p[0] for p in parts])
        new_cur = np.concatenate([p[1] for p in parts])
        new_caps = caps[owner] | np.concatenate([p[2] for p in parts])
        group = np.concatenate([p[3] for p in parts])
        new_king = king[owner]
        reaches = ~new_king & ((new_cur & promo) != 0)
        stopped = reaches if r.stop_on_promotion else np.zeros(len(owner), dtype=np.bool_)
        if r.crown_mid_capture:
            new_king = new_king | reaches
        if path is not None:
            path = np.concatenate([path[owner], bit_index(new_cur).astype(np.int8)[:, None]], axis=1)
        row, frm, cur, caps, king, man_start = (
            row[owner], frm[owner], new_cur, new_caps, new_king, man_start[owner]
        )
        step += 1
    return _collect(r, done, with_paths)


def _collect(r: _Rules, done: list[_Done], with_paths: bool) -> _Captures:
    """Concatenate finished sequences, apply the majority and merge rules, group by row."""
    if not done:
        e64 = np.zeros(0, dtype=np.int64)
        eu = np.zeros(0, dtype=np.uint64)
        return _Captures(
            e64, eu, eu, eu, np.zeros(0, dtype=np.bool_),
            np.zeros((0, MAX_PATH), dtype=np.int8) if with_paths else None,
            e64 if with_paths else None,
        )
    row = np.concatenate([d[0] for d in done])
    frm = np.concatenate([d[1] for d in done])
    to = np.concatenate([d[2] for d in done])
    caps = np.concatenate([d[3] for d in done])
    promotes = np.concatenate([d[4] for d in done])
    path: Paths | None = None
    plen: I64 | None = None
    if with_paths:
        path = np.full((len(row), MAX_PATH), -1, dtype=np.int8)
        plen = np.empty(len(row), dtype=np.int64)
        start = 0
        for d in done:
            p = d[5]
            if p is None:
                raise RuntimeError("capture paths were not tracked")
            path[start : start + len(p), : p.shape[1]] = p
            plen[start : start + len(p)] = p.shape[1]
            start += len(p)
    sel = np.arange(len(row))
    if r.majority:
        ncap = np.bitwise_count(caps)
        best = np.zeros(int(row.max()) + 1, dtype=ncap.dtype)
        np.maximum.at(best, row, ncap)
        sel = np.flatnonzero(ncap == best[row])
    if r.distinct_orders:
        keep = sel[np.argsort(row[sel], kind="stable")]
    else:
        # one move per (row, from, to, captured set, crowning); the first path found stays
        key = (row[sel] << 12) | (bit_index(frm[sel]) << 6) | bit_index(to[sel])
        c, p = caps[sel], promotes[sel]
        order = np.lexsort((p, c, key))
        k, c, p = key[order], c[order], p[order]
        first = np.ones(len(order), dtype=np.bool_)
        first[1:] = (k[1:] != k[:-1]) | (c[1:] != c[:-1]) | (p[1:] != p[:-1])
        keep = sel[order[first]]
    return _Captures(
        row=row[keep], frm=frm[keep], to=to[keep], caps=caps[keep], promotes=promotes[keep],
        path=None if path is None else path[keep], path_len=None if plen is None else plen[keep],
    )


# --------------------------------------------------------------------------- short first jumps


@dataclass
class _FirstJumps:
    """Short first jumps of one piece kind in one direction (bitboards per position)."""

    jumpers: U64  # pieces that can jump
    land: U64  # their landing squares
    cont: U64  # landing squares from which the capture goes on
    direction: int
    king: bool


def _short_first_jumps(
    r: _Rules, men: U64, kown: U64, opp: U64, empty: U64, side: int, with_kings: bool
) -> tuple[list[_FirstJumps], list[U64 | None], U64]:
    """Every first jump of short pieces, with the landings from which the capture goes on.

    After one short jump the board seen by the jumper differs from the start only by the
    vacated start square and the jumped piece, and neither can matter for the second jump
    (it would have to go straight back). So whether a landing square can jump again is read
    off the whole-board jump sources; only continuing sequences will need rows.
    Returns (first jumps, jump sources per direction, the squares from which a man goes on
    capturing: exact for every direction when men capture forward only).
    """
    promo = r.promo[side]
    men_dirs = r.men_capture[side]
    src = _jump_sources(r, opp, empty, (0, 1, 2, 3) if with_kings else men_dirs)
    out: list[_FirstJumps] = []
    men_go_on = np.zeros_like(men)
    for d in range(4):
        kinds: list[tuple[U64, U64, bool]] = []
        king_next = None
        if with_kings or (d in men_dirs and r.crown_mid_capture):
            king_next = _union([s for d2, s in enumerate(src) if d2 != _back(d) and s is not None], men)
        sd = src[d]
        if d in men_dirs:
            assert sd is not None
            men_next = _union([src[d2] for d2 in men_dirs if d2 != _back(d)], men)  # type: ignore[misc]
            # a man landing on the far row stops, goes on as a man, or goes on as a king
            if r.stop_on_promotion:
                go_on = men_next & ~promo
            elif r.crown_mid_capture:
                assert king_next is not None
                go_on = (men_next & ~promo) | (king_next & promo)
            else:
                go_on = men_next
            men_go_on = go_on
            kinds.append((men, go_on, False))
        if with_kings:
            assert sd is not None and king_next is not None
            kinds.append((kown, king_next, True))
        for pieces, go_on, is_king in kinds:
            jumpers = pieces & sd  # type: ignore[operator]
            land = _raw_shift(jumpers, 2 * r.deltas[d])
            out.append(_FirstJumps(jumpers, land, land & go_on, d, is_king))
    return out, src, men_go_on


def _continuing_frontier(
    r: _Rules, jumps: list[_FirstJumps], rows: I64, side: int, with_paths: bool
) -> _Frontier:
    """Rows for the first jumps (of positions ``rows``) whose capture goes on."""
    promo = r.promo[side]
    rows_l: list[I64] = []
    cur_l: list[U64] = []
    caps_l: list[U64] = []
    frm_l: list[U64] = []
    king_l: list[Bools] = []
    for j in jumps:
        owner, land, _ = _explode(j.cont[rows])
        back = -r.deltas[j.direction]
        rows_l.append(owner)
        cur_l.append(land)
        caps_l.append(_raw_shift(land, back))
        frm_l.append(_raw_shift(land, 2 * back))
        king_l.append(np.full(len(owner), j.king, dtype=np.bool_))
    row = np.concatenate(rows_l)
    cur = np.concatenate(cur_l)
    frm = np.concatenate(frm_l)
    was_king = np.concatenate(king_l)
    king = was_king | (r.crown_mid_capture & ((cur & promo) != 0))
    return _Frontier(
        row=row, frm=frm, cur=cur, caps=np.concatenate(caps_l), king=king, man_start=~was_king,
        stopped=np.zeros(len(row), dtype=np.bool_), group=np.arange(len(row), dtype=np.int64),
        path=np.stack([bit_index(frm), bit_index(cur)], axis=1).astype(np.int8) if with_paths else None,
    )


def _add_planes(a: list[U64], b: list[U64]) -> list[U64]:
    """Bit-sliced addition: plane ``k`` holds bit ``k`` of a small counter per square."""
    out: list[U64] = []
    carry: U64 | None = None
    for k in range(max(len(a), len(b))):
        terms = [t for t in (a[k] if k < len(a) else None, b[k] if k < len(b) else None, carry)
                 if t is not None]
        if len(terms) == 1:
            out.append(terms[0])
            carry = None
        elif len(terms) == 2:
            out.append(terms[0] ^ terms[1])
            carry = terms[0] & terms[1]
        else:
            x, y, c = terms
            out.append(x ^ y ^ c)
            carry = (x & y) | (c & (x ^ y))
    if carry is not None and carry.any():
        out.append(carry)
    return out


def _count_men_chains(
    r: _Rules, starts: list[U64], dirs: tuple[int, ...], src: list[U64 | None], go_on: U64
) -> I64:
    """Number of capture sequences by men whose first jump landed on the ``starts`` squares.

    Valid when men only jump forward (``dirs``) and stay men: a chain then only depends
    on the static board (it never comes back to its start square or its jumped pieces),
    so paths are counted per square with bit-sliced counters, every square of every
    position at once (no enumeration). ``go_on``: squares a man may jump on from.
    """
    planes: list[U64] = []
    for land in starts:
        planes = _add_planes(planes, [land])
    total = np.zeros(len(go_on), dtype=np.int64)
    while planes:
        moved: list[U64] = []
        for d in dirs:
            sd = src[d]
            assert sd is not None
            moved = _add_planes(moved, [_raw_shift(p & sd, 2 * r.deltas[d]) for p in planes])
        planes = []
        alive = False
        for k, p in enumerate(moved):
            total += np.bitwise_count(p & ~go_on).astype(np.int64) << k
            q = p & go_on
            planes.append(q)
            alive = alive or bool(q.any())
        if not alive:
            break
    return total


# --------------------------------------------------------------------------- move sets


@dataclass
class _Group:
    """Moves of one kind in one direction: destination squares per position.

    ``jump``: a one-square jump that ends the move (short pieces); otherwise a step or a
    slide. ``rows``: the positions ``targets`` belongs to (None: all of them).
    """

    targets: U64
    direction: int
    king: bool
    jump: bool = False
    rows: I64 | None = None


def _quiet_groups(
    r: _Rules, men: U64, kown: U64, empty: U64, side: int, with_kings: bool = True
) -> list[_Group]:
    """Non-capturing moves: men step forward, kings step (or slide, if flying) anywhere."""
    groups = [_Group(_raw_shift(men, r.deltas[d]) & empty, d, False) for d in r.forward[side]]
    for d in range(4 if with_kings else 0):
        if r.flying:
            groups.append(_Group(_fill(r, kown, empty, r.deltas[d]) & empty, d, True))
        else:
            groups.append(_Group(_raw_shift(kown, r.deltas[d]) & empty, d, True))
    return groups


@dataclass
class _MoveSets:
    """All legal moves of a same-side batch: bitboard groups plus enumerated captures."""

    groups: list[_Group]
    caps: _Captures | None  # rows index the batch
    empty: U64
    kown: U64


def _move_sets(r: _Rules, own: U64, opp: U64, kings: U64, side: int, with_paths: bool) -> _MoveSets:
    """Legal moves of positions that all have ``side`` to move."""
    empty = ~(own | opp) & r.board
    men = own & ~kings
    kown = own & kings
    with_kings = bool(kown.any())
    caps: _Captures | None = None
    singles: list[_Group] = []
    if r.short_first_jumps:
        jumps, _, _ = _short_first_jumps(r, men, kown, opp, empty, side, with_kings)
        any_jump = _union([j.jumpers for j in jumps], men)
        any_cont = _union([j.cont for j in jumps], men)
        has_cap = any_jump != 0
        jump_rows = np.flatnonzero(has_cap)
        if len(jump_rows):
            for j in jumps:
                singles.append(
                    _Group((j.land & ~j.cont)[jump_rows], j.direction, j.king, jump=True, rows=jump_rows)
                )
            cont_rows = np.flatnonzero(any_cont)
            if len(cont_rows):
                frontier = _continuing_frontier(r, jumps, cont_rows, side, with_paths)
                caps = _enumerate_captures(r, own[cont_rows], opp[cont_rows], side, frontier, 1, with_paths)
                caps.row = cont_rows[caps.row]
    else:
        starters = _capturers(r, men, kown, opp, empty, side)
        has_cap = starters != 0
        cap_rows = np.flatnonzero(has_cap)
        if len(cap_rows):
            frontier = _start_frontier(kings[cap_rows], starters[cap_rows], with_paths)
            caps = _enumerate_captures(r, own[cap_rows], opp[cap_rows], side, frontier, 0, with_paths)
            caps.row = cap_rows[caps.row]
    quiet_sel = _bool_mask(~has_cap)
    groups = _quiet_groups(r, men & quiet_sel, kown & quiet_sel, empty, side, with_kings)
    return _MoveSets([*groups, *singles], caps, empty, kown)


def _group_moves(r: _Rules, g: _Group, sets: _MoveSets) -> tuple[I64, U64, U64, U64 | None, I64]:
    """Explode a group into moves: (row, from, to, captured or None, rank within group)."""
    owner, to, rank = _explode(g.targets)
    row = owner if g.rows is None else g.rows[owner]
    back = -r.deltas[g.direction]
    over = None
    if g.jump:
        over = _raw_shift(to, back)
        frm = _raw_shift(over, back)
    elif g.king and r.flying:
        # the mover is the first occupied square behind the destination
        frm = _shift(_fill(r, to, sets.empty[row], back), back, r.board) & sets.kown[row]
    else:
        frm = _raw_shift(to, back)
    return row, frm, to, over, rank


# --------------------------------------------------------------------------- core (one side)


def _count_side(r: _Rules, own: U64, opp: U64, kings: U64, side: int) -> I64:
    """Legal move counts of positions that all have ``side`` to move."""
    empty = ~(own | opp) & r.board
    men = own & ~kings
    kown = own & kings
    with_kings = bool(kown.any())
    quiet = np.zeros(len(own), dtype=np.int64)
    for g in _quiet_groups(r, men, kown, empty, side, with_kings):
        quiet += np.bitwise_count(g.targets)
    if not r.short_first_jumps:
        starters = _capturers(r, men, kown, opp, empty, side)
        cap_rows = np.flatnonzero(starters)
        if len(cap_rows):
            frontier = _start_frontier(kings[cap_rows], starters[cap_rows], False)
            caps = _enumerate_captures(r, own[cap_rows], opp[cap_rows], side, frontier, 0, False)
            quiet[cap_rows] = np.bincount(caps.row, minlength=len(cap_rows))
        return quiet
    jumps, src, men_go_on = _short_first_jumps(r, men, kown, opp, empty, side, with_kings)
    total = np.zeros(len(own), dtype=np.int64)
    for j in jumps:
        total += np.bitwise_count(j.jumpers)
    # sequences that go on: replace their first jump by the number of sequences it starts
    chain_men = r.men_chains_countable
    enum_jumps = [j for j in jumps if j.king or not chain_men]
    men_jumps = [j for j in jumps if not j.king and chain_men]
    if men_jumps:
        any_men = _union([j.cont for j in men_jumps], men)
        rows = np.flatnonzero(any_men)
        if len(rows):
            starts = [j.cont[rows] for j in men_jumps]
            sub_src = [None if s is None else s[rows] for s in src]
            chains = _count_men_chains(r, starts, r.men_capture[side], sub_src, men_go_on[rows])
            for c in starts:
                chains -= np.bitwise_count(c)
            total[rows] += chains
    if enum_jumps:
        any_enum = _union([j.cont for j in enum_jumps], men)
        rows = np.flatnonzero(any_enum)
        if len(rows):
            frontier = _continuing_frontier(r, enum_jumps, rows, side, False)
            caps = _enumerate_captures(r, own[rows], opp[rows], side, frontier, 1, False)
            total[rows] += np.bincount(caps.row, minlength=len(rows)) - np.bincount(
                frontier.row, minlength=len(rows)
            )
    return np.where(total > 0, total, quiet)


def _generate_side(r: _Rules, own: U64, opp: U64, kings: U64, side: int, with_paths: bool) -> MoveBatch:
    """All legal moves of positions that all have ``side`` to move (CSR over these rows)."""
    n = len(own)
    sets = _move_sets(r, own, opp, kings, side, with_paths)
    counts = np.zeros(n, dtype=np.int64)
    group_counts = []
    for g in sets.groups:
        c = np.bitwise_count(g.targets).astype(np.int64)
        group_counts.append(c)
        if g.rows is None:
            counts += c
        else:
            counts[g.rows] += c
    caps = sets.caps
    cap_counts = None
    if caps is not None and len(caps.row):
        cap_counts = np.bincount(caps.row, minlength=n)
        counts += cap_counts
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    m = int(offsets[-1])
    index = np.repeat(np.arange(n, dtype=np.int64), counts)
    from_bb = np.zeros(m, dtype=np.uint64)
    to_bb = np.zeros(m, dtype=np.uint64)
    captured = np.zeros(m, dtype=np.uint64)
    promotes = np.zeros(m, dtype=np.bool_)
    path = np.full((m, MAX_PATH), -1, dtype=np.int8) if with_paths else None
    path_len = np.full(m, 2, dtype=np.int64) if with_paths else None
    promo = r.promo[side]
    base = offsets[:-1].copy()
    for g, c in zip(sets.groups, group_counts, strict=True):
        row, frm, to, over, rank = _group_moves(r, g, sets)
        slot = base[row] + rank
        if g.rows is None:
            base += c
        else:
            base[g.rows] += c
        from_bb[slot] = frm
        to_bb[slot] = to
        if over is not None:
            captured[slot] = over
        if not g.king:
            promotes[slot] = (to & promo) != 0
        if path is not None:
            path[slot, 0] = bit_index(frm)
            path[slot, 1] = bit_index(to)
    if caps is not None and cap_counts is not None:
        first = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(cap_counts, out=first[1:])
        slot = base[caps.row] + (np.arange(len(caps.row)) - first[caps.row])
        from_bb[slot] = caps.frm
        to_bb[slot] = caps.to
        captured[slot] = caps.caps
        promotes[slot] = caps.promotes
        if path is not None and path_len is not None and caps.path is not None:
            assert caps.path_len is not None
            path[slot] = caps.path
            path_len[slot] = caps.path_len
    return MoveBatch(offsets, index, from_bb, to_bb, captured, promotes, path, path_len)


def _expand_side(r: _Rules, own: U64, opp: U64, kings: U64, side: int) -> tuple[U64, U64, U64]:
    """(own, opp, kings) of every successor, in no particular order (for perft)."""
    sets = _move_sets(r, own, opp, kings, side, False)
    promo = r.promo[side]
    own_l: list[U64] = []
    opp_l: list[U64] = []
    kings_l: list[U64] = []
    for g in sets.groups:
        row, frm, to, over, _ = _group_moves(r, g, sets)
        step = frm | to
        own_l.append(own[row] ^ step)
        opp_l.append(opp[row] if over is None else opp[row] ^ over)
        k = kings[row]
        if over is not None:
            k = k & ~over
        kings_l.append(k ^ step if g.king else k | (to & promo))
    caps = sets.caps
    if caps is not None and len(caps.row):
        k = kings[caps.row]
        crown = ((k & caps.frm) != 0) | caps.promotes
        own_l.append((own[caps.row] & ~caps.frm) | caps.to)
        opp_l.append(opp[caps.row] ^ caps.caps)
        kings_l.append((k & ~(caps.caps | caps.frm)) | (caps.to & _bool_mask(crown)))
    if not own_l:
        e = np.zeros(0, dtype=np.uint64)
        return e, e, e
    return np.concatenate(own_l), np.concatenate(opp_l), np.concatenate(kings_l)


def _select_bit(x: U64, rank: I64) -> U64:
    """The ``rank``-th lowest set bit of each entry (rank < popcount)."""
    top = int(rank.max()) if len(rank) else 0
    for j in range(top):
        x = np.where(rank > j, x & (x - _ONE), x)
    return x & (_ZERO - x)


def _shift_by(x: U64, delta: I64) -> U64:
    """Shift each entry by its own (signed) amount; no board mask."""
    return (x << np.maximum(delta, 0).astype(np.uint64)) >> np.maximum(-delta, 0).astype(np.uint64)


def _sample_side(
    r: _Rules, own: U64, opp: U64, kings: U64, side: int, u: npt.NDArray[np.float64]
) -> tuple[I64, U64, U64, U64, Bools]:
    """One uniformly chosen legal move per position (``u`` in [0, 1) picks it).

    Quiet positions never build their move list: the move number ``floor(u * count)`` is
    located among the per-direction bitboards and its bit extracted. Positions that must
    capture go through the full generator. Returns (counts, from, to, captured, promotes);
    rows without a move hold zeros.
    """
    n = len(own)
    empty = ~(own | opp) & r.board
    men = own & ~kings
    kown = own & kings
    with_kings = bool(kown.any())
    if r.short_first_jumps:
        jumps, _, _ = _short_first_jumps(r, men, kown, opp, empty, side, with_kings)
        has_cap = _union([j.jumpers for j in jumps], men) != 0
    else:
        has_cap = _capturers(r, men, kown, opp, empty, side) != 0
    quiet_sel = _bool_mask(~has_cap)
    groups = _quiet_groups(r, men & quiet_sel, kown & quiet_sel, empty, side, with_kings)
    gcounts = [np.bitwise_count(g.targets).astype(np.int64) for g in groups]
    counts = np.zeros(n, dtype=np.int64)
    for c in gcounts:
        counts += c
    k = (u * counts).astype(np.int64)
    x = np.zeros(n, dtype=np.uint64)
    back = np.zeros(n, dtype=np.int64)
    before = np.zeros(n, dtype=np.int64)  # moves in the groups ahead of the chosen one
    king = np.zeros(n, dtype=np.bool_)
    acc = np.zeros(n, dtype=np.int64)
    for g, c in zip(groups, gcounts, strict=True):
        take = (k >= acc) & (k < acc + c)
        x = np.where(take, g.targets, x)
        back = np.where(take, -r.deltas[g.direction], back)
        before = np.where(take, acc, before)
        if g.king:
            king |= take
        acc += c
    rank = k - before
    to = _select_bit(x, rank)
    frm = _shift_by(to, back)
    if r.flying and with_kings:
        # a sliding king comes from the first occupied square behind its destination
        for d in range(4):
            sel = king & (back == -r.deltas[d])
            slide = _shift(_fill(r, to, empty, -r.deltas[d]), -r.deltas[d], r.board) & kown
            frm = np.where(sel, slide, frm)
    captured = np.zeros(n, dtype=np.uint64)
    promotes = ~king & ((to & r.promo[side]) != 0) & (counts > 0)
    cap_rows = np.flatnonzero(has_cap)
    if len(cap_rows):
        mb = _generate_side(r, own[cap_rows], opp[cap_rows], kings[cap_rows], side, False)
        c = mb.counts
        pick = mb.offsets[:-1] + (u[cap_rows] * c).astype(np.int64)
        counts[cap_rows] = c
        frm[cap_rows] = mb.from_bb[pick]
        to[cap_rows] = mb.to_bb[pick]
        captured[cap_rows] = mb.captured[pick]
        promotes[cap_rows] = mb.promotes[pick]
    return counts, frm, to, captured, promotes


# --------------------------------------------------------------------------- public API


def _own_opp(batch: PositionBatch, side: int) -> tuple[U64, U64]:
    return (batch.white, batch.black) if side == 0 else (batch.black, batch.white)


def _uniform_side(batch: PositionBatch) -> int | None:
    """The side to move if every row has the same one, else None."""
    if len(batch) == 0:
        return 0
    s0 = int(batch.side[0])
    return s0 if bool(np.all(batch.side == s0)) else None


def count_moves(variant: Variant, batch: PositionBatch) -> I64:
    """Number of legal moves of every position (quiet positions: popcounts only)."""
    r = _rules(variant)
    side = _uniform_side(batch)
    if side is not None:
        own, opp = _own_opp(batch, side)
        return _count_side(r, own, opp, batch.kings, side)
    counts = np.zeros(len(batch), dtype=np.int64)
    for s in (0, 1):
        rows = np.flatnonzero(batch.side == s)
        if len(rows):
            sub = batch.take(rows)
            own, opp = _own_opp(sub, s)
            counts[rows] = _count_side(r, own, opp, sub.kings, s)
    return counts


def generate_moves(variant: Variant, batch: PositionBatch, with_paths: bool = False) -> MoveBatch:
    """All legal moves of every position, CSR style (see :class:`MoveBatch`)."""
    r = _rules(variant)
    side = _uniform_side(batch)
    if side is not None:
        own, opp = _own_opp(batch, side)
        return _generate_side(r, own, opp, batch.kings, side, with_paths)
    parts: list[tuple[I64, MoveBatch]] = []
    counts = np.zeros(len(batch), dtype=np.int64)
    for s in (0, 1):
        rows = np.flatnonzero(batch.side == s)
        if len(rows):
            sub = batch.take(rows)
            own, opp = _own_opp(sub, s)
            mb = _generate_side(r, own, opp, sub.kings, s, with_paths)
            counts[rows] = mb.counts
            parts.append((rows, mb))
    offsets = np.zeros(len(batch) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    m = int(offsets[-1])
    out = MoveBatch(
        offsets=offsets,
        index=np.repeat(np.arange(len(batch), dtype=np.int64), counts),
        from_bb=np.zeros(m, dtype=np.uint64),
        to_bb=np.zeros(m, dtype=np.uint64),
        captured=np.zeros(m, dtype=np.uint64),
        promotes=np.zeros(m, dtype=np.bool_),
        path=np.full((m, MAX_PATH), -1, dtype=np.int8) if with_paths else None,
        path_len=np.zeros(m, dtype=np.int64) if with_paths else None,
    )
    for rows, mb in parts:
        slot = offsets[rows[mb.index]] + (np.arange(len(mb)) - mb.offsets[mb.index])
        out.from_bb[slot] = mb.from_bb
        out.to_bb[slot] = mb.to_bb
        out.captured[slot] = mb.captured
        out.promotes[slot] = mb.promotes
        if out.path is not None and out.path_len is not None:
            assert mb.path is not None and mb.path_len is not None
            out.path[slot] = mb.path
            out.path_len[slot] = mb.path_len
    return out


def expand(variant: Variant, batch: PositionBatch) -> PositionBatch:
    """Every successor of every position, in no particular order (perft's inner step).

    Same positions as ``successors(batch, generate_moves(variant, batch))`` but without
    building the CSR move list.
    """
    r = _rules(variant)
    side = _uniform_side(batch)
    sides = [side] if side is not None else [0, 1]
    parts: list[PositionBatch] = []
    for s in sides:
        sub = batch if side is not None else batch.take(np.flatnonzero(batch.side == s))
        own, opp = _own_opp(sub, s)
        o, p, k = _expand_side(r, own, opp, sub.kings, s)
        white, black = (o, p) if s == 0 else (p, o)
        parts.append(PositionBatch(white, black, k, np.full(len(o), 1 - s, dtype=np.int8)))
    return parts[0] if len(parts) == 1 else PositionBatch.concat(parts)


def sample_moves(
    variant: Variant, batch: PositionBatch, u: npt.NDArray[np.float64]
) -> tuple[I64, MoveBatch]:
    """Legal move counts, and the move ``floor(u[i] * count[i])`` of every position that has one.

    With ``u`` uniform in [0, 1) that is a uniformly random legal move, found without
    listing every move (random playouts). The moves' ``index`` are their positions' rows;
    the order of moves within a position is the generator's, as in :func:`generate_moves`.
    """
    r = _rules(variant)
    n = len(batch)
    counts = np.zeros(n, dtype=np.int64)
    frm = np.zeros(n, dtype=np.uint64)
    to = np.zeros(n, dtype=np.uint64)
    cap = np.zeros(n, dtype=np.uint64)
    promotes = np.zeros(n, dtype=np.bool_)
    side = _uniform_side(batch)
    for s in [side] if side is not None else [0, 1]:
        rows = np.arange(n) if side is not None else np.flatnonzero(batch.side == s)
        if len(rows) == 0:
            continue
        sub = batch if side is not None else batch.take(rows)
        own, opp = _own_opp(sub, s)
        c, f, t, x, p = _sample_side(r, own, opp, sub.kings, s, u[rows])
        counts[rows], frm[rows], to[rows], cap[rows], promotes[rows] = c, f, t, x, p
    has = np.flatnonzero(counts > 0)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts > 0, out=offsets[1:])
    moves = MoveBatch(
        offsets=offsets, index=has, from_bb=frm[has], to_bb=to[has], captured=cap[has],
        promotes=promotes[has],
    )
    return counts, moves


def successors(batch: PositionBatch, moves: MoveBatch) -> PositionBatch:
    """The position after each move (row ``moves.index[j]`` of ``batch`` plays move ``j``).

    The mover leaves ``from`` for ``to`` (a move may end where it started), captured pieces
    vanish, a king stays a king, a crowned man becomes one, and the side to move flips.
    """
    rows = moves.index
    side = batch.side[rows]
    black_mask = _bool_mask(side != 0)
    f, t, cap = moves.from_bb, moves.to_bb, moves.captured
    step = f ^ t
    w = batch.white[rows]
    b = batch.black[rows]
    k = batch.kings[rows]
    white = w ^ (step & ~black_mask) ^ (cap & black_mask)
    black = b ^ (step & black_mask) ^ (cap & ~black_mask)
    crown = ((k & f) != 0) | moves.promotes
    kings = (k & ~(cap | f)) | (t & _bool_mask(crown))
    return PositionBatch(white=white, black=black, kings=kings, side=(1 - side).astype(np.int8))
