//! PGN with comma turns: reading (tags, move numbers, comments, NAGs, variations skipped, results) into a
//! validated [`Game`], and writing a game back, as in the rule author's example files.

use crate::fen::FenError;
use crate::game::{Game, TurnError};
use crate::outcome::Outcome;
use crate::position::Position;
use crate::types::Color;
use crate::variants::Variant;
use std::fmt;

/// A PGN record as text: tags and the turns of its main line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PgnRecord {
    pub tags: Vec<(String, String)>,
    /// One entry per turn: the turn text (`Nf3,e4`) and the comment after it, if any.
    pub turns: Vec<(String, Option<String>)>,
    /// The result token, if present (`1-0`, `0-1`, `1/2-1/2`, `*`).
    pub result: Option<String>,
}

impl PgnRecord {
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PgnError {
    Syntax(String),
    Variant(String),
    Fen(FenError),
    Turn(TurnError),
}

impl fmt::Display for PgnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PgnError::Syntax(s) => write!(f, "PGN syntax: {s}"),
            PgnError::Variant(s) => f.write_str(s),
            PgnError::Fen(e) => write!(f, "PGN FEN tag: {e}"),
            PgnError::Turn(e) => write!(f, "{e}"),
        }
    }
}
impl std::error::Error for PgnError {}

fn is_result(t: &str) -> bool {
    matches!(t, "1-0" | "0-1" | "1/2-1/2" | "½-½" | "*")
}

/// Splits PGN text into its tags and main-line turns. Bare movetext (no tags) is accepted.
pub fn parse_pgn(text: &str) -> Result<PgnRecord, PgnError> {
    let mut rec = PgnRecord::default();
    let mut movetext = String::new();
    for line in text.lines() {
        let l = line.trim();
        if l.starts_with('%') {
            continue;
        }
        if l.starts_with('[') && movetext.trim().is_empty() {
            let inner = l
                .strip_prefix('[')
                .and_then(|s| s.strip_suffix(']'))
                .ok_or_else(|| PgnError::Syntax(format!("bad tag line '{l}'")))?;
            let (name, rest) = inner
                .split_once(char::is_whitespace)
                .ok_or_else(|| PgnError::Syntax(format!("bad tag line '{l}'")))?;
            let value = rest
                .trim()
                .strip_prefix('"')
                .and_then(|s| s.strip_suffix('"'))
                .ok_or_else(|| {
                    PgnError::Syntax(format!("tag {name}: value must be in double quotes"))
                })?;
            rec.tags.push((
                name.to_string(),
                value.replace("\\\"", "\"").replace("\\\\", "\\"),
            ));
        } else {
            movetext.push_str(line);
            movetext.push('\n');
        }
    }
    // Tokenize: comments, variations, NAGs and move numbers are dropped or attached.
    let mut chars = movetext.chars().peekable();
    let mut token = String::new();
    let mut tokens: Vec<Token> = Vec::new();
    let flush = |token: &mut String, tokens: &mut Vec<Token>| {
        if !token.is_empty() {
            tokens.push(Token::Word(std::mem::take(token)));
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '{' => {
                flush(&mut token, &mut tokens);
                let mut comment = String::new();
                loop {
                    match chars.next() {
                        Some('}') => break,
                        Some(ch) => comment.push(ch),
                        None => return Err(PgnError::Syntax("unclosed comment '{'".into())),
                    }
                }
                tokens.push(Token::Comment(comment.trim().to_string()));
            }
            ';' => {
                flush(&mut token, &mut tokens);
                for ch in chars.by_ref() {
                    if ch == '\n' {
                        break;
                    }
                }
            }
            '(' => {
                flush(&mut token, &mut tokens);
                let mut depth = 1;
                while depth > 0 {
                    match chars.next() {
                        Some('(') => depth += 1,
                        Some(')') => depth -= 1,
                        Some('{') => {
                            for ch in chars.by_ref() {
                                if ch == '}' {
                                    break;
                                }
                            }
                        }
                        Some(_) => {}
                        None => return Err(PgnError::Syntax("unclosed variation '('".into())),
                    }
                }
            }
            ')' => return Err(PgnError::Syntax("')' without '('".into())),
            c if c.is_whitespace() => {
                // A comma followed by spaces still joins the moves of one turn.
                if token.ends_with(',') {
                    continue;
                }
                flush(&mut token, &mut tokens);
            }
            ',' if token.is_empty() => {
                if let Some(Token::Word(w)) = tokens.last_mut() {
                    let w = std::mem::take(w);
                    tokens.pop();
                    token = w;
                }
                token.push(',');
            }
            c => token.push(c),
        }
    }
    flush(&mut token, &mut tokens);

    for tok in tokens {
        match tok {
            Token::Comment(c) => {
                if let Some(last) = rec.turns.last_mut() {
                    last.1 = Some(match last.1.take() {
                        Some(prev) => format!("{prev} {c}"),
                        None => c,
                    });
                }
            }
            Token::Word(w) => {
                if rec.result.is_some() {
                    return Err(PgnError::Syntax(format!("'{w}' after the result")));
                }
                if w.starts_with('$') {
                    continue;
                }
                // Strip a move number prefix: `12.`, `12...`, `12.e4`.
                let digits = w.chars().take_while(|c| c.is_ascii_digit()).count();
                let rest = if digits > 0 && w[digits..].starts_with('.') {
                    w[digits..].trim_start_matches('.')
                } else {
                    w.as_str()
                };
                if rest.is_empty() {
                    continue;
                }
                if is_result(rest) {
                    rec.result = Some(rest.replace('½', "1/2"));
                    continue;
                }
                // An unfinished last turn keeps its trailing comma (`e4,`), which may have swallowed
                // the result token after it.
                let mut turn = rest.to_string();
                for r in ["1-0", "0-1", "1/2-1/2", "½-½", "*"] {
                    if let Some(prefix) = rest.strip_suffix(r).filter(|p| p.ends_with(',')) {
                        turn = prefix.to_string();
                        rec.result = Some(r.replace('½', "1/2"));
                    }
                }
                rec.turns.push((turn, None));
            }
        }
    }
    Ok(rec)
}

