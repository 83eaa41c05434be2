//! The one position type for every variant: placement, side to move, castling, en passant, clocks and
//! the variant's turn state, with an incremental Zobrist hash that covers all of them. Copy-make.

use crate::bitboard::{squares, Bitboard};
use crate::board::Board;
use crate::movegen::{has_legal_en_passant, GenInput, MoveList};
use crate::types::{CastlingRights, Color, Move, MoveKind, Piece, Role, Square};
use crate::variants::{self, Variant};

/// Where a player stands within a turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// The first move of a turn (the only phase of orthodox chess).
    Start,
    /// Two Move Chess: a response move turn (exactly one move).
    Response,
    /// The second move of a turn by the same player.
    Second,
}

/// The variant-specific part of the state: what the side to move may do now.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TurnState {
    pub phase: Phase,
    /// Two Move Chess, second move: squares of the pieces that moved on the first move.
    pub locked: Bitboard,
    /// Double Move Chess: whether each side (white, black) still has its Double Move.
    pub double_move: [bool; 2],
}

impl TurnState {
    pub const START: TurnState = TurnState {
        phase: Phase::Start,
        locked: 0,
        double_move: [false, false],
    };
}

/// What one chess move did on the board, as the turn rules need to know it.
#[derive(Clone, Copy, Debug)]
pub struct MoveEffects {
    pub role: Role,
    pub captured: Option<Role>,
    pub promotion: Option<Role>,
    /// The squares the moving piece(s) stand on afterwards (king and rook for castling).
    pub landed: Bitboard,
    /// The en passant square the opponent could legally use if the turn passed now.
    pub ep_for_opponent: Option<Square>,
    /// Whether the move gives check to the opponent's king. Computed only where the turn rules use it
    /// (the first move of a Two Move Chess normal turn); false elsewhere.
    pub gives_check: bool,
}

impl MoveEffects {
    /// Captures and pawn moves reset the fifty-move (turn) counter.
    pub fn resets_clock(&self) -> bool {
        self.captured.is_some() || self.role == Role::Pawn
    }
}

mod zobrist {
    use crate::rng::SplitMix64;

    /// `N` keys: the first `N` outputs of the workspace generator from `seed`, computed at compile time.
    const fn keys<const N: usize>(seed: u64) -> [u64; N] {
        let mut out = [0u64; N];
        let mut rng = SplitMix64::new(seed);
        let mut i = 0;
        while i < N {
            out[i] = rng.next_u64();
            i += 1;
        }
        out
    }
    pub static PIECE: [u64; 768] = keys::<768>(1);
    pub static CASTLING: [u64; 16] = keys::<16>(2);
    pub static EP_FILE: [u64; 8] = keys::<8>(3);
    pub static LOCKED: [u64; 64] = keys::<64>(4);
    pub static MISC: [u64; 8] = keys::<8>(5);
    pub const BLACK_TO_MOVE: usize = 0;
    pub const PHASE_RESPONSE: usize = 1;
    pub const PHASE_SECOND: usize = 2;
    pub const DOUBLE_WHITE: usize = 3;
    pub const DOUBLE_BLACK: usize = 4;
}

#[inline]
fn piece_key(p: Piece, sq: Square) -> u64 {
    zobrist::PIECE[(p.color as usize * 6 + p.role as usize) * 64 + sq.index()]
}

fn state_key(s: &TurnState) -> u64 {
    let mut h = match s.phase {
        Phase::Start => 0,
        Phase::Response => zobrist::MISC[zobrist::PHASE_RESPONSE],
        Phase::Second => zobrist::MISC[zobrist::PHASE_SECOND],
    };
    for sq in squares(s.locked) {
        h ^= zobrist::LOCKED[sq.index()];
    }
    if s.double_move[0] {
        h ^= zobrist::MISC[zobrist::DOUBLE_WHITE];
    }
    if s.double_move[1] {
        h ^= zobrist::MISC[zobrist::DOUBLE_BLACK];
    }
    h
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    pub(crate) board: Board,
    pub(crate) turn: Color,
    pub(crate) castling: CastlingRights,
    /// Set only when the side to move has a legal en passant capture on it.
    pub(crate) ep_square: Option<Square>,
    /// Counter for the fifty-move rule, in the variant's unit (moves or turns).
    pub(crate) halfmove_clock: u32,
    pub(crate) fullmove: u32,
    pub(crate) state: TurnState,
    pub(crate) variant: Variant,
    pub(crate) hash: u64,
}

/// Castling rights kept after a move touches a square (index = square).
const CASTLE_MASK: [u8; 64] = {
    let mut m = [15u8; 64];
    m[0] = 15 & !CastlingRights::WHITE_QUEEN;
    m[7] = 15 & !CastlingRights::WHITE_KING;
    m[4] = 15 & !(CastlingRights::WHITE_KING | CastlingRights::WHITE_QUEEN);
    m[56] = 15 & !CastlingRights::BLACK_QUEEN;
    m[63] = 15 & !CastlingRights::BLACK_KING;
    m[60] = 15 & !(CastlingRights::BLACK_KING | CastlingRights::BLACK_QUEEN);
    m
};

