//! Perft: counting the leaves of the game tree, by moves or by complete turns (see shared vectors README).

use crate::movegen::MoveList;
use crate::position::{Phase, Position};
use crate::types::Move;
use crate::variants;

/// Counts the legal moves now, in bulk (completion tests only where they can fail).
#[inline]
pub fn count_moves(pos: &Position) -> u64 {
    variants::count_legal(pos)
}

/// Move-unit perft: a ply is one chess move (a Double Move first half counts apart from the same move
/// played alone).
pub fn perft(pos: &Position, depth: u32) -> u64 {
    match depth {
        0 => 1,
        1 => count_moves(pos),
        _ => {
            let mut list = MoveList::new();
            variants::legal_moves(pos, &mut list);
            let mut nodes = 0;
            let mut child = *pos;
            if depth == 2 {
                for &m in list.iter() {
                    child.copy_from(pos);
                    child.play_unchecked(m);
                    nodes += count_moves(&child);
                }
            } else {
                for &m in list.iter() {
                    child.copy_from(pos);
                    child.play_unchecked(m);
                    nodes += perft(&child, depth - 1);
                }
            }
            nodes
        }
    }
}

/// Turn-unit perft: a ply is one complete turn; from a mid-turn position the first ply completes it.
pub fn perft_turns(pos: &Position, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let mut nodes = 0;
    for &m in pos.legal_moves().iter() {
        let after = pos.after(m);
        nodes += if after.phase() == Phase::Second {
            if depth == 1 {
                count_moves(&after)
            } else {
                after
                    .legal_moves()
                    .iter()
                    .map(|&s| perft_turns(&after.after(s), depth - 1))
                    .sum()
            }
        } else {
            perft_turns(&after, depth - 1)
        };
    }
    nodes
}

/// The first-level breakdown: each legal move (move unit) or each complete turn (turn unit), with its count.
pub fn divide(pos: &Position, depth: u32, turns: bool) -> Vec<(Vec<Move>, u64)> {
    let mut out = Vec::new();
    if depth == 0 {
        return out;
    }
    for &m in pos.legal_moves().iter() {
        let after = pos.after(m);
        if !turns {
            out.push((vec![m], perft(&after, depth - 1)));
        } else if after.phase() == Phase::Second {
            for &s in after.legal_moves().iter() {
                out.push((vec![m, s], perft_turns(&after.after(s), depth - 1)));
            }
        } else {
            out.push((vec![m], perft_turns(&after, depth - 1)));
        }
    }
    out
}
