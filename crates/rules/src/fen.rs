//! Extended FEN: the six orthodox fields plus a seventh for the variant's turn state
//! (`R`/`T`/`H…` Two Move, `WB`…`--` with optional `m` Double Move, `T`/`P` Twinmove). See docs/fen.md.

use crate::bitboard::{squares, Bitboard, RANK_1, RANK_8};
use crate::board::Board;
use crate::movegen::has_legal_en_passant;
use crate::position::{Phase, Position, TurnState};
use crate::types::{CastlingRights, Color, Piece, Role, Square};
use crate::variants::Variant;
use std::fmt;

/// Why a FEN was rejected: the field (1–7, or 0 for the whole text) and the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FenError {
    pub field: u8,
    pub reason: String,
}

impl FenError {
    fn new(field: u8, reason: impl Into<String>) -> FenError {
        FenError {
            field,
            reason: reason.into(),
        }
    }
}

const FIELD_NAMES: [&str; 8] = [
    "FEN",
    "piece placement",
    "side to move",
    "castling",
    "en passant",
    "halfmove clock",
    "fullmove number",
    "turn state",
];

impl fmt::Display for FenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field == 0 {
            write!(f, "invalid FEN: {}", self.reason)
        } else {
            write!(
                f,
                "invalid FEN field {} ({}): {}",
                self.field, FIELD_NAMES[self.field as usize], self.reason
            )
        }
    }
}

impl std::error::Error for FenError {}

fn parse_placement(s: &str) -> Result<Board, FenError> {
    let err = |r: String| FenError::new(1, r);
    let ranks: Vec<&str> = s.split('/').collect();
    if ranks.len() != 8 {
        return Err(err(format!(
            "expected 8 ranks separated by '/', found {}",
            ranks.len()
        )));
    }
    let mut board = Board::empty();
    for (i, rank_text) in ranks.iter().enumerate() {
        let rank = 7 - i as u8;
        let mut file = 0u8;
        for c in rank_text.chars() {
            if let Some(d) = c.to_digit(10) {
                if !(1..=8).contains(&d) {
                    return Err(err(format!("bad empty-square count '{c}'")));
                }
                file += d as u8;
            } else if let Some(p) = Piece::from_fen_char(c) {
                if file >= 8 {
                    return Err(err(format!("rank {} has more than 8 squares", rank + 1)));
                }
                board.put(Square::from_coords(file, rank), p);
                file += 1;
            } else {
                return Err(err(format!("unexpected character '{c}'")));
            }
            if file > 8 {
                return Err(err(format!("rank {} has more than 8 squares", rank + 1)));
            }
        }
        if file != 8 {
            return Err(err(format!(
                "rank {} has {} squares, not 8",
                rank + 1,
                file
            )));
        }
    }
    Ok(board)
}

fn placement_text(board: &Board) -> String {
    let mut s = String::new();
    for rank in (0..8).rev() {
        let mut empty = 0;
        for file in 0..8 {
            match board.piece_at(Square::from_coords(file, rank)) {
                Some(p) => {
                    if empty > 0 {
                        s.push((b'0' + empty) as char);
                        empty = 0;
                    }
                    s.push(p.fen_char());
                }
                None => empty += 1,
            }
        }
        if empty > 0 {
            s.push((b'0' + empty) as char);
        }
        if rank > 0 {
            s.push('/');
        }
    }
    s
}

fn parse_castling(s: &str, board: &Board) -> Result<CastlingRights, FenError> {
    let err = |r: String| FenError::new(3, r);
    if s == "-" {
        return Ok(CastlingRights(0));
    }
    let mut rights = 0u8;
    for c in s.chars() {
        let (bit, color, rook_sq) = match c {
            'K' => (CastlingRights::WHITE_KING, Color::White, "h1"),
            'Q' => (CastlingRights::WHITE_QUEEN, Color::White, "a1"),
            'k' => (CastlingRights::BLACK_KING, Color::Black, "h8"),
            'q' => (CastlingRights::BLACK_QUEEN, Color::Black, "a8"),
            _ => {
                return Err(err(format!(
                    "unexpected character '{c}' (expected KQkq or -)"
                )))
            }
        };
        if rights & bit != 0 {
            return Err(err(format!("'{c}' given twice")));
        }
        let king_sq = Square::parse(if color == Color::White { "e1" } else { "e8" }).unwrap();
        if board.piece_at(king_sq) != Some(Piece::new(color, Role::King)) {
            return Err(err(format!(
                "'{c}' needs the {} king on {king_sq}",
                color.name()
            )));
        }
        let rsq = Square::parse(rook_sq).unwrap();
        if board.piece_at(rsq) != Some(Piece::new(color, Role::Rook)) {
            return Err(err(format!(
                "'{c}' needs a {} rook on {rook_sq}",
                color.name()
            )));
        }
        rights |= bit;
    }
    Ok(CastlingRights(rights))
}

