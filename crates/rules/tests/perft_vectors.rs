//! Perft against the chessprogramming-wiki tables (orthodox) and the independent variant vectors
//! (`tests/data/vectors/`, copied from `shared/vectors/`).

use rules::perft::{perft, perft_turns};
use rules::{Position, Variant};

/// The test data kept in the repository (copied from `shared/`; see tests/data/README.md).
fn data_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn check(variant: Variant, fen: &str, depth: u32, expected: u64) {
    let pos = Position::from_fen(variant, fen).unwrap();
    assert_eq!(
        perft(&pos, depth),
        expected,
        "{variant} {fen} depth {depth}"
    );
}

const KIWIPETE: &str = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
const POS3: &str = "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1";
const POS4: &str = "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1";
const POS5: &str = "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8";
const POS6: &str = "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10";
const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

#[test]
fn orthodox_shallow() {
    check(Variant::Chess, START, 4, 197_281);
    check(Variant::Chess, KIWIPETE, 3, 97_862);
    check(Variant::Chess, POS3, 5, 674_624);
    check(Variant::Chess, POS4, 4, 422_333);
    check(Variant::Chess, POS5, 3, 62_379);
    check(Variant::Chess, POS6, 3, 89_890);
}

/// The full wiki depths; run by CI with `cargo test --release -- --ignored`.
#[test]
#[ignore]
fn orthodox_full_depth() {
    check(Variant::Chess, START, 6, 119_060_324);
    check(Variant::Chess, KIWIPETE, 5, 193_690_690);
    check(Variant::Chess, POS3, 7, 178_633_661);
    check(Variant::Chess, POS4, 5, 15_833_292);
    check(Variant::Chess, POS5, 5, 89_941_194);
    check(Variant::Chess, POS6, 5, 164_075_551);
}

fn vectors(max_nodes: u64) -> Vec<(Variant, String, String, u32, u64)> {
    let text = std::fs::read_to_string(data_dir().join("vectors/perft.jsonl")).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["variant"].as_str().unwrap().parse::<Variant>().unwrap(),
                v["fen"].as_str().unwrap().to_string(),
                v["unit"].as_str().unwrap().to_string(),
                v["depth"].as_u64().unwrap() as u32,
                v["nodes"].as_u64().unwrap(),
            )
        })
        .filter(|t| t.4 <= max_nodes)
        .collect()
}

fn run_vectors(min_nodes: u64, max_nodes: u64) {
    let mut failures = Vec::new();
    let mut ran = 0;
    for (variant, fen, unit, depth, nodes) in vectors(max_nodes) {
        if nodes < min_nodes {
            continue;
        }
        ran += 1;
        let pos = Position::from_fen(variant, &fen).unwrap();
        let got = match unit.as_str() {
            "move" => perft(&pos, depth),
            "turn" => perft_turns(&pos, depth),
            u => panic!("unknown unit {u}"),
        };
        if got != nodes {
            failures.push(format!(
                "{variant} {unit} d{depth} {fen}: expected {nodes}, got {got}"
            ));
        }
    }
    assert!(ran > 0);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn shared_vectors_small() {
    run_vectors(0, 300_000);
}

/// The larger shared vectors; run by CI in release mode.
#[test]
#[ignore]
fn shared_vectors_large() {
    run_vectors(300_001, u64::MAX);
}
