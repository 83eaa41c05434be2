//! `doublemove match` against the real binary, with tiny fake engines written as bash scripts: one
//! that plays an illegal move, one that oversleeps its clock, one that crashes, and a random mover that
//! asks `doublemove validate` / `doublemove turns` for a legal turn. Proper games use the real engine
//! (`doublemove uci`) and, when installed, Stockfish.

use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_doublemove");

/// The common part of every fake engine: the handshake, the variant and the position it is given.
fn fake_engine(dir: &Path, name: &str, list_variant: bool, on_go: &str) -> PathBuf {
    let variant_option = if list_variant {
        "echo 'option name UCI_Variant type combo default chess var chess var two-move var double-move var twinmove'"
    } else {
        ":"
    };
    let script = format!(
        r#"#!/usr/bin/env bash
DM='{BIN}'
LOG='{log}'
VARIANT=chess
POS='position startpos'
while IFS= read -r line; do
  echo "$line" >> "$LOG"
  case "$line" in
    uci) echo 'id name {name}'; {variant_option}; echo 'option name Foo type string default x'; echo uciok ;;
    isready) echo readyok ;;
    'setoption name UCI_Variant value '*) VARIANT="${{line##* }}" ;;
    position*) POS="$line" ;;
    go*) {on_go} ;;
    quit) exit 0 ;;
  esac
done
"#,
        log = dir.join(format!("{name}.log")).display(),
    );
    let path = dir.join(name);
    std::fs::write(&path, script).unwrap();
    Command::new("chmod").arg("+x").arg(&path).status().unwrap();
    path
}

/// Prints a random legal turn for the position in $POS.
const RANDOM_MOVE: &str = r#"rest="${POS#position }"
      fen=""
      if [[ "$rest" == fen* ]]; then rest="${rest#fen }"; fen="${rest%% moves *}"; fi
      moves=""
      if [[ "$rest" == *" moves "* ]]; then moves="${rest#* moves }"; fi
      if [ -n "$fen" ]; then
        cur=$(printf '[SetUp "1"]\n[FEN "%s"]\n\n%s *\n' "$fen" "$moves" | "$DM" validate --variant "$VARIANT" - | head -n1)
      else
        cur=$(printf '%s *\n' "$moves" | "$DM" validate --variant "$VARIANT" - | head -n1)
      fi
      echo "bestmove $("$DM" turns --variant "$VARIANT" --fen "$cur" | shuf -n1)""#;

struct Engines {
    dir: tempfile::TempDir,
    random: PathBuf,
    illegal: PathBuf,
    sleeper: PathBuf,
    crasher: PathBuf,
}

fn engines() -> Engines {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    Engines {
        random: fake_engine(d, "random", true, RANDOM_MOVE),
        illegal: fake_engine(d, "illegal", false, "echo 'bestmove e2e5'"),
        sleeper: fake_engine(d, "sleeper", true, "sleep 3; echo 'bestmove e2e4'"),
        crasher: fake_engine(d, "crasher", true, "exit 3"),
        dir,
    }
}

fn run_match(args: &[&str]) -> String {
    let out = Command::new(BIN).arg("match").args(args).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "match failed: {stdout}\nstderr: {stderr}"
    );
    stdout + &stderr
}

