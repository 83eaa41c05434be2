//! `doublemove loadtest --spawn-nodes 2` on a fresh database of the test PostgreSQL (the server's
//! test support): each game's players on two different nodes, every update crossing nodes through
//! the database, RSS per node, durability after killing both nodes.

#[path = "../../server/tests/support/mod.rs"]
mod support;

use std::process::Command;

#[tokio::test]
async fn two_nodes_on_postgres() {
    let db = support::fresh_pg_db().await;
    let out = Command::new(env!("CARGO_BIN_EXE_doublemove"))
        .args(["loadtest", "--spawn-nodes", "2", "--db", &db])
        .args(["--games", "10", "--moves", "6", "--idle-sockets", "20"])
        .env("RUST_LOG", "error")
        .output()
        .expect("doublemove runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert_eq!(stdout.matches("server: spawned pid").count(), 2, "{stdout}");
    assert_eq!(stdout.matches("\nrss 127.0.0.1:").count(), 2, "{stdout}");
    assert!(
        stdout.contains("each game's players on two different nodes"),
        "{stdout}"
    );
    assert!(stdout.contains("across nodes"), "{stdout}");
    assert!(stdout.contains("\nerrors: 0\n"), "{stdout}");
    assert!(
        stdout.contains("durability: all 2 servers killed (SIGKILL)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("0 games lost moves, 0 failed to read"),
        "{stdout}"
    );
    assert!(stdout.contains("cleanup: 10 games resigned"), "{stdout}");
}
