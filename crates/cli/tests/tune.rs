//! `doublemove tune` end to end: bad input gives exit code 2 and a message (no panic), and a short
//! run on the engine's small PGN fixture writes a weights file.

use std::process::Command;

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../engine/tests/data/chess-300-nodes.pgn"
);

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_doublemove"))
        .arg("tune")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn assert_error(args: &[&str], expected: &str) {
    let (code, _, err) = run(args);
    assert_eq!(code, 2, "{args:?}: {err}");
    assert!(err.contains(expected), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn bad_input_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    assert_error(&[], "--pgn");
    assert_error(&["--pgn", "/no/such/file.pgn"], "reading /no/such/file.pgn");
    let empty = path("empty.pgn", "\n\n");
    assert_error(&["--pgn", &empty], "no PGN games");
    let garbage = path("garbage.pgn", "[Event \"x\"]\n\n1.e4 e5 2.Kxx 1-0\n");
    assert_error(&["--pgn", &garbage], "no training positions");
    assert_error(
        &["--pgn", FIXTURE, "--variant", "two-move"],
        "16 of another variant",
    );
    assert_error(
        &["--pgn", FIXTURE, "--params", "some"],
        "unknown parameter set",
    );
    assert_error(&["--pgn", FIXTURE, "--lr", "0"], "--lr");
    assert_error(
        &["--pgn", FIXTURE, "--init", "/no/such/weights.rs"],
        "reading /no/such/weights.rs",
    );
    let not_weights = path(
        "w.rs",
        "pub const WEIGHTS: [[i32; 2]; 2] = [\n    [1, x],\n];\n",
    );
    assert_error(
        &["--pgn", FIXTURE, "--init", &not_weights],
        "cannot read '[1, x'",
    );
    let dir_as_out = dir.path().to_str().unwrap();
    assert_error(
        &["--pgn", FIXTURE, "--epochs", "1", "--out", dir_as_out],
        "writing",
    );
}

#[test]
fn a_short_run_writes_a_weights_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("weights.rs");
    let out_s = out.to_str().unwrap();
    let (code, stdout, err) = run(&[
        "--pgn",
        FIXTURE,
        "--epochs",
        "40",
        "--report-every",
        "20",
        "--validation",
        "20",
        "--out",
        out_s,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(stdout.contains("games: 16 read"), "{stdout}");
    assert!(stdout.contains("epoch    40: train"), "{stdout}");
    assert!(stdout.contains("error after (rounded weights)"), "{stdout}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("pub const WEIGHTS: [[i32; 2]; NUM_PARAMS]"));
    let run_line = text
        .lines()
        .rfind(|l| l.starts_with("//! run: `doublemove tune --pgn"));
    let run_line = run_line.expect("the header names the command");
    assert!(
        run_line.contains("16 games") && run_line.contains("MSE train"),
        "{run_line}"
    );
}