fn losses_line(out: &str) -> &str {
    out.lines()
        .find(|l| l.starts_with("Losses by reason:"))
        .expect("a losses line")
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

const HEALTHY: &str =
    "Losses by reason: A time 0, illegal 0, crash 0; B time 0, illegal 0, crash 0";

#[test]
fn illegal_move_loses_and_options_are_sent_only_where_listed() {
    let e = engines();
    let out = run_match(&[
        "--engine-a",
        p(&e.illegal),
        "--engine-b",
        p(&e.random),
        "--games",
        "2",
        "--tc",
        "5+0.1",
        "--option-a",
        "Foo=bar baz",
    ]);
    assert_eq!(
        losses_line(&out),
        "Losses by reason: A time 0, illegal 2, crash 0; B time 0, illegal 0, crash 0"
    );
    assert!(
        out.contains("Score of illegal vs random: 0 - 2 - 0"),
        "{out}"
    );
    assert!(out.contains("loses by an illegal turn"), "{out}");
    let log = std::fs::read_to_string(e.dir.path().join("illegal.log")).unwrap();
    assert!(log.contains("setoption name Foo value bar baz"), "{log}");
    assert!(
        !log.contains("UCI_Variant"),
        "UCI_Variant sent to an engine that did not list it: {log}"
    );
    let log = std::fs::read_to_string(e.dir.path().join("random.log")).unwrap();
    assert!(
        log.contains("setoption name UCI_Variant value chess"),
        "{log}"
    );
    assert!(
        log.contains("go wtime 5000 btime 5000 winc 100 binc 100"),
        "{log}"
    );
}

#[test]
fn oversleeping_loses_on_time() {
    let e = engines();
    let start = std::time::Instant::now();
    let out = run_match(&[
        "--variant",
        "two-move",
        "--engine-a",
        p(&e.random),
        "--engine-b",
        p(&e.sleeper),
        "--games",
        "2",
        "--tc",
        "0.3+0",
    ]);
    assert_eq!(
        losses_line(&out),
        "Losses by reason: A time 0, illegal 0, crash 0; B time 2, illegal 0, crash 0"
    );
    assert!(out.contains("loses on time"), "{out}");
    // The sleeper is killed at its flag, not waited for.
    assert!(start.elapsed().as_secs_f64() < 5.0);
}

#[test]
fn flag_fall_against_bare_king_is_a_draw() {
    let e = engines();
    let dir = e.dir.path();
    let openings = dir.join("openings.txt");
    std::fs::write(
        &openings,
        "# white: king and rook\n4k3/8/8/8/8/8/8/R3K3 w - - 0 1\n",
    )
    .unwrap();
    let pgn = dir.join("games.pgn");
    let out = run_match(&[
        "--engine-a",
        p(&e.sleeper),
        "--engine-b",
        p(&e.random),
        "--games",
        "2",
        "--tc",
        "0.2+0",
        "--openings",
        p(&openings),
        "--pgn",
        p(&pgn),
    ]);
    // Game 1: A (White, with the rook) flags, but bare-king Black cannot win: a draw. Game 2: A flags
    // as Black against the rook: a loss.
    assert!(
        out.contains("Score of sleeper vs random: 0 - 1 - 1"),
        "{out}"
    );
    assert!(
        out.contains("time forfeit, but the opponent cannot win 1"),
        "{out}"
    );
    let text = std::fs::read_to_string(&pgn).unwrap();
    assert_eq!(text.matches("[Termination \"time forfeit\"]").count(), 2);
    assert!(text.contains("[FEN \"4k3/8/8/8/8/8/8/R3K3 w - - 0 1\"]"));
    assert!(text.contains("[Result \"1/2-1/2\"]") && text.contains("[Result \"1-0\"]"));
}

#[test]
fn crash_loses() {
    let e = engines();
    let out = run_match(&[
        "--variant",
        "double-move",
        "--engine-a",
        p(&e.crasher),
        "--engine-b",
        p(&e.random),
        "--games",
        "4",
        "--tc",
        "5+0",
        "--concurrency",
        "2",
    ]);
    // The crashed engine is restarted for every game and loses each one.
    assert_eq!(
        losses_line(&out),
        "Losses by reason: A time 0, illegal 0, crash 4; B time 0, illegal 0, crash 0"
    );
    assert!(out.contains("its engine crashed"), "{out}");
}

#[test]
fn random_movers_play_legal_games_and_the_pgn_replays() {
    let e = engines();
    let dir = e.dir.path();
    let openings = dir.join("openings.txt");
    std::fs::write(
        &openings,
        "e2e4 c7c5,d7d6\nrnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 T\n",
    )
    .unwrap();
    let pgn = dir.join("games.pgn");
    let out = run_match(&[
        "--variant",
        "two-move",
        "--engine-a",
        p(&e.random),
        "--engine-b",
        p(&e.random),
        "--games",
        "4",
        "--tc",
        "10+0.1",
        "--concurrency",
        "2",
        "--openings",
        p(&openings),
        "--max-turns",
        "24",
        "--pgn",
        p(&pgn),
    ]);
    assert_eq!(losses_line(&out), HEALTHY, "{out}");
    assert!(out.contains("random (A) vs random (B)"), "{out}");
    let text = std::fs::read_to_string(&pgn).unwrap();
    let games: Vec<&str> = text
        .split("[Event ")
        .filter(|g| !g.trim().is_empty())
        .collect();
    assert_eq!(games.len(), 4);
    for g in games {
        let file = dir.join("one.pgn");
        std::fs::write(&file, format!("[Event {g}")).unwrap();
        let v = Command::new(BIN)
            .arg("validate")
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            v.status.success(),
            "{g}\n{}",
            String::from_utf8_lossy(&v.stdout)
        );
        assert!(g.contains("[Variant \"Two Move Chess\"]"));
        assert!(g.contains("[TimeControl \"10+0.1\"]"));
    }
    // The opening's turn has no comment; the engines' turns say how long each took.
    assert!(text.contains("1.e4 c5,d6 "), "{text}");
    assert!(!text.contains("1.e4 {"), "{text}");
    // (The random mover reports no score: its comments are the time alone, `{0.003s}`.)
    let timed = text.matches("s} ").count() + text.matches("s}\n").count();
    assert!(timed >= 4, "{text}");
    assert!(text.contains("[FEN \"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 T\"]"));
}

