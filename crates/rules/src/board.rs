//! Piece placement: bitboards by role and colour plus a mailbox, and attack queries on them.

use crate::bitboard::{tables, Bitboard};
use crate::types::{Color, Piece, Role, Square};

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Board {
    by_role: [Bitboard; 6],
    by_color: [Bitboard; 2],
    /// 0 = empty, else 1 + color * 6 + role.
    mailbox: [u8; 64],
}

impl Default for Board {
    fn default() -> Self {
        Board::empty()
    }
}

impl Board {
    pub fn empty() -> Board {
        Board {
            by_role: [0; 6],
            by_color: [0; 2],
            mailbox: [0; 64],
        }
    }

    pub fn standard() -> Board {
        let mut b = Board::empty();
        let back = [
            Role::Rook,
            Role::Knight,
            Role::Bishop,
            Role::Queen,
            Role::King,
            Role::Bishop,
            Role::Knight,
            Role::Rook,
        ];
        for f in 0..8u8 {
            b.put(
                Square::from_coords(f, 0),
                Piece::new(Color::White, back[f as usize]),
            );
            b.put(
                Square::from_coords(f, 1),
                Piece::new(Color::White, Role::Pawn),
            );
            b.put(
                Square::from_coords(f, 6),
                Piece::new(Color::Black, Role::Pawn),
            );
            b.put(
                Square::from_coords(f, 7),
                Piece::new(Color::Black, back[f as usize]),
            );
        }
        b
    }

