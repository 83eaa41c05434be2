//! The one move generator: chess moves for the side to move, either legal (own king safe, by pins and
//! check masks) or pseudo-legal (Twinmove, where kings may be left attacked and captured), restricted to
//! the pieces a variant's turn state allows to move.

use crate::bitboard::{
    lsb, more_than_one, squares, tables, Bitboard, FILE_A, FILE_H, RANK_1, RANK_3, RANK_6, RANK_8,
};
use crate::board::Board;
use crate::types::{CastlingRights, Color, Move, MoveKind, Role, Square};
use std::mem::MaybeUninit;

/// What the turn rules allow the generator to produce.
#[derive(Clone, Copy, Debug)]
pub struct GenRules {
    /// Legal moves (own king never left attacked, no castling out of, through or into check) when true;
    /// pseudo-legal moves when false.
    pub king_safety: bool,
    /// Whether an en passant capture on the position's en passant square may be played now.
    pub en_passant: bool,
    /// The squares of the pieces that may move (pieces elsewhere stay put).
    pub movable: Bitboard,
    /// Whether a move may capture the enemy king.
    pub capture_king: bool,
}

impl GenRules {
    pub const LEGAL: GenRules = GenRules {
        king_safety: true,
        en_passant: true,
        movable: !0,
        capture_king: false,
    };
}

/// A set of pawn moves of one shape, generated at once from bitboard shifts.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum PawnMoves {
    /// One-square pushes and captures that do not promote.
    Plain,
    /// Two-square pushes.
    DoublePush,
    /// Moves onto the last rank: four moves each (queen, rook, bishop, knight).
    Promotions,
}

/// Receives generated moves. Returning `true` from a method stops generation (used for existence tests).
pub trait MoveSink {
    fn add(&mut self, m: Move) -> bool;
    /// Normal (non-pawn, non-castling) moves from `from` to every square of `targets`.
    #[inline]
    fn add_targets(&mut self, from: Square, targets: Bitboard) -> bool {
        for to in squares(targets) {
            if self.add(Move::normal(from, to)) {
                return true;
            }
        }
        false
    }
    /// Pawn moves onto every square of `targets`, each from the square `delta` below it (in square
    /// index units, so `to - delta` is the origin).
    #[inline]
    fn add_pawn_moves(&mut self, targets: Bitboard, delta: i8, shape: PawnMoves) -> bool {
        for to in squares(targets) {
            let from = Square((to.0 as i8 - delta) as u8);
            let stop = match shape {
                PawnMoves::Plain => self.add(Move::normal(from, to)),
                PawnMoves::DoublePush => self.add(Move::new(from, to, MoveKind::DoublePush)),
                PawnMoves::Promotions => push_promotions(self, from, to),
            };
            if stop {
                return true;
            }
        }
        false
    }
}

#[inline]
fn push_promotions<S: MoveSink + ?Sized>(sink: &mut S, from: Square, to: Square) -> bool {
    for r in [Role::Queen, Role::Rook, Role::Bishop, Role::Knight] {
        if sink.add(Move::new(from, to, MoveKind::Promotion(r))) {
            return true;
        }
    }
    false
}

/// A fixed-capacity move list (Double Move Chess can list each move twice).
pub struct MoveList {
    /// Only `moves[..len]` is initialised (a list is created at every interior perft node, so the
    /// 2 KiB array is not zeroed).
    moves: [MaybeUninit<Move>; MoveList::CAPACITY],
    len: usize,
}

impl Default for MoveList {
    fn default() -> Self {
        MoveList::new()
    }
}

impl Clone for MoveList {
    fn clone(&self) -> Self {
        let mut l = MoveList::new();
        for &m in self.as_slice() {
            l.push(m);
        }
        l
    }
}

impl std::fmt::Debug for MoveList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

impl MoveList {
    pub const CAPACITY: usize = 512;

