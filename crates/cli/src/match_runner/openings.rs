//! Openings: lines of a file (an extended FEN, or turns played from the start position), or a
//! built-in set of short random openings from a seeded generator, one per game pair.

use rules::game::{legal_turns, turn_uci};
use rules::notation::san;
use rules::outcome::position_outcome;
use rules::rng::SplitMix64;
use rules::{Color, Game, Move, Outcome, Phase, Position, Variant};
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

/// A turn written with its move number attached (`1.f4,d3`, `2...Nf6`, as PGN allows), without it.
fn strip_move_number(tok: &str) -> &str {
    let rest = tok.trim_start_matches(|c: char| c.is_ascii_digit());
    let after = rest.trim_start_matches('.');
    if rest.len() < tok.len() && after.len() < rest.len() && !after.is_empty() {
        after
    } else {
        tok
    }
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
                .map(|t| strip_move_number(t).to_string())
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

/// "White" or "Black", for messages.
fn side(c: Color) -> &'static str {
    match c {
        Color::White => "White",
        Color::Black => "Black",
    }
}

/// A turn's moves in SAN joined by commas, played from `pos`.
fn turn_san(pos: &Position, moves: &[Move]) -> String {
    let mut p = *pos;
    let mut parts = Vec::with_capacity(moves.len());
    for &m in moves {
        parts.push(san(&p, m));
        p.play_unchecked(m);
    }
    parts.join(",")
}

/// Whether each side still has what the variant gives it for its turns: in Double Move Chess both
/// Double Moves (unless `spend_double_moves`), in Two Move Chess a normal turn for the side to move
/// (a response move turn is a single move, a tempo down before the engines play).
pub fn resources_kept(pos: &Position, spend_double_moves: bool) -> Result<(), String> {
    match pos.variant() {
        // The start position's response move turn is the rule itself, not a lost move.
        Variant::TwoMove
            if pos.phase() == Phase::Response
                && pos.repetition_key() != Position::start(Variant::TwoMove).repetition_key() =>
        {
            Err(format!(
                "{} has only a response move turn (one move)",
                side(pos.turn())
            ))
        }
        Variant::DoubleMove if !spend_double_moves => {
            match Color::ALL
                .into_iter()
                .find(|c| !pos.state().double_move[c.index()])
            {
                Some(c) => Err(format!("{}'s Double Move is spent", side(c))),
                None => Ok(()),
            }
        }
        _ => Ok(()),
    }
}

/// A complete turn of the side to move after which the game is over (checkmate, a captured king, a
/// lone king with no turn, stalemate), with that result; `pos` must be at the start of a turn.
pub fn game_ending_turn(pos: &Position) -> Option<(Vec<Move>, Outcome)> {
    legal_turns(pos).into_iter().find_map(|turn| {
        let mut p = *pos;
        for &m in &turn {
            p.play_unchecked(m);
        }
        position_outcome(&p).map(|o| (turn, o))
    })
}

/// Whether the game after an opening is a fair start: not over, at the start of a turn, no king
/// attacked, each side's turn resources kept ([`resources_kept`]), and neither side able to end the
/// game with its next turn — the side to move now, nor its opponent were it to move instead (a threat
/// the side to move would have to answer at once). The error says what is wrong.
pub fn check_start(game: &Game, spend_double_moves: bool) -> Result<(), String> {
    let pos = game.position();
    let variant = pos.variant();
    if let Some(o) = game.outcome() {
        return Err(format!(
            "the opening ends the game: {}",
            o.describe(variant)
        ));
    }
    if !pos.at_turn_start() {
        return Err("the opening stops half way through a turn".into());
    }
    if let Some(c) = Color::ALL
        .into_iter()
        .find(|&c| pos.board().king_attacked(c))
    {
        return Err(format!("the {} king is attacked", c.name()));
    }
    resources_kept(pos, spend_double_moves)?;
    if let Some((turn, o)) = game_ending_turn(pos) {
        return Err(format!(
            "{} can end the game at once with {}: {}",
            side(pos.turn()),
            turn_san(pos, &turn),
            o.describe(variant)
        ));
    }
    // Passing is possible here: no king is attacked and a response move turn was refused above.
    if let Some((turn, o)) = pos
        .null_move()
        .as_ref()
        .and_then(|p| game_ending_turn(p).map(|(t, o)| (turn_san(p, &t), o)))
    {
        return Err(format!(
            "{} threatens to end the game at once with {turn}: {}",
            side(pos.turn().other()),
            o.describe(variant)
        ));
    }
    Ok(())
}

/// Tries for a new position before an opening already given is accepted again.
const TRIES_FOR_NEW: usize = 200;
/// Tries before giving up (only a variant without fair short openings would get there).
const MAX_TRIES: usize = 20_000;

