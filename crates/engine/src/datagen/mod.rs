//! Self-play for training data: our engine plays itself at a fixed node count from random openings,
//! and every quiet position it searched becomes a [`Record`] labelled with the search score and the
//! game's result. The command line (`doublemove datagen`) adds files, threads and progress.

pub mod record;

pub use record::{Record, RecordError, RECORD_BYTES, WDL};

use crate::search::{Limits, Searcher, MATE_BOUND};
use rules::rng::SplitMix64;
use rules::{Color, Game, Move, Outcome, Position, Variant};

/// How the games are played.
#[derive(Clone, Debug)]
pub struct SelfPlay {
    /// Nodes per search (one search per move).
    pub nodes: u64,
    /// Random moves (not turns) from the start position before the engine plays, inclusive range.
    pub random_moves: (usize, usize),
    /// An opening whose searched score is further from 0 than this is thrown away.
    pub max_opening_score: i32,
    /// A side this far ahead for [`SelfPlay::win_plies`] searches in a row has won.
    pub win_score: i32,
    pub win_plies: usize,
    /// A game longer than this many moves is a draw.
    pub max_moves: usize,
    pub hash_mb: usize,
}

impl Default for SelfPlay {
    fn default() -> Self {
        SelfPlay {
            nodes: 5000,
            random_moves: (6, 9),
            max_opening_score: 600,
            win_score: 2500,
            win_plies: 6,
            max_moves: 600,
            hash_mb: 8,
        }
    }
}

/// One finished game's records.
pub struct GameRecords {
    pub variant: Variant,
    pub records: Vec<Record>,
    pub outcome: Option<Outcome>,
}

/// A random legal move that does not spend a Double Move (openings keep each side's resources).
fn random_move(pos: &Position, rng: &mut SplitMix64) -> Option<Move> {
    let moves: Vec<Move> = pos
        .legal_moves()
        .iter()
        .copied()
        .filter(|m| !m.starts_double())
        .collect();
    (!moves.is_empty()).then(|| moves[rng.below(moves.len())])
}

/// Plays random moves from the start; None if the game ended, a king stands attacked or the engine
/// finds the result one-sided.
fn opening(
    variant: Variant,
    cfg: &SelfPlay,
    searcher: &mut Searcher,
    rng: &mut SplitMix64,
) -> Option<Game> {
    let mut game = Game::new(Position::start(variant));
    let n = cfg.random_moves.0 + rng.below(cfg.random_moves.1 - cfg.random_moves.0 + 1);
    for _ in 0..n {
        let m = random_move(game.position(), rng)?;
        game.play(m).ok()?;
        if game.outcome().is_some() {
            return None;
        }
    }
    let b = game.position().board();
    if b.king_attacked(Color::White) || b.king_attacked(Color::Black) {
        return None;
    }
    let limits = Limits {
        nodes: Some(cfg.nodes),
        ..Limits::default()
    };
    let r = searcher.search(&game, &limits, &mut |_| {})?;
    (r.score.abs() <= cfg.max_opening_score).then_some(game)
}

fn wdl_for(outcome: Option<Outcome>, side: Color) -> WDL {
    match outcome {
        Some(Outcome::Win { winner, .. }) if winner == side => WDL::Win,
        Some(Outcome::Win { .. }) => WDL::Loss,
        _ => WDL::Draw,
    }
}

/// Plays one game from a random opening of `variant` and returns its records. The same seed gives
/// the same game (one search thread, a cleared table).
pub fn play_game(
    variant: Variant,
    cfg: &SelfPlay,
    searcher: &mut Searcher,
    seed: u64,
) -> GameRecords {
    let mut rng = SplitMix64::new(seed);
    searcher.clear();
    let mut game = loop {
        if let Some(g) = opening(variant, cfg, searcher, &mut rng) {
            break g;
        }
    };
    searcher.clear();
    let limits = Limits {
        nodes: Some(cfg.nodes),
        ..Limits::default()
    };
    // (record, side to move) before the result is known.
    let mut pending: Vec<(Position, i16)> = Vec::new();
    let mut winning: Option<(Color, usize)> = None;
    let mut outcome = None;
    for _ in 0..cfg.max_moves {
        if let Some(o) = game.outcome() {
            outcome = Some(o);
            break;
        }
        if game.repetitions() >= 3 {
            break; // a draw by repetition
        }
        let pos = *game.position();
        let Some(r) = searcher.search(&game, &limits, &mut |_| {}) else {
            break;
        };
        let best = r.turn[0];
        let side = pos.turn();
        if r.score.abs() >= MATE_BOUND {
            let winner = if r.score > 0 { side } else { side.other() };
            outcome = Some(Outcome::Win {
                winner,
                reason: rules::WinReason::Checkmate,
            });
            break;
        }
        // Where the score says who wins, the game is decided.
        let leader =
            (r.score.abs() >= cfg.win_score).then(|| if r.score > 0 { side } else { side.other() });
        winning = match (winning, leader) {
            (Some((c, n)), Some(l)) if c == l => Some((c, n + 1)),
            (_, Some(l)) => Some((l, 1)),
            _ => None,
        };
        if let Some((winner, n)) = winning {
            if n >= cfg.win_plies {
                outcome = Some(Outcome::Win {
                    winner,
                    reason: rules::WinReason::Checkmate,
                });
                break;
            }
        }
        let tactical = pos.board().piece_at(best.to()).is_some()
            || best.is_en_passant()
            || best.promotion().is_some();
        if !pos.in_check() && !tactical {
            pending.push((pos, r.score.clamp(-i16::MAX as i32, i16::MAX as i32) as i16));
        }
        if game.play(best).is_err() {
            break;
        }
    }
    let records = pending
        .iter()
        .filter_map(|(p, s)| Record::new(p, *s, wdl_for(outcome, p.turn())).ok())
        .collect();
    GameRecords {
        variant,
        records,
        outcome,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_game_gives_labelled_quiet_positions_and_is_seeded() {
        let cfg = SelfPlay {
            nodes: 300,
            max_moves: 80,
            ..SelfPlay::default()
        };
        let mut s = Searcher::new(1);
        for v in Variant::ALL {
            let a = play_game(v, &cfg, &mut s, 11);
            assert!(!a.records.is_empty(), "{v}");
            assert!(a.records.iter().all(|r| r.variant == v));
            let b = play_game(v, &cfg, &mut s, 11);
            assert_eq!(a.records, b.records, "{v}: same seed, same game");
            // Results agree with the outcome and the side to move.
            if let Some(Outcome::Win { winner, .. }) = a.outcome {
                for r in &a.records {
                    assert_eq!(r.result == WDL::Win, r.turn == winner);
                }
            } else {
                assert!(a.records.iter().all(|r| r.result == WDL::Draw));
            }
        }
    }
}