    #[inline]
    pub fn new() -> MoveList {
        MoveList {
            moves: [const { MaybeUninit::uninit() }; MoveList::CAPACITY],
            len: 0,
        }
    }
    #[inline]
    pub fn push(&mut self, m: Move) {
        // Indexing panics on overflow, so `len` never exceeds the capacity.
        self.moves[self.len] = MaybeUninit::new(m);
        self.len += 1;
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    #[inline]
    pub fn as_slice(&self) -> &[Move] {
        // SAFETY: `moves[..len]` has been written by `push` or `retain` (every write below `len` is
        // initialised), `len <= CAPACITY`, and `MaybeUninit<Move>` has the layout of `Move`.
        unsafe { std::slice::from_raw_parts(self.moves.as_ptr() as *const Move, self.len) }
    }
    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
    }
    /// Keeps only the moves for which `keep` is true.
    #[inline]
    pub fn retain(&mut self, mut keep: impl FnMut(Move) -> bool) {
        let mut j = 0;
        for i in 0..self.len {
            let m = self.as_slice()[i];
            if keep(m) {
                self.moves[j] = MaybeUninit::new(m);
                j += 1;
            }
        }
        self.len = j;
    }
    /// Exchanges the moves at `a` and `b` (both below `len`).
    #[inline]
    pub fn swap(&mut self, a: usize, b: usize) {
        assert!(a < self.len && b < self.len, "MoveList::swap out of range");
        self.moves.swap(a, b);
    }
    pub fn iter(&self) -> std::slice::Iter<'_, Move> {
        self.as_slice().iter()
    }
    pub fn contains(&self, m: Move) -> bool {
        self.as_slice().contains(&m)
    }
}

impl MoveSink for MoveList {
    #[inline]
    fn add(&mut self, m: Move) -> bool {
        self.push(m);
        false
    }
}

/// Counts moves without storing them (bulk counting at perft leaves).
#[derive(Default)]
pub struct MoveCounter(pub u64);

impl MoveSink for MoveCounter {
    #[inline]
    fn add(&mut self, _m: Move) -> bool {
        self.0 += 1;
        false
    }
    #[inline]
    fn add_targets(&mut self, _from: Square, targets: Bitboard) -> bool {
        self.0 += targets.count_ones() as u64;
        false
    }
    #[inline]
    fn add_pawn_moves(&mut self, targets: Bitboard, _delta: i8, shape: PawnMoves) -> bool {
        let n = targets.count_ones() as u64;
        self.0 += if shape == PawnMoves::Promotions {
            4 * n
        } else {
            n
        };
        false
    }
}

/// Stops at the first move: answers "is there any move?".
#[derive(Default)]
pub struct AnyMove(pub bool);

impl MoveSink for AnyMove {
    #[inline]
    fn add(&mut self, _m: Move) -> bool {
        self.0 = true;
        true
    }
    #[inline]
    fn add_targets(&mut self, _from: Square, targets: Bitboard) -> bool {
        if targets != 0 {
            self.0 = true;
        }
        self.0
    }
    #[inline]
    fn add_pawn_moves(&mut self, targets: Bitboard, _delta: i8, _shape: PawnMoves) -> bool {
        if targets != 0 {
            self.0 = true;
        }
        self.0
    }
}

/// The board-level facts the generator needs.
pub struct GenInput<'a> {
    pub board: &'a Board,
    pub us: Color,
    pub castling: CastlingRights,
    pub ep_square: Option<Square>,
}

/// Whether `us` capturing en passant from `from` onto `ep` leaves `us`'s king safe.
pub fn en_passant_is_safe(board: &Board, us: Color, from: Square, ep: Square) -> bool {
    let Some(ksq) = board.king(us) else {
        return true;
    };
    let t = tables();
    let them = us.other();
    let captured = Square::from_coords(ep.file(), from.rank());
    let occ = (board.occupied() ^ from.bb() ^ captured.bb()) | ep.bb();
    let their = board.color(them) & !captured.bb();
    let rq = (board.role(Role::Rook) | board.role(Role::Queen)) & their;
    let bq = (board.role(Role::Bishop) | board.role(Role::Queen)) & their;
    t.rook(ksq, occ) & rq == 0
        && t.bishop(ksq, occ) & bq == 0
        && t.knight(ksq) & board.role(Role::Knight) & their == 0
        && t.pawn(us, ksq) & board.role(Role::Pawn) & their == 0
        && t.king(ksq) & board.role(Role::King) & their == 0
}

/// Whether `us` has a legal en passant capture onto `ep` (the just-pushed pawn stands in front of it).
pub fn has_legal_en_passant(board: &Board, us: Color, ep: Square) -> bool {
    let capturers = tables().pawn(us.other(), ep) & board.pieces(us, Role::Pawn);
    squares(capturers).any(|from| en_passant_is_safe(board, us, from, ep))
}

