//! The `doublemove` command line: perft, turn listing, game validation and benchmarks.

mod bench;

use clap::{Parser, Subcommand};
use rules::perft::{divide, perft, perft_turns};
use rules::{Position, Variant};
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
        Command::Bench { what } => bench::run(what).map(|_| ExitCode::SUCCESS),
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