impl Position {
    /// The variant's standard starting position.
    pub fn start(variant: Variant) -> Position {
        let mut p = Position {
            board: Board::standard(),
            turn: Color::White,
            castling: CastlingRights::ALL,
            ep_square: None,
            halfmove_clock: 0,
            fullmove: 1,
            state: variant.initial_state(),
            variant,
            hash: 0,
        };
        p.hash = p.compute_hash();
        p
    }

    /// Builds a position from parts; the caller (FEN parsing) validates them.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn from_parts(
        variant: Variant,
        board: Board,
        turn: Color,
        castling: CastlingRights,
        ep_square: Option<Square>,
        halfmove_clock: u32,
        fullmove: u32,
        state: TurnState,
    ) -> Position {
        let mut p = Position {
            board,
            turn,
            castling,
            ep_square,
            halfmove_clock,
            fullmove,
            state,
            variant,
            hash: 0,
        };
        p.hash = p.compute_hash();
        p
    }

    pub fn variant(&self) -> Variant {
        self.variant
    }
    pub fn board(&self) -> &Board {
        &self.board
    }
    /// The player to move (the same player on both moves of a turn).
    pub fn turn(&self) -> Color {
        self.turn
    }
    pub fn castling(&self) -> CastlingRights {
        self.castling
    }
    pub fn ep_square(&self) -> Option<Square> {
        self.ep_square
    }
    pub fn halfmove_clock(&self) -> u32 {
        self.halfmove_clock
    }
    pub fn fullmove(&self) -> u32 {
        self.fullmove
    }
    pub fn state(&self) -> TurnState {
        self.state
    }
    pub fn phase(&self) -> Phase {
        self.state.phase
    }
    /// Whether the side to move stands at the beginning of a turn (not half way through one).
    pub fn at_turn_start(&self) -> bool {
        self.state.phase != Phase::Second
    }
    pub fn hash(&self) -> u64 {
        self.hash
    }
    /// Whether the side to move has its king attacked.
    pub fn in_check(&self) -> bool {
        self.board.king_attacked(self.turn)
    }

    pub(crate) fn gen_input(&self) -> GenInput<'_> {
        GenInput {
            board: &self.board,
            us: self.turn,
            castling: self.castling,
            ep_square: self.ep_square,
        }
    }

    /// The Zobrist hash computed from scratch (the incremental one must always equal it).
    pub fn compute_hash(&self) -> u64 {
        let mut h = 0;
        for sq in squares(self.board.occupied()) {
            h ^= piece_key(self.board.piece_at(sq).expect("occupied"), sq);
        }
        if self.turn == Color::Black {
            h ^= zobrist::MISC[zobrist::BLACK_TO_MOVE];
        }
        h ^= zobrist::CASTLING[self.castling.0 as usize];
        if let Some(ep) = self.ep_square {
            h ^= zobrist::EP_FILE[ep.file() as usize];
        }
        h ^ state_key(&self.state)
    }

    /// Every legal move now: for Two Move, Double Move and Twinmove Chess only moves that can begin
    /// (or complete) a legal turn. Double Move Chess lists a move twice when it may also begin a Double Move.
    #[inline]
    pub fn legal_moves(&self) -> MoveList {
        let mut list = MoveList::new();
        variants::legal_moves(self, &mut list);
        list
    }

    /// The legal moves, written into `out` (cleared first): no list is returned by value in a search.
    #[inline]
    pub fn legal_moves_into(&self, out: &mut MoveList) {
        out.clear();
        variants::legal_moves(self, out);
    }

    /// The legal moves that capture (en passant included) or promote, into `out` (cleared first): the
    /// moves a quiescence search looks at, listed exactly as [`Position::legal_moves`] lists them.
    #[inline]
    pub fn tactical_moves_into(&self, out: &mut MoveList) {
        out.clear();
        let them = self.board.color(self.turn.other());
        variants::legal_moves_onto(self, them, out);
    }

    /// Whether `mv` is legal now.
    pub fn is_legal(&self, mv: Move) -> bool {
        self.legal_moves().contains(mv)
    }

    /// Whether the game is over by a missing king (Twinmove king capture).
    pub fn king_captured(&self) -> Option<Color> {
        Color::ALL
            .into_iter()
            .find(|&c| self.board.pieces(c, Role::King) == 0)
    }

    /// Plays one chess move, trusting that it is legal here.
    pub fn play_unchecked(&mut self, mv: Move) {
        let us = self.turn;
        let before = self.state;
        let first_half_reset = variants::first_half_reset(self);
        if let Some(ep) = self.ep_square.take() {
            self.hash ^= zobrist::EP_FILE[ep.file() as usize];
        }
        let fx = self.apply_board(mv);
        let next = variants::transition(self, mv, &fx);
        if next.state != before {
            self.hash ^= state_key(&before) ^ state_key(&next.state);
            self.state = next.state;
        }

        if self.variant.clock_counts_turns() {
            if next.passes {
                self.halfmove_clock = if fx.resets_clock() || first_half_reset {
                    0
                } else {
                    self.halfmove_clock + 1
                };
            }
        } else if fx.resets_clock() {
            self.halfmove_clock = 0;
        } else {
            self.halfmove_clock += 1;
        }

        if next.passes {
            self.turn = us.other();
            self.hash ^= zobrist::MISC[zobrist::BLACK_TO_MOVE];
            if us == Color::Black {
                self.fullmove += 1;
            }
            if let Some(ep) = fx.ep_for_opponent {
                self.ep_square = Some(ep);
                self.hash ^= zobrist::EP_FILE[ep.file() as usize];
            }
        }
    }

    /// Plays `mv` if it is legal now.
    pub fn play(&mut self, mv: Move) -> Result<(), IllegalMove> {
        if self.is_legal(mv) {
            self.play_unchecked(mv);
            Ok(())
        } else {
            Err(IllegalMove(mv))
        }
    }

    /// Makes `self` a copy of `other`, field by field so that the copy is inlined (a whole-struct
    /// copy of this size becomes a call to `memcpy`, measurably slower in perft).
    #[inline(always)]
    pub(crate) fn copy_from(&mut self, other: &Position) {
        self.board = other.board;
        self.turn = other.turn;
        self.castling = other.castling;
        self.ep_square = other.ep_square;
        self.halfmove_clock = other.halfmove_clock;
        self.fullmove = other.fullmove;
        self.state = other.state;
        self.variant = other.variant;
        self.hash = other.hash;
    }

    /// The position after `mv` (copy-make).
    #[inline]
    pub fn after(&self, mv: Move) -> Position {
        let mut p = *self;
        p.play_unchecked(mv);
        p
    }

    fn move_piece(&mut self, from: Square, to: Square) -> Piece {
        let p = self.board.remove(from).expect("a piece on the from square");
        self.board.put(to, p);
        self.hash ^= piece_key(p, from) ^ piece_key(p, to);
        p
    }

    /// The orthodox mechanics of one move on the board, castling rights included.
    fn apply_board(&mut self, mv: Move) -> MoveEffects {
        let us = self.turn;
        let from = mv.from();
        let to = mv.to();
        let mut captured = None;
        let mut landed = to.bb();
        let mut ep_for_opponent = None;
        let role;
        match mv.kind() {
            MoveKind::EnPassant => {
                let cap_sq = Square::from_coords(to.file(), from.rank());
                let p = self.board.remove(cap_sq).expect("en passant victim");
                self.hash ^= piece_key(p, cap_sq);
                captured = Some(Role::Pawn);
                role = self.move_piece(from, to).role;
            }
            MoveKind::Castle => {
                let (rook_from, rook_to) = if to.file() == 6 {
                    (Square(from.0 + 3), Square(from.0 + 1))
                } else {
                    (Square(from.0 - 4), Square(from.0 - 1))
                };
                role = self.move_piece(from, to).role;
                self.move_piece(rook_from, rook_to);
                landed |= rook_to.bb();
            }
            kind => {
                if let Some(p) = self.board.remove(to) {
                    self.hash ^= piece_key(p, to);
                    captured = Some(p.role);
                }
                let p = self.move_piece(from, to);
                role = p.role;
                if let MoveKind::Promotion(r) = kind {
                    self.board.remove(to);
                    let np = Piece::new(us, r);
                    self.board.put(to, np);
                    self.hash ^= piece_key(p, to) ^ piece_key(np, to);
                }
                if kind == MoveKind::DoublePush && self.variant.has_en_passant() {
                    let ep = Square((from.0 + to.0) / 2);
                    if has_legal_en_passant(&self.board, us.other(), ep) {
                        ep_for_opponent = Some(ep);
                    }
                }
            }
        }
        let new_rights =
            CastlingRights(self.castling.0 & CASTLE_MASK[from.index()] & CASTLE_MASK[to.index()]);
        if new_rights != self.castling {
            self.hash ^= zobrist::CASTLING[self.castling.0 as usize]
                ^ zobrist::CASTLING[new_rights.0 as usize];
            self.castling = new_rights;
        }
        MoveEffects {
            role,
            captured,
            promotion: mv.promotion(),
            landed,
            ep_for_opponent,
            gives_check: self.variant == Variant::TwoMove
                && self.state.phase == Phase::Start
                && self.board.king_attacked(us.other()),
        }
    }

    /// The key under which positions are compared for repetition: placement, side to move, castling,
    /// legal en passant square and the turn state (phase, locked pieces, Double Move abilities).
    pub fn repetition_key(&self) -> u64 {
        self.hash
    }

    /// Whether this position counts for repetition (threefold, fivefold, and the engine's repetition
    /// draws): the one place the rule lives. Two Move Chess counts every position, half-way ones
    /// included; orthodox chess, Double Move and Twinmove count only positions at the start of a turn
    /// (docs/rules.md, after shared/RULINGS.md).
    pub fn counts_for_repetition(&self) -> bool {
        self.at_turn_start() || self.variant.counts_half_way_positions()
    }
}

/// A move that is not legal in the position it was tried in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IllegalMove(pub Move);

impl std::fmt::Display for IllegalMove {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "illegal move {}", self.0)
    }
}
impl std::error::Error for IllegalMove {}
