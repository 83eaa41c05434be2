//! `doublemove loadtest` end to end, small: a spawned server on a temporary SQLite file (games,
//! RSS lines, idle sockets, two runs and their spread, durability after SIGKILL), an archive seeded
//! and a start-up measured on it, and the refusals of impossible option sets. Runs the real binary.

use std::process::Command;

fn loadtest(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_doublemove"))
        .arg("loadtest")
        .args(args)
        .env("RUST_LOG", "error")
        .output()
        .expect("doublemove runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn line<'a>(out: &'a str, start: &str) -> &'a str {
    out.lines()
        .find(|l| l.starts_with(start))
        .unwrap_or_else(|| panic!("no line starting with {start:?} in:\n{out}"))
}

#[test]
fn spawned_sqlite_run_prints_every_summary_line_and_loses_nothing() {
    let (code, out, err) = loadtest(&[
        "--spawn",
        "--games",
        "20",
        "--moves",
        "6",
        "--idle-sockets",
        "30",
        "--runs",
        "2",
    ]);
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    assert!(line(&out, "setup:").contains("20 games created"), "{out}");
    assert!(
        line(&out, "rss 127.0.0.1:").contains("20 live games"),
        "{out}"
    );
    assert!(
        line(&out, "idle sockets:").contains("30 watchers") && out.contains("per idle socket"),
        "{out}"
    );
    assert!(line(&out, "played:").contains("120 turns"), "{out}");
    assert!(line(&out, "latency").contains("p99"), "{out}");
    assert!(
        line(&out, "cpu during play:").contains("this client"),
        "{out}"
    );
    assert_eq!(line(&out, "errors:"), "errors: 0");
    assert!(
        out.contains("durability: server killed (SIGKILL)")
            && out.contains("0 games lost moves, 0 failed to read"),
        "{out}"
    );
    assert!(line(&out, "run 1:").contains("0 errors"), "{out}");
    assert!(line(&out, "run 2:").contains("0 errors"), "{out}");
    assert!(
        line(&out, "spread over 2 runs:").contains("runs without errors or lost moves: 2"),
        "{out}"
    );
}

#[test]
fn seeded_archive_and_startup() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("archive.db");
    let db = db.to_str().unwrap();
    let (code, out, err) = loadtest(&[
        "--seed-archive",
        "40",
        "--moves",
        "10",
        "--db",
        db,
        "--startup",
    ]);
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    assert!(
        line(&out, "seed: 40 finished games written").contains("games/s"),
        "{out}"
    );
    let s = line(&out, "startup:");
    assert!(
        s.contains("to /readyz 200") && s.contains("RSS") && s.contains("0 live games"),
        "{out}"
    );
}

#[test]
fn impossible_option_sets_are_refused() {
    let (code, _, err) = loadtest(&["--games", "5"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--spawn"), "{err}");
    let (code, _, err) = loadtest(&["--spawn-nodes", "2", "--games", "5"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("postgres://"), "{err}");
    let (code, _, err) = loadtest(&["--target", "10.1.2.3:80", "--games", "5"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("loopback"), "{err}");
}
