//! Move notation: UCI (`e2e4`, `e7e8q`, `e1g1`) and SAN (`Nf3`, `exd6`, `e8=Q+`, `O-O`), reading and
//! writing, and explanations in words of why a move is not legal.

use crate::movegen::{generate, GenRules, MoveList};
use crate::outcome::{position_outcome, Outcome, WinReason};
use crate::position::{Phase, Position};
use crate::types::{Move, MoveKind, Role, Square};
use crate::variants::Variant;
use std::fmt;

/// A move text that cannot be read, or names no move in the position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotationError(pub String);

impl fmt::Display for NotationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for NotationError {}

fn err<T>(s: impl Into<String>) -> Result<T, NotationError> {
    Err(NotationError(s.into()))
}

/// Every move the pieces of the side to move could make by the movement rules alone: no turn rules,
/// no king safety. Illegal candidates are kept so that an attempt can be explained.
pub fn candidate_moves(pos: &Position) -> MoveList {
    let mut list = MoveList::new();
    let rules = GenRules {
        king_safety: false,
        en_passant: true,
        movable: !0,
        capture_king: true,
    };
    generate(&pos.gen_input(), &rules, &mut list);
    list
}

/// Reads a UCI move and gives it its kind (castling, en passant, double push, promotion) from the board.
/// The result may still be illegal.
pub fn parse_uci(pos: &Position, text: &str) -> Result<Move, NotationError> {
    let t = text.trim();
    if !t.is_ascii() || !(4..=5).contains(&t.len()) {
        return err(format!(
            "'{t}' is not a UCI move (expected e.g. e2e4 or e7e8q)"
        ));
    }
    let (Some(from), Some(to)) = (Square::parse(&t[0..2]), Square::parse(&t[2..4])) else {
        return err(format!(
            "'{t}' is not a UCI move (expected e.g. e2e4 or e7e8q)"
        ));
    };
    let promo = match t.as_bytes().get(4) {
        None => None,
        Some(&c) => match Role::from_char(c as char) {
            Some(r @ (Role::Knight | Role::Bishop | Role::Rook | Role::Queen)) => Some(r),
            _ => return err(format!("'{t}': bad promotion piece '{}'", c as char)),
        },
    };
    let board = pos.board();
    let Some(piece) = board.piece_at(from) else {
        return err(format!("{t}: there is no piece on {from}"));
    };
    if piece.color != pos.turn() {
        return err(format!(
            "{t}: the piece on {from} belongs to {}, but {} is to move",
            piece.color.name(),
            pos.turn().name()
        ));
    }
    let kind = match (piece.role, promo) {
        (Role::Pawn, Some(r)) => MoveKind::Promotion(r),
        (_, Some(_)) => return err(format!("{t}: only a pawn can promote")),
        (Role::King, None)
            if from.file() == 4
                && (to.file() == 6 || to.file() == 2)
                && from.rank() == to.rank() =>
        {
            MoveKind::Castle
        }
        (Role::Pawn, None) if from.rank().abs_diff(to.rank()) == 2 => MoveKind::DoublePush,
        (Role::Pawn, None) if from.file() != to.file() && board.piece_at(to).is_none() => {
            MoveKind::EnPassant
        }
        _ => MoveKind::Normal,
    };
    Ok(Move::new(from, to, kind))
}

/// The piece's name in words, for messages.
pub fn role_name(r: Role) -> &'static str {
    ["pawn", "knight", "bishop", "rook", "queen", "king"][r.index()]
}

/// SAN of `mv` in `pos`, with `+` (the opponent's king attacked) and `#` (the move ends the game by
/// checkmate). The Double Move flag does not show in SAN.
pub fn san(pos: &Position, mv: Move) -> String {
    // A move the pieces cannot make at all has no SAN; its UCI text names it.
    if !candidate_moves(pos).contains(mv.chess_move()) {
        return mv.uci();
    }
    let mut s = san_plain(pos, mv);
    let after = pos.after(mv);
    let mover = pos.turn();
    let mate = after.at_turn_start()
        && matches!(
            position_outcome(&after),
            Some(Outcome::Win {
                reason: WinReason::Checkmate,
                ..
            })
        );
    if mate {
        s.push('#');
    } else if after.board().king_attacked(mover.other()) {
        s.push('+');
    }
    s
}

