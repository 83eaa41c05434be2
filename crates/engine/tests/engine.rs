//! Engine tests: mates in one and two turns per variant within a node budget (each mating line is
//! replayed through the rules crate), determinism, levels, and the UCI dialect driven end to end.

use engine::eval::evaluate;
use engine::levels::{greedy_turn, random_turn, Level};
use engine::search::{mate_in_turns, Limits, Line, Searcher};
use engine::uci::{Output, UciEngine};
use rules::game::{legal_turns, Game};
use rules::{Position, Variant};
use std::io::Write;
use std::sync::{Arc, Mutex};

const MATES: &[(Variant, &str, i32)] = &[
    (Variant::Chess, "6k1/5ppp/8/8/8/8/1R6/R5K1 w - - 0 1", 1),
    (Variant::Chess, "7k/8/8/8/8/8/R7/1R4K1 w - - 0 1", 2),
    (Variant::TwoMove, "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1 T", 1),
    (Variant::TwoMove, "4k3/8/8/8/8/8/8/R3K3 w - - 0 1 R", 1),
    (Variant::TwoMove, "k7/1p6/8/8/8/1K6/8/7R w - - 0 1 T", 2),
    (
        Variant::DoubleMove,
        "r2q3k/ppp3p1/2np2Pp/5b2/3P1B2/1Q4P1/PPP2P2/3R2K1 w - - 0 1 WB",
        1,
    ),
    (Variant::DoubleMove, "7k/8/8/8/8/8/R7/1R4K1 w - - 0 1 WB", 1),
    (Variant::DoubleMove, "7k/8/8/8/8/8/R7/1R4K1 w - - 0 1 --", 2),
    (Variant::Twinmove, "4k3/8/8/8/8/8/8/4QK2 w - - 0 1 T", 1),
    (Variant::Twinmove, "k7/8/8/8/8/8/8/1R2K2R w - - 0 1 T", 2),
];

fn search(
    variant: Variant,
    fen: &str,
    limits: Limits,
) -> (Position, engine::search::SearchResult, Vec<Line>) {
    let pos = Position::from_fen(variant, fen).unwrap();
    let mut s = Searcher::new(16);
    let mut lines = Vec::new();
    let r = s
        .search(&Game::new(pos), &limits, &mut |rep| {
            lines = rep.lines.clone()
        })
        .expect("a legal move exists");
    (pos, r, lines)
}

#[test]
fn finds_mates_in_one_and_two_turns_within_a_node_budget() {
    for &(variant, fen, turns) in MATES {
        let limits = Limits {
            nodes: Some(3_000_000),
            ..Limits::default()
        };
        let (pos, r, lines) = search(variant, fen, limits);
        let n = mate_in_turns(&pos, &lines[0]);
        assert_eq!(
            n,
            Some(turns),
            "{variant} {fen}: pv {:?} score {}",
            r.pv,
            r.score
        );
        // Replay the mating line: it must be legal and end the game in the root side's favour.
        let mut game = Game::new(pos);
        for &m in &r.pv {
            if game.outcome().is_some() {
                break;
            }
            game.play(m)
                .unwrap_or_else(|e| panic!("{variant} {fen}: {m} {e}"));
        }
        assert_eq!(
            game.outcome().and_then(|o| o.winner()),
            Some(pos.turn()),
            "{variant} {fen}: {:?}",
            r.pv
        );
        // The turn to play is the PV's first complete turn.
        assert_eq!(&r.pv[..r.turn.len()], &r.turn[..]);
    }
}

/// Black, a rook against queen and rook, can move back into the game's first position. Seen once
/// before, that is no draw (White need not repeat it a third time); seen twice, it is a threefold.
#[test]
fn a_position_seen_once_is_no_draw_but_one_seen_twice_is() {
    let start = Position::from_fen(Variant::Chess, "6rk/8/8/8/8/8/8/R2QK3 w - - 0 1").unwrap();
    let score_after = |moves: &[&str]| {
        let mut game = Game::new(start);
        for m in moves {
            game.play_turn_text(m, false).unwrap();
        }
        let limits = Limits {
            depth: Some(8),
            ..Limits::default()
        };
        Searcher::new(16)
            .search(&game, &limits, &mut |_| {})
            .expect("a legal move exists")
            .score
    };
    // ...Rg8 would bring back the first position (its second time).
    let once = score_after(&["d1d2", "g8g7", "d2d1"]);
    assert!(once < -300, "{once}");
    // ...Rg8 would bring it back a third time: a draw, which Black takes.
    let twice = score_after(&["d1d2", "g8g7", "d2d1", "g7g8", "d1d2", "g8g7", "d2d1"]);
    assert_eq!(twice, 0);
}

