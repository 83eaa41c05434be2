//! The variants. Each one is a small turn state machine on top of the shared move generator: it says
//! which moves the generator may produce now ([`GenRules`]) and where a move leads ([`Transition`]).
//! A first move is kept only if the turn it begins can be completed.

mod chess;
mod completion;
mod double_move;
mod twinmove;
mod two_move;

use crate::bitboard::Bitboard;
use crate::movegen::{generate, AnyMove, GenRules, MoveList, MoveSink, PawnMoves};
use crate::position::{MoveEffects, Phase, Position, TurnState};
use crate::types::Move;
use crate::types::Square;
pub(crate) use completion::count_legal;
use std::fmt;
use std::str::FromStr;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    Chess,
    TwoMove,
    DoubleMove,
    Twinmove,
}

/// Where a move leads: whether the turn passes to the opponent, and the turn state afterwards.
#[derive(Clone, Copy, Debug)]
pub struct Transition {
    pub passes: bool,
    pub state: TurnState,
}

impl Variant {
    pub const ALL: [Variant; 4] = [
        Variant::Chess,
        Variant::TwoMove,
        Variant::DoubleMove,
        Variant::Twinmove,
    ];

    /// The name used on the command line, in PGN `[Variant]` tags and in the UCI dialect.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Chess => "chess",
            Variant::TwoMove => "two-move",
            Variant::DoubleMove => "double-move",
            Variant::Twinmove => "twinmove",
        }
    }

    /// The human name, as in the rule texts.
    pub fn title(self) -> &'static str {
        match self {
            Variant::Chess => "Standard",
            Variant::TwoMove => "Two Move Chess",
            Variant::DoubleMove => "Double Move Chess",
            Variant::Twinmove => "Twinmove Chess (uncompelled)",
        }
    }

    pub(crate) fn initial_state(self) -> TurnState {
        match self {
            Variant::Chess | Variant::Twinmove => TurnState::START,
            Variant::TwoMove => TurnState {
                phase: Phase::Response,
                ..TurnState::START
            },
            Variant::DoubleMove => TurnState {
                double_move: [true, true],
                ..TurnState::START
            },
        }
    }

    /// Whether the fifty-move counter counts turns (else moves).
    pub fn clock_counts_turns(self) -> bool {
        matches!(self, Variant::TwoMove | Variant::Twinmove)
    }

    pub fn has_en_passant(self) -> bool {
        self != Variant::Twinmove
    }

    /// Whether a king can be captured (and the game is won that way).
    pub fn king_capture(self) -> bool {
        self == Variant::Twinmove
    }

    /// Whether repetitions count positions half way through a turn too. Applied only by
    /// [`Position::counts_for_repetition`], the repetition rule's one home.
    pub(crate) fn counts_half_way_positions(self) -> bool {
        self == Variant::TwoMove
    }

    /// The standard starting position in extended FEN.
    pub fn start_fen(self) -> String {
        crate::fen::to_fen(&Position::start(self))
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown variant name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown variant '{0}' (expected chess, two-move, double-move or twinmove)")]
pub struct UnknownVariant(pub String);

impl FromStr for Variant {
    type Err = UnknownVariant;
    fn from_str(s: &str) -> Result<Variant, UnknownVariant> {
        let norm: String = s
            .trim()
            .to_ascii_lowercase()
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .collect();
        match norm.as_str() {
            "chess" | "standard" | "orthodox" => Ok(Variant::Chess),
            "twomove" | "twomovechess" | "2movechess" | "2move" => Ok(Variant::TwoMove),
            "doublemove" | "doublemovechess" => Ok(Variant::DoubleMove),
            "twinmove" | "twinmovechess" | "twinmoveuncompelled" | "twinmovechessuncompelled" => {
                Ok(Variant::Twinmove)
            }
            _ => Err(UnknownVariant(s.to_string())),
        }
    }
}

/// What the generator may produce in `pos` for the variant's current phase.
#[inline]
pub(crate) fn gen_rules(pos: &Position) -> GenRules {
    match pos.variant {
        Variant::Chess => GenRules::LEGAL,
        Variant::TwoMove => two_move::gen_rules(pos),
        Variant::DoubleMove => double_move::gen_rules(pos),
        Variant::Twinmove => twinmove::gen_rules(pos),
    }
}

pub(crate) fn transition(pos: &Position, mv: Move, fx: &MoveEffects) -> Transition {
    match pos.variant {
        Variant::Chess => chess::transition(),
        Variant::TwoMove => two_move::transition(pos, fx),
        Variant::DoubleMove => double_move::transition(pos, mv),
        Variant::Twinmove => twinmove::transition(pos, fx),
    }
}

/// Whether `mv` hands the turn over, where the turn rules tell without playing it (see
/// [`Position::passes_known`]).
#[inline]
pub(crate) fn passes_without_playing(pos: &Position, mv: Move) -> Option<bool> {
    match pos.variant {
        Variant::Chess => Some(true),
        Variant::DoubleMove => Some(double_move::transition(pos, mv).passes),
        Variant::TwoMove | Variant::Twinmove => None,
    }
}

/// Whether the first move of the turn in progress reset the fifty-move counter (turn-counting variants).
pub(crate) fn first_half_reset(pos: &Position) -> bool {
    match pos.variant {
        Variant::TwoMove => two_move::first_half_reset(pos),
        Variant::Twinmove => pos.state.phase == Phase::Second,
        Variant::Chess | Variant::DoubleMove => false,
    }
}

/// Whether the side to move has any move the generator allows (no completion test: used in phases whose
/// moves always complete the turn, and for the completion test itself).
pub(crate) fn any_generated_move(pos: &Position) -> bool {
    let mut any = AnyMove::default();
    generate(&pos.gen_input(), &gen_rules(pos), &mut any);
    any.0
}

/// Whether the turn begun by the move that led to `after` can be completed.
#[inline]
pub(crate) fn completable(after: &Position) -> bool {
    after.state.phase != Phase::Second
        || after.king_captured().is_some()
        || any_generated_move(after)
}

pub(crate) fn legal_moves(pos: &Position, out: &mut MoveList) {
    legal_moves_onto(pos, !0, out);
}

/// The legal moves (as [`legal_moves`] lists them) that land on `targets`, plus every promotion and
/// en passant capture. With `targets` = all squares these are all legal moves.
pub(crate) fn legal_moves_onto(pos: &Position, targets: Bitboard, out: &mut MoveList) {
    if pos.variant.king_capture() && pos.king_captured().is_some() {
        return;
    }
    let rules = gen_rules(pos);
    if targets == !0 {
        generate(&pos.gen_input(), &rules, out);
    } else {
        generate(&pos.gen_input(), &rules, &mut OntoTargets { out, targets });
    }
    if pos.state.phase == Phase::Second {
        return;
    }
    let double = pos.variant == Variant::DoubleMove;
    if double {
        double_move::add_double_starts(pos, out);
    }
    let tested = completion::tested_squares(pos);
    if tested != 0 {
        out.retain(|m| {
            m.from().bb() & tested == 0
                || (double && !m.starts_double())
                || completion::first_move_completable(pos, m)
        });
    }
}

/// A sink keeping the moves onto `targets`, and every promotion and en passant capture.
struct OntoTargets<'a> {
    out: &'a mut MoveList,
    targets: Bitboard,
}

impl MoveSink for OntoTargets<'_> {
    #[inline]
    fn add(&mut self, m: Move) -> bool {
        if self.targets & m.to().bb() != 0 || m.promotion().is_some() || m.is_en_passant() {
            self.out.push(m);
        }
        false
    }
    #[inline]
    fn add_targets(&mut self, from: Square, targets: Bitboard) -> bool {
        self.out.add_targets(from, targets & self.targets)
    }
    #[inline]
    fn add_pawn_moves(&mut self, targets: Bitboard, delta: i8, shape: PawnMoves) -> bool {
        let keep = match shape {
            PawnMoves::Promotions => targets,
            PawnMoves::Plain | PawnMoves::DoublePush => targets & self.targets,
        };
        self.out.add_pawn_moves(keep, delta, shape)
    }
}