fn castling_text(c: CastlingRights) -> String {
    let mut s = String::new();
    for (bit, ch) in [
        (CastlingRights::WHITE_KING, 'K'),
        (CastlingRights::WHITE_QUEEN, 'Q'),
        (CastlingRights::BLACK_KING, 'k'),
        (CastlingRights::BLACK_QUEEN, 'q'),
    ] {
        if c.has(bit) {
            s.push(ch);
        }
    }
    if s.is_empty() {
        s.push('-');
    }
    s
}

fn parse_squares(s: &str) -> Option<Vec<Square>> {
    if s.is_empty() || !s.len().is_multiple_of(2) || !s.is_ascii() {
        return None;
    }
    (0..s.len() / 2)
        .map(|i| Square::parse(&s[2 * i..2 * i + 2]))
        .collect()
}

/// Parses the 7th field for `variant`; `None` means the field is absent.
fn parse_state(
    variant: Variant,
    field: Option<&str>,
    board: &Board,
    turn: Color,
    initial: bool,
) -> Result<TurnState, FenError> {
    let err = |r: String| FenError::new(7, r);
    match variant {
        Variant::Chess => match field {
            None => Ok(TurnState::START),
            Some(f) => Err(err(format!(
                "orthodox chess has no turn state field, found '{f}'"
            ))),
        },
        Variant::TwoMove => {
            let f = field.unwrap_or(if initial { "R" } else { "T" });
            match f {
                "R" => Ok(TurnState {
                    phase: Phase::Response,
                    ..TurnState::START
                }),
                "T" => Ok(TurnState::START),
                _ if f.starts_with('H') => {
                    let sqs = parse_squares(&f[1..]).ok_or_else(|| {
                        err(format!("'{f}': H must be followed by one or two squares, e.g. Hf3 or Hg1f1"))
                    })?;
                    if sqs.len() > 2 {
                        return Err(err(format!("'{f}': at most two squares (king and rook after castling)")));
                    }
                    let mut locked: Bitboard = 0;
                    for sq in &sqs {
                        match board.piece_at(*sq) {
                            Some(p) if p.color == turn => {}
                            _ => {
                                return Err(err(format!(
                                    "'{f}': no piece of the side to move ({}) on {sq}",
                                    turn.name()
                                )))
                            }
                        }
                        if locked & sq.bb() != 0 {
                            return Err(err(format!("'{f}': square {sq} given twice")));
                        }
                        locked |= sq.bb();
                    }
                    if sqs.len() == 2 {
                        let roles: Vec<Role> =
                            sqs.iter().filter_map(|s| board.role_at(*s)).collect();
                        if !(roles.contains(&Role::King) && roles.contains(&Role::Rook)) {
                            return Err(err(format!(
                                "'{f}': two squares are only possible after castling (king and rook)"
                            )));
                        }
                    }
                    Ok(TurnState {
                        phase: Phase::Second,
                        locked,
                        ..TurnState::START
                    })
                }
                _ => Err(err(format!(
                    "'{f}': expected R (response move), T (start of a turn) or H + squares (half way)"
                ))),
            }
        }
        Variant::DoubleMove => {
            let f = field.unwrap_or("WB");
            let b = f.as_bytes();
            let ok = (b.len() == 2 || (b.len() == 3 && b[2] == b'm'))
                && (b[0] == b'W' || b[0] == b'-')
                && (b[1] == b'B' || b[1] == b'-');
            if !ok {
                return Err(err(format!(
                    "'{f}': expected WB, W-, -B or -- with an optional m suffix"
                )));
            }
            let double_move = [b[0] == b'W', b[1] == b'B'];
            let mid = b.len() == 3;
            if mid && double_move[turn.index()] {
                return Err(err(format!(
                    "'{f}': the m suffix says {} is between the halves of a Double Move, but its ability is unspent",
                    turn.name()
                )));
            }
            Ok(TurnState {
                phase: if mid { Phase::Second } else { Phase::Start },
                locked: 0,
                double_move,
            })
        }
        Variant::Twinmove => match field.unwrap_or("T") {
            "T" => Ok(TurnState::START),
            "P" => Ok(TurnState {
                phase: Phase::Second,
                ..TurnState::START
            }),
            f => Err(err(format!(
                "'{f}': expected T (start of a turn) or P (after the pawn move)"
            ))),
        },
    }
}