fn san_plain(pos: &Position, mv: Move) -> String {
    let board = pos.board();
    let from = mv.from();
    let to = mv.to();
    if mv.is_castle() {
        return if to.file() == 6 { "O-O" } else { "O-O-O" }.to_string();
    }
    let role = board.role_at(from).unwrap_or(Role::Pawn);
    let capture = board.piece_at(to).is_some() || mv.is_en_passant();
    let mut s = String::new();
    if role == Role::Pawn {
        if capture {
            s.push((b'a' + from.file()) as char);
            s.push('x');
        }
        s += &to.to_string();
        if let Some(r) = mv.promotion() {
            s.push('=');
            s += Role::san_letter(r);
        }
        return s;
    }
    s += role.san_letter();
    // Disambiguate among the legal moves (or, for an illegal move, among the candidates) of the same kind.
    let legal = pos.legal_moves();
    let pool = if legal.iter().any(|m| m.chess_move() == mv.chess_move()) {
        legal
    } else {
        candidate_moves(pos)
    };
    let others: Vec<Square> = pool
        .iter()
        .filter(|m| m.to() == to && m.from() != from && board.role_at(m.from()) == Some(role))
        .map(|m| m.from())
        .collect();
    if !others.is_empty() {
        let file_unique = others.iter().all(|o| o.file() != from.file());
        let rank_unique = others.iter().all(|o| o.rank() != from.rank());
        if file_unique {
            s.push((b'a' + from.file()) as char);
        } else if rank_unique {
            s.push((b'1' + from.rank()) as char);
        } else {
            s += &from.to_string();
        }
    }
    if capture {
        s.push('x');
    }
    s += &to.to_string();
    s
}

/// Reads a SAN move. A move that is a candidate by the movement rules is returned even if it is
/// illegal (the caller explains why); a legal reading is preferred when the text is ambiguous.
pub fn parse_san(pos: &Position, text: &str) -> Result<Move, NotationError> {
    let original = text.trim();
    let mut t: &str = original;
    for suffix in ["e.p.", "ep"] {
        if let Some(s) = t.strip_suffix(suffix) {
            t = s.trim_end();
        }
    }
    let t = t.trim_end_matches(['+', '#', '!', '?']);
    if t.is_empty() || !t.is_ascii() {
        return err(format!("'{original}' is not a move"));
    }
    let legal = pos.legal_moves();
    let candidates = candidate_moves(pos);
    let pick = |matches: Vec<Move>| -> Result<Move, NotationError> {
        let legal_matches: Vec<Move> = matches
            .iter()
            .copied()
            .filter(|m| legal.iter().any(|l| l.chess_move() == *m))
            .collect();
        match (legal_matches.len(), matches.len()) {
            (1, _) => Ok(legal_matches[0]),
            (0, 1) => Ok(matches[0]),
            (0, 0) => err(format!(
                "{original}: no {} piece can make this move",
                pos.turn().name()
            )),
            _ => err(format!("{original}: ambiguous, say which piece moves")),
        }
    };
    if matches!(t, "O-O" | "0-0" | "O-O-O" | "0-0-0") {
        let long = t.len() == 5;
        let back = if pos.turn() == crate::types::Color::White {
            0
        } else {
            56
        };
        let to = Square(back + if long { 2 } else { 6 });
        let mv = Move::new(Square(back + 4), to, MoveKind::Castle);
        if candidates.contains(mv) {
            return Ok(mv);
        }
        return err(format!("{original}: castling is not possible here (king or rook has moved, or the squares between are not empty)"));
    }
    let bytes = t.as_bytes();
    let (role, rest) = match bytes[0] {
        b'N' => (Role::Knight, &t[1..]),
        b'B' => (Role::Bishop, &t[1..]),
        b'R' => (Role::Rook, &t[1..]),
        b'Q' => (Role::Queen, &t[1..]),
        b'K' => (Role::King, &t[1..]),
        b'a'..=b'h' => (Role::Pawn, t),
        _ => return err(format!("'{original}' is not a SAN move")),
    };
    // Promotion suffix.
    let (rest, promo) = {
        let rb = rest.as_bytes();
        let last = *rb.last().unwrap_or(&b' ');
        match Role::from_char(last as char) {
            Some(r @ (Role::Knight | Role::Bishop | Role::Rook | Role::Queen))
                if role == Role::Pawn && last.is_ascii_uppercase() =>
            {
                let body = rest[..rest.len() - 1].trim_end_matches('=');
                (body, Some(r))
            }
            _ => (rest, None),
        }
    };
    if rest.len() < 2 {
        return err(format!("'{original}' is not a SAN move"));
    }
    let Some(to) = Square::parse(&rest[rest.len() - 2..]) else {
        return err(format!("'{original}' is not a SAN move (no target square)"));
    };
    let qualifier = rest[..rest.len() - 2].trim_end_matches(['x', ':', '-']);
    let mut from_file = None;
    let mut from_rank = None;
    for c in qualifier.chars() {
        match c {
            'a'..='h' => from_file = Some(c as u8 - b'a'),
            '1'..='8' => from_rank = Some(c as u8 - b'1'),
            _ => return err(format!("'{original}' is not a SAN move")),
        }
    }
    let board = pos.board();
    let matches: Vec<Move> = candidates
        .iter()
        .copied()
        .filter(|m| {
            !m.is_castle()
                && m.to() == to
                && board.role_at(m.from()) == Some(role)
                && from_file.is_none_or(|f| m.from().file() == f)
                && from_rank.is_none_or(|r| m.from().rank() == r)
                && m.promotion() == promo
        })
        .collect();
    if matches.is_empty()
        && role == Role::Pawn
        && promo.is_none()
        && (to.rank() == 0 || to.rank() == 7)
    {
        return err(format!(
            "{original}: a pawn reaching the last rank must promote (e.g. {original}=Q)"
        ));
    }
    if matches.is_empty()
        && role == Role::Pawn
        && board.piece_at(to).is_none()
        && from_file.is_some_and(|f| f != to.file())
    {
        return err(format!("{original}: there is nothing to capture on {to} and no en passant capture is possible now"));
    }
    pick(matches)
}

