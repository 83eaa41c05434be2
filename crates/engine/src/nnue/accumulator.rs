//! Accumulators: the first layer's output for both perspectives, and the search's stack of them by
//! ply, each computed lazily from the one below by the squares whose piece changed (from scratch for
//! a perspective whose king changed bucket: then every input changed).

use super::{board_king_bucket, feature, simd, Network, HIDDEN};
use rules::bitboard::squares;
use rules::{Board, Color, Piece, Role};

/// The first layer's sums for White's and Black's perspectives.
#[derive(Clone)]
pub struct Accumulator {
    pub v: [[i16; HIDDEN]; 2],
}

impl Accumulator {
    /// Computed from scratch.
    pub fn refresh(net: &Network, board: &Board) -> Accumulator {
        Accumulator {
            v: Color::ALL.map(|c| Accumulator::perspective(net, board, c)),
        }
    }

    /// One perspective's sums, from scratch.
    fn perspective(net: &Network, board: &Board, c: Color) -> [i16; HIDDEN] {
        let kb = board_king_bucket(c, board);
        let mut v = net.ft_bias;
        for sq in squares(board.occupied()) {
            let p = board.piece_at(sq).expect("occupied");
            let row = &net.ft_weights[feature(c, kb, p, sq)];
            for (a, w) in v.iter_mut().zip(row) {
                *a = a.wrapping_add(*w);
            }
        }
        v
    }

    /// `self` = `prev` (for `from`) brought to `to`.
    pub fn update_from(&mut self, net: &Network, prev: &Accumulator, from: &Board, to: &Board) {
        // At most 32 pieces leave or arrive between two boards the search links (usually 2 to 4).
        let mut added: [(Piece, rules::Square); 32] =
            [(Piece::new(Color::White, Role::Pawn), rules::Square::new(0)); 32];
        let mut removed = added;
        let (mut na, mut nr) = (0, 0);
        for sq in squares(from.changed_squares(to)) {
            if let Some(p) = from.piece_at(sq) {
                if nr < 32 {
                    removed[nr] = (p, sq);
                }
                nr += 1;
            }
            if let Some(p) = to.piece_at(sq) {
                if na < 32 {
                    added[na] = (p, sq);
                }
                na += 1;
            }
        }
        if na > 32 || nr > 32 {
            *self = Accumulator::refresh(net, to);
            return;
        }
        for c in Color::ALL {
            let kb = board_king_bucket(c, to);
            if kb != board_king_bucket(c, from) {
                self.v[c.index()] = Accumulator::perspective(net, to, c);
                continue;
            }
            let row = |(p, sq): (Piece, rules::Square)| &net.ft_weights[feature(c, kb, p, sq)];
            let (dst, src) = (&mut self.v[c.index()], &prev.v[c.index()]);
            // The search's common cases (a quiet move, a capture) with the rows in small arrays:
            // filling two arrays of 32 rows for them showed in profiles.
            match (na, nr) {
                (1, 1) => simd::update(dst, src, &[row(added[0])], &[row(removed[0])]),
                (1, 2) => simd::update(
                    dst,
                    src,
                    &[row(added[0])],
                    &[row(removed[0]), row(removed[1])],
                ),
                _ => {
                    let mut add: [&[i16; HIDDEN]; 32] = [&net.ft_bias; 32];
                    let mut sub: [&[i16; HIDDEN]; 32] = [&net.ft_bias; 32];
                    for (slot, x) in add.iter_mut().zip(&added[..na]) {
                        *slot = row(*x);
                    }
                    for (slot, x) in sub.iter_mut().zip(&removed[..nr]) {
                        *slot = row(*x);
                    }
                    simd::update(dst, src, &add[..na], &sub[..nr]);
                }
            }
        }
    }
}

/// The search's accumulators by ply: each node records its board on entry ([`AccStack::enter`]);
/// an evaluation brings the ply's accumulator up to date from the nearest fresh one below.
pub struct AccStack {
    accs: Vec<Accumulator>,
    boards: Vec<Board>,
    fresh: Vec<bool>,
}

impl AccStack {
    pub fn new(plies: usize) -> AccStack {
        let zero = Accumulator {
            v: [[0; HIDDEN]; 2],
        };
        AccStack {
            accs: vec![zero; plies],
            boards: vec![Board::empty(); plies],
            fresh: vec![false; plies],
        }
    }

    /// A node at `ply` stands on `board` (the nodes below it on the path have entered before).
    #[inline]
    pub fn enter(&mut self, ply: usize, board: &Board) {
        // An accumulator depends only on the board: one already made for this board stays good.
        if self.fresh[ply] && self.boards[ply] == *board {
            return;
        }
        self.boards[ply] = *board;
        self.fresh[ply] = false;
    }

    /// The accumulator of the board entered at `ply`.
    pub fn get(&mut self, net: &Network, ply: usize) -> &Accumulator {
        let base = (0..=ply).rev().find(|&p| self.fresh[p]);
        let start = match base {
            Some(p) => p + 1,
            None => {
                self.accs[0] = Accumulator::refresh(net, &self.boards[0]);
                self.fresh[0] = true;
                1
            }
        };
        for p in start..=ply {
            let (below, here) = self.accs.split_at_mut(p);
            here[0].update_from(net, &below[p - 1], &self.boards[p - 1], &self.boards[p]);
            self.fresh[p] = true;
        }
        &self.accs[ply]
    }
}

#[cfg(test)]
mod tests {
    use super::super::embedded;
    use super::*;
    use rules::rng::SplitMix64;
    use rules::{Position, Variant};

    /// Along random playouts of every variant, the incrementally updated accumulators equal a full
    /// refresh at every ply, also when plies are skipped (evaluated only now and then), with the
    /// embedded network and with one whose every king bucket differs.
    #[test]
    fn incremental_accumulators_equal_a_full_refresh() {
        for net in [embedded(), std::sync::Arc::new(Network::random(11))] {
            check_incremental_updates(&net);
        }
    }

    fn check_incremental_updates(net: &Network) {
        let mut rng = SplitMix64::new(5);
        let mut bucket_changes = 0;
        for v in Variant::ALL {
            for game in 0..20 {
                let mut stack = AccStack::new(200);
                let mut pos = Position::start(v);
                stack.enter(0, pos.board());
                for ply in 1..200 {
                    let moves = pos.legal_moves();
                    if moves.is_empty() || pos.king_captured().is_some() {
                        break;
                    }
                    let before = *pos.board();
                    pos = pos.after(moves.as_slice()[rng.below(moves.len())]);
                    bucket_changes += Color::ALL
                        .iter()
                        .filter(|&&c| {
                            board_king_bucket(c, &before) != board_king_bucket(c, pos.board())
                        })
                        .count();
                    stack.enter(ply, pos.board());
                    if (game + ply) % 3 == 0 {
                        let inc = stack.get(net, ply).v;
                        let full = Accumulator::refresh(net, pos.board()).v;
                        assert!(inc == full, "{v}: game {game} ply {ply}");
                    }
                }
            }
        }
        // The playouts took kings across buckets, so the refresh on a change was checked too.
        assert!(bucket_changes > 50, "{bucket_changes} king bucket changes");
    }
}
