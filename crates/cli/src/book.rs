//! `doublemove book`: a balanced opening book for one variant — fair random openings (the match's
//! built-in kind) that our own engine scores near equality — written as an openings file.

use crate::match_runner::openings::{Opening, RandomOpenings};
use clap::Args;
use engine::search::{Limits, Searcher};
use indicatif::{ProgressBar, ProgressStyle};
use rules::{Color, Variant};
use std::collections::HashSet;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

#[derive(Args, Debug)]
pub struct BookArgs {
    /// chess, two-move, double-move or twinmove
    #[arg(long, default_value = "chess")]
    variant: Variant,
    /// Openings to keep
    #[arg(long, default_value_t = 300)]
    count: usize,
    /// The book to write (an openings file, see docs/match.md)
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Replace --out if it exists
    #[arg(long)]
    force: bool,
    /// Seed of the random candidates
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Nodes searched per candidate (one thread, table cleared before each: reproducible)
    #[arg(long, default_value_t = 400_000)]
    nodes: u64,
    /// Keep a candidate whose score is within ±CP centipawns of equality
    #[arg(long, default_value_t = 50, value_name = "CP")]
    window: u32,
    /// Give up after this many candidates
    #[arg(long, default_value_t = 20_000, value_name = "N")]
    max_candidates: usize,
    /// Transposition table in MB
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..=4096))]
    hash: u64,
    /// Double Move Chess: candidates may spend the Double Moves
    #[arg(long)]
    spend_double_moves: bool,
}

/// An opening as a line of SAN turns with move numbers (`1. e4 Nf6,e5 2. d4,Nc3`), the style of
/// openings/chess.txt; commas join the moves of one turn.
pub fn opening_san(variant: Variant, opening: &Opening) -> Result<String, String> {
    let game = opening.game(variant)?;
    let mut parts = Vec::new();
    for (i, t) in game.turns().iter().enumerate() {
        match t.color {
            Color::White => parts.push(format!("{}.", t.fullmove)),
            Color::Black if i == 0 => parts.push(format!("{}...", t.fullmove)),
            Color::Black => {}
        }
        parts.push(game.turn_san(t));
    }
    Ok(parts.join(" "))
}

/// The UTC calendar date of a Unix time, as `YYYY-MM-DD`.
fn utc_date(unix_secs: u64) -> String {
    let d = time::OffsetDateTime::from_unix_timestamp(unix_secs as i64)
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH)
        .date();
    format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())
}

/// The command that reproduces a book (every setting spelled out).
fn command_line(a: &BookArgs) -> String {
    let mut c = format!(
        "doublemove book --variant {} --count {} --seed {} --nodes {} --window {} --hash {}",
        a.variant, a.count, a.seed, a.nodes, a.window, a.hash
    );
    if a.spend_double_moves {
        c += " --spend-double-moves";
    }
    c + &format!(" --out {}", a.out.display())
}