/// A seeded stream of random openings of 2–4 legal turns from the start position that pass
/// [`check_start`], each reaching a position not given before where possible.
pub struct RandomOpenings {
    variant: Variant,
    spend_double_moves: bool,
    rng: SplitMix64,
    seen: HashSet<u64>,
}

impl RandomOpenings {
    pub fn new(variant: Variant, seed: u64, spend_double_moves: bool) -> RandomOpenings {
        RandomOpenings {
            variant,
            spend_double_moves,
            rng: SplitMix64::new(seed ^ 0xD0AB_1E30_7E5E_ED00),
            seen: HashSet::new(),
        }
    }

    /// A uniformly random legal turn; in Double Move Chess only single moves unless Double Moves
    /// may be spent (turns that spend one outnumber single moves about twentyfold).
    fn random_turn(&mut self, pos: &Position) -> Option<Vec<Move>> {
        let mut options: Vec<Vec<Move>> =
            if pos.variant() == Variant::DoubleMove && !self.spend_double_moves {
                pos.legal_moves()
                    .iter()
                    .filter(|m| !m.starts_double())
                    .map(|&m| vec![m])
                    .collect()
            } else {
                legal_turns(pos)
            };
        if options.is_empty() {
            return None;
        }
        let i = self.rng.below(options.len());
        Some(options.swap_remove(i))
    }

    /// One random opening and its position's repetition key, if it is a fair start.
    fn candidate(&mut self) -> Option<(Opening, u64)> {
        let n = 2 + self.rng.below(3);
        let mut game = Game::new(Position::start(self.variant));
        let mut turns = Vec::with_capacity(n);
        for _ in 0..n {
            if game.outcome().is_some() {
                return None;
            }
            let t = turn_uci(&self.random_turn(game.position())?);
            game.play_turn_text(&t, false)
                .expect("a generated turn is legal");
            turns.push(t);
        }
        check_start(&game, self.spend_double_moves).ok()?;
        let key = game.position().repetition_key();
        Some((Opening { fen: None, turns }, key))
    }

    /// The next opening.
    pub fn next_opening(&mut self) -> Result<Opening, String> {
        let mut repeated = None;
        for tries in 1..=MAX_TRIES {
            if let Some((o, key)) = self.candidate() {
                if self.seen.insert(key) {
                    return Ok(o);
                }
                repeated = Some(o);
            }
            if tries >= TRIES_FOR_NEW {
                if let Some(o) = repeated.take() {
                    return Ok(o);
                }
            }
        }
        Err(format!(
            "no fair {} opening found in {MAX_TRIES} random tries",
            self.variant
        ))
    }
}

