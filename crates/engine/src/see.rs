//! Static exchange evaluation: does a move win at least `threshold` centipawns once every piece that
//! attacks its target square has recaptured, least valuable first? Used to order captures and to prune
//! losing ones. It assumes the players alternate on the square, which is exact in orthodox chess and a
//! heuristic in the variants (a second move of the same side is not modelled).

use crate::eval::PIECE_VALUE;
use rules::bitboard::{lsb, tables, Bitboard};
use rules::{Move, Position, Role};

/// Whether `m`'s exchange on its target square gains at least `threshold` for the side playing it.
pub fn see_ge(pos: &Position, m: Move, threshold: i32) -> bool {
    if m.is_castle() || m.promotion().is_some() {
        // Castling exchanges nothing; promotions are searched on their own merits.
        return threshold <= 0;
    }
    let b = pos.board();
    let from = m.from();
    let to = m.to();
    let victim = if m.is_en_passant() {
        PIECE_VALUE[Role::Pawn.index()]
    } else {
        b.role_at(to).map_or(0, |r| PIECE_VALUE[r.index()])
    };
    let mut swap = victim - threshold;
    if swap < 0 {
        return false;
    }
    let Some(mover) = b.role_at(from) else {
        return false;
    };
    swap = PIECE_VALUE[mover.index()] - swap;
    if swap <= 0 {
        return true;
    }
    let t = tables();
    let mut occ: Bitboard = b.occupied() ^ from.bb() ^ to.bb();
    if m.is_en_passant() {
        let captured = rules::Square::from_coords(to.file(), from.rank());
        occ ^= captured.bb();
    }
    let mut attackers = b.attackers_to(to, occ) & occ;
    let diagonal = b.role(Role::Bishop) | b.role(Role::Queen);
    let straight = b.role(Role::Rook) | b.role(Role::Queen);
    let mut side = pos.board().piece_at(from).map_or(pos.turn(), |p| p.color);
    // 1 while the side that made the last capture is winning the exchange.
    let mut result = 1;
    loop {
        side = side.other();
        attackers &= occ;
        let ours = attackers & b.color(side);
        if ours == 0 {
            break;
        }
        result ^= 1;
        // The least valuable attacker recaptures; sliders behind it join in.
        let mut captured_with = None;
        for role in Role::ALL {
            let set = ours & b.role(role);
            if set != 0 {
                captured_with = Some((role, set));
                break;
            }
        }
        let (role, set) = captured_with.expect("an attacker of some role");
        if role == Role::King {
            // The king may take only if nothing defends the square any more.
            return if attackers & b.color(side.other()) != 0 {
                result ^ 1 == 1
            } else {
                result == 1
            };
        }
        swap = PIECE_VALUE[role.index()] - swap;
        if swap < result {
            break;
        }
        occ ^= lsb(set).bb();
        match role {
            Role::Pawn | Role::Bishop => attackers |= t.bishop(to, occ) & diagonal,
            Role::Rook => attackers |= t.rook(to, occ) & straight,
            Role::Queen => {
                attackers |= (t.bishop(to, occ) & diagonal) | (t.rook(to, occ) & straight)
            }
            _ => {}
        }
    }
    result == 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use rules::Variant;

    fn mv(pos: &Position, uci: &str) -> Move {
        *pos.legal_moves()
            .iter()
            .find(|m| m.uci() == uci)
            .unwrap_or_else(|| panic!("{uci} is not legal in {}", pos.fen()))
    }

    fn see(fen: &str, uci: &str) -> i32 {
        // The exact exchange value: the largest threshold that still passes.
        let pos = Position::from_fen(Variant::Chess, fen).unwrap();
        let m = mv(&pos, uci);
        let mut v = -2000;
        while see_ge(&pos, m, v + 1) {
            v += 1;
        }
        v
    }

    #[test]
    fn exchanges() {
        // Pawn takes an undefended knight.
        assert_eq!(see("4k3/8/8/3n4/4P3/8/8/4K3 w - - 0 1", "e4d5"), 320);
        // Rook takes a pawn defended by a pawn: loses the rook for a pawn.
        assert_eq!(
            see("4k3/8/2p5/3p4/8/8/3R4/4K3 w - - 0 1", "d2d5"),
            100 - 500
        );
        // Knight takes a pawn defended by a knight; the rook behind recaptures.
        assert_eq!(see("4k3/8/5n2/3p4/8/4N3/3R4/4K3 w - - 0 1", "e3d5"), 100);
        // Quiet moves: to a safe square, and to a square a pawn attacks.
        assert_eq!(see("4k3/8/2p5/8/2N5/8/8/4K3 w - - 0 1", "c4d6"), 0);
        assert_eq!(see("4k3/2p5/8/8/2N5/8/8/4K3 w - - 0 1", "c4d6"), -320);
        // The king takes an undefended queen.
        assert_eq!(see("4k3/8/8/8/8/8/3q4/4K3 w - - 0 1", "e1d2"), 900);
        // Rook takes a queen defended by a rook.
        assert_eq!(see("3rk3/8/8/8/8/8/3q4/3R1K2 w - - 0 1", "d1d2"), 900 - 500);
        // The king ends the exchange when nothing defends the square any more...
        assert_eq!(see("3rk3/8/8/3n4/4K3/8/8/3R4 w - - 0 1", "d1d5"), 320);
        // ...but not when a bishop still does.
        assert_eq!(
            see("b2rk3/8/8/3n4/4K3/8/8/3R4 w - - 0 1", "d1d5"),
            320 - 500
        );
        // En passant wins a pawn.
        assert_eq!(see("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", "e5d6"), 100);
    }
}
