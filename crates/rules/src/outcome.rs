//! How a game ends: the position-level results (checkmate, stalemate, king capture, dead position,
//! 75-move/turn rule) and the names of results that need the game's history (repetition) or a claim.

use crate::bitboard::DARK_SQUARES;
use crate::position::Position;
use crate::types::{Color, Role};
use crate::variants::Variant;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WinReason {
    /// In check with no legal (complete) turn.
    Checkmate,
    /// Twinmove: the loser's king was captured.
    KingCaptured,
    Resignation,
    Timeout,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DrawReason {
    Stalemate,
    DeadPosition,
    FivefoldRepetition,
    /// 75 moves (Double Move / orthodox) or 150 turns (Two Move, Twinmove) without capture or pawn move.
    SeventyFiveMoveRule,
    ThreefoldRepetition,
    FiftyMoveRule,
    Agreement,
    /// The flag fell but the opponent could not win.
    TimeoutVsInsufficientMaterial,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    Win { winner: Color, reason: WinReason },
    Draw(DrawReason),
}

impl Outcome {
    /// PGN result text.
    pub fn result(&self) -> &'static str {
        match self {
            Outcome::Win {
                winner: Color::White,
                ..
            } => "1-0",
            Outcome::Win {
                winner: Color::Black,
                ..
            } => "0-1",
            Outcome::Draw(_) => "1/2-1/2",
        }
    }
    pub fn winner(&self) -> Option<Color> {
        match self {
            Outcome::Win { winner, .. } => Some(*winner),
            Outcome::Draw(_) => None,
        }
    }
}

impl WinReason {
    pub fn describe(self) -> &'static str {
        match self {
            WinReason::Checkmate => "checkmate",
            WinReason::KingCaptured => "capture of the king",
            WinReason::Resignation => "resignation",
            WinReason::Timeout => "time forfeit",
        }
    }
}

impl DrawReason {
    pub fn describe(self, variant: Variant) -> &'static str {
        match self {
            DrawReason::Stalemate => "stalemate",
            DrawReason::DeadPosition => "dead position (insufficient material)",
            DrawReason::FivefoldRepetition => "fivefold repetition",
            DrawReason::SeventyFiveMoveRule if variant.clock_counts_turns() => "75-turn rule",
            DrawReason::SeventyFiveMoveRule => "75-move rule",
            DrawReason::ThreefoldRepetition => "threefold repetition (claimed)",
            DrawReason::FiftyMoveRule if variant.clock_counts_turns() => {
                "fifty-turn rule (claimed)"
            }
            DrawReason::FiftyMoveRule => "fifty-move rule (claimed)",
            DrawReason::Agreement => "agreement",
            DrawReason::TimeoutVsInsufficientMaterial => {
                "time forfeit, but the opponent cannot win"
            }
        }
    }
}

impl Outcome {
    pub fn describe(&self, variant: Variant) -> String {
        match self {
            Outcome::Win { winner, reason } => {
                format!(
                    "{} wins by {} ({})",
                    winner.name(),
                    reason.describe(),
                    self.result()
                )
            }
            Outcome::Draw(r) => format!("draw by {} (1/2-1/2)", r.describe(variant)),
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.result())
    }
}

/// The counter value at which the fifty rule may be claimed, and the one that ends the game.
pub const FIFTY_CLAIM: u32 = 100;
pub const SEVENTY_FIVE: u32 = 150;

/// Whether `color` has enough material to win at all, in the variant's sense.
pub fn can_win(pos: &Position, color: Color) -> bool {
    let b = pos.board();
    let own = b.color(color);
    let their = b.color(color.other()) & !b.role(Role::King);
    if own & (b.role(Role::Pawn) | b.role(Role::Rook) | b.role(Role::Queen)) != 0 {
        return true;
    }
    let minors = own & (b.role(Role::Knight) | b.role(Role::Bishop));
    if minors == 0 {
        return false;
    }
    if pos.variant() == Variant::TwoMove {
        // A lone king at the start of a normal turn cannot complete one: a single minor piece can win.
        return true;
    }
    let only_bishops_one_colour = minors & b.role(Role::Knight) == 0 && same_colour(minors);
    if !only_bishops_one_colour && minors.count_ones() >= 2 {
        return true;
    }
    if only_bishops_one_colour {
        // Bishops on one colour need an opposing piece that can stand on the other colour.
        let other_colour = if minors & DARK_SQUARES != 0 {
            !DARK_SQUARES
        } else {
            DARK_SQUARES
        };
        return their & !(b.role(Role::Bishop) & !other_colour) != 0;
    }
    // A lone knight mates only with an opposing piece blocking its king.
    their != 0
}

fn same_colour(bb: u64) -> bool {
    bb & DARK_SQUARES == 0 || bb & !DARK_SQUARES == 0
}

/// A dead position: neither side can ever win.
pub fn is_dead_position(pos: &Position) -> bool {
    !can_win(pos, Color::White) && !can_win(pos, Color::Black)
}

/// The result decided by the position alone (no history), judged at a turn boundary.
pub fn position_outcome(pos: &Position) -> Option<Outcome> {
    if pos.variant().king_capture() {
        if let Some(loser) = pos.king_captured() {
            return Some(Outcome::Win {
                winner: loser.other(),
                reason: WinReason::KingCaptured,
            });
        }
    }
    if pos.legal_moves().is_empty() {
        let mated = pos.in_check() && !pos.variant().king_capture();
        return Some(if mated {
            Outcome::Win {
                winner: pos.turn().other(),
                reason: WinReason::Checkmate,
            }
        } else {
            Outcome::Draw(DrawReason::Stalemate)
        });
    }
    if !pos.at_turn_start() {
        return None;
    }
    if is_dead_position(pos) {
        return Some(Outcome::Draw(DrawReason::DeadPosition));
    }
    if pos.halfmove_clock() >= SEVENTY_FIVE {
        return Some(Outcome::Draw(DrawReason::SeventyFiveMoveRule));
    }
    None
}
