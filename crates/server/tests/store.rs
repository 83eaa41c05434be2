//! The storage layer against both backends: every behaviour test runs once on SQLite and once on
//! PostgreSQL (`both!`); then the SQLite file guard and the PostgreSQL multi-node behaviour.

mod support;

use server::store::{
    self, Change, GameRow, MoveRow, Notice, Status, Store, StoreError, StoredGame,
};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// A database for one test.
struct Db {
    url: String,
    /// The SQLite file, if that is the backend.
    path: Option<PathBuf>,
    _dir: Option<tempfile::TempDir>,
}

impl Db {
    async fn sqlite() -> Db {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("games.db");
        Db {
            url: path.to_str().unwrap().to_string(),
            path: Some(path),
            _dir: Some(dir),
        }
    }

    async fn postgres() -> Db {
        Db {
            url: support::fresh_pg_db().await,
            path: None,
            _dir: None,
        }
    }

    async fn open(&self, node: &str) -> Arc<dyn Store> {
        store::open(&self.url, node)
            .await
            .unwrap_or_else(|e| panic!("opening {}: {e:#}", self.url))
    }
}

/// Runs each named async fn (taking a `Db`) as two tests, `NAME::sqlite` and `NAME::postgres`.
macro_rules! both {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                super::$name(super::Db::sqlite().await).await
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                super::$name(super::Db::postgres().await).await
            }
        }
    )*};
}

both!(
    round_trip,
    apply_appends_and_bumps_version,
    stale_version_conflicts,
    duplicate_create_conflicts,
    takeback_truncates,
    live_games_and_lists,
    claim_due_respects_leases,
    claim_one_game,
    key_values,
    concurrent_applies,
    ratings_are_written_with_the_result_once,
    players_tables_round_trip,
    a_seek_is_taken_once,
);

fn mv(ply: i32, uci: &str, clock_ms: Option<i64>) -> MoveRow {
    MoveRow {
        ply,
        uci: uci.to_string(),
        clock_ms,
        at: 1_700_000_000_000 + ply as i64 * 1000,
    }
}

