//! Facts about a move found without playing it: whether it hands the turn over and whether it gives
//! check. The search prunes most of the moves it looks at; with these it need not make them first.

use crate::bitboard::tables;
use crate::position::Position;
use crate::types::{Move, MoveKind, Role};
use crate::variants;

impl Position {
    /// Whether playing `m` hands the turn to the opponent, where the turn rules tell without playing
    /// it (orthodox chess, Double Move Chess); `None` where it depends on what the move does (a
    /// capture or check in Two Move Chess, the kind of piece moved in Twinmove).
    #[inline]
    pub fn passes_known(&self, m: Move) -> Option<bool> {
        variants::passes_without_playing(self, m)
    }

    /// Whether `m`, a legal move here, leaves the opponent's king attacked (false if it has none).
    /// Plain moves and pawn pushes by bitboards; castling, en passant, promotions and king
    /// captures (rare) by playing them.
    pub fn gives_check(&self, m: Move) -> bool {
        let us = self.turn();
        let them = us.other();
        let board = self.board();
        let Some(ksq) = board.king(them) else {
            return false;
        };
        if !matches!(m.kind(), MoveKind::Normal | MoveKind::DoublePush) || m.to() == ksq {
            return self.after(m).board().king_attacked(them);
        }
        let (from, to) = (m.from(), m.to());
        let Some(role) = board.role_at(from) else {
            return false;
        };
        let t = tables();
        let occ = (board.occupied() & !from.bb()) | to.bb();
        let direct = match role {
            Role::Pawn => t.pawn(us, to),
            Role::Knight => t.knight(to),
            Role::Bishop => t.bishop(to, occ),
            Role::Rook => t.rook(to, occ),
            Role::Queen => t.queen(to, occ),
            Role::King => t.king(to),
        };
        if direct & ksq.bb() != 0 {
            return true;
        }
        // The pieces that stay put: a slider the move uncovers, or a check already there half way
        // through a turn (a captured piece on `to` is the opponent's, so it is not among them).
        let ours = board.color(us) & !from.bb();
        let rq = (board.role(Role::Rook) | board.role(Role::Queen)) & ours;
        let bq = (board.role(Role::Bishop) | board.role(Role::Queen)) & ours;
        let steppers = (t.knight(ksq) & board.role(Role::Knight))
            | (t.pawn(them, ksq) & board.role(Role::Pawn))
            | (t.king(ksq) & board.role(Role::King));
        (t.rook(ksq, occ) & rq) | (t.bishop(ksq, occ) & bq) | (steppers & ours) != 0
    }
}

#[cfg(test)]
mod tests {
    use crate::rng::SplitMix64;
    use crate::{MoveKind, Position, Variant};

    /// Along random playouts of every variant (and from positions full of castling, en passant and
    /// promotions), both facts agree with playing the move, for every legal move.
    #[test]
    fn lookahead_agrees_with_playing_the_move() {
        let mut rng = SplitMix64::new(17);
        let mut starts: Vec<Position> = Variant::ALL.iter().map(|&v| Position::start(v)).collect();
        for fen in [
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
        ] {
            starts.push(Position::from_fen(Variant::Chess, fen).expect("fen"));
            starts.push(Position::from_fen(Variant::DoubleMove, fen).expect("fen"));
        }
        let (mut checks, mut known, mut special) = (0, 0, 0);
        for start in &starts {
            for _ in 0..25 {
                let mut pos = *start;
                for _ in 0..150 {
                    let moves = pos.legal_moves();
                    if moves.is_empty() || pos.king_captured().is_some() {
                        break;
                    }
                    for &m in moves.as_slice() {
                        let after = pos.after(m);
                        let check = after.board().king_attacked(pos.turn().other());
                        assert_eq!(pos.gives_check(m), check, "{m:?} in {}", pos.fen());
                        checks += check as u32;
                        special +=
                            !matches!(m.kind(), MoveKind::Normal | MoveKind::DoublePush) as u32;
                        if let Some(passes) = pos.passes_known(m) {
                            assert_eq!(
                                passes,
                                after.turn() != pos.turn(),
                                "{m:?} in {}",
                                pos.fen()
                            );
                            known += 1;
                        }
                    }
                    pos = pos.after(moves.as_slice()[rng.below(moves.len())]);
                }
            }
        }
        // Castling, en passant and promotions were among the moves checked.
        assert!(
            checks > 1000 && known > 10_000 && special > 1000,
            "{checks} checks, {known} known, {special} special moves"
        );
    }
}
