//! The training record: one position, its search score and the game's result in 32 bytes. The layout
//! is documented in docs/nnue.md; `datagen` writes it and `train` reads it.

use rules::bitboard::squares;
use rules::{Color, Phase, Piece, Position, Role, Square, Variant};

/// Bytes per record.
pub const RECORD_BYTES: usize = 32;

/// The game's result from the side to move's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WDL {
    Loss = 0,
    Draw = 1,
    Win = 2,
}

impl WDL {
    /// 0, 0.5 or 1.
    pub fn score(self) -> f32 {
        self as u8 as f32 / 2.0
    }
}

/// One training position: the board, the variant and turn state the network sees, and the labels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    pub occupied: u64,
    /// One nibble per occupied square in square order (a1 first): colour << 3 | role index.
    pub pieces: [u8; 16],
    /// The search score in centipawns for the side to move.
    pub score: i16,
    pub result: WDL,
    pub variant: Variant,
    pub turn: Color,
    pub phase: Phase,
    /// Whether each side (white, black) still has its Double Move.
    pub double_move: [bool; 2],
    pub fullmove: u16,
}

/// Why bytes are not a record.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    #[error("more than 32 pieces on the board")]
    TooManyPieces,
    #[error("a piece code {0} that names no piece")]
    BadPiece(u8),
    #[error("a result code {0} (0 loss, 1 draw, 2 win)")]
    BadResult(u8),
    #[error("a phase code {0} (0 start, 1 response, 2 second)")]
    BadPhase(u8),
    #[error("nonzero reserved bytes")]
    Reserved,
    #[error("a side without exactly one king")]
    Kings,
}

fn variant_code(v: Variant) -> u8 {
    match v {
        Variant::Chess => 0,
        Variant::TwoMove => 1,
        Variant::DoubleMove => 2,
        Variant::Twinmove => 3,
    }
}

impl Record {
    /// The record of `pos` with its labels; fails only for a board of more than 32 pieces.
    pub fn new(pos: &Position, score: i16, result: WDL) -> Result<Record, RecordError> {
        let b = pos.board();
        let occupied = b.occupied();
        if occupied.count_ones() > 32 {
            return Err(RecordError::TooManyPieces);
        }
        let mut pieces = [0u8; 16];
        for (i, sq) in squares(occupied).enumerate() {
            let p = b.piece_at(sq).expect("occupied");
            let code = (p.color.index() as u8) << 3 | p.role.index() as u8;
            pieces[i / 2] |= code << (4 * (i % 2));
        }
        let s = pos.state();
        Ok(Record {
            occupied,
            pieces,
            score,
            result,
            variant: pos.variant(),
            turn: pos.turn(),
            phase: s.phase,
            double_move: s.double_move,
            fullmove: pos.fullmove().min(u16::MAX as u32) as u16,
        })
    }

    /// The network's output bucket for this position: [`crate::nnue::position_bucket`] of the
    /// position it was made from.
    pub fn bucket(&self) -> usize {
        crate::nnue::bucket(
            crate::nnue::situation(self.variant, self.phase, self.turn, self.double_move),
            self.occupied.count_ones(),
        )
    }

