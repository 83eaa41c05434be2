//! The CLI contract used by outside checks: perft's last line, `turns` sorted UCI turns, `validate`
//! exit codes and messages, the openings file `book` writes. Runs the real binary.

mod common;
use common::run;

fn last_line(s: &str) -> &str {
    s.lines().last().unwrap_or("")
}

#[test]
fn perft_last_line_is_the_node_count() {
    let (code, out, _) = run(&["perft", "--variant", "two-move", "--depth", "3"], None);
    assert_eq!(code, 0);
    assert_eq!(last_line(&out), "8256");
    let (_, out, _) = run(
        &["perft", "--variant", "two-move", "--depth", "2", "--turns"],
        None,
    );
    assert_eq!(last_line(&out), "8256");
    let (_, out, _) = run(
        &[
            "perft",
            "--variant",
            "double-move",
            "--depth",
            "2",
            "--divide",
        ],
        None,
    );
    assert_eq!(last_line(&out), "1245");
    assert!(out.lines().any(|l| l.starts_with("e2e4: ")));
    let fen = "7k/8/8/8/3p4/8/4P3/7K w - - 0 1 WB";
    let (_, out, _) = run(
        &[
            "perft",
            "--variant",
            "double-move",
            "--fen",
            fen,
            "--depth",
            "3",
        ],
        None,
    );
    assert_eq!(last_line(&out), "699");
    let (_, out, _) = run(
        &[
            "perft",
            "--variant",
            "twinmove",
            "--depth",
            "1",
            "--turns",
            "--divide",
        ],
        None,
    );
    assert_eq!(last_line(&out), "121");
    assert!(out.lines().any(|l| l.starts_with("e2e4,g1f3: 1")));
}

#[test]
fn perft_bad_fen_is_a_clear_error() {
    let (code, out, err) = run(
        &[
            "perft",
            "--variant",
            "double-move",
            "--fen",
            "8/8/8/8/8/8/8/K6k w - - 0 1 WBm",
            "--depth",
            "1",
        ],
        None,
    );
    assert_ne!(code, 0);
    assert!(out.is_empty());
    assert!(err.contains("field 7") && err.contains("unspent"), "{err}");
    let (code, _, err) = run(&["perft", "--variant", "nonsense", "--depth", "1"], None);
    assert_ne!(code, 0);
    assert!(err.contains("unknown variant"), "{err}");
}

#[test]
fn turns_are_sorted_uci_turns() {
    let (code, out, _) = run(&["turns", "--variant", "twinmove"], None);
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 121);
    let mut sorted = lines.clone();
    sorted.sort();
    assert_eq!(lines, sorted);
    assert!(lines.contains(&"e2e4,f1b5"));
    // From a mid-turn FEN, the completions only.
    let fen = "rnbqkbnr/pppppppp/8/8/8/5N2/PPPPPPPP/RNBQKB1R w KQkq - 0 1 Hf3";
    let (_, out, _) = run(&["turns", "--variant", "two-move", "--fen", fen], None);
    assert!(out
        .lines()
        .all(|l| !l.contains(',') && !l.starts_with("f3")));
    // 14 pawn moves (f2 is blocked by the knight), Na3, Nc3 and Rg1.
    assert_eq!(out.lines().count(), 17);
}

#[test]
fn validate_reports_the_first_illegal_turn_in_words() {
    let (code, out, _) = run(
        &["validate", "--variant", "two-move", "-"],
        Some("1.e4 c5,d6 2.Nf3,Be2 Nf6,Nc6 3.O-O,Re1 *"),
    );
    assert_eq!(code, 1);
    assert_eq!(
        out.trim(),
        "turn 3 (white) O-O,Re1: the rook moved in castling and may not move again this turn"
    );
}

