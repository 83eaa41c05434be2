//! The UCI dialect (docs/protocol.md): standard UCI for `chess`; for the variants `UCI_Variant`, whole
//! turns as comma-joined moves in `position … moves` and in `bestmove`. The search runs on its own
//! thread; this thread keeps reading commands (`stop`, `isready`, `quit`) meanwhile.

use crate::levels::{self, Level};
use crate::nnue::{self, Network};
use crate::search::{
    mate_in_turns, EvalChoice, Limits, Report, SearchResult, Searcher, MAX_THREADS,
};
use crate::timeman::{allocate, Clock};
use rules::game::Game;
use rules::perft::divide;
use rules::{Color, Move, Position, Variant};
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

pub type Output = Arc<Mutex<Box<dyn Write + Send>>>;

fn say(out: &Output, line: &str) {
    let mut w = out.lock().unwrap_or_else(|e| e.into_inner());
    let _ = writeln!(w, "{line}");
    let _ = w.flush();
}

/// Moves grouped into turns: moves of one turn joined by commas, turns by spaces.
pub fn format_line(root: &Position, moves: &[Move]) -> String {
    let mut out = String::new();
    let mut pos = *root;
    for (i, &m) in moves.iter().enumerate() {
        if i > 0 {
            out.push(if pos.at_turn_start() { ' ' } else { ',' });
        }
        out.push_str(&m.uci());
        pos = pos.after(m);
    }
    out
}

pub fn info_line(root: &Position, r: &Report, index: usize) -> String {
    let line = &r.lines[index];
    let score = match mate_in_turns(root, line) {
        Some(n) => format!("mate {n}"),
        None => format!("cp {}", line.score),
    };
    let ms = r.elapsed.as_millis().max(1) as u64;
    let mut s = format!(
        "info depth {} seldepth {} multipv {} score {score} nodes {} nps {} hashfull {} time {ms} pv {}",
        r.depth,
        r.seldepth,
        index + 1,
        r.nodes,
        r.nodes * 1000 / ms,
        r.hashfull,
        format_line(root, &line.moves)
    );
    if r.lines.len() == 1 {
        s = s.replace(" multipv 1", "");
    }
    s
}

#[derive(Default)]
struct GoParams {
    wtime: Option<u64>,
    btime: Option<u64>,
    winc: u64,
    binc: u64,
    movestogo: Option<u32>,
    depth: Option<i32>,
    nodes: Option<u64>,
    movetime: Option<u64>,
    infinite: bool,
    ponder: bool,
    perft: Option<u32>,
}

fn parse_go(tokens: &[&str]) -> Result<GoParams, String> {
    let mut g = GoParams::default();
    let mut i = 0;
    let num = |i: usize| -> Result<u64, String> {
        let t = tokens
            .get(i + 1)
            .ok_or_else(|| format!("'{}' needs a number", tokens[i]))?;
        // Clocks may go negative in some GUIs: treat as zero.
        t.parse::<i64>()
            .map(|v| v.max(0) as u64)
            .map_err(|_| format!("'{}': '{t}' is not a number", tokens[i]))
    };
    while i < tokens.len() {
        match tokens[i] {
            "wtime" => g.wtime = Some(num(i)?),
            "btime" => g.btime = Some(num(i)?),
            "winc" => g.winc = num(i)?,
            "binc" => g.binc = num(i)?,
            "movestogo" => g.movestogo = Some(num(i)? as u32),
            "depth" => g.depth = Some(num(i)? as i32),
            "nodes" => g.nodes = Some(num(i)?),
            "movetime" => g.movetime = Some(num(i)?),
            "perft" => g.perft = Some(num(i)? as u32),
            "infinite" | "ponder" => {
                if tokens[i] == "ponder" {
                    g.ponder = true;
                } else {
                    g.infinite = true;
                }
                i += 1;
                continue;
            }
            "mate" | "searchmoves" => {
                i += 1;
                continue;
            }
            other => return Err(format!("unknown go parameter '{other}'")),
        }
        i += 2;
    }
    Ok(g)
}

pub struct UciEngine {
    variant: Variant,
    game: Game,
    searcher: Arc<Mutex<Searcher>>,
    search_thread: Option<JoinHandle<()>>,
    out: Output,
    multipv: usize,
    hash_mb: usize,
    threads: usize,
    /// `setoption name Ponder value true`: `bestmove` names the expected reply (`ponder <turn>`).
    ponder_option: bool,
    /// Set while a `go ponder` search waits for `ponderhit` (see `Limits::ponder`).
    pondering: Arc<AtomicBool>,
    level: Level,
    overhead_ms: u64,
    seed: u64,
    stop: Arc<AtomicBool>,
    /// `UseNNUE`: auto (None: the network where it is the stronger), true or false.
    use_nnue: Option<bool>,
    /// `EvalFile`: a network loaded from a file instead of the embedded one.
    eval_file: Option<Arc<Network>>,
}

