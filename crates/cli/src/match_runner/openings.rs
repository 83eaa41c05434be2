//! Openings: lines of a file (an extended FEN, or turns played from the start position), or a
//! built-in set of short random openings from a seeded generator, one per game pair.

use rules::game::{legal_turns, turn_uci};
use rules::rng::SplitMix64;
use rules::{Color, Game, Position, Variant};
use std::collections::HashSet;

/// A start for a game pair: a position and turns already played from it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Opening {
    /// `None`: the variant's start position.
    pub fen: Option<String>,
    /// Turns as text (UCI or SAN per move, comma-joined within a turn).
    pub turns: Vec<String>,
}

impl Opening {
    /// The game after the opening.
    pub fn game(&self, variant: Variant) -> Result<Game, String> {
        let start = match &self.fen {
            None => Position::start(variant),
            Some(f) => Position::from_fen(variant, f).map_err(|e| e.to_string())?,
        };
        let mut game = Game::new(start);
        for t in &self.turns {
            game.play_turn_text(t, false).map_err(|e| e.to_string())?;
        }
        if let Some(o) = game.outcome() {
            return Err(format!(
                "the opening ends the game: {}",
                o.describe(variant)
            ));
        }
        Ok(game)
    }

    /// A short label for progress lines.
    pub fn label(&self) -> String {
        match (&self.fen, self.turns.is_empty()) {
            (Some(f), true) => f.clone(),
            (Some(f), false) => format!("{f} + {}", self.turns.join(" ")),
            (None, true) => "startpos".into(),
            (None, false) => self.turns.join(" "),
        }
    }
}

/// A move number such as `1.` or `12...`, skipped in a line of turns.
fn is_move_number(tok: &str) -> bool {
    let digits = tok.trim_end_matches('.');
    digits.len() < tok.len() && !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
}

/// Reads one line: an extended FEN if it has a `/` (a board), else whitespace-separated turns.
pub fn parse_line(line: &str, variant: Variant) -> Result<Opening, String> {
    let line = line.trim();
    let opening = if line.contains('/') {
        Opening {
            fen: Some(line.to_string()),
            turns: Vec::new(),
        }
    } else {
        Opening {
            fen: None,
            turns: line
                .split_whitespace()
                .filter(|t| !is_move_number(t))
                .map(str::to_string)
                .collect(),
        }
    };
    opening.game(variant)?;
    Ok(opening)
}

/// Every opening of a file; blank lines and lines starting with `#` are skipped.
pub fn parse_file(text: &str, variant: Variant) -> Result<Vec<Opening>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        out.push(parse_line(l, variant).map_err(|e| format!("line {}: {e}", i + 1))?);
    }
    if out.is_empty() {
        return Err("no openings in the file".into());
    }
    Ok(out)
}

/// `count` random openings of 2–4 legal turns from the start, none ending with a king attacked,
/// distinct where possible, the same for the same seed.
pub fn random_openings(variant: Variant, count: usize, seed: u64) -> Vec<Opening> {
    let mut rng = SplitMix64::new(seed ^ 0xD0AB_1E30_7E5E_ED00);
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let mut pick = None;
        for _attempt in 0..200 {
            let n = 2 + rng.below(3);
            let mut game = Game::new(Position::start(variant));
            let mut turns = Vec::new();
            for _ in 0..n {
                let options = legal_turns(game.position());
                if options.is_empty() || game.outcome().is_some() {
                    break;
                }
                let t = turn_uci(&options[rng.below(options.len())]);
                game.play_turn_text(&t, false)
                    .expect("a generated turn is legal");
                turns.push(t);
            }
            // An opening that leaves a king attacked hands one side a forcing start, and in Twinmove
            // (the attacked king is captured) decides the game before the engines play at all.
            let board = game.position().board();
            if game.outcome().is_some()
                || turns.len() < n
                || board.king_attacked(Color::White)
                || board.king_attacked(Color::Black)
            {
                continue;
            }
            let fen = game.position().fen();
            pick = Some((Opening { fen: None, turns }, fen));
            if !seen.contains(&pick.as_ref().unwrap().1) {
                break;
            }
        }
        let (o, fen) = pick.expect("some opening can be played");
        seen.insert(fen);
        out.push(o);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_detected() {
        let o = parse_line("1. e2e4 c7c5,d7d6", Variant::TwoMove).unwrap();
        assert_eq!(o.fen, None);
        assert_eq!(o.turns, ["e2e4", "c7c5,d7d6"]);
        let o = parse_line("e4 e5 Nf3", Variant::Chess).unwrap();
        assert_eq!(o.turns.len(), 3);
        let f = "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1";
        assert_eq!(
            parse_line(f, Variant::Chess).unwrap().fen.as_deref(),
            Some(f)
        );
        assert!(parse_line("e2e5", Variant::Chess).is_err());
        assert!(parse_line("4k3/8/8/8/8/8/8/4K3 w - - 0 1", Variant::Chess)
            .unwrap_err()
            .contains("ends the game"));
        let all = parse_file("# comment\n\ne2e4\n\nd2d4 d7d5\n", Variant::Chess).unwrap();
        assert_eq!(all.len(), 2);
        assert!(parse_file("e2e4\nxx\n", Variant::Chess)
            .unwrap_err()
            .starts_with("line 2:"));
        assert!(parse_file("# nothing\n", Variant::Chess).is_err());
    }

    /// The openings for a seed never change (match reports name their seed).
    #[test]
    fn random_openings_are_pinned() {
        for (v, first) in [
            (Variant::Chess, "b2b4 a7a6"),
            (Variant::TwoMove, "b2b4 c7c5,d8b6"),
            (Variant::DoubleMove, "a2a3,d2d4 e7e5,b7b6"),
            (Variant::Twinmove, "d2d4,b1a3 d7d6,g8f6"),
        ] {
            let o = random_openings(v, 3, 7);
            assert_eq!(o[0].turns.join(" "), first, "{v}");
        }
        let third = random_openings(Variant::TwoMove, 3, 7).remove(2);
        assert_eq!(third.turns.join(" "), "b2b4 d7d6,c7c5 g2g3,b1c3 c8d7,h7h6");
    }

    #[test]
    fn random_openings_are_legal_distinct_and_seeded() {
        for v in Variant::ALL {
            let a = random_openings(v, 8, 7);
            assert_eq!(a, random_openings(v, 8, 7));
            assert_ne!(a, random_openings(v, 8, 8));
            let fens: HashSet<String> = a
                .iter()
                .map(|o| o.game(v).unwrap().position().fen())
                .collect();
            assert_eq!(fens.len(), 8, "{v}");
            assert!(a.iter().all(|o| (2..=4).contains(&o.turns.len())));
            let board_of = |o: &Opening| *o.game(v).unwrap().position().board();
            let many = random_openings(v, 300, 1);
            assert!(
                many.iter()
                    .map(board_of)
                    .all(|b| !b.king_attacked(Color::White) && !b.king_attacked(Color::Black)),
                "{v}: an opening leaves a king attacked"
            );
        }
    }
}
