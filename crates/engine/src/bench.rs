//! `doublemove bench`: a fixed-depth search over a fixed set of positions of every variant. The total
//! node count is a signature of the search (it changes only when the search changes); nps is the speed.

use crate::search::{EvalChoice, Limits, Searcher};
use rules::{Game, Position, Variant};
use std::io::Write;
use std::time::Instant;

pub const POSITIONS: &[(Variant, &str)] = &[
    (
        Variant::Chess,
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    ),
    (
        Variant::Chess,
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    ),
    (
        Variant::Chess,
        "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
    ),
    (Variant::Chess, "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1"),
    (
        Variant::TwoMove,
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 R",
    ),
    (
        Variant::TwoMove,
        "r1bqkb1r/pp1npppp/3p1n2/1Bp5/4P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 2 3 T",
    ),
    (
        Variant::DoubleMove,
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 WB",
    ),
    (
        Variant::DoubleMove,
        "r2q3k/ppp3p1/2np2Pp/5b2/3P1B2/1Q4P1/PPP2P2/3R2K1 w - - 0 1 WB",
    ),
    (
        Variant::Twinmove,
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 T",
    ),
    (
        Variant::Twinmove,
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1 T",
    ),
];

pub const DEPTH: i32 = 11;

/// The total node count of the bench with one thread and the default evaluation choice (the
/// embedded network, net 11, in every variant; see the `bench_signature` test). With the hand-written
/// evaluation everywhere (`--eval classical`) it is 1,965,250 (both since quiescence records its
/// moves on the stack, 2026-12-07).
pub const SIGNATURE: u64 = 1_670_458;

/// Runs the bench on one thread and returns (total nodes, nodes per second).
pub fn run(out: &mut dyn Write) -> (u64, u64) {
    run_threads(out, 1, EvalChoice::Auto)
}

/// Runs the bench with `threads` search threads (Lazy SMP) and returns (total nodes of all threads,
/// nodes per second). With more than one thread the node count varies from run to run: only the
/// one-thread count is the signature, with the default evaluation choice ([`EvalChoice::Auto`]).
pub fn run_threads(out: &mut dyn Write, threads: usize, eval: EvalChoice) -> (u64, u64) {
    let mut total = 0;
    let start = Instant::now();
    for (variant, fen) in POSITIONS {
        let pos = Position::from_fen(*variant, fen).expect("bench FENs are valid");
        // 8 MB: 524,288 entries of 16 bytes, as many as 16 MB held before the table became lockless.
        let mut s = Searcher::with_threads(8, threads);
        s.set_eval(eval.clone());
        let limits = Limits {
            depth: Some(DEPTH),
            ..Limits::default()
        };
        let t = Instant::now();
        let r = s.search(&Game::new(pos), &limits, &mut |_| {});
        let nodes = r.as_ref().map_or(0, |r| r.nodes);
        let best = r
            .map(|r| rules::game::turn_uci(&r.turn))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{:<12} {:>10} nodes {:>8.0} ms  best {best:<12} {fen}",
            variant.name(),
            nodes,
            t.elapsed().as_secs_f64() * 1000.0
        );
        total += nodes;
    }
    let secs = start.elapsed().as_secs_f64().max(1e-9);
    let nps = (total as f64 / secs) as u64;
    let _ = writeln!(out, "===========================");
    let _ = writeln!(out, "Threads         : {threads}");
    let _ = writeln!(
        out,
        "Evaluation      : {}",
        match eval {
            // Named from `network_by_default`, so the label follows the choice.
            EvalChoice::Auto => format!(
                "auto (the network in: {})",
                Variant::ALL
                    .into_iter()
                    .filter(|&v| crate::search::network_by_default(v))
                    .map(|v| v.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            EvalChoice::Network(_) => "network".to_string(),
            EvalChoice::Classical => "classical".to_string(),
        }
    );
    let _ = writeln!(out, "Total time (ms) : {:.0}", secs * 1000.0);
    let _ = writeln!(out, "Nodes searched  : {total}");
    let _ = writeln!(out, "Nodes/second    : {nps}");
    (total, nps)
}