macro_rules! emit {
    ($sink:expr, $m:expr) => {
        if $sink.add($m) {
            return true;
        }
    };
}

/// Generates the moves allowed by `rules` into `sink`. Returns true if the sink stopped generation.
pub fn generate<S: MoveSink>(input: &GenInput<'_>, rules: &GenRules, sink: &mut S) -> bool {
    let t = tables();
    let board = input.board;
    let us = input.us;
    let them = us.other();
    let occ = board.occupied();
    let own = board.color(us);
    let their = board.color(them);
    let movable = rules.movable & own;
    let enemy_king = board.pieces(them, Role::King);
    let not_own = if rules.capture_king {
        !own
    } else {
        !own & !enemy_king
    };

    let king = board.king(us);
    let safety = rules.king_safety && king.is_some();
    let (checkers, pinned) = match king {
        Some(ksq) if safety => checkers_and_pinned(board, us, ksq, occ, own, their),
        _ => (0, 0),
    };

    // King moves and castling.
    if let Some(ksq) = king {
        if movable & ksq.bb() != 0 {
            let targets = t.king(ksq) & not_own;
            if safety {
                let occ_wo_k = occ ^ ksq.bb();
                for to in squares(targets) {
                    if !board.is_attacked(to, them, occ_wo_k) {
                        emit!(sink, Move::normal(ksq, to));
                    }
                }
            } else if sink.add_targets(ksq, targets) {
                return true;
            }
            if checkers == 0 && gen_castling(input, rules, ksq, movable, safety, sink) {
                return true;
            }
        }
    }
    if more_than_one(checkers) {
        return false;
    }
    let target = if checkers != 0 {
        let ksq = king.expect("checkers imply a king");
        t.between(ksq, lsb(checkers)) | checkers
    } else {
        !0
    };
    let ksq = king.unwrap_or(Square(0));
    let restrict = |from: Square| -> Bitboard {
        if pinned & from.bb() != 0 {
            t.line(ksq, from)
        } else {
            !0
        }
    };

    // Knights (a pinned knight can never move).
    for from in squares(board.role(Role::Knight) & movable & !pinned) {
        if sink.add_targets(from, t.knight(from) & not_own & target) {
            return true;
        }
    }
    let diag = (board.role(Role::Bishop) | board.role(Role::Queen)) & movable;
    for from in squares(diag) {
        let m = t.bishop(from, occ) & not_own & target & restrict(from);
        if sink.add_targets(from, m) {
            return true;
        }
    }
    let straight = (board.role(Role::Rook) | board.role(Role::Queen)) & movable;
    for from in squares(straight) {
        let m = t.rook(from, occ) & not_own & target & restrict(from);
        if sink.add_targets(from, m) {
            return true;
        }
    }

    // Pawns: the unpinned ones all at once by shifts, pinned ones one by one along their pin line.
    let pawns = board.role(Role::Pawn) & movable;
    if pawns != 0 {
        let capturable = their & not_own;
        let free = pawns & !pinned;
        if free != 0 && gen_pawn_set(us, free, occ, capturable, target, sink) {
            return true;
        }
        for from in squares(pawns & pinned) {
            let allowed = target & t.line(ksq, from);
            if gen_pawn_set(us, from.bb(), occ, capturable, allowed, sink) {
                return true;
            }
        }
        if rules.en_passant {
            if let Some(ep) = input.ep_square {
                for from in squares(t.pawn(them, ep) & pawns) {
                    if !safety || en_passant_is_safe(board, us, from, ep) {
                        emit!(sink, Move::new(from, ep, MoveKind::EnPassant));
                    }
                }
            }
        }
    }
    false
}