#[test]
fn sprt_stops_early() {
    let e = engines();
    let out = run_match(&[
        "--engine-a",
        p(&e.illegal),
        "--engine-b",
        p(&e.random),
        "--games",
        "200",
        "--tc",
        "5+0",
        "--sprt",
        "0,10",
        "--concurrency",
        "2",
    ]);
    assert!(out.contains("H0 accepted after"), "{out}");
    let games: u64 = out
        .lines()
        .find_map(|l| l.strip_prefix("Score for A: 0/"))
        .and_then(|r| r.split_whitespace().next())
        .unwrap()
        .parse()
        .unwrap();
    // All pairs lost: the exact GSPRT needs about 71 of them for [0, 10] nElo.
    assert!(games < 200, "{out}");
}

#[test]
fn real_engine_plays_games_to_their_end() {
    let e = engines();
    let pgn = e.dir.path().join("real.pgn");
    let out = run_match(&[
        "--variant",
        "twinmove",
        "--engine-a",
        "doublemove uci --level 4",
        "--engine-b",
        "doublemove uci --level 1",
        "--games",
        "2",
        "--tc",
        "2+0.02",
        "--pgn",
        p(&pgn),
    ]);
    assert_eq!(losses_line(&out), HEALTHY, "{out}");
    assert!(!out.contains("maximum length"), "{out}");
    // Level 4 searches and reports scores: its turns' comments are score/depth and time, e.g.
    // {+0.35/3 0.051s}; level 1 (greedy) reports nothing and gets the time alone, e.g. {0.001s}.
    let text = std::fs::read_to_string(&pgn).unwrap();
    let seconds = |t: &str| {
        t.strip_suffix('s')
            .is_some_and(|t| t.parse::<f64>().is_ok())
    };
    let mut reported = 0;
    for c in text.split('{').skip(1).filter_map(|c| c.split('}').next()) {
        let note = c.split(',').next().unwrap_or("");
        match note.split_once(' ') {
            Some((score_depth, time)) => {
                let (score, depth) = score_depth.split_once('/').unwrap_or(("", ""));
                let score_ok = score.parse::<f64>().is_ok()
                    || score
                        .strip_prefix(['+', '-'])
                        .and_then(|m| m.strip_prefix('M'))
                        .is_some_and(|n| n.parse::<u32>().is_ok());
                assert!(
                    score_ok && depth.parse::<u32>().is_ok() && seconds(time),
                    "{c}\n{text}"
                );
                reported += 1;
            }
            None => assert!(seconds(note), "{c}\n{text}"),
        }
    }
    assert!(reported >= 4, "{text}");
}

fn stockfish() -> Option<String> {
    for c in ["/usr/games/stockfish", "/usr/bin/stockfish"] {
        if Path::new(c).exists() {
            return Some(c.into());
        }
    }
    Command::new("stockfish")
        .arg("quit")
        .output()
        .ok()
        .map(|_| "stockfish".into())
}

#[test]
fn stockfish_plays_chess_with_node_limits() {
    let Some(sf) = stockfish() else {
        println!("note: stockfish not found, test skipped");
        return;
    };
    let out = run_match(&[
        "--engine-a",
        &sf,
        "--engine-b",
        &sf,
        "--games",
        "2",
        "--nodes",
        "3000",
        "--option-a",
        "Hash=16",
        "--option-b",
        "Hash=16",
    ]);
    assert_eq!(losses_line(&out), HEALTHY, "{out}");
    assert!(out.contains("Elo difference:"), "{out}");
}
