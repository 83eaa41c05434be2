//! The one move generator: chess moves for the side to move, either legal (own king safe, by pins and
//! check masks) or pseudo-legal (Twinmove, where kings may be left attacked and captured), restricted to
//! the pieces a variant's turn state allows to move.

use crate::bitboard::{
    lsb, more_than_one, squares, tables, Bitboard, RANK_1, RANK_2, RANK_7, RANK_8,
};
use crate::board::Board;
use crate::types::{CastlingRights, Color, Move, MoveKind, Role, Square};

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
}

/// A fixed-capacity move list (Double Move Chess can list each move twice).
pub struct MoveList {
    moves: [Move; 512],
    len: usize,
}

impl Default for MoveList {
    fn default() -> Self {
        MoveList::new()
    }
}

impl MoveList {
    #[inline]
    pub fn new() -> MoveList {
        MoveList {
            moves: [Move::normal(Square(0), Square(0)); 512],
            len: 0,
        }
    }
    #[inline]
    pub fn push(&mut self, m: Move) {
        self.moves[self.len] = m;
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
        &self.moves[..self.len]
    }
    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
    }
    /// Keeps only the moves for which `keep` is true.
    pub fn retain(&mut self, mut keep: impl FnMut(Move) -> bool) {
        let mut j = 0;
        for i in 0..self.len {
            let m = self.moves[i];
            if keep(m) {
                self.moves[j] = m;
                j += 1;
            }
        }
        self.len = j;
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

#[inline]
fn push_pawn_move<S: MoveSink>(
    sink: &mut S,
    from: Square,
    to: Square,
    promo_rank: Bitboard,
) -> bool {
    if to.bb() & promo_rank != 0 {
        for r in [Role::Queen, Role::Rook, Role::Bishop, Role::Knight] {
            if sink.add(Move::new(from, to, MoveKind::Promotion(r))) {
                return true;
            }
        }
        false
    } else {
        sink.add(Move::normal(from, to))
    }
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
        Some(ksq) if safety => (
            board.attackers_to(ksq, occ) & their,
            board.blockers_of_king(us),
        ),
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

    // Pawns.
    let pawns = board.role(Role::Pawn) & movable;
    if pawns != 0 {
        let (promo_rank, start_rank, up): (Bitboard, Bitboard, i8) = match us {
            Color::White => (RANK_8, RANK_2, 8),
            Color::Black => (RANK_1, RANK_7, -8),
        };
        let empty = !occ;
        let capturable = their & not_own;
        for from in squares(pawns) {
            let allowed = target & restrict(from);
            let one = Square((from.0 as i8 + up) as u8);
            if one.bb() & empty != 0 {
                if one.bb() & allowed != 0 && push_pawn_move(sink, from, one, promo_rank) {
                    return true;
                }
                if from.bb() & start_rank != 0 {
                    let two = Square((one.0 as i8 + up) as u8);
                    if two.bb() & empty & allowed != 0 {
                        emit!(sink, Move::new(from, two, MoveKind::DoublePush));
                    }
                }
            }
            for to in squares(t.pawn(us, from) & capturable & allowed) {
                if push_pawn_move(sink, from, to, promo_rank) {
                    return true;
                }
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