/// `count` random openings ([`RandomOpenings`]); the same for the same seed.
pub fn random_openings(
    variant: Variant,
    count: usize,
    seed: u64,
    spend_double_moves: bool,
) -> Result<Vec<Opening>, String> {
    let mut g = RandomOpenings::new(variant, seed, spend_double_moves);
    (0..count).map(|_| g.next_opening()).collect()
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
        let o = parse_line("1.f4,d3 1...f6,Nh6 2. e4", Variant::DoubleMove).unwrap();
        assert_eq!(o.turns, ["f4,d3", "f6,Nh6", "e4"]);
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
            (Variant::DoubleMove, "b2b4 a7a6"),
            (Variant::Twinmove, "d2d4,b1a3 d7d6,g8f6"),
        ] {
            let o = random_openings(v, 3, 7, false).unwrap();
            assert_eq!(o[0].turns.join(" "), first, "{v}");
        }
        let third = random_openings(Variant::TwoMove, 3, 7, false)
            .unwrap()
            .remove(2);
        assert_eq!(third.turns.join(" "), "b2b4 d7d6,c7c5 g2g3,b1c3 c8d7,h7h6");
        let spent = random_openings(Variant::DoubleMove, 1, 7, true).unwrap();
        assert_eq!(spent[0].turns.join(" "), "a2a3,d2d4 e7e5,b7b6");
    }

    #[test]
    fn random_openings_are_legal_distinct_and_seeded() {
        for v in Variant::ALL {
            let a = random_openings(v, 8, 7, false).unwrap();
            assert_eq!(a, random_openings(v, 8, 7, false).unwrap());
            assert_ne!(a, random_openings(v, 8, 8, false).unwrap());
            let keys: HashSet<u64> = a
                .iter()
                .map(|o| o.game(v).unwrap().position().repetition_key())
                .collect();
            assert_eq!(keys.len(), 8, "{v}");
            assert!(a.iter().all(|o| (2..=4).contains(&o.turns.len())));
        }
    }

    /// Whether some turn of the side to move ends the game, found through `Game` (the match's own
    /// arbiter) rather than the position-level test `check_start` uses.
    fn ends_in_one(game: &Game) -> Option<String> {
        legal_turns(game.position()).into_iter().find_map(|t| {
            let mut g = game.clone();
            g.play_turn(&t, false).unwrap();
            g.outcome()
                .map(|o| format!("{} {}", turn_uci(&t), o.describe(g.variant())))
        })
    }

    /// The guarantees, checked directly on a few hundred openings per variant: each side's turn
    /// resources kept, no king attacked, no turn of the side to move that ends the game, and no such
    /// turn for the opponent had it the move.
    #[test]
    fn random_openings_are_fair_starts() {
        for v in Variant::ALL {
            for o in random_openings(v, 300, 1, false).unwrap() {
                let game = o.game(v).unwrap();
                let pos = game.position();
                let label = format!("{v}: {}", o.label());
                assert!(pos.at_turn_start(), "{label}");
                assert!(
                    !pos.board().king_attacked(Color::White)
                        && !pos.board().king_attacked(Color::Black),
                    "{label}: a king is attacked"
                );
                match v {
                    Variant::DoubleMove => {
                        assert_eq!(pos.state().double_move, [true, true], "{label}");
                        assert!(o.turns.iter().all(|t| !t.contains(',')), "{label}");
                    }
                    Variant::TwoMove => assert_eq!(pos.phase(), Phase::Start, "{label}"),
                    _ => {}
                }
                if let Some(end) = ends_in_one(&game) {
                    panic!("{label}: the side to move ends the game with {end}");
                }
                let passed = Game::new(pos.null_move().expect("the turn can be passed"));
                if let Some(end) = ends_in_one(&passed) {
                    panic!("{label}: the side not to move threatens {end}");
                }
            }
        }
    }

    /// With --spend-double-moves the openings may use them (most random turns do), and are otherwise
    /// as fair.
    #[test]
    fn double_moves_are_spent_only_when_asked() {
        let spent = random_openings(Variant::DoubleMove, 50, 3, true).unwrap();
        let games: Vec<Game> = spent
            .iter()
            .map(|o| o.game(Variant::DoubleMove).unwrap())
            .collect();
        assert!(games
            .iter()
            .any(|g| g.position().state().double_move != [true, true]));
        assert!(games.iter().all(|g| check_start(g, true).is_ok()));
        assert!(games.iter().any(|g| check_start(g, false).is_err()));
    }

    /// The starts the issue names are refused, each with its reason.
    #[test]
    fn unfair_starts_are_refused_with_a_reason() {
        let why = |v: Variant, line: &str, spend: bool| {
            let o = parse_line(line, v).unwrap();
            check_start(&o.game(v).unwrap(), spend).unwrap_err()
        };
        assert_eq!(
            why(Variant::DoubleMove, "1.f4,d3 f6,Nh6", false),
            "White's Double Move is spent"
        );
        assert_eq!(
            why(Variant::DoubleMove, "1.f4,h3 d5,e6 2.g4", true),
            "Black can end the game at once with Qh4#: black wins by checkmate (0-1)"
        );
        assert_eq!(
            why(Variant::Chess, "1. e4 e5 2. Qh5 Nc6 3. Bc4", false),
            "White threatens to end the game at once with Qxf7#: white wins by checkmate (1-0)"
        );
        assert_eq!(
            why(Variant::Chess, "1. e4 f5 2. Qh5", false),
            "the black king is attacked"
        );
        assert_eq!(
            why(Variant::TwoMove, "1. e4 d5,Nc6 2. exd5", false),
            "Black has only a response move turn (one move)"
        );
        assert_eq!(
            why(Variant::Twinmove, "1. e4,Bc4 f6,Nc6 2. d3,Qh5", false),
            "the black king is attacked"
        );
        let twin = "1. b4,Nf3 d5,Nf6 2. b5,Bb2 e6,Be7 3. c3,Qa4";
        assert_eq!(
            why(Variant::Twinmove, twin, false),
            "White threatens to end the game at once with b6+,Qxe8: white wins by capture of the king (1-0)"
        );
        assert_eq!(
            why(Variant::Twinmove, &format!("{twin} Rg8"), false),
            "White can end the game at once with b6+,Qxe8: white wins by capture of the king (1-0)"
        );
        for v in Variant::ALL {
            let start = Position::start(v).fen();
            assert_eq!(
                check_start(&parse_line(&start, v).unwrap().game(v).unwrap(), false),
                Ok(()),
                "{v}"
            );
        }
        assert!(check_start(
            &parse_line("1. e4 e5 2. Nf3 Nc6", Variant::Chess)
                .unwrap()
                .game(Variant::Chess)
                .unwrap(),
            false
        )
        .is_ok());
    }
}