fn state_text(pos: &Position) -> Option<String> {
    let st = pos.state();
    match pos.variant() {
        Variant::Chess => None,
        Variant::TwoMove => Some(match st.phase {
            Phase::Response => "R".to_string(),
            Phase::Start => "T".to_string(),
            Phase::Second => {
                let mut sqs: Vec<Square> = squares(st.locked).collect();
                // King first, as in `Hg1f1` after O-O.
                sqs.sort_by_key(|s| pos.board().role_at(*s) != Some(Role::King));
                let mut s = "H".to_string();
                for sq in sqs {
                    s += &sq.to_string();
                }
                s
            }
        }),
        Variant::DoubleMove => {
            let mut s = String::new();
            s.push(if st.double_move[0] { 'W' } else { '-' });
            s.push(if st.double_move[1] { 'B' } else { '-' });
            if st.phase == Phase::Second {
                s.push('m');
            }
            Some(s)
        }
        Variant::Twinmove => Some(if st.phase == Phase::Second { "P" } else { "T" }.to_string()),
    }
}

/// Parses an extended FEN for `variant`. Never panics; errors name the field and the reason.
pub fn parse_fen(variant: Variant, fen: &str) -> Result<Position, FenError> {
    let fields: Vec<&str> = fen.split_whitespace().collect();
    if fields.is_empty() {
        return Err(FenError::new(0, "empty"));
    }
    if fields.len() < 4 {
        return Err(FenError::new(
            0,
            format!(
                "expected at least 4 fields (placement, side, castling, en passant), found {}",
                fields.len()
            ),
        ));
    }
    if fields.len() > 7 {
        return Err(FenError::new(
            0,
            format!("expected at most 7 fields, found {}", fields.len()),
        ));
    }
    let board = parse_placement(fields[0])?;
    let turn = match fields[1] {
        "w" => Color::White,
        "b" => Color::Black,
        f => return Err(FenError::new(2, format!("'{f}': expected w or b"))),
    };
    for c in Color::ALL {
        let kings = board.pieces(c, Role::King).count_ones();
        if kings > 1 {
            return Err(FenError::new(1, format!("{} has {kings} kings", c.name())));
        }
        if kings == 0 && !variant.king_capture() {
            return Err(FenError::new(1, format!("{} has no king", c.name())));
        }
    }
    if variant.king_capture() && board.role(Role::King).count_ones() == 0 {
        return Err(FenError::new(1, "neither side has a king"));
    }
    if board.role(Role::Pawn) & (RANK_1 | RANK_8) != 0 {
        return Err(FenError::new(1, "pawns on the first or last rank"));
    }
    let castling = parse_castling(fields[2], &board)?;
    let halfmove = match fields.get(4) {
        None => 0,
        Some(f) => f
            .parse::<u32>()
            .map_err(|_| FenError::new(5, format!("'{f}': expected a non-negative number")))?,
    };
    let fullmove = match fields.get(5) {
        None => 1,
        Some(f) => match f.parse::<u32>() {
            Ok(n) if n >= 1 => n,
            _ => return Err(FenError::new(6, format!("'{f}': expected a number from 1"))),
        },
    };
    let initial = board == Board::standard() && turn == Color::White && fullmove == 1;
    let state = parse_state(variant, fields.get(6).copied(), &board, turn, initial)?;

    let ep_square = match fields[3] {
        "-" => None,
        f => {
            let err = |r: String| FenError::new(4, format!("'{f}': {r}"));
            if !variant.has_en_passant() {
                return Err(err(format!("{} has no en passant", variant.title())));
            }
            let sq = Square::parse(f).ok_or_else(|| err("not a square".into()))?;
            if state.phase == Phase::Second {
                return Err(err(
                    "no en passant capture is possible on the second move of a turn".into(),
                ));
            }
            let (rank, dir): (u8, i8) = match turn {
                Color::White => (5, -8),
                Color::Black => (2, 8),
            };
            if sq.rank() != rank {
                return Err(err(format!(
                    "with {} to move the en passant square must be on rank {}",
                    turn.name(),
                    rank + 1
                )));
            }
            let pawn_sq = Square((sq.0 as i8 + dir) as u8);
            let origin = Square((sq.0 as i8 - dir) as u8);
            if board.piece_at(pawn_sq) != Some(Piece::new(turn.other(), Role::Pawn)) {
                return Err(err(format!(
                    "no {} pawn on {pawn_sq} that just moved two squares",
                    turn.other().name()
                )));
            }
            if board.occupied() & (sq.bb() | origin.bb()) != 0 {
                return Err(err(format!(
                    "{sq} and {origin} must be empty after a two-square move"
                )));
            }
            // Only a square with a legal capture is kept, so equal positions get equal FENs and hashes.
            has_legal_en_passant(&board, turn, sq).then_some(sq)
        }
    };

    let pos = Position::from_parts(
        variant, board, turn, castling, ep_square, halfmove, fullmove, state,
    );
    validate_checks(&pos)?;
    Ok(pos)
}