    #[inline]
    pub fn occupied(&self) -> Bitboard {
        self.by_color[0] | self.by_color[1]
    }
    #[inline]
    pub fn color(&self, c: Color) -> Bitboard {
        self.by_color[c.index()]
    }
    #[inline]
    pub fn role(&self, r: Role) -> Bitboard {
        self.by_role[r.index()]
    }
    #[inline]
    pub fn pieces(&self, c: Color, r: Role) -> Bitboard {
        self.by_color[c.index()] & self.by_role[r.index()]
    }
    #[inline]
    pub fn king(&self, c: Color) -> Option<Square> {
        let k = self.pieces(c, Role::King);
        if k == 0 {
            None
        } else {
            Some(Square(k.trailing_zeros() as u8))
        }
    }
    /// The squares whose content differs between `self` and `other` (a piece arrived, left or was
    /// replaced): a square's piece is fixed by which colour and role sets hold it, so any change
    /// flips it in one of them.
    #[inline]
    pub fn changed_squares(&self, other: &Board) -> Bitboard {
        let roles = (0..6).fold(0, |acc, i| acc | (self.by_role[i] ^ other.by_role[i]));
        roles | (self.by_color[0] ^ other.by_color[0]) | (self.by_color[1] ^ other.by_color[1])
    }
    #[inline]
    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        let v = self.mailbox[sq.index()];
        if v == 0 {
            None
        } else {
            let v = v - 1;
            Some(Piece {
                color: if v >= 6 { Color::Black } else { Color::White },
                role: Role::from_index((v % 6) as usize),
            })
        }
    }
    #[inline]
    pub fn role_at(&self, sq: Square) -> Option<Role> {
        let v = self.mailbox[sq.index()];
        if v == 0 {
            None
        } else {
            Some(Role::from_index(((v - 1) % 6) as usize))
        }
    }
    #[inline]
    pub fn put(&mut self, sq: Square, p: Piece) {
        debug_assert!(self.mailbox[sq.index()] == 0);
        let b = sq.bb();
        self.by_role[p.role.index()] |= b;
        self.by_color[p.color.index()] |= b;
        self.mailbox[sq.index()] = 1 + p.color as u8 * 6 + p.role as u8;
    }
    #[inline]
    pub fn remove(&mut self, sq: Square) -> Option<Piece> {
        let p = self.piece_at(sq)?;
        let b = sq.bb();
        self.by_role[p.role.index()] &= !b;
        self.by_color[p.color.index()] &= !b;
        self.mailbox[sq.index()] = 0;
        Some(p)
    }

    /// Pieces of either colour attacking `sq`, with `occ` as the blockers.
    #[inline]
    pub fn attackers_to(&self, sq: Square, occ: Bitboard) -> Bitboard {
        let t = tables();
        let rq = self.role(Role::Rook) | self.role(Role::Queen);
        let bq = self.role(Role::Bishop) | self.role(Role::Queen);
        (t.rook(sq, occ) & rq)
            | (t.bishop(sq, occ) & bq)
            | (t.knight(sq) & self.role(Role::Knight))
            | (t.king(sq) & self.role(Role::King))
            | (t.pawn(Color::White, sq) & self.pieces(Color::Black, Role::Pawn))
            | (t.pawn(Color::Black, sq) & self.pieces(Color::White, Role::Pawn))
    }

    /// Whether `by` attacks `sq` with `occ` as blockers.
    #[inline]
    pub fn is_attacked(&self, sq: Square, by: Color, occ: Bitboard) -> bool {
        let t = tables();
        let them = self.color(by);
        let rq = (self.role(Role::Rook) | self.role(Role::Queen)) & them;
        let bq = (self.role(Role::Bishop) | self.role(Role::Queen)) & them;
        (t.knight(sq) & self.role(Role::Knight) & them) != 0
            || (t.pawn(by.other(), sq) & self.role(Role::Pawn) & them) != 0
            || (t.king(sq) & self.role(Role::King) & them) != 0
            || (rq != 0 && t.rook(sq, occ) & rq != 0)
            || (bq != 0 && t.bishop(sq, occ) & bq != 0)
    }

    /// Whether the king of `color` is attacked (false when it has no king).
    #[inline]
    pub fn king_attacked(&self, color: Color) -> bool {
        match self.king(color) {
            Some(k) => self.is_attacked(k, color.other(), self.occupied()),
            None => false,
        }
    }

    /// The squares of `color`'s pieces that alone shield `color`'s king from an enemy slider.
    pub fn blockers_of_king(&self, color: Color) -> Bitboard {
        let Some(ksq) = self.king(color) else {
            return 0;
        };
        let t = tables();
        let them = self.color(color.other());
        let snipers = ((t.rook(ksq, 0) & (self.role(Role::Rook) | self.role(Role::Queen)))
            | (t.bishop(ksq, 0) & (self.role(Role::Bishop) | self.role(Role::Queen))))
            & them;
        let occ = self.occupied();
        let mut blockers = 0;
        for s in crate::bitboard::squares(snipers) {
            let b = t.between(ksq, s) & occ;
            if b != 0 && !crate::bitboard::more_than_one(b) {
                blockers |= b;
            }
        }
        blockers & self.color(color)
    }
}

impl std::fmt::Debug for Board {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for rank in (0..8).rev() {
            for file in 0..8 {
                let c = self
                    .piece_at(Square::from_coords(file, rank))
                    .map_or('.', |p| p.fen_char());
                write!(f, "{c}")?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::rng::SplitMix64;
    use crate::{Position, Square, Variant};

    /// Along random playouts of every variant, the changed squares between any two boards of the
    /// game are exactly the squares whose piece (or emptiness) differs.
    #[test]
    fn changed_squares_are_the_squares_whose_piece_differs() {
        let mut rng = SplitMix64::new(23);
        for v in Variant::ALL {
            let mut pos = Position::start(v);
            let mut boards = vec![*pos.board()];
            for _ in 0..120 {
                let moves = pos.legal_moves();
                if moves.is_empty() || pos.king_captured().is_some() {
                    break;
                }
                pos = pos.after(moves.as_slice()[rng.below(moves.len())]);
                boards.push(*pos.board());
            }
            for a in &boards {
                let b = &boards[rng.below(boards.len())];
                let want = (0..64u8)
                    .filter(|&i| a.piece_at(Square(i)) != b.piece_at(Square(i)))
                    .fold(0u64, |acc, i| acc | 1 << i);
                assert_eq!(a.changed_squares(b), want);
            }
        }
    }
}