/// The enemy pieces giving check to `us`'s king on `ksq`, and `us`'s pieces pinned to it.
#[inline(always)]
fn checkers_and_pinned(
    board: &Board,
    us: Color,
    ksq: Square,
    occ: Bitboard,
    own: Bitboard,
    their: Bitboard,
) -> (Bitboard, Bitboard) {
    let t = tables();
    let rq = (board.role(Role::Rook) | board.role(Role::Queen)) & their;
    let bq = (board.role(Role::Bishop) | board.role(Role::Queen)) & their;
    let mut checkers = (t.knight(ksq) & board.role(Role::Knight) & their)
        | (t.pawn(us, ksq) & board.role(Role::Pawn) & their);
    // Enemy sliders seen from the king through our own pieces: each is a checker (nothing between) or
    // pins the single own piece between.
    let snipers = (t.rook(ksq, their) & rq) | (t.bishop(ksq, their) & bq);
    let mut pinned = 0;
    for s in squares(snipers) {
        let b = t.between(ksq, s) & occ;
        if b == 0 {
            checkers |= s.bb();
        } else if !more_than_one(b) {
            pinned |= b;
        }
    }
    (checkers, pinned & own)
}

/// Pushes and captures (not en passant) of the pawns `pawns` of `us`, onto squares of `allowed` only.
#[inline]
fn gen_pawn_set<S: MoveSink>(
    us: Color,
    pawns: Bitboard,
    occ: Bitboard,
    capturable: Bitboard,
    allowed: Bitboard,
    sink: &mut S,
) -> bool {
    let empty = !occ;
    // Shifts towards the opponent's side: `up` moves one rank forward, `left`/`right` capture towards
    // the a-file / h-file; the deltas are the square differences `to - from`.
    let (promo_rank, third_rank) = match us {
        Color::White => (RANK_8, RANK_3),
        Color::Black => (RANK_1, RANK_6),
    };
    #[inline(always)]
    fn fwd(us: Color, bb: Bitboard, n: u32) -> Bitboard {
        match us {
            Color::White => bb << n,
            Color::Black => bb >> n,
        }
    }
    let (d_up, d_left, d_right): (i8, i8, i8) = match us {
        Color::White => (8, 7, 9),
        Color::Black => (-8, -9, -7),
    };
    let (s_left, s_right) = match us {
        Color::White => (7, 9),
        Color::Black => (9, 7),
    };
    let one = fwd(us, pawns, 8) & empty;
    let two = fwd(us, one & third_rank, 8) & empty & allowed;
    let one = one & allowed;
    let left = fwd(us, pawns & !FILE_A, s_left) & capturable & allowed;
    let right = fwd(us, pawns & !FILE_H, s_right) & capturable & allowed;
    if (one | left | right) & promo_rank != 0 {
        for (bb, d) in [(one, d_up), (left, d_left), (right, d_right)] {
            if sink.add_pawn_moves(bb & promo_rank, d, PawnMoves::Promotions) {
                return true;
            }
        }
    }
    for (bb, d) in [(one, d_up), (left, d_left), (right, d_right)] {
        if sink.add_pawn_moves(bb & !promo_rank, d, PawnMoves::Plain) {
            return true;
        }
    }
    sink.add_pawn_moves(two, 2 * d_up, PawnMoves::DoublePush)
}

fn gen_castling<S: MoveSink>(
    input: &GenInput<'_>,
    rules: &GenRules,
    ksq: Square,
    movable: Bitboard,
    safety: bool,
    sink: &mut S,
) -> bool {
    let us = input.us;
    let board = input.board;
    let back = match us {
        Color::White => 0u8,
        Color::Black => 56u8,
    };
    if ksq.0 != back + 4 {
        return false;
    }
    let occ = board.occupied();
    let rooks = board.pieces(us, Role::Rook) & movable;
    let them = us.other();
    let _ = rules;
    // (right, rook square, squares that must be empty, squares the king crosses, king target)
    let sides = [
        (
            CastlingRights::king_side(us),
            back + 7,
            [back + 5, back + 6, 255],
            [back + 5, back + 6],
            back + 6,
        ),
        (
            CastlingRights::queen_side(us),
            back,
            [back + 1, back + 2, back + 3],
            [back + 3, back + 2],
            back + 2,
        ),
    ];
    for (right, rook, empty, crossed, to) in sides {
        if !input.castling.has(right) || rooks & Square(rook).bb() == 0 {
            continue;
        }
        if empty.iter().any(|&s| s != 255 && occ & Square(s).bb() != 0) {
            continue;
        }
        if safety
            && crossed
                .iter()
                .any(|&s| board.is_attacked(Square(s), them, occ))
        {
            continue;
        }
        emit!(sink, Move::new(ksq, Square(to), MoveKind::Castle));
    }
    false
}
