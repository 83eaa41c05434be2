//! The `doublemove` command line: perft, turn listing, game validation and benchmarks.

mod bench;

use clap::{Parser, Subcommand};
use rules::game::{legal_turns, turn_uci};
use rules::perft::{divide, perft, perft_turns};
use rules::pgn::read_game;
use rules::{Position, Variant};
use std::io::Read;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "doublemove",
    version,
    about = "Rules, perft and tools for Two Move, Double Move and Twinmove Chess"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Count leaf nodes of the game tree (a ply is one move, or one complete turn with --turns).
    Perft {
        /// chess, two-move, double-move or twinmove
        #[arg(long, default_value = "chess")]
        variant: Variant,
        /// Extended FEN (default: the variant's start position)
        #[arg(long)]
        fen: Option<String>,
        #[arg(long)]
        depth: u32,
        /// Count complete turns instead of single moves
        #[arg(long)]
        turns: bool,
        /// Print the count below each first move (or first turn with --turns)
        #[arg(long)]
        divide: bool,
    },
    /// List every legal complete turn (from a mid-turn FEN: every completion), one per line, sorted.
    Turns {
        #[arg(long, default_value = "chess")]
        variant: Variant,
        /// Extended FEN (default: the variant's start position)
        #[arg(long)]
        fen: Option<String>,
    },
    /// Replay a PGN (or bare movetext) and check every turn; prints the final FEN and the game state.
    Validate {
        /// The variant (default: the record's [Variant] tag, else chess)
        #[arg(long)]
        variant: Option<Variant>,
        /// PGN file, or - for standard input
        #[arg(default_value = "-")]
        file: String,
    },
    /// Benchmarks that print figures.
    Bench {
        #[command(subcommand)]
        what: bench::BenchCommand,
    },
}

fn parse_position(variant: Variant, fen: Option<&str>) -> Result<Position, String> {
    match fen {
        None => Ok(Position::start(variant)),
        Some(f) => Position::from_fen(variant, f).map_err(|e| e.to_string()),
    }
}

fn run(cli: Cli) -> Result<ExitCode, String> {
    match cli.command {
        Command::Perft {
            variant,
            fen,
            depth,
            turns,
            divide: div,
        } => {
            let pos = parse_position(variant, fen.as_deref())?;
            let nodes = if div {
                let mut total = 0;
                for (moves, n) in divide(&pos, depth, turns) {
                    let text: Vec<String> = moves.iter().map(|m| m.uci()).collect();
                    println!("{}: {n}", text.join(","));
                    total += n;
                }
                println!();
                total
            } else if turns {
                perft_turns(&pos, depth)
            } else {
                perft(&pos, depth)
            };
            println!("{nodes}");
            Ok(ExitCode::SUCCESS)
        }
        Command::Turns { variant, fen } => {
            let pos = parse_position(variant, fen.as_deref())?;
            let mut lines: Vec<String> = legal_turns(&pos).iter().map(|t| turn_uci(t)).collect();
            lines.sort();
            for l in lines {
                println!("{l}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Validate { variant, file } => validate(variant, &file),
        Command::Bench { what } => bench::run(what).map(|_| ExitCode::SUCCESS),
    }
}

fn validate(variant: Option<Variant>, file: &str) -> Result<ExitCode, String> {
    let text = if file == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| format!("reading standard input: {e}"))?;
        s
    } else {
        std::fs::read_to_string(file).map_err(|e| format!("reading {file}: {e}"))?
    };
    match read_game(&text, variant) {
        Ok((rec, game)) => {
            println!("{}", game.position().fen());
            let state = match game.outcome() {
                Some(o) => o.describe(game.variant()),
                None => {
                    let mut s = "ongoing".to_string();
                    if !game.position().at_turn_start() {
                        s += " (half way through a turn)";
                    }
                    if let Some(claim) = game.claimable_draw() {
                        s += &format!(
                            "; {} may claim a draw by {}",
                            game.position().turn().name(),
                            claim.describe(game.variant())
                        );
                    }
                    s
                }
            };
            match rec.result.as_deref() {
                Some(r) if r != "*" && game.outcome().is_none_or(|o| o.result() != r) => {
                    println!("{state}; the record's result {r} was decided off the board")
                }
                _ => println!("{state}"),
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            println!("{e}");
            Ok(ExitCode::from(1))
        }
    }
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