/// Which kings may stand attacked depends on the variant and the phase.
fn validate_checks(pos: &Position) -> Result<(), FenError> {
    let turn = pos.turn();
    let board = pos.board();
    match pos.variant() {
        Variant::Twinmove => Ok(()),
        Variant::DoubleMove if pos.phase() == Phase::Second => {
            if board.king_attacked(turn) {
                return Err(FenError::new(
                    0,
                    format!(
                        "{} is between the halves of a Double Move but its own king is in check",
                        turn.name()
                    ),
                ));
            }
            Ok(())
        }
        _ => {
            if board.king_attacked(turn.other()) {
                return Err(FenError::new(
                    0,
                    format!(
                        "{} is not to move but its king is in check",
                        turn.other().name()
                    ),
                ));
            }
            if pos.variant() == Variant::TwoMove
                && pos.phase() == Phase::Second
                && board.king_attacked(turn)
            {
                return Err(FenError::new(
                    7,
                    "half way through a two move turn the mover cannot be in check (a checked player escapes on the first move)",
                ));
            }
            Ok(())
        }
    }
}

/// Writes a position as extended FEN (the 7th field only for the double-move variants).
pub fn to_fen(pos: &Position) -> String {
    let mut s = format!(
        "{} {} {} {} {} {}",
        placement_text(pos.board()),
        if pos.turn() == Color::White { 'w' } else { 'b' },
        castling_text(pos.castling()),
        pos.ep_square().map_or("-".to_string(), |s| s.to_string()),
        pos.halfmove_clock(),
        pos.fullmove()
    );
    if let Some(st) = state_text(pos) {
        s.push(' ');
        s.push_str(&st);
    }
    s
}

impl Position {
    pub fn from_fen(variant: Variant, fen: &str) -> Result<Position, FenError> {
        parse_fen(variant, fen)
    }
    pub fn fen(&self) -> String {
        to_fen(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_positions_round_trip() {
        for v in Variant::ALL {
            let p = Position::start(v);
            let f = to_fen(&p);
            assert_eq!(parse_fen(v, &f).unwrap(), p, "{v}: {f}");
        }
        assert_eq!(
            Variant::TwoMove.start_fen(),
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 R"
        );
        assert_eq!(
            Variant::DoubleMove.start_fen(),
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 WB"
        );
    }

    #[test]
    fn errors_name_field_and_reason() {
        let e = parse_fen(Variant::TwoMove, "8/8/8/8/8/8/8/K6k w - - 0 1 Hc3").unwrap_err();
        assert_eq!(e.field, 7);
        assert!(e.reason.contains("no piece of the side to move"), "{e}");
        let e = parse_fen(Variant::DoubleMove, "7k/8/8/8/8/8/8/7K w - - 0 1 WBm").unwrap_err();
        assert_eq!(e.field, 7);
        assert!(e.reason.contains("unspent"), "{e}");
        let e = parse_fen(Variant::Twinmove, "7k/8/8/3pP3/8/8/8/7K w - d6 0 1 T").unwrap_err();
        assert_eq!(e.field, 4);
        assert!(e.reason.contains("no en passant"), "{e}");
        let e = parse_fen(Variant::Chess, "7k/8/8/8/8/8/8/7K w - - 0 1 T").unwrap_err();
        assert_eq!(e.field, 7);
        let e = parse_fen(Variant::Chess, "7k/8/8/8/8/8/8/7X w - - 0 1").unwrap_err();
        assert_eq!(e.field, 1);
        assert!(e.to_string().contains("piece placement"));
    }
}
