//! Benchmarks that print figures (perft speed, compared with Stockfish when it is on PATH).

use clap::Subcommand;

#[derive(Subcommand)]
pub enum BenchCommand {
    /// Perft speed per variant and against Stockfish's `go perft`.
    Perft,
}

pub fn run(what: BenchCommand) -> Result<(), String> {
    match what {
        BenchCommand::Perft => Err("not yet written".into()),
    }
}