#[test]
fn validate_prints_final_fen_and_state() {
    let pgn = "[Variant \"Double Move Chess\"]\n[FEN \"r2q3k/ppp3p1/2np2Pp/5b2/3P1B2/1Q4P1/PPP2P2/3R2K1 w - - 0 1 WB\"]\n\n1.Qg8+,Qh7# 1-0\n";
    let (code, out, _) = run(&["validate", "-"], Some(pgn));
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "r2q3k/ppp3pQ/2np2Pp/5b2/3P1B2/6P1/PPP2P2/3R2K1 b - - 2 1 -B"
    );
    assert_eq!(lines[1], "white wins by checkmate (1-0)");
    let (code, out, _) = run(
        &["validate", "--variant", "twinmove", "-"],
        Some("1.e4,Nf3 e5,Nc6"),
    );
    assert_eq!(code, 0);
    assert_eq!(last_line(&out), "ongoing");
    let (code, out, _) = run(&["validate", "--variant", "chess", "-"], Some(pgn));
    assert_eq!(code, 1);
    assert!(out.contains("Variant"), "{out}");
}

#[test]
fn validate_reads_files_and_reports_missing_ones() {
    // The rule author's example game, kept in the repository (crates/rules/tests/data/README.md).
    let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../rules/tests/data/examples/two-move-chess/example5.pgn");
    assert!(example.exists(), "{}", example.display());
    let (code, out, _) = run(
        &[
            "validate",
            "--variant",
            "two-move",
            example.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("8/8/8/b4P1p/2k4P/8/4K3/8 b - - 0 31 T"));
    let (code, _, err) = run(&["validate", "/nonexistent/game.pgn"], None);
    assert_eq!(code, 2);
    assert!(err.contains("/nonexistent/game.pgn"));
}

#[test]
fn every_subcommand_has_help() {
    for sub in ["perft", "turns", "validate", "bench", "book"] {
        let (code, out, _) = run(&[sub, "--help"], None);
        assert_eq!(code, 0, "{sub}");
        assert!(out.contains("Usage"), "{sub}");
    }
}

#[test]
fn analyse_with_threads_gives_a_legal_best_turn() {
    let (code, out, err) = run(
        &[
            "analyse",
            "--variant",
            "twinmove",
            "--depth",
            "5",
            "--threads",
            "2",
            "--hash",
            "8",
        ],
        None,
    );
    assert_eq!(code, 0, "{err}");
    let turn = out
        .lines()
        .find_map(|l| l.strip_prefix("best turn: "))
        .expect("a best turn");
    let (code, lines, _) = run(&["turns", "--variant", "twinmove"], None);
    assert_eq!(code, 0);
    assert!(lines.lines().any(|l| l == turn), "{turn}");
    let (code, _, _) = run(&["analyse", "--depth", "2", "--threads", "0"], None);
    assert_eq!(code, 2);
}

/// `book` writes an openings file that `match` reads, the same lines for the same settings, and
/// refuses to replace a file unless told to.
#[test]
fn book_writes_a_reproducible_openings_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("book.txt");
    let out = out.to_str().unwrap();
    let args = [
        "book",
        "--variant",
        "double-move",
        "--count",
        "5",
        "--nodes",
        "3000",
        "--window",
        "100",
        "--out",
        out,
    ];
    let (code, stdout, err) = run(&args, None);
    assert_eq!(code, 0, "{err}");
    assert!(stdout.contains("5 openings"), "{stdout}");
    let first = std::fs::read_to_string(out).unwrap();
    assert!(first.contains("# Made on "), "{first}");
    assert!(first.contains("--nodes 3000 --window 100"), "{first}");
    let lines: Vec<&str> = first.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(lines.len(), 5);
    // Single moves only: the Double Moves are kept.
    assert!(lines.iter().all(|l| !l.contains(',')), "{first}");

    let (code, _, err) = run(&args, None);
    assert_eq!(code, 2);
    assert!(err.contains("exists (--force replaces it)"), "{err}");
    let mut forced = args.to_vec();
    forced.push("--force");
    let (code, _, err) = run(&forced, None);
    assert_eq!(code, 0, "{err}");
    let again = std::fs::read_to_string(out).unwrap();
    let body = |t: &str| {
        t.lines()
            .filter(|l| !l.starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(body(&first), body(&again));

    let (code, _, err) = run(
        &[
            "book",
            "--count",
            "3",
            "--window",
            "0",
            "--max-candidates",
            "2",
            "--out",
            out,
            "--force",
        ],
        None,
    );
    assert_eq!(code, 2);
    assert!(err.contains("nothing written"), "{err}");
}