/// Reads one move in UCI or SAN.
pub fn parse_move(pos: &Position, text: &str) -> Result<Move, NotationError> {
    let t = text.trim();
    let looks_uci = t.len() >= 4
        && t.is_ascii()
        && Square::parse(&t[0..2]).is_some()
        && Square::parse(&t[2..4]).is_some();
    if looks_uci {
        parse_uci(pos, t)
    } else {
        parse_san(pos, t)
    }
}

/// Why `mv` (a move by the movement rules) is not legal in `pos`, in words; `None` if it is legal.
pub fn why_illegal(pos: &Position, mv: Move) -> Option<String> {
    let legal = pos.legal_moves();
    if legal.contains(mv) {
        return None;
    }
    let variant = pos.variant();
    let board = pos.board();
    let us = pos.turn();
    let name = san_plain(pos, mv);
    let Some(piece) = board.piece_at(mv.from()) else {
        return Some(format!("there is no piece on {}", mv.from()));
    };
    if piece.color != us {
        return Some(format!("the piece on {} is not {}'s", mv.from(), us.name()));
    }
    let candidates = candidate_moves(pos);
    if !candidates.contains(mv.chess_move()) {
        return Some(format!(
            "{name} is not a possible move of the {}",
            role_name(piece.role)
        ));
    }
    if board.role_at(mv.to()) == Some(Role::King) && !variant.king_capture() {
        return Some("a move may never capture the king".into());
    }
    let phase = pos.phase();
    match variant {
        Variant::TwoMove if phase == Phase::Second && pos.state().locked & mv.from().bb() != 0 => {
            let castled = pos.state().locked.count_ones() == 2;
            return Some(if castled {
                format!(
                    "the {} moved in castling and may not move again this turn",
                    role_name(piece.role)
                )
            } else {
                format!(
                    "the {} on {} already moved this turn; a piece may not move twice in a turn",
                    role_name(piece.role),
                    mv.from()
                )
            });
        }
        Variant::Twinmove if phase == Phase::Second && piece.role == Role::Pawn => {
            return Some("two pawn moves in one turn are not allowed: after a pawn move a piece move must follow".into());
        }
        Variant::Twinmove if piece.role != Role::Pawn && phase == Phase::Start => {
            let only_pawns = legal
                .iter()
                .all(|m| board.role_at(m.from()) == Some(Role::Pawn));
            if only_pawns {
                return Some("the game must begin with a pawn move".into());
            }
        }
        Variant::DoubleMove if mv.starts_double() && !pos.state().double_move[us.index()] => {
            return Some(format!("{} has already used its Double Move", us.name()));
        }
        Variant::DoubleMove if mv.starts_double() && phase == Phase::Second => {
            return Some("a Double Move can only be activated on the first move of a turn".into());
        }
        _ => {}
    }
    if mv.is_en_passant() && phase == Phase::Second {
        return Some("en passant is only possible on the first move of a turn".into());
    }
    if !variant.king_capture() {
        let mut chess_legal = MoveList::new();
        let rules = GenRules {
            movable: !0,
            ..GenRules::LEGAL
        };
        generate(&pos.gen_input(), &rules, &mut chess_legal);
        if !chess_legal.contains(mv.chess_move()) {
            return Some(if mv.is_castle() {
                if pos.in_check() {
                    "castling is not allowed while in check".to_string()
                } else {
                    "the king may not castle through or into check".to_string()
                }
            } else if piece.role == Role::King {
                format!("the king would be in check on {}", mv.to())
            } else if pos.in_check() {
                format!("{name} does not get the king out of check")
            } else {
                format!("{name} would leave the king in check")
            });
        }
    }
    // A chess-legal move that cannot be completed into a legal turn.
    Some(match variant {
        Variant::TwoMove => format!(
            "{name} is not a single move (no check, capture, promotion or en passant chance) and no other piece could move after it, so the turn cannot be completed"
        ),
        Variant::DoubleMove => format!("no legal second move exists after {name}, so it cannot begin a Double Move"),
        Variant::Twinmove => format!("no piece move could follow {name}, so the turn cannot be completed"),
        Variant::Chess => format!("{name} is not legal here"),
    })
}