    /// The pieces and their squares.
    pub fn pieces(&self) -> impl Iterator<Item = (Piece, Square)> + '_ {
        squares(self.occupied).enumerate().map(|(i, sq)| {
            let code = self.pieces[i / 2] >> (4 * (i % 2)) & 15;
            let color = if code & 8 != 0 {
                Color::Black
            } else {
                Color::White
            };
            (Piece::new(color, Role::from_index((code & 7) as usize)), sq)
        })
    }

    pub fn to_bytes(&self) -> [u8; RECORD_BYTES] {
        let mut out = [0u8; RECORD_BYTES];
        out[0..8].copy_from_slice(&self.occupied.to_le_bytes());
        out[8..24].copy_from_slice(&self.pieces);
        out[24..26].copy_from_slice(&self.score.to_le_bytes());
        out[26] = self.result as u8;
        let phase = match self.phase {
            Phase::Start => 0,
            Phase::Response => 1,
            Phase::Second => 2,
        };
        out[27] = variant_code(self.variant)
            | (self.turn.index() as u8) << 2
            | phase << 3
            | (self.double_move[0] as u8) << 5
            | (self.double_move[1] as u8) << 6;
        out[28..30].copy_from_slice(&self.fullmove.to_le_bytes());
        out
    }

    /// Reads a record, checking every field.
    pub fn from_bytes(b: &[u8; RECORD_BYTES]) -> Result<Record, RecordError> {
        let occupied = u64::from_le_bytes(b[0..8].try_into().expect("8 bytes"));
        let n = occupied.count_ones() as usize;
        if n > 32 {
            return Err(RecordError::TooManyPieces);
        }
        let mut pieces = [0u8; 16];
        pieces.copy_from_slice(&b[8..24]);
        let mut kings = [0; 2];
        for i in 0..32 {
            let code = pieces[i / 2] >> (4 * (i % 2)) & 15;
            if i >= n {
                if code != 0 {
                    return Err(RecordError::BadPiece(code));
                }
            } else if code & 7 > 5 {
                return Err(RecordError::BadPiece(code));
            } else if code & 7 == 5 {
                kings[(code >> 3) as usize] += 1;
            }
        }
        let state = b[27];
        let variant = Variant::ALL[(state & 3) as usize];
        // A Twinmove king can be captured: a record may lack one (the game's last positions are not
        // recorded, but the format does not forbid them there).
        if kings[0] > 1 || kings[1] > 1 || (variant != Variant::Twinmove && kings != [1, 1]) {
            return Err(RecordError::Kings);
        }
        let result = match b[26] {
            0 => WDL::Loss,
            1 => WDL::Draw,
            2 => WDL::Win,
            r => return Err(RecordError::BadResult(r)),
        };
        let phase = match state >> 3 & 3 {
            0 => Phase::Start,
            1 => Phase::Response,
            2 => Phase::Second,
            p => return Err(RecordError::BadPhase(p)),
        };
        if state & 0x80 != 0 || b[30] != 0 || b[31] != 0 {
            return Err(RecordError::Reserved);
        }
        Ok(Record {
            occupied,
            pieces,
            score: i16::from_le_bytes([b[24], b[25]]),
            result,
            variant,
            turn: if state & 4 != 0 {
                Color::Black
            } else {
                Color::White
            },
            phase,
            double_move: [state & 32 != 0, state & 64 != 0],
            fullmove: u16::from_le_bytes([b[28], b[29]]),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_every_field() {
        let fens = [
            (
                Variant::Chess,
                "r3k2r/pppq1ppp/2n5/3pp3/8/2NP1N2/PPP2PPP/R2QKB1R b KQkq - 3 9",
            ),
            (
                Variant::DoubleMove,
                "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1 W-",
            ),
            (Variant::Twinmove, Variant::Twinmove.start_fen().leak()),
        ];
        for (v, fen) in fens {
            let pos = Position::from_fen(v, fen).unwrap();
            let r = Record::new(&pos, -123, WDL::Win).unwrap();
            let back = Record::from_bytes(&r.to_bytes()).unwrap();
            assert_eq!(back, r);
            let placed: Vec<_> = back.pieces().collect();
            let want: Vec<_> = squares(pos.board().occupied())
                .map(|sq| (pos.board().piece_at(sq).unwrap(), sq))
                .collect();
            assert_eq!(placed, want);
            assert_eq!(back.double_move, pos.state().double_move);
            assert_eq!(back.turn, pos.turn());
            assert_eq!(back.bucket(), crate::nnue::position_bucket(&pos));
        }
    }

    #[test]
    fn bad_bytes_are_refused_with_a_reason() {
        let r = Record::new(&Position::start(Variant::Chess), 0, WDL::Draw).unwrap();
        let good = r.to_bytes();
        let mut b = good;
        b[26] = 7;
        assert_eq!(Record::from_bytes(&b), Err(RecordError::BadResult(7)));
        let mut b = good;
        b[27] |= 3 << 3;
        assert_eq!(Record::from_bytes(&b), Err(RecordError::BadPhase(3)));
        let mut b = good;
        b[8] = 0x66; // two role-6 codes
        assert_eq!(Record::from_bytes(&b), Err(RecordError::BadPiece(6)));
        let mut b = good;
        b[31] = 1;
        assert_eq!(Record::from_bytes(&b), Err(RecordError::Reserved));
        let mut b = good;
        b[0..8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(Record::from_bytes(&b), Err(RecordError::TooManyPieces));
    }
}