impl UciEngine {
    pub fn new(out: Output, level: Level) -> UciEngine {
        let searcher = Searcher::new(64);
        let stop = searcher.stop_flag();
        UciEngine {
            stop,
            variant: Variant::Chess,
            game: Game::new(Position::start(Variant::Chess)),
            searcher: Arc::new(Mutex::new(searcher)),
            search_thread: None,
            out,
            multipv: 1,
            hash_mb: 64,
            threads: 1,
            ponder_option: false,
            pondering: Arc::new(AtomicBool::new(false)),
            level,
            overhead_ms: 50,
            use_nnue: None,
            eval_file: None,
            seed: 0x2545_F491_4F6C_DD1D
                ^ std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos() as u64),
        }
    }

    /// The evaluation the options choose.
    fn eval_choice(&self) -> EvalChoice {
        match (self.use_nnue, &self.eval_file) {
            (Some(false), _) => EvalChoice::Classical,
            (_, Some(net)) => EvalChoice::Network(net.clone()),
            (Some(true), None) => EvalChoice::Network(nnue::embedded()),
            (None, None) => EvalChoice::Auto,
        }
    }

    fn wait_search(&mut self) {
        if let Some(h) = self.search_thread.take() {
            let _ = h.join();
        }
    }

    fn stop_search(&mut self) {
        self.pondering.store(false, Ordering::Relaxed);
        self.stop.store(true, Ordering::Relaxed);
        self.wait_search();
    }

    /// Handles one command line; returns false on `quit`.
    pub fn handle(&mut self, line: &str) -> bool {
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let Some(&cmd) = tokens.first() else {
            return true;
        };
        match cmd {
            "uci" => {
                say(
                    &self.out,
                    &format!("id name doublemove {}", env!("CARGO_PKG_VERSION")),
                );
                say(&self.out, "id author the doublemove developers");
                say(&self.out, "option name UCI_Variant type combo default chess var chess var two-move var double-move var twinmove");
                say(
                    &self.out,
                    "option name Hash type spin default 64 min 1 max 4096",
                );
                say(
                    &self.out,
                    &format!("option name Threads type spin default 1 min 1 max {MAX_THREADS}"),
                );
                say(
                    &self.out,
                    "option name MultiPV type spin default 1 min 1 max 64",
                );
                say(&self.out, "option name Ponder type check default false");
                say(
                    &self.out,
                    &format!(
                        "option name Level type spin default {} min 1 max {}",
                        self.level.0,
                        levels::MAX_LEVEL
                    ),
                );
                say(
                    &self.out,
                    "option name Move Overhead type spin default 50 min 0 max 5000",
                );
                say(&self.out, "option name Clear Hash type button");
                say(
                    &self.out,
                    "option name UseNNUE type combo default auto var auto var true var false",
                );
                say(
                    &self.out,
                    "option name EvalFile type string default <embedded>",
                );
                say(&self.out, "uciok");
            }
            "isready" => say(&self.out, "readyok"),
            "ucinewgame" => {
                self.stop_search();
                self.lock_searcher().clear();
                self.game = Game::new(Position::start(self.variant));
            }
            "setoption" => self.setoption(&tokens[1..]),
            "position" => {
                self.stop_search();
                if let Err(e) = self.position(&tokens[1..]) {
                    say(&self.out, &format!("info string error: {e}"));
                }
            }
            "go" => {
                self.stop_search();
                match parse_go(&tokens[1..]) {
                    Ok(g) => self.go(g),
                    Err(e) => say(&self.out, &format!("info string error: {e}")),
                }
            }
            "stop" => self.stop_search(),
            // The search goes on under the normal time limits, counted from now.
            "ponderhit" => self.pondering.store(false, Ordering::Relaxed),
            "quit" => {
                self.stop_search();
                return false;
            }
            "d" => {
                say(
                    &self.out,
                    &format!("info string fen {}", self.game.position().fen()),
                );
            }
            _ => say(
                &self.out,
                &format!("info string error: unknown command '{cmd}'"),
            ),
        }
        true
    }

    fn lock_searcher(&self) -> std::sync::MutexGuard<'_, Searcher> {
        self.searcher.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn setoption(&mut self, t: &[&str]) {
        // setoption name <words> [value <words>]
        let name_end = t.iter().position(|&w| w == "value").unwrap_or(t.len());
        let name = t.get(1..name_end).map(|w| w.join(" ")).unwrap_or_default();
        let value = t
            .get(name_end + 1..)
            .map(|w| w.join(" "))
            .unwrap_or_default();
        self.stop_search();
        let bad = |s: &Self, what: &str| say(&s.out, &format!("info string error: {what}"));
        match name.to_ascii_lowercase().as_str() {
            "uci_variant" => match value.parse::<Variant>() {
                Ok(v) => {
                    self.variant = v;
                    self.game = Game::new(Position::start(v));
                }
                Err(e) => bad(self, &e.to_string()),
            },
            "hash" => match value.parse::<usize>() {
                Ok(mb) if (1..=4096).contains(&mb) => {
                    self.hash_mb = mb;
                    let mut fresh = Searcher::with_threads(mb, self.threads);
                    fresh.set_eval(self.eval_choice());
                    self.stop = fresh.stop_flag();
                    *self.lock_searcher() = fresh;
                }
                _ => bad(self, &format!("Hash: '{value}' is not 1..4096")),
            },
            "threads" => match value.parse::<usize>() {
                Ok(n) if (1..=MAX_THREADS).contains(&n) => {
                    self.threads = n;
                    self.lock_searcher().set_threads(n);
                }
                _ => bad(self, &format!("Threads: '{value}' is not 1..{MAX_THREADS}")),
            },
            "ponder" => match value.to_ascii_lowercase().as_str() {
                "true" => self.ponder_option = true,
                "false" => self.ponder_option = false,
                _ => bad(self, &format!("Ponder: '{value}' is not true or false")),
            },
            "multipv" => match value.parse::<usize>() {
                Ok(k) if (1..=64).contains(&k) => self.multipv = k,
                _ => bad(self, &format!("MultiPV: '{value}' is not 1..64")),
            },
            "level" | "skill level" => match value.parse::<u8>() {
                Ok(l) if (1..=levels::MAX_LEVEL).contains(&l) => self.level = Level(l),
                _ => bad(
                    self,
                    &format!("Level: '{value}' is not 1..{}", levels::MAX_LEVEL),
                ),
            },
            "move overhead" => match value.parse::<u64>() {
                Ok(ms) => self.overhead_ms = ms,
                _ => bad(self, &format!("Move Overhead: '{value}' is not a number")),
            },
            "clear hash" => self.lock_searcher().clear(),
            "usennue" => {
                let v = match value.to_ascii_lowercase().as_str() {
                    "auto" => Some(None),
                    "true" => Some(Some(true)),
                    "false" => Some(Some(false)),
                    _ => None,
                };
                match v {
                    Some(v) => {
                        self.use_nnue = v;
                        let choice = self.eval_choice();
                        self.lock_searcher().set_eval(choice);
                    }
                    None => bad(
                        self,
                        &format!("UseNNUE: '{value}' is not auto, true or false"),
                    ),
                }
            }
            "evalfile" => {
                let loaded = if value.is_empty() || value == "<embedded>" {
                    Ok(None)
                } else {
                    std::fs::read(&value)
                        .map_err(|e| e.to_string())
                        .and_then(|b| Network::from_bytes(&b).map_err(|e| e.to_string()))
                        .map(|n| Some(Arc::new(n)))
                };
                match loaded {
                    Ok(net) => {
                        self.eval_file = net;
                        let choice = self.eval_choice();
                        self.lock_searcher().set_eval(choice);
                    }
                    Err(e) => bad(self, &format!("EvalFile: {value}: {e}")),
                }
            }
            "uci_analysemode" => {}
            _ => bad(self, &format!("unknown option '{name}'")),
        }
    }

    fn position(&mut self, t: &[&str]) -> Result<(), String> {
        let moves_at = t.iter().position(|&w| w == "moves").unwrap_or(t.len());
        let start = match t.first() {
            Some(&"startpos") => Position::start(self.variant),
            Some(&"fen") => {
                let fen = t[1..moves_at].join(" ");
                Position::from_fen(self.variant, &fen).map_err(|e| e.to_string())?
            }
            _ => return Err("position needs 'startpos' or 'fen <FEN>'".into()),
        };
        let mut game = Game::new(start);
        for turn in t.iter().skip(moves_at + 1) {
            game.play_turn_text(turn, true).map_err(|e| e.to_string())?;
        }
        self.game = game;
        Ok(())
    }

    fn go(&mut self, g: GoParams) {
        if let Some(depth) = g.perft {
            let pos = *self.game.position();
            let mut total = 0;
            for (moves, n) in divide(&pos, depth, false) {
                say(&self.out, &format!("{}: {n}", moves[0].uci()));
                total += n;
            }
            say(&self.out, "");
            say(&self.out, &format!("Nodes searched: {total}"));
            return;
        }
        let pos = *self.game.position();
        if pos.legal_moves().is_empty() {
            say(&self.out, "info string the game is over");
            say(&self.out, "bestmove (none)");
            return;
        }
        let (time, inc) = match pos.turn() {
            Color::White => (g.wtime, g.winc),
            Color::Black => (g.btime, g.binc),
        };
        let mut limits = Limits {
            depth: g.depth,
            nodes: g.nodes,
            multipv: self.multipv,
            ..Limits::default()
        };
        if let Some(mt) = g.movetime {
            let d = Duration::from_millis(mt.saturating_sub(self.overhead_ms).max(1));
            limits.soft_time = Some(d);
            limits.hard_time = Some(d);
        } else if !g.infinite && time.is_some() {
            let clock = Clock {
                time: time.map(Duration::from_millis),
                increment: Duration::from_millis(inc),
                moves_to_go: g.movestogo,
            };
            let (soft, hard) = allocate(&clock, Duration::from_millis(self.overhead_ms));
            limits.soft_time = Some(soft);
            limits.hard_time = Some(hard);
        }
        self.level.restrict(&mut limits);
        if g.ponder {
            self.pondering.store(true, Ordering::Relaxed);
            limits.ponder = Some(self.pondering.clone());
        }
        let ponder_option = self.ponder_option;
        self.seed = rules::rng::lcg64(self.seed);
        let seed = self.seed;
        let level = self.level;
        let game = self.game.clone();
        let out = self.out.clone();
        let searcher = self.searcher.clone();
        let stop = self.stop.clone();
        self.stop.store(false, Ordering::Relaxed);
        self.search_thread = Some(std::thread::spawn(move || {
            let root = *game.position();
            let result: Option<(Vec<Move>, Vec<Move>)> = match level.chooser() {
                Some(choose) => choose(&game, seed).map(|t| (t, Vec::new())),
                None => {
                    let mut s = searcher.lock().unwrap_or_else(|e| e.into_inner());
                    let mut report = |r: &Report| {
                        for i in 0..r.lines.len() {
                            say(&out, &info_line(&root, r, i));
                        }
                    };
                    s.search(&game, &limits, &mut report)
                        .map(|r: SearchResult| {
                            let reply = expected_reply(&root, &r.turn, &r.pv);
                            (r.turn, reply)
                        })
                }
            };
            // A pondering level-1/2 answer or an empty position still waits for ponderhit or stop.
            if let Some(p) = &limits.ponder {
                while p.load(Ordering::Relaxed) && !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
            match result {
                Some((turn, reply)) if ponder_option && !reply.is_empty() => say(
                    &out,
                    &format!(
                        "bestmove {} ponder {}",
                        rules::game::turn_uci(&turn),
                        rules::game::turn_uci(&reply)
                    ),
                ),
                Some((turn, _)) => say(&out, &format!("bestmove {}", rules::game::turn_uci(&turn))),
                None => say(&out, "bestmove (none)"),
            }
        }));
    }
}

/// The opponent's whole turn after `turn` as the principal variation `pv` has it (for `bestmove …
/// ponder …`), or nothing if the line stops before that turn is complete or the game ends.
fn expected_reply(root: &Position, turn: &[Move], pv: &[Move]) -> Vec<Move> {
    if pv.len() <= turn.len() || !pv.starts_with(turn) {
        return Vec::new();
    }
    let mut pos = *root;
    for &m in turn {
        pos = pos.after(m);
    }
    let mover = pos.turn();
    let mut reply = Vec::new();
    for &m in &pv[turn.len()..] {
        if !pos.is_legal(m) {
            break;
        }
        reply.push(m);
        pos = pos.after(m);
        if pos.turn() != mover || pos.king_captured().is_some() {
            return reply;
        }
    }
    Vec::new()
}

/// Runs the protocol on `input` until `quit` or end of input.
pub fn run(input: impl BufRead, out: Output, level: Level) {
    let mut engine = UciEngine::new(out, level);
    for line in input.lines() {
        let Ok(line) = line else { break };
        if !engine.handle(line.trim()) {
            return;
        }
    }
    // End of input: finish the search in progress, as GUIs expect a bestmove.
    engine.wait_search();
}