fn game(id: &str, status: Status, updated_at: i64, plies: i32) -> StoredGame {
    let moves = [
        "e2e4", "e7e5", "g1f3*", "b1c3", "b8c6", "f1c4", "g8f6", "d2d3",
    ];
    StoredGame {
        row: GameRow {
            id: id.to_string(),
            variant: "double-move".to_string(),
            status,
            created_at: 1_700_000_000_000,
            updated_at,
            version: 1,
            initial_fen: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 WB".to_string(),
            meta: format!(r#"{{"white":{{"kind":"human"}},"id":"{id}"}}"#),
            flag_at: None,
            engine_to_move: false,
            white_user: None,
            black_user: None,
            rated: false,
            winner: None,
        },
        moves: (0..plies)
            .map(|p| {
                let clock = (p % 2 == 1).then_some(300_000 - p as i64);
                mv(p, moves[p as usize % moves.len()], clock)
            })
            .collect(),
    }
}

/// The change that makes `g` one version newer with `append`, after cutting at `truncate_to`.
fn change(g: &StoredGame, truncate_to: Option<i32>, append: Vec<MoveRow>) -> Change {
    let mut row = g.row.clone();
    row.version += 1;
    row.updated_at += 1000;
    row.meta = format!(r#"{{"v":{}}}"#, row.version);
    Change {
        row,
        truncate_to,
        append,
        ratings: Vec::new(),
    }
}

/// What `g` looks like after `c`.
fn applied(g: &StoredGame, c: &Change) -> StoredGame {
    let mut moves = g.moves.clone();
    if let Some(t) = c.truncate_to {
        moves.retain(|m| m.ply < t);
    }
    moves.extend(c.append.iter().cloned());
    StoredGame {
        row: c.row.clone(),
        moves,
    }
}

async fn round_trip(db: Db) {
    let s = db.open("a").await;
    let mut g = game("g1", Status::Started, 1_700_000_005_000, 5);
    g.row.flag_at = Some(1_700_000_300_000);
    g.row.engine_to_move = true;
    s.create(&g).await.unwrap();
    assert_eq!(s.load("g1").await.unwrap(), Some(g.clone()));
    assert!(s.load("nope").await.unwrap().is_none());
    // A game without moves, and one whose optional fields are empty.
    let empty = game("g2", Status::Waiting, 1, 0);
    s.create(&empty).await.unwrap();
    assert_eq!(s.load("g2").await.unwrap(), Some(empty));
    s.ping().await.unwrap();
    s.close().await;
    // Durable across reopening.
    let s = db.open("a").await;
    assert_eq!(s.load("g1").await.unwrap(), Some(g));
    s.close().await;
}

async fn apply_appends_and_bumps_version(db: Db) {
    let s = db.open("a").await;
    let g = game("g", Status::Waiting, 10, 2);
    s.create(&g).await.unwrap();
    let mut c = change(&g, None, vec![mv(2, "g1f3", Some(299_000))]);
    c.row.status = Status::Started;
    c.row.flag_at = Some(5000);
    s.apply(&c).await.unwrap();
    let g2 = applied(&g, &c);
    assert_eq!(s.load("g").await.unwrap(), Some(g2.clone()));
    assert_eq!(g2.row.version, 2);
    let c = change(&g2, None, vec![mv(3, "e7e5", None), mv(4, "d2d4*", None)]);
    s.apply(&c).await.unwrap();
    let g3 = s.load("g").await.unwrap().unwrap();
    assert_eq!(g3, applied(&g2, &c));
    assert_eq!(g3.row.version, 3);
    assert_eq!(
        g3.moves.iter().map(|m| m.ply).collect::<Vec<_>>(),
        vec![0, 1, 2, 3, 4]
    );
    s.close().await;
}

async fn stale_version_conflicts(db: Db) {
    let s = db.open("a").await;
    let g = game("g", Status::Started, 10, 3);
    s.create(&g).await.unwrap();
    let first = change(&g, None, vec![mv(3, "a2a3", None)]);
    s.apply(&first).await.unwrap();
    let now = s.load("g").await.unwrap();
    // Made from version 1 again: refused, and nothing of it written.
    let stale = change(&g, Some(1), vec![mv(1, "h7h6", None)]);
    assert!(matches!(s.apply(&stale).await, Err(StoreError::Conflict)));
    // A version from the future: refused too.
    let mut ahead = change(&g, None, vec![mv(4, "h2h3", None)]);
    ahead.row.version = 5;
    assert!(matches!(s.apply(&ahead).await, Err(StoreError::Conflict)));
    assert_eq!(s.load("g").await.unwrap(), now);
    // No such game.
    let ghost = change(&game("ghost", Status::Started, 1, 0), None, vec![]);
    assert!(matches!(s.apply(&ghost).await, Err(StoreError::Conflict)));
    assert!(s.load("ghost").await.unwrap().is_none());
    s.close().await;
}

async fn duplicate_create_conflicts(db: Db) {
    let s = db.open("a").await;
    let g = game("g", Status::Started, 10, 2);
    s.create(&g).await.unwrap();
    let other = game("g", Status::Waiting, 99, 5);
    assert!(matches!(s.create(&other).await, Err(StoreError::Conflict)));
    assert_eq!(s.load("g").await.unwrap(), Some(g));
    s.close().await;
}

async fn takeback_truncates(db: Db) {
    let s = db.open("a").await;
    let g = game("g", Status::Started, 10, 6);
    s.create(&g).await.unwrap();
    // Back two plies.
    let c = change(&g, Some(4), vec![]);
    s.apply(&c).await.unwrap();
    let g2 = s.load("g").await.unwrap().unwrap();
    assert_eq!(g2, applied(&g, &c));
    assert_eq!(g2.moves.len(), 4);
    // Back to ply 2 and a different move there, in one change.
    let c = change(&g2, Some(2), vec![mv(2, "c2c4", Some(1))]);
    s.apply(&c).await.unwrap();
    let g3 = s.load("g").await.unwrap().unwrap();
    assert_eq!(g3, applied(&g2, &c));
    assert_eq!(
        g3.moves.iter().map(|m| m.uci.as_str()).collect::<Vec<_>>(),
        vec!["e2e4", "e7e5", "c2c4"]
    );
    s.close().await;
}

fn ids(games: &[StoredGame]) -> Vec<&str> {
    games.iter().map(|g| g.row.id.as_str()).collect()
}

async fn live_games_and_lists(db: Db) {
    let s = db.open("a").await;
    let all = [
        game("waiting", Status::Waiting, 10, 0),
        game("started", Status::Started, 30, 3),
        game("fin1", Status::Finished, 20, 4),
        game("aborted", Status::Aborted, 40, 1),
        game("fin2", Status::Finished, 50, 2),
        game("started2", Status::Started, 60, 5),
    ];
    for g in &all {
        s.create(g).await.unwrap();
    }
    let by_id = |id: &str| all.iter().find(|g| g.row.id == id).unwrap().clone();

    let live = s.load_live().await.unwrap();
    let live_ids: BTreeSet<&str> = ids(&live).into_iter().collect();
    assert_eq!(live_ids, BTreeSet::from(["waiting", "started", "started2"]));
    for g in &live {
        assert_eq!(g, &by_id(&g.row.id), "live game with all its moves");
    }

    let done = s
        .list(&[Status::Finished, Status::Aborted], 10)
        .await
        .unwrap();
    assert_eq!(ids(&done), vec!["fin2", "aborted", "fin1"]);
    for g in &done {
        assert_eq!(g, &by_id(&g.row.id), "listed game with all its moves");
    }
    let two = s
        .list(&[Status::Finished, Status::Aborted], 2)
        .await
        .unwrap();
    assert_eq!(ids(&two), vec!["fin2", "aborted"]);
    assert_eq!(two[0].moves, by_id("fin2").moves);
    let started = s.list(&[Status::Started], 10).await.unwrap();
    assert_eq!(ids(&started), vec!["started2", "started"]);
    let everything = s.list(&Status::ALL, 100).await.unwrap();
    assert_eq!(
        ids(&everything),
        vec!["started2", "fin2", "aborted", "started", "fin1", "waiting"]
    );
    assert!(s.list(&[], 10).await.unwrap().is_empty());
    assert!(s.list(&[Status::Finished], 0).await.unwrap().is_empty());

    // Finishing a game takes it out of the live set.
    let c = {
        let mut c = change(&by_id("started"), None, vec![]);
        c.row.status = Status::Finished;
        c
    };
    s.apply(&c).await.unwrap();
    let live = s.load_live().await.unwrap();
    let live_ids: BTreeSet<&str> = ids(&live).into_iter().collect();
    assert_eq!(live_ids, BTreeSet::from(["waiting", "started2"]));
    s.close().await;
}

fn set(v: Vec<String>) -> BTreeSet<String> {
    v.into_iter().collect()
}

fn names(v: &[&str]) -> BTreeSet<String> {
    v.iter().map(|s| s.to_string()).collect()
}

async fn claim_due_respects_leases(db: Db) {
    let s = db.open("a").await;
    let mut flag = game("flag", Status::Started, 10, 2);
    flag.row.flag_at = Some(100);
    let mut engine = game("engine", Status::Started, 20, 2);
    engine.row.engine_to_move = true;
    let mut later = game("later", Status::Started, 30, 2);
    later.row.flag_at = Some(1000);
    let mut finished = game("finished", Status::Finished, 40, 2);
    finished.row.flag_at = Some(100);
    finished.row.engine_to_move = true;
    let mut waiting = game("waiting", Status::Waiting, 50, 0);
    waiting.row.engine_to_move = true;
    for g in [&flag, &engine, &later, &finished, &waiting] {
        s.create(g).await.unwrap();
    }

    // Node a takes both due jobs, once.
    let got = s.claim_due("a", 500, 600, 10).await.unwrap();
    assert_eq!(set(got), names(&["flag", "engine"]));
    assert!(s.claim_due("a", 500, 600, 10).await.unwrap().is_empty());
    // Node b gets nothing while a's leases live...
    assert!(s.claim_due("b", 600, 700, 10).await.unwrap().is_empty());
    // ...and both once they ran out.
    let got = s.claim_due("b", 601, 700, 10).await.unwrap();
    assert_eq!(set(got), names(&["flag", "engine"]));

    // A change releases the lease: the game (still due) can be claimed at once.
    let c = change(&flag, None, vec![mv(2, "a2a3", None)]);
    s.apply(&c).await.unwrap();
    assert_eq!(s.claim_due("a", 602, 800, 10).await.unwrap(), vec!["flag"]);

    // The limit.
    let got = s.claim_due("c", 2000, 2100, 1).await.unwrap();
    assert_eq!(got.len(), 1);
    let got2 = s.claim_due("c", 2000, 2100, 10).await.unwrap();
    assert_eq!(
        got2.len(),
        2,
        "the other two due games: {got2:?} after {got:?}"
    );
    assert!(!got2.contains(&got[0]));
    s.close().await;
}

async fn claim_one_game(db: Db) {
    let s = db.open("a").await;
    let mut g = game("g", Status::Started, 10, 1);
    g.row.engine_to_move = true;
    s.create(&g).await.unwrap();
    assert!(s.claim("g", "a", 100, 200).await.unwrap());
    assert!(!s.claim("g", "b", 150, 250).await.unwrap());
    // The holder may renew its own lease.
    assert!(s.claim("g", "a", 150, 300).await.unwrap());
    assert!(s.claim_due("b", 250, 400, 10).await.unwrap().is_empty());
    assert!(s.claim("g", "b", 301, 400).await.unwrap());
    assert!(!s.claim("nope", "a", 100, 200).await.unwrap());
    // After a change (lease released) anyone may claim it.
    s.apply(&change(&g, None, vec![])).await.unwrap();
    assert!(s.claim("g", "c", 302, 500).await.unwrap());
    s.close().await;
}

async fn key_values(db: Db) {
    let s = db.open("a").await;
    assert_eq!(s.get_value("alive").await.unwrap(), None);
    s.set_value("alive", "1").await.unwrap();
    assert_eq!(s.get_value("alive").await.unwrap().as_deref(), Some("1"));
    s.set_value("alive", "2").await.unwrap();
    s.set_value("other", "x").await.unwrap();
    assert_eq!(s.get_value("alive").await.unwrap().as_deref(), Some("2"));
    assert_eq!(s.get_value("other").await.unwrap().as_deref(), Some("x"));
    s.close().await;
}

/// 50 changes to 50 games at once all succeed and are all there afterwards (on SQLite they share
/// group commits); 20 changes to one game from the same version: exactly one wins (on SQLite a
/// conflict inside a batch fails only that change).
async fn concurrent_applies(db: Db) {
    let s = db.open("a").await;
    let games: Vec<StoredGame> = (0..50)
        .map(|i| game(&format!("g{i:02}"), Status::Started, i, 2))
        .collect();
    for g in &games {
        s.create(g).await.unwrap();
    }
    let tasks: Vec<_> = games
        .iter()
        .map(|g| {
            let s = s.clone();
            let c = change(g, None, vec![mv(2, "h2h4", Some(7)), mv(3, "a7a5", None)]);
            tokio::spawn(async move { s.apply(&c).await.map(|_| c) })
        })
        .collect();
    let mut changes = Vec::new();
    for t in tasks {
        changes.push(t.await.unwrap().expect("every concurrent apply succeeds"));
    }
    for (g, c) in games.iter().zip(&changes) {
        assert_eq!(s.load(&g.row.id).await.unwrap(), Some(applied(g, c)));
    }

    let g = &games[0];
    let now = applied(g, &changes[0]);
    let racers: Vec<_> = (0..20)
        .map(|i| {
            let s = s.clone();
            let c = change(&now, None, vec![mv(4, &format!("racer{i}"), None)]);
            tokio::spawn(async move { (s.apply(&c).await, c) })
        })
        .collect();
    let mut winners = Vec::new();
    for t in racers {
        match t.await.unwrap() {
            (Ok(()), c) => winners.push(c),
            (Err(StoreError::Conflict), _) => {}
            (Err(e), _) => panic!("unexpected error: {e}"),
        }
    }
    assert_eq!(
        winners.len(),
        1,
        "exactly one of the racing changes applies"
    );
    assert_eq!(
        s.load(&g.row.id).await.unwrap(),
        Some(applied(&now, &winners[0]))
    );
    s.close().await;
}

#[tokio::test]
async fn open_accepts_sqlite_urls() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub.db");
    let s = store::open(&format!("sqlite://{}", path.display()), "n")
        .await
        .unwrap();
    assert_eq!(s.backend(), "sqlite");
    assert!(s.subscribe().await.unwrap().is_none());
    s.close().await;
    assert!(path.exists());
}

// --- SQLite: the file guard -----------------------------------------------------------------

fn assert_unavailable<T: std::fmt::Debug>(r: Result<T, StoreError>, what: &str) {
    match r {
        Err(StoreError::Unavailable(_)) => {}
        other => panic!("{what}: expected Unavailable, got {other:?}"),
    }
}

/// Checks that after `damage` to the database file the store refuses writes and pings for good.
async fn guarded(damage: impl FnOnce(&std::path::Path)) {
    let db = Db::sqlite().await;
    let s = db.open("a").await;
    let g = game("g", Status::Started, 10, 2);
    s.create(&g).await.unwrap();
    s.ping().await.unwrap();
    damage(db.path.as_ref().unwrap());
    let c = change(&g, None, vec![mv(2, "a2a3", None)]);
    assert_unavailable(s.apply(&c).await, "apply after the damage");
    assert_unavailable(s.ping().await, "ping after the damage");
    // Stays broken: later writes and pings are refused too.
    assert_unavailable(
        s.create(&game("h", Status::Waiting, 1, 0)).await,
        "create later",
    );
    assert_unavailable(s.set_value("k", "v").await, "set_value later");
    assert_unavailable(s.ping().await, "ping later");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_deleted_file_is_unavailable() {
    guarded(|path| {
        for suffix in ["", "-wal", "-shm"] {
            let p = format!("{}{suffix}", path.display());
            std::fs::remove_file(&p).unwrap_or_else(|e| panic!("removing {p}: {e}"));
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_replaced_file_is_unavailable() {
    // Another (valid) SQLite database renamed over ours.
    let other = Db::sqlite().await;
    let o = other.open("b").await;
    o.create(&game("x", Status::Waiting, 1, 0)).await.unwrap();
    o.close().await;
    drop(o);
    let from = other.path.clone().unwrap();
    guarded(move |path| std::fs::rename(&from, path).unwrap()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_overwritten_file_is_unavailable() {
    // The same file (inode) overwritten in place with something else.
    guarded(|path| {
        use std::os::unix::fs::FileExt;
        let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
        f.write_all_at(b"this is not a database at all", 0).unwrap();
        f.sync_all().unwrap();
    })
    .await;
}

// --- PostgreSQL: several nodes on one database ----------------------------------------------

async fn next_notice(rx: &mut tokio::sync::mpsc::Receiver<Notice>) -> Notice {
    tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .expect("a notice within 10 s")
        .expect("the notice channel stays open")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_change_by_one_node_is_noticed_by_another() {
    let db = Db::postgres().await;
    let a = db.open("a").await;
    let b = db.open("b").await;
    assert_eq!(a.backend(), "postgres");
    let mut rx = b
        .subscribe()
        .await
        .unwrap()
        .expect("PostgreSQL has notices");
    let g = game("g", Status::Waiting, 10, 0);
    a.create(&g).await.unwrap();
    assert_eq!(
        next_notice(&mut rx).await,
        Notice::Changed {
            id: "g".into(),
            version: 1
        }
    );
    a.apply(&change(&g, None, vec![mv(0, "e2e4", None)]))
        .await
        .unwrap();
    assert_eq!(
        next_notice(&mut rx).await,
        Notice::Changed {
            id: "g".into(),
            version: 2
        }
    );
    // A refused change tells nobody.
    assert!(matches!(
        a.apply(&change(&g, None, vec![])).await,
        Err(StoreError::Conflict)
    ));
    b.set_value("marker", "1").await.unwrap();
    let h = game("h", Status::Waiting, 10, 0);
    b.create(&h).await.unwrap();
    assert_eq!(
        next_notice(&mut rx).await,
        Notice::Changed {
            id: "h".into(),
            version: 1
        }
    );
    a.close().await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_two_nodes_racing_one_wins() {
    let db = Db::postgres().await;
    let a = db.open("a").await;
    let b = db.open("b").await;
    let mut g = game("g", Status::Started, 10, 0);
    a.create(&g).await.unwrap();
    for round in 0..20 {
        let ca = change(&g, None, vec![mv(round, "a", None)]);
        let cb = change(&g, None, vec![mv(round, "b", None)]);
        let (ra, rb) = tokio::join!(a.apply(&ca), b.apply(&cb));
        let winner = match (ra, rb) {
            (Ok(()), Err(StoreError::Conflict)) => ca,
            (Err(StoreError::Conflict), Ok(())) => cb,
            other => panic!("round {round}: expected exactly one success, got {other:?}"),
        };
        g = applied(&g, &winner);
        assert_eq!(b.load("g").await.unwrap(), Some(g.clone()));
    }

    // Two nodes claiming due jobs at once never get the same game.
    for i in 0..30 {
        let mut d = game(&format!("due{i:02}"), Status::Started, i, 0);
        d.row.engine_to_move = true;
        a.create(&d).await.unwrap();
    }
    let (ga, gb) = tokio::join!(
        a.claim_due("a", 100, 200, 20),
        b.claim_due("b", 100, 200, 20)
    );
    let (ga, gb) = (set(ga.unwrap()), set(gb.unwrap()));
    assert!(ga.is_disjoint(&gb), "{ga:?} and {gb:?} overlap");
    assert_eq!(ga.len() + gb.len(), 30);
    a.close().await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_lost_notice_connection_resyncs() {
    let db = Db::postgres().await;
    let a = db.open("a").await;
    let b = db.open("b").await;
    let mut rx = b.subscribe().await.unwrap().unwrap();
    // Kill node b's listening session from the outside.
    let admin = sqlx::PgPool::connect(&db.url).await.unwrap();
    let killed: Vec<bool> = sqlx::query_scalar(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE datname = current_database() AND application_name = 'doublemove b'
           AND query LIKE 'LISTEN%'",
    )
    .fetch_all(&admin)
    .await
    .unwrap();
    assert_eq!(killed, vec![true], "one listening session of node b");
    assert_eq!(next_notice(&mut rx).await, Notice::Resync);
    // Listening again.
    let g = game("g", Status::Waiting, 10, 0);
    a.create(&g).await.unwrap();
    assert_eq!(
        next_notice(&mut rx).await,
        Notice::Changed {
            id: "g".into(),
            version: 1
        }
    );
    admin.close().await;
    a.close().await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_killed_sessions_recover() {
    let db = Db::postgres().await;
    let s = db.open("a").await;
    s.ping().await.unwrap();
    // Terminate every session of this database: the pool reconnects, so the store recovers.
    let admin = sqlx::PgPool::connect(&support::pg_url()).await.unwrap();
    let name = db.url.rsplit('/').next().unwrap().to_string();
    sqlx::query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1")
        .bind(&name)
        .execute(&admin)
        .await
        .unwrap();
    admin.close().await;
    // A use of a killed pooled connection may fail, but only as Unavailable.
    for _ in 0..3 {
        match s.ping().await {
            Ok(()) => break,
            Err(StoreError::Unavailable(_)) => {}
            Err(e) => panic!("unexpected {e}"),
        }
    }
    s.ping().await.unwrap();
    let g = game("g", Status::Waiting, 1, 1);
    s.create(&g).await.unwrap();
    assert_eq!(s.load("g").await.unwrap(), Some(g));
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_server_gone_is_unavailable() {
    // Each failing call waits for the pool's acquire timeout (5 s): a write, a read and a ping.
    let cluster = tokio::task::spawn_blocking(support::OwnCluster::start)
        .await
        .unwrap();
    let s = store::open(&cluster.url, "a").await.unwrap();
    let g = game("g", Status::Started, 10, 2);
    s.create(&g).await.unwrap();
    let _rx = s.subscribe().await.unwrap();
    let cluster = tokio::task::spawn_blocking(move || {
        cluster.stop();
        cluster
    })
    .await
    .unwrap();
    let c = change(&g, None, vec![mv(2, "a2a3", None)]);
    assert_unavailable(s.apply(&c).await, "apply without a server");
    assert_unavailable(s.load("g").await, "load");
    assert_unavailable(s.ping().await, "ping");
    s.close().await;
    drop(cluster);
}

fn user(id: &str) -> server::store::players::UserRow {
    server::store::players::UserRow {
        id: id.to_lowercase(),
        username: id.to_string(),
        password_hash: "$argon2id$…".into(),
        kind: "human".into(),
        created_at: 5,
    }
}

fn perf(user: &str, rating: f64, games: i64) -> server::store::players::PerfRow {
    server::store::players::PerfRow {
        user_id: user.into(),
        variant: "two-move".into(),
        rating,
        rd: 300.0,
        vol: 0.06,
        games,
        updated_at: 100 + games,
    }
}

/// A result's rating rows go in with the game's change, or not at all: a change computed from a
/// rating row that moved meanwhile (another game ended first) is refused whole.
async fn ratings_are_written_with_the_result_once(db: Db) {
    use server::store::players::RatingWrite;
    let s = db.open("a").await;
    s.user_create(&user("Alice")).await.unwrap();
    let g = game("g", Status::Started, 10, 2);
    s.create(&g).await.unwrap();
    let mut c = change(&g, None, vec![]);
    c.row.status = Status::Finished;
    c.ratings = vec![RatingWrite {
        perf: perf("alice", 1662.3, 1),
        prev_games: 0,
        game_id: "g".into(),
    }];
    s.apply(&c).await.unwrap();
    assert_eq!(
        s.perfs("alice").await.unwrap(),
        vec![perf("alice", 1662.3, 1)]
    );
    // A second game computed from the same old row (games 0): refused, nothing written.
    let g2 = game("g2", Status::Started, 10, 2);
    s.create(&g2).await.unwrap();
    let mut stale = change(&g2, None, vec![]);
    stale.row.status = Status::Finished;
    stale.ratings = vec![RatingWrite {
        perf: perf("alice", 1400.0, 1),
        prev_games: 0,
        game_id: "g2".into(),
    }];
    assert!(matches!(s.apply(&stale).await, Err(StoreError::Conflict)));
    assert_eq!(s.load("g2").await.unwrap().unwrap().row.version, 1);
    // Computed again from the current row: written.
    stale.ratings[0].prev_games = 1;
    stale.ratings[0].perf = perf("alice", 1600.0, 2);
    s.apply(&stale).await.unwrap();
    assert_eq!(
        s.perfs("alice").await.unwrap(),
        vec![perf("alice", 1600.0, 2)]
    );
    let h = s.rating_history("alice").await.unwrap();
    assert_eq!(
        h.iter()
            .map(|h| (h.game_id.as_str(), h.rating))
            .collect::<Vec<_>>(),
        vec![("g", 1662.3), ("g2", 1600.0)]
    );
    s.close().await;
}

async fn players_tables_round_trip(db: Db) {
    use server::store::players::RecordRow;
    let s = db.open("a").await;
    s.user_create(&user("Bob")).await.unwrap();
    assert!(matches!(
        s.user_create(&user("BOB")).await,
        Err(StoreError::Conflict)
    ));
    assert_eq!(s.user("bob").await.unwrap().unwrap().username, "Bob");
    s.user_set_kind("bob", "bot").await.unwrap();
    assert_eq!(s.user("bob").await.unwrap().unwrap().kind, "bot");
    s.token_create("h1", "bob", "script", 1).await.unwrap();
    assert_eq!(s.token_user("h1").await.unwrap().as_deref(), Some("bob"));
    assert_eq!(s.token_user("h2").await.unwrap(), None);
    // Sessions: created once, saved, expired.
    s.session_create("s1", "{}", 1000).await.unwrap();
    assert!(matches!(
        s.session_create("s1", "{}", 1000).await,
        Err(StoreError::Conflict)
    ));
    s.session_save("s1", r#"{"user":"bob"}"#, 2000)
        .await
        .unwrap();
    assert_eq!(
        s.session_load("s1", 1500).await.unwrap().as_deref(),
        Some(r#"{"user":"bob"}"#)
    );
    assert_eq!(s.session_load("s1", 2000).await.unwrap(), None);
    assert_eq!(s.sessions_expire(2000).await.unwrap(), 1);
    // Challenges settle once.
    let c = RecordRow {
        id: "c1".into(),
        data: "{}".into(),
    };
    s.challenge_create(&c, "bob", "alice", 5).await.unwrap();
    assert_eq!(s.challenges_of("alice").await.unwrap(), vec![c.clone()]);
    assert!(s
        .challenge_settle("c1", "accepted", "{\"x\":1}")
        .await
        .unwrap());
    assert!(!s.challenge_settle("c1", "declined", "{}").await.unwrap());
    assert_eq!(s.challenge("c1").await.unwrap().unwrap().data, "{\"x\":1}");
    assert!(s.challenges_of("alice").await.unwrap().is_empty());
    // Chat: the last lines, oldest first.
    for i in 0..5 {
        s.chat_add("g", "player", i, &format!("line {i}"))
            .await
            .unwrap();
    }
    assert_eq!(s.chat_count("g", "player").await.unwrap(), 5);
    assert_eq!(
        s.chat_lines("g", "player", 2).await.unwrap(),
        vec!["line 3", "line 4"]
    );
    assert!(s.chat_lines("g", "spectator", 2).await.unwrap().is_empty());
    // A player's games and counts by the seat columns.
    let mut won = game("w1", Status::Finished, 50, 2);
    won.row.white_user = Some("bob".into());
    won.row.rated = true;
    won.row.winner = Some("white".into());
    s.create(&won).await.unwrap();
    let mut lost = game("l1", Status::Finished, 60, 2);
    lost.row.black_user = Some("bob".into());
    lost.row.winner = Some("white".into());
    s.create(&lost).await.unwrap();
    let mut on = game("p1", Status::Started, 70, 2);
    on.row.black_user = Some("bob".into());
    s.create(&on).await.unwrap();
    let c = s.user_counts("bob").await.unwrap();
    assert_eq!(
        (c.all, c.rated, c.win, c.loss, c.draw, c.playing),
        (2, 1, 1, 1, 0, 1)
    );
    let ids = s.user_game_ids("bob", None, 0, 10).await.unwrap();
    assert_eq!(ids, vec![(60, "l1".to_string()), (50, "w1".to_string())]);
    let after = s
        .user_game_ids("bob", Some((60, "l1".into())), 0, 10)
        .await
        .unwrap();
    assert_eq!(after, vec![(50, "w1".to_string())]);
    assert_eq!(s.user_game_ids("bob", None, 1, 10).await.unwrap().len(), 1);
    assert_eq!(
        s.user_playing_ids("bob").await.unwrap(),
        vec!["p1".to_string()]
    );
    s.close().await;
}

/// Two takers of one seek: exactly one gets it; expired and dropped seeks go.
async fn a_seek_is_taken_once(db: Db) {
    use server::store::players::RecordRow;
    let s = db.open("a").await;
    let r = |id: &str| RecordRow {
        id: id.into(),
        data: format!("{{\"id\":\"{id}\"}}"),
    };
    for round in 0..5 {
        let id = format!("s{round}");
        s.seek_create(&r(&id), "bob", 1, None).await.unwrap();
        let (a, b) = tokio::join!(s.seek_take(&id, 10), s.seek_take(&id, 10));
        let won = [a.unwrap(), b.unwrap()].into_iter().flatten().count();
        assert_eq!(won, 1, "round {round}");
    }
    s.seek_create(&r("rt"), "bob", 1, Some(100)).await.unwrap();
    s.seek_create(&r("corr"), "bob", 1, None).await.unwrap();
    s.seek_create(&r("other"), "carol", 1, Some(100))
        .await
        .unwrap();
    assert_eq!(s.seeks(50).await.unwrap().len(), 3);
    assert_eq!(
        s.seeks(100).await.unwrap().len(),
        1,
        "expired ones are not listed"
    );
    assert!(
        s.seek_take("rt", 100).await.unwrap().is_none(),
        "an expired seek cannot be taken"
    );
    s.seeks_touch("bob", 500).await.unwrap();
    assert_eq!(s.seeks(200).await.unwrap().len(), 2);
    assert_eq!(
        s.seeks_drop_realtime("bob").await.unwrap(),
        vec!["rt".to_string()]
    );
    assert_eq!(
        s.seeks_expire(1000).await.unwrap(),
        vec!["other".to_string()]
    );
    assert!(!s.seek_delete("corr", "carol").await.unwrap());
    assert!(s.seek_delete("corr", "bob").await.unwrap());
    assert!(s.seeks(0).await.unwrap().is_empty());
    s.close().await;
}