#[test]
fn the_double_move_seed_mate_is_the_best_turn() {
    let (_, r, _) = search(
        Variant::DoubleMove,
        "r2q3k/ppp3p1/2np2Pp/5b2/3P1B2/1Q4P1/PPP2P2/3R2K1 w - - 0 1 WB",
        Limits {
            depth: Some(4),
            ..Limits::default()
        },
    );
    assert_eq!(rules::game::turn_uci(&r.turn), "b3g8,g8h7");
}

/// Quiescence at a turn start where the side to move may move twice: a quiet first move that sets up
/// a winning capture for the second move counts; with one move left in the turn it does not exist.
#[test]
fn quiescence_sees_captures_set_up_by_the_first_move_of_a_two_move_turn() {
    let cases = [
        // Double Move: Nc3 (first half) attacks the undefended queen, Nxe4 (second half).
        (
            Variant::DoubleMove,
            "4k3/8/8/8/4q3/8/8/1N4K1 w - - 0 1 WB",
            "4k3/8/8/8/4q3/8/8/1N4K1 w - - 0 1 -B",
        ),
        // Two Move: the knight uncovers the rook's attack on the queen, the rook takes.
        (
            Variant::TwoMove,
            "4k3/q7/8/8/8/8/N7/R6K w - - 0 1 T",
            "4k3/q7/8/8/8/8/N7/R6K w - - 0 1 R",
        ),
    ];
    for (variant, two_moves, one_move) in cases {
        // Compared with the hand-written static evaluation: that one evaluates here.
        let mut s = Searcher::new(1);
        s.set_network(None);
        let pos = Position::from_fen(variant, two_moves).unwrap();
        let (q, e) = (s.quiescence(&pos), evaluate(&pos));
        assert!(
            q >= e + 500,
            "{variant} {two_moves}: quiescence {q}, static {e}"
        );
        let pos = Position::from_fen(variant, one_move).unwrap();
        assert_eq!(s.quiescence(&pos), evaluate(&pos), "{variant} {one_move}");
    }
    // Twinmove: b3 uncovers the bishop's attack on the king, which is taken at once: a won game.
    let pos = Position::from_fen(Variant::Twinmove, "7k/8/8/8/8/8/1P6/B5K1 w - - 0 1 T").unwrap();
    let mut s = Searcher::new(1);
    assert!(s.quiescence(&pos) >= engine::search::MATE_BOUND);
}

#[test]
fn search_is_deterministic() {
    for variant in Variant::ALL {
        let limits = Limits {
            depth: Some(5),
            ..Limits::default()
        };
        let fen = Position::start(variant).fen();
        let (_, a, _) = search(variant, &fen, limits.clone());
        let (_, b, _) = search(variant, &fen, limits);
        assert_eq!(
            (a.nodes, &a.turn, a.score),
            (b.nodes, &b.turn, b.score),
            "{variant}"
        );
        assert!(
            legal_turns(&Position::start(variant)).contains(&a.turn),
            "{variant}"
        );
    }
}

#[test]
fn multipv_gives_distinct_first_moves_sorted_by_score() {
    let (_, _, lines) = search(
        Variant::TwoMove,
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 R",
        Limits {
            depth: Some(3),
            multipv: 4,
            ..Limits::default()
        },
    );
    assert_eq!(lines.len(), 4);
    for w in lines.windows(2) {
        assert!(w[0].score >= w[1].score);
        assert_ne!(w[0].moves[0], w[1].moves[0]);
    }
}