pub fn run(args: BookArgs) -> Result<ExitCode, String> {
    if args.count == 0 {
        return Err("--count must be at least 1".into());
    }
    if args.nodes == 0 {
        return Err("--nodes must be at least 1".into());
    }
    if args.out.exists() && !args.force {
        return Err(format!(
            "{} exists (--force replaces it)",
            args.out.display()
        ));
    }
    let variant = args.variant;
    let started = Instant::now();
    let mut candidates = RandomOpenings::new(variant, args.seed, args.spend_double_moves);
    let mut searcher = Searcher::new(args.hash as usize);
    // The hand-written evaluation, whatever the default: a book should not change with every new
    // network, and the networks are still being trained (on games that may start from these books).
    searcher.set_network(None);
    let limits = Limits {
        nodes: Some(args.nodes),
        ..Limits::default()
    };
    let pb = ProgressBar::new(args.count as u64);
    pb.set_style(
        ProgressStyle::with_template("{bar:30.cyan/blue} {pos}/{len} kept [{elapsed}] {msg}")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    let mut seen = HashSet::new();
    // (line, score for White)
    let mut kept: Vec<(String, i32)> = Vec::new();
    let (mut tried, mut repeated, mut searched, mut depths) = (0usize, 0usize, 0u64, 0u64);
    while kept.len() < args.count && tried < args.max_candidates {
        let opening = candidates.next_opening()?;
        tried += 1;
        let game = opening.game(variant)?;
        // The stream gives an old position again only when new ones are scarce; a book keeps one line
        // per position.
        if !seen.insert(game.position().repetition_key()) {
            repeated += 1;
            continue;
        }
        // A fresh table and history for each candidate: the score depends only on the position and the
        // settings, so the same command gives the same book on the same build.
        searcher.clear();
        let Some(result) = searcher.search(&game, &limits, &mut |_| {}) else {
            continue;
        };
        depths += u64::try_from(result.depth).unwrap_or(0);
        searched += 1;
        if result.score.unsigned_abs() <= args.window {
            let white = match game.position().turn() {
                Color::White => result.score,
                Color::Black => -result.score,
            };
            kept.push((opening_san(variant, &opening)?, white));
            pb.inc(1);
        }
        pb.set_message(format!("{tried} tried"));
    }
    pb.finish_and_clear();
    let secs = started.elapsed().as_secs();
    if kept.len() < args.count {
        return Err(format!(
            "only {} of {} openings within ±{} cp after {tried} candidates; widen --window or raise \
             --max-candidates (nothing written)",
            kept.len(),
            args.count,
            args.window
        ));
    }
    let mean = kept.iter().map(|k| k.1 as f64).sum::<f64>() / kept.len() as f64;
    let date = utc_date(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    );
    let title = match variant {
        Variant::Chess => "orthodox chess",
        v => v.title(),
    };
    let kept_resources = match variant {
        Variant::DoubleMove if !args.spend_double_moves => "both Double Moves unspent, ",
        Variant::TwoMove => "a normal turn for the side to move (not a response move turn), ",
        _ => "",
    };
    let depth = depths as f64 / searched.max(1) as f64;
    let mut text = format!(
        "# Balanced {title} openings for engine matches: doublemove match --variant {variant} --openings {out}\n\
         # Each line is played twice, colours swapped (docs/match.md, \"Openings\").\n\
         # Made on {date} by doublemove {version} (hand-written evaluation) with:\n\
         #   {command}\n\
         # Candidates: 2-4 random legal turns from the start that pass the match's fair-start checks:\n\
         # {kept_resources}no king attacked, neither side able to end the game with one turn.\n\
         # Kept: {n} of {tried} candidates ({repeated} repeated positions skipped) that our engine\n\
         # scores within ±{window} cp: {nodes} nodes a search (mean depth {depth:.1}), one thread, table\n\
         # cleared for each. Mean score for White {mean:+.1} cp. Generation took {min}m{sec:02}s.\n",
        out = args.out.display(),
        version = env!("CARGO_PKG_VERSION"),
        command = command_line(&args),
        n = kept.len(),
        nodes = args.nodes,
        window = args.window,
        min = secs / 60,
        sec = secs % 60,
    );
    for (line, _) in &kept {
        text += line;
        text.push('\n');
    }
    std::fs::write(&args.out, text).map_err(|e| format!("writing {}: {e}", args.out.display()))?;
    println!(
        "{}: {} openings ({} candidates, mean score for White {mean:+.1} cp) in {}m{:02}s",
        args.out.display(),
        kept.len(),
        tried,
        secs / 60,
        secs % 60
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::match_runner::openings::{check_start, parse_file};

    #[test]
    fn dates_are_civil_dates() {
        assert_eq!(utc_date(0), "1970-01-01");
        assert_eq!(utc_date(951_782_400), "2000-02-29");
        assert_eq!(utc_date(1_735_689_599), "2024-12-31");
    }

    #[test]
    fn san_lines_have_move_numbers_and_read_back() {
        let o = Opening {
            fen: None,
            turns: vec!["e2e4".into(), "g8f6,e7e5".into(), "d2d4,b1c3".into()],
        };
        let line = opening_san(Variant::TwoMove, &o).unwrap();
        assert_eq!(line, "1. e4 Nf6,e5 2. d4,Nc3");
        let back = parse_file(&line, Variant::TwoMove).unwrap();
        assert_eq!(
            back[0].game(Variant::TwoMove).unwrap().position(),
            o.game(Variant::TwoMove).unwrap().position()
        );
    }

    /// The committed books: every line parses, is legal for its variant, passes the match's
    /// fair-start checks (turn resources kept, no king attacked, no game-ending turn for either side)
    /// and reaches a position of its own; at least 200 lines each.
    #[test]
    fn committed_books_are_fair_and_distinct() {
        for (variant, text) in [
            (
                Variant::TwoMove,
                include_str!("../../../openings/two-move.txt"),
            ),
            (
                Variant::DoubleMove,
                include_str!("../../../openings/double-move.txt"),
            ),
            (
                Variant::Twinmove,
                include_str!("../../../openings/twinmove.txt"),
            ),
        ] {
            let book = parse_file(text, variant).unwrap_or_else(|e| panic!("{variant}: {e}"));
            assert!(book.len() >= 200, "{variant}: {} lines", book.len());
            let mut keys = HashSet::new();
            for o in &book {
                let game = o.game(variant).unwrap();
                if let Err(e) = check_start(&game, false) {
                    panic!("{variant}: {}: {e}", o.label());
                }
                assert!(
                    keys.insert(game.position().repetition_key()),
                    "{variant}: {} repeats a position",
                    o.label()
                );
            }
        }
    }

    /// openings/chess.txt is hand-picked (50 lines of main lines), not made by `book`; it must still
    /// read and give fair starts.
    #[test]
    fn the_chess_openings_are_fair() {
        let v = Variant::Chess;
        let book = parse_file(include_str!("../../../openings/chess.txt"), v).unwrap();
        assert_eq!(book.len(), 50);
        for o in &book {
            if let Err(e) = check_start(&o.game(v).unwrap(), false) {
                panic!("{}: {e}", o.label());
            }
        }
    }
}
