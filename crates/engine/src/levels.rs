//! Strength levels for people and sparring: 1 random, 2 greedy (best evaluation after one turn),
//! 3–7 searches limited in depth and nodes, 8 full strength.

use crate::eval::evaluate;
use crate::search::{Limits, MATE};
use rules::game::{legal_turns, Game};
use rules::rng::xorshift64;
use rules::Move;

pub const MAX_LEVEL: u8 = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Level(pub u8);

impl Default for Level {
    fn default() -> Self {
        Level(MAX_LEVEL)
    }
}

type Chooser = fn(&Game, u64) -> Option<Vec<Move>>;

/// Level 1: a uniformly random legal turn.
pub fn random_turn(game: &Game, seed: u64) -> Option<Vec<Move>> {
    let turns = legal_turns(game.position());
    if turns.is_empty() {
        return None;
    }
    let i = (xorshift64(seed | 1) % turns.len() as u64) as usize;
    Some(turns[i].clone())
}

/// Level 2: the turn after which the static evaluation is best (ties broken at random).
pub fn greedy_turn(game: &Game, seed: u64) -> Option<Vec<Move>> {
    let root = *game.position();
    let turns = legal_turns(&root);
    let mut best: Option<(i32, u64, Vec<Move>)> = None;
    let mut rng = seed | 1;
    for t in turns {
        let mut pos = root;
        for &m in &t {
            pos = pos.after(m);
        }
        let score = if pos.king_captured().is_some() || pos.legal_moves().is_empty() {
            // The game ends: a win for the mover unless it is a draw.
            match rules::outcome::position_outcome(&pos) {
                Some(o) if o.winner() == Some(root.turn()) => MATE,
                Some(o) if o.winner().is_some() => -MATE,
                _ => 0,
            }
        } else if pos.turn() == root.turn() {
            evaluate(&pos)
        } else {
            -evaluate(&pos)
        };
        rng = xorshift64(rng);
        if best
            .as_ref()
            .is_none_or(|(s, r, _)| (score, rng) > (*s, *r))
        {
            best = Some((score, rng, t));
        }
    }
    best.map(|b| b.2)
}

impl Level {
    /// Levels that do not search choose their turn directly.
    pub fn chooser(self) -> Option<Chooser> {
        match self.0 {
            1 => Some(random_turn),
            2 => Some(greedy_turn),
            _ => None,
        }
    }

    /// Caps the search for levels 3–7.
    pub fn restrict(self, limits: &mut Limits) {
        let (depth, nodes) = match self.0 {
            3 => (2, 2_000),
            4 => (3, 10_000),
            5 => (4, 50_000),
            6 => (6, 250_000),
            7 => (8, 1_000_000),
            _ => return,
        };
        limits.depth = Some(limits.depth.map_or(depth, |d| d.min(depth)));
        limits.nodes = Some(limits.nodes.map_or(nodes, |n| n.min(nodes)));
    }
}