#[test]
fn levels_play_legal_turns_and_greedy_takes_material() {
    for variant in Variant::ALL {
        let g = Game::new(Position::start(variant));
        let legal = legal_turns(g.position());
        for seed in 1..20 {
            assert!(legal.contains(&random_turn(&g, seed).unwrap()));
        }
        assert!(legal.contains(&greedy_turn(&g, 7).unwrap()));
    }
    // A hanging queen is taken.
    let pos = Position::from_fen(Variant::Chess, "4k3/8/8/3q4/8/8/8/3RK3 w - - 0 1").unwrap();
    let t = greedy_turn(&Game::new(pos), 3).unwrap();
    assert_eq!(rules::game::turn_uci(&t), "d1d5");
    assert!(Level(1).chooser().is_some());
    assert!(Level(8).chooser().is_none());
}

#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl Write for Buffer {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn uci_session(commands: &[&str]) -> Vec<String> {
    let buf = Buffer::default();
    let out: Output = Arc::new(Mutex::new(Box::new(buf.clone())));
    let mut e = UciEngine::new(out, Level::default());
    for c in commands {
        if !e.handle(c) {
            break;
        }
    }
    // Let a search finish by itself before quitting (quit stops it).
    let searching = commands
        .iter()
        .any(|c| c.starts_with("go ") && !c.contains("perft") && !c.contains("depth x"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while searching && std::time::Instant::now() < deadline {
        if String::from_utf8_lossy(&buf.0.lock().unwrap()).contains("bestmove") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    e.handle("quit");
    let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    text.lines().map(str::to_string).collect()
}

fn bestmove(lines: &[String]) -> String {
    lines
        .iter()
        .rev()
        .find_map(|l| l.strip_prefix("bestmove ").map(str::to_string))
        .expect("a bestmove line")
}

#[test]
fn uci_handshake_and_options() {
    let out = uci_session(&["uci", "isready"]);
    assert!(out.iter().any(|l| l.starts_with("id name doublemove")));
    assert!(out
        .iter()
        .any(|l| l.contains("option name UCI_Variant type combo") && l.contains("var twinmove")));
    assert!(out.iter().any(|l| l == "uciok"));
    assert_eq!(out.last().map(String::as_str), Some("readyok"));
}

#[test]
fn uci_positions_take_whole_turns_and_single_moves() {
    let out = uci_session(&[
        "setoption name UCI_Variant value two-move",
        "position startpos moves e2e4 c7c5,d7d6 g1f3 f1b5",
        "d",
    ]);
    let fen = out
        .iter()
        .find_map(|l| l.strip_prefix("info string fen "))
        .unwrap();
    assert_eq!(
        fen,
        "rnbqkbnr/pp2pppp/3p4/1Bp5/4P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 1 2 T"
    );
    // An illegal turn is refused with a reason and the position is left as it was.
    let out = uci_session(&[
        "setoption name UCI_Variant value two-move",
        "position startpos moves e2e4,d2d4",
        "d",
    ]);
    assert!(out
        .iter()
        .any(|l| l.starts_with("info string error:") && l.contains("response move")));
    assert!(out.iter().any(|l| l.ends_with("w KQkq - 0 1 R")));
}

#[test]
fn uci_go_returns_a_whole_legal_turn() {
    for variant in ["two-move", "double-move", "twinmove", "chess"] {
        let out = uci_session(&[
            &format!("setoption name UCI_Variant value {variant}"),
            "position startpos",
            "go depth 3",
        ]);
        let bm = bestmove(&out);
        let v: Variant = variant.parse().unwrap();
        let mut g = Game::new(Position::start(v));
        g.play_turn_text(&bm, false)
            .unwrap_or_else(|e| panic!("{variant}: {bm}: {e}"));
        assert!(out
            .iter()
            .any(|l| l.starts_with("info depth 3 ") && l.contains(" pv ")));
    }
    let out = uci_session(&[
        "setoption name UCI_Variant value double-move",
        "position fen r2q3k/ppp3p1/2np2Pp/5b2/3P1B2/1Q4P1/PPP2P2/3R2K1 w - - 0 1 WB",
        "go depth 4",
    ]);
    assert_eq!(bestmove(&out), "b3g8,g8h7");
    assert!(out.iter().any(|l| l.contains("score mate 1")));
}

#[test]
fn uci_clock_and_stop() {
    let out = uci_session(&[
        "setoption name UCI_Variant value twinmove",
        "position startpos",
        "go wtime 300 btime 300 winc 0 binc 0",
    ]);
    let bm = bestmove(&out);
    assert!(bm.contains(','), "{bm}");
    // `stop` ends an infinite search at once with a legal turn.
    let buf = Buffer::default();
    let out: Output = Arc::new(Mutex::new(Box::new(buf.clone())));
    let mut e = UciEngine::new(out, Level::default());
    e.handle("position startpos");
    e.handle("go infinite");
    std::thread::sleep(std::time::Duration::from_millis(200));
    e.handle("stop");
    let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    let bm = bestmove(&lines);
    assert!(Position::start(Variant::Chess)
        .is_legal(rules::notation::parse_uci(&Position::start(Variant::Chess), &bm).unwrap()));
}

#[test]
fn uci_perft_and_bad_input() {
    let out = uci_session(&[
        "setoption name UCI_Variant value two-move",
        "position startpos",
        "go perft 2",
    ]);
    assert_eq!(out.last().map(String::as_str), Some("Nodes searched: 400"));
    let out = uci_session(&[
        "position fen not a fen",
        "go depth x",
        "setoption name UCI_Variant value nonsense",
        "setoption name Hash value 0",
        "frobnicate",
        "isready",
    ]);
    assert_eq!(
        out.iter()
            .filter(|l| l.starts_with("info string error"))
            .count(),
        5,
        "{out:?}"
    );
    assert_eq!(out.last().map(String::as_str), Some("readyok"));
}

#[test]
fn a_search_stopped_at_once_still_returns_a_legal_turn() {
    let cases = [
        (
            Variant::TwoMove,
            "r2qk2r/ppp3p1/5n2/1Bbp1PBp/1n6/2N2N1P/PPP2PPR/R2Q1K2 b kq - 1 8 T",
        ),
        (
            Variant::DoubleMove,
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 WB",
        ),
        (
            Variant::Twinmove,
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 T",
        ),
        (
            Variant::Chess,
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        ),
    ];
    for (variant, fen) in cases {
        for nodes in [1, 50, 2_000] {
            let (pos, r, _) = search(
                variant,
                fen,
                Limits {
                    nodes: Some(nodes),
                    depth: Some(2),
                    ..Limits::default()
                },
            );
            assert!(
                legal_turns(&pos).contains(&r.turn),
                "{variant} {nodes}: {:?}",
                r.turn
            );
        }
    }
    // The level that once answered `bestmove (none)` here.
    let out = {
        let buf = Buffer::default();
        let out: Output = Arc::new(Mutex::new(Box::new(buf.clone())));
        let mut e = UciEngine::new(out, Level(3));
        e.handle("setoption name UCI_Variant value two-move");
        e.handle("position fen r2qk2r/ppp3p1/5n2/1Bbp1PBp/1n6/2N2N1P/PPP2PPR/R2Q1K2 b kq - 1 8 T");
        e.handle("go wtime 1500 btime 1500 winc 50 binc 50");
        e.handle("quit");
        let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        text.lines().map(str::to_string).collect::<Vec<_>>()
    };
    assert_ne!(bestmove(&out), "(none)");
}

/// `doublemove bench`'s node count is the search's signature: it changes only when the search does
/// (a change of move ordering, pruning or the table). Update it deliberately, with the reason.
#[test]
fn bench_signature() {
    let mut sink = Vec::new();
    let (nodes, _) = engine::bench::run(&mut sink);
    assert_eq!(nodes, engine::bench::SIGNATURE);
}

/// Positions of every variant, at the start of a turn and half way through one.
const SMP_POSITIONS: &[(Variant, &str)] = &[
    (
        Variant::Chess,
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
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
        Variant::TwoMove,
        "r2qk2r/ppp3p1/5n2/1Bbp1PBp/1n6/2N2N1P/PPP2PPR/R2Q1K2 b kq - 1 8 T",
    ),
    (
        Variant::DoubleMove,
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 WB",
    ),
    (
        Variant::DoubleMove,
        "r2q3k/ppp3p1/2np2Pp/5b2/3P1B2/1Q4P1/PPP2P2/3R2K1 w - - 0 1 WB",
    ),
    (Variant::DoubleMove, "7k/8/8/8/8/8/R7/1R4K1 w - - 0 1 --"),
    (
        Variant::Twinmove,
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 T",
    ),
    (
        Variant::Twinmove,
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1 T",
    ),
];

#[test]
fn multi_threaded_search_returns_a_legal_whole_turn() {
    let mut variants_seen = std::collections::HashSet::new();
    for &(variant, fen) in SMP_POSITIONS {
        variants_seen.insert(variant);
        let pos = Position::from_fen(variant, fen).unwrap();
        // Also from half way through the turn, where there is one.
        let mut roots = vec![pos];
        if let Some(&m) = pos
            .legal_moves()
            .iter()
            .find(|&&m| pos.after(m).turn() == pos.turn())
        {
            roots.push(pos.after(m));
        }
        for root in roots {
            let legal = legal_turns(&root);
            for threads in [2, 3] {
                for limits in [
                    Limits {
                        depth: Some(6),
                        ..Limits::default()
                    },
                    Limits {
                        nodes: Some(30_000),
                        ..Limits::default()
                    },
                    Limits {
                        hard_time: Some(std::time::Duration::from_millis(30)),
                        soft_time: Some(std::time::Duration::from_millis(30)),
                        multipv: 2,
                        ..Limits::default()
                    },
                ] {
                    let mut s = Searcher::with_threads(4, threads);
                    assert_eq!(s.threads(), threads);
                    let mut reports = 0;
                    let r = s
                        .search(&Game::new(root), &limits, &mut |_| reports += 1)
                        .expect("a legal move exists");
                    assert!(
                        legal.contains(&r.turn),
                        "{variant} {} threads {threads} {limits:?}: {:?}",
                        root.fen(),
                        r.turn
                    );
                    assert!(reports > 0);
                    if limits.depth == Some(6) {
                        assert!(r.depth >= 6 || r.score.abs() >= engine::search::MATE_BOUND);
                    }
                }
            }
        }
    }
    assert_eq!(variants_seen.len(), Variant::ALL.len());
}

#[test]
fn threads_can_change_between_searches() {
    let game = Game::new(Position::start(Variant::TwoMove));
    let limits = Limits {
        depth: Some(4),
        ..Limits::default()
    };
    let mut s = Searcher::new(4);
    for threads in [4, 1, 2, 1] {
        s.set_threads(threads);
        let r = s.search(&game, &limits, &mut |_| {}).unwrap();
        assert!(legal_turns(game.position()).contains(&r.turn));
    }
    // One thread after helpers: the same search as a fresh one-thread searcher's, table aside.
    s.clear();
    let a = s.search(&game, &limits, &mut |_| {}).unwrap();
    let b = Searcher::new(4)
        .search(&game, &limits, &mut |_| {})
        .unwrap();
    assert_eq!((a.nodes, a.turn), (b.nodes, b.turn));
}

/// A UCI engine writing into a buffer, and a way to wait for a line.
fn uci_engine() -> (UciEngine, Buffer) {
    let buf = Buffer::default();
    let out: Output = Arc::new(Mutex::new(Box::new(buf.clone())));
    (UciEngine::new(out, Level::default()), buf)
}

fn lines_of(buf: &Buffer) -> Vec<String> {
    String::from_utf8(buf.0.lock().unwrap().clone())
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

fn wait_for_bestmove(buf: &Buffer, within: std::time::Duration) -> Option<String> {
    let deadline = std::time::Instant::now() + within;
    while std::time::Instant::now() < deadline {
        if let Some(b) = lines_of(buf)
            .iter()
            .find_map(|l| l.strip_prefix("bestmove ").map(str::to_string))
        {
            return Some(b);
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    None
}

/// Plays `bestmove`'s turn (and its `ponder` turn, if any) from `moves` after the start position.
fn check_bestmove(variant: Variant, moves: &[&str], bm: &str) {
    let mut g = Game::new(Position::start(variant));
    for t in moves {
        g.play_turn_text(t, false).unwrap();
    }
    let mut parts = bm.split(" ponder ");
    let turn = parts.next().unwrap();
    g.play_turn_text(turn, false)
        .unwrap_or_else(|e| panic!("{variant}: bestmove {bm}: {e}"));
    if let Some(reply) = parts.next() {
        g.play_turn_text(reply, false)
            .unwrap_or_else(|e| panic!("{variant}: ponder {reply}: {e}"));
    }
}

#[test]
fn uci_go_ponder_waits_for_ponderhit_then_keeps_time() {
    for (variant, name) in [
        (Variant::Chess, "chess"),
        (Variant::TwoMove, "two-move"),
        (Variant::DoubleMove, "double-move"),
        (Variant::Twinmove, "twinmove"),
    ] {
        let (mut e, buf) = uci_engine();
        e.handle(&format!("setoption name UCI_Variant value {name}"));
        e.handle("setoption name Threads value 2");
        e.handle("setoption name Ponder value true");
        let first = legal_turns(&Position::start(variant))[0].clone();
        let first = rules::game::turn_uci(&first);
        e.handle(&format!("position startpos moves {first}"));
        // A clock that allows about 100 ms per turn; pondering ignores it.
        e.handle("go ponder wtime 4000 btime 4000 winc 0 binc 0");
        std::thread::sleep(std::time::Duration::from_millis(400));
        assert_eq!(
            wait_for_bestmove(&buf, std::time::Duration::ZERO),
            None,
            "{name}"
        );
        e.handle("isready");
        assert!(lines_of(&buf).iter().any(|l| l == "readyok"));
        e.handle("ponderhit");
        // Now the search runs under the clock: well within a second.
        let hit = std::time::Instant::now();
        let bm = wait_for_bestmove(&buf, std::time::Duration::from_secs(5)).expect("bestmove");
        // Hard limit ~300 ms from ponderhit (generous for a loaded test machine).
        assert!(
            hit.elapsed() < std::time::Duration::from_secs(2),
            "{name}: {:?}",
            hit.elapsed()
        );
        eprintln!("{name}: bestmove {bm} {:?} after ponderhit", hit.elapsed());
        check_bestmove(variant, &[&first], &bm);
        // The search kept what it found while pondering: its info lines go on past 400 ms.
        assert!(lines_of(&buf).iter().any(|l| l.starts_with("info depth")));
        e.handle("quit");
    }
}

#[test]
fn uci_stop_during_ponder_gives_a_legal_bestmove() {
    for (variant, name) in [(Variant::TwoMove, "two-move"), (Variant::Chess, "chess")] {
        let (mut e, buf) = uci_engine();
        e.handle(&format!("setoption name UCI_Variant value {name}"));
        e.handle("setoption name Threads value 3");
        e.handle("position startpos");
        // A finished ponder search (depth 2) also waits for ponderhit or stop.
        e.handle("go ponder depth 2 wtime 1000 btime 1000");
        std::thread::sleep(std::time::Duration::from_millis(300));
        assert_eq!(wait_for_bestmove(&buf, std::time::Duration::ZERO), None);
        e.handle("stop");
        let bm = wait_for_bestmove(&buf, std::time::Duration::from_secs(2)).expect("bestmove");
        assert!(!bm.contains("ponder"), "Ponder is off: {bm}");
        check_bestmove(variant, &[], &bm);
        // An unlimited ponder search on all threads, stopped.
        e.handle("position startpos");
        e.handle("go ponder");
        std::thread::sleep(std::time::Duration::from_millis(200));
        let before = lines_of(&buf).len();
        e.handle("stop");
        let after = lines_of(&buf);
        let bm = after[before..]
            .iter()
            .find_map(|l| l.strip_prefix("bestmove "))
            .expect("stop joins the search thread after its bestmove");
        check_bestmove(variant, &[], bm);
        e.handle("quit");
    }
}

#[test]
fn uci_threads_option() {
    let out = uci_session(&["uci"]);
    assert!(out
        .iter()
        .any(|l| l == "option name Threads type spin default 1 min 1 max 256"));
    let out = uci_session(&[
        "setoption name Threads value 2",
        "setoption name Hash value 8",
        "setoption name UCI_Variant value double-move",
        "position startpos",
        "go depth 5",
    ]);
    check_bestmove(Variant::DoubleMove, &[], &bestmove(&out));
    let out = uci_session(&[
        "setoption name Threads value 0",
        "setoption name Threads value 257",
    ]);
    assert_eq!(out.iter().filter(|l| l.contains("error")).count(), 2);
}