enum Token {
    Word(String),
    Comment(String),
}

/// The variant a record is in: the one given (if any) must agree with its `[Variant]` tag.
pub fn record_variant(rec: &PgnRecord, given: Option<Variant>) -> Result<Variant, PgnError> {
    let tagged = match rec.tag("Variant") {
        Some(t) => Some(
            t.parse::<Variant>()
                .map_err(|e| PgnError::Variant(format!("[Variant \"{t}\"]: {e}")))?,
        ),
        None => None,
    };
    match (given, tagged) {
        (Some(g), Some(t)) if g != t => Err(PgnError::Variant(format!(
            "the record's [Variant \"{}\"] tag says {t}, but {g} was asked for",
            rec.tag("Variant").unwrap_or_default()
        ))),
        (Some(g), _) => Ok(g),
        (None, Some(t)) => Ok(t),
        (None, None) => Ok(Variant::Chess),
    }
}

/// Replays a record: every turn must be legal and whole; only the last one may stop half way, and
/// only when it says so with a trailing comma (`1.e4, *`, docs/notation.md).
pub fn replay(rec: &PgnRecord, variant: Variant) -> Result<Game, PgnError> {
    let start = match rec.tag("FEN") {
        Some(f) => Position::from_fen(variant, f).map_err(PgnError::Fen)?,
        None => Position::start(variant),
    };
    let mut game = Game::new(start);
    let n = rec.turns.len();
    for (i, (turn, _)) in rec.turns.iter().enumerate() {
        let unfinished = i + 1 == n && turn.trim_end().ends_with(',');
        game.play_turn_text(turn, unfinished)
            .map_err(PgnError::Turn)?;
    }
    Ok(game)
}

/// Reads and validates a PGN (or bare movetext).
pub fn read_game(text: &str, variant: Option<Variant>) -> Result<(PgnRecord, Game), PgnError> {
    let rec = parse_pgn(text)?;
    let v = record_variant(&rec, variant)?;
    let game = replay(&rec, v)?;
    Ok((rec, game))
}

fn escape(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"")
}

/// Writes a game as PGN: the given tags (the Seven Tag Roster is filled in), `[Variant]`, `[FEN]` for a
/// non-standard start, move numbers per pair of turns, comma turns, optional comments per turn, result.
pub fn write_pgn(game: &Game, tags: &[(String, String)], comments: &[Option<String>]) -> String {
    let variant = game.variant();
    let result = game
        .outcome()
        .map_or("*", |o: Outcome| o.result())
        .to_string();
    let mut all: Vec<(String, String)> = Vec::new();
    for name in ["Event", "Site", "Date", "Round", "White", "Black"] {
        let v = tags
            .iter()
            .find(|(k, _)| k == name)
            .map_or("?".to_string(), |(_, v)| v.clone());
        all.push((name.to_string(), v));
    }
    all.push(("Result".into(), result.clone()));
    if variant != Variant::Chess {
        all.push(("Variant".into(), variant.title().to_string()));
    }
    let standard = *game.initial() == Position::start(variant);
    if !standard {
        all.push(("SetUp".into(), "1".into()));
        all.push(("FEN".into(), game.initial().fen()));
    }
    for (k, v) in tags {
        if !all.iter().any(|(a, _)| a == k) {
            all.push((k.clone(), v.clone()));
        }
    }
    let mut out = String::new();
    for (k, v) in &all {
        out += &format!("[{k} \"{}\"]\n", escape(v));
    }
    out.push('\n');
    let mut line = String::new();
    let push_word = |w: &str, out: &mut String, line: &mut String| {
        if !line.is_empty() && line.len() + 1 + w.len() > 79 {
            out.push_str(line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(w);
    };
    let unfinished = !game.position().at_turn_start();
    let turns = game.turns();
    for (i, turn) in turns.iter().enumerate() {
        let mut san = game.turn_san(turn);
        if unfinished && i + 1 == turns.len() {
            // The turn goes on: in Double Move Chess this says the first half began a Double Move.
            san.push(',');
        }
        let word = if turn.color == Color::White {
            format!("{}.{san}", turn.fullmove)
        } else if i == 0 {
            format!("{}...{san}", turn.fullmove)
        } else {
            san
        };
        push_word(&word, &mut out, &mut line);
        if let Some(Some(c)) = comments.get(i) {
            push_word(&format!("{{{}}}", c.replace('}', ")")), &mut out, &mut line);
        }
    }
    push_word(&result, &mut out, &mut line);
    out.push_str(&line);
    out.push('\n');
    out
}
