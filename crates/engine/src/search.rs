//! Iterative-deepening principal variation search over single moves. A node is one move; the score is
//! negated and the window swapped only when the player changes, since the same side often moves twice.
//! Depth counts moves; mate scores count moves internally and are reported in turns.

use crate::correction::CorrectionHistory;
use crate::eval::{self, PIECE_VALUE};
use crate::history::{Context, History, PieceTo};
use crate::movepick::{
    is_capture, is_tactical, order_score, quick_picking, victim_value, Hints, MovePicker,
};
use crate::nnue::{self, AccStack, Network};
use crate::see::see_ge;
use crate::tt::{Bound, Entry, TranspositionTable};
use rules::bitboard::tables;
use rules::game::Game;
use rules::{Color, Move, Phase, Position, Role, Variant};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub const INF: i32 = 32_000;
pub const MATE: i32 = 30_000;
/// Scores beyond this are mates.
pub const MATE_BOUND: i32 = MATE - 1_000;
pub const MAX_PLY: usize = 120;

#[derive(Clone, Debug, Default)]
pub struct Limits {
    pub depth: Option<i32>,
    pub nodes: Option<u64>,
    /// Do not begin a new iteration after this.
    pub soft_time: Option<Duration>,
    /// Abort the search at this time.
    pub hard_time: Option<Duration>,
    pub multipv: usize,
    /// `go ponder`: while this flag is set the search has no time limits and does not return (it
    /// waits after its last iteration); when it is cleared (`ponderhit`) the soft and hard limits
    /// count from that moment. `stop` (the searcher's stop flag) ends a pondering search as any other.
    pub ponder: Option<Arc<AtomicBool>>,
}

/// One analysed line: its moves from the root and its score for the side to move at the root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    pub moves: Vec<Move>,
    pub score: i32,
}

/// What an iteration found (sent as UCI `info`).
#[derive(Clone, Debug)]
pub struct Report {
    pub depth: i32,
    pub seldepth: usize,
    pub nodes: u64,
    pub elapsed: Duration,
    pub hashfull: u32,
    pub lines: Vec<Line>,
}

#[derive(Clone, Debug)]
pub struct SearchResult {
    /// The whole turn to play (one or two moves).
    pub turn: Vec<Move>,
    pub score: i32,
    pub depth: i32,
    pub nodes: u64,
    pub pv: Vec<Move>,
}

/// What the search keeps per ply: the moves being tried there and what the ply remembers.
struct Ply {
    picker: MovePicker,
    side: Color,
    static_eval: i32,
    /// The move being searched from this ply (None for a null move).
    current: Option<Move>,
    /// That move's piece and target square, for the continuation history of the plies below.
    moved: Option<PieceTo>,
    null: bool,
    /// The move a singular-extension search leaves out (see `Worker::singular`).
    excluded: Option<Move>,
}

impl Ply {
    fn new() -> Ply {
        Ply {
            picker: MovePicker::new(),
            side: Color::White,
            static_eval: 0,
            current: None,
            moved: None,
            null: false,
            excluded: None,
        }
    }
}

/// The variants that use the continuation and correction histories: orthodox chess, where they were
/// +65.5 ± 37.9 Elo together (docs/engine.md). In Two Move Chess a first 40-game check was −79.5 ± 79.6,
/// so the variants keep the search they had before until matches show the histories help there.
fn uses_new_histories(variant: Variant) -> bool {
    variant == Variant::Chess
}

/// What late-move pruning does with a move that hands the turn over without giving check: search
/// it, skip it, or skip it and every quiet move after it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pruning {
    Keep,
    Skip,
    SkipQuiets,
}

/// What the singular-extension test (`Worker::singular`) says about the table's move at a node.
enum Singular {
    /// Search the table's move this many plies deeper: 1 when it is the only good move, −1 when
    /// other moves hold beta as well, else 0.
    Extension(i32),
    /// Without the table's move, the other moves still reach a score at or above beta: the node
    /// fails high with it (multi-cut).
    Cut(i32),
}

/// The most search threads (UCI `Threads`).
pub const MAX_THREADS: usize = 256;

/// Which evaluation a search uses.
#[derive(Clone)]
pub enum EvalChoice {
    /// The embedded network where matches showed it stronger ([`network_by_default`]), else the
    /// hand-written evaluation.
    Auto,
    Network(Arc<Network>),
    Classical,
}

/// The variants in which [`EvalChoice::Auto`] evaluates with the embedded network: those where it
/// beat the hand-written evaluation in a match (docs/nnue.md, "Strength"), which net 3 did in every
/// variant at 10+0.1: chess +122 ± 58 Elo (104 games), Double Move 73–0, Twinmove 72–1–1 (SPRT
/// logistic [0, 30] H1 accepted in all three), Two Move +180 ± 87 (80 games, SPRT undecided at the
/// cap, LLR 2.43 of 2.94). Net 4 beat net 3 in chess, Double Move and Twinmove and held level in Two
/// Move; net 4 against the hand-written evaluation in Two Move was H1 too. Nets 5 and 6 followed on
/// lower validation losses and chess matches against their predecessor; net 6 then held level or
/// better against net 5 in every variant, net 7kf (king buckets) against net 6, and net 9 (embedded
/// since) against net 7kf (docs/nnue.md). A variant added later starts with the hand-written evaluation.
pub fn network_by_default(variant: Variant) -> bool {
    matches!(
        variant,
        Variant::Chess | Variant::TwoMove | Variant::DoubleMove | Variant::Twinmove
    )
}

/// The search: a transposition table shared by one or more search threads (Lazy SMP). The main
/// thread (the caller's) runs the iterative deepening that decides the result, reports and keeps
/// time; helper threads search the same root with their own history, odd ones one move deeper, and
/// help only through the table. They stop when the main thread is done.
pub struct Searcher {
    pub tt: Arc<TranspositionTable>,
    choice: EvalChoice,
    main: Worker,
    helpers: Vec<Worker>,
    stop: Arc<AtomicBool>,
    /// Set by the main thread when it is done: the helpers stop.
    done: Arc<AtomicBool>,
}

/// One search thread's state.
struct Worker {
    /// 0 for the main thread.
    id: usize,
    tt: Arc<TranspositionTable>,
    history: History,
    correction: CorrectionHistory,
    stack: Vec<Ply>,
    pv: Vec<Vec<Move>>,
    /// Repetition keys of the positions from the root to the current node.
    path: Vec<u64>,
    /// Repetition keys of the game's earlier positions that count ([`Game::earlier_repetition_keys`])
    /// and occurred at least twice: reaching one again is a threefold repetition.
    game_keys: Vec<u64>,
    nodes: u64,
    seldepth: usize,
    start: Instant,
    limits: Limits,
    aborted: bool,
    stop: Arc<AtomicBool>,
    done: Arc<AtomicBool>,
    /// This thread's node count, published every 1024 nodes for the main thread's reports and limits.
    published: Arc<AtomicU64>,
    /// The main thread: the helpers' published counters, and their sum at the last look.
    helper_nodes: Vec<Arc<AtomicU64>>,
    helper_sum: u64,
    /// Pondering (see [`Limits::ponder`]); time limits count from `time_base`.
    pondering: bool,
    time_base: Instant,
    /// Late move reductions by depth and move number.
    reductions: [[u8; 64]; 64],
    /// The network evaluating positions, or None for the hand-written evaluation.
    net: Option<Arc<Network>>,
    acc: AccStack,
}

/// Whether the side to move, at the start of its turn, may make two moves in it (Two Move Chess's
/// normal turn, an unspent Double Move, a Twinmove pawn move followed by a piece move).
fn may_move_twice(pos: &Position) -> bool {
    pos.phase() == Phase::Start
        && match pos.variant() {
            Variant::Chess => false,
            Variant::TwoMove => true,
            Variant::DoubleMove => pos.state().double_move[pos.turn().index()],
            Variant::Twinmove => pos.board().pieces(pos.turn(), Role::Pawn) != 0,
        }
}

/// Whether the quiet first move `m` of a two-move turn makes a capture possible for the second move
/// that was not there before and that wins material: an enemy piece that is undefended or worth more
/// than its attacker. In Double Move Chess the moved piece itself may capture next; in Two Move and
/// Twinmove Chess the moved piece may not (or is a pawn), so only discovered attacks count there (in
/// Twinmove a discovered attack on the king wins the game).
fn sets_up_capture(pos: &Position, m: Move) -> bool {
    let b = pos.board();
    let t = tables();
    let us = pos.turn();
    let them = us.other();
    let (from, to) = (m.from(), m.to());
    let Some(mover) = b.role_at(from) else {
        return false;
    };
    let occ_before = b.occupied();
    let occ_after = occ_before ^ from.bb() ^ to.bb();
    let kings_capturable = pos.variant().king_capture();
    let enemy = b.color(them)
        & if kings_capturable {
            !0
        } else {
            !b.role(Role::King)
        };
    let wins = |target: rules::Square, attacker: Role| {
        let victim = b.role_at(target).map_or(0, |r| PIECE_VALUE[r.index()]);
        victim > PIECE_VALUE[attacker.index()] || !b.is_attacked(target, them, occ_after)
    };
    match pos.variant() {
        Variant::DoubleMove => {
            if !m.starts_double() {
                return false;
            }
            let attacks = match mover {
                Role::Pawn => t.pawn(us, to),
                Role::Knight => t.knight(to),
                Role::Bishop => t.bishop(to, occ_after),
                Role::Rook => t.rook(to, occ_after),
                Role::Queen => t.queen(to, occ_after),
                Role::King => t.king(to),
            };
            rules::bitboard::squares(attacks & enemy).any(|sq| wins(sq, mover))
        }
        Variant::TwoMove | Variant::Twinmove => {
            if pos.variant() == Variant::Twinmove && mover != Role::Pawn {
                return false;
            }
            let own = b.color(us) & !from.bb();
            let straight = (b.role(Role::Rook) | b.role(Role::Queen)) & own;
            let diagonal = (b.role(Role::Bishop) | b.role(Role::Queen)) & own;
            let lines = [
                (t.rook(from, occ_after) & straight, true),
                (t.bishop(from, occ_after) & diagonal, false),
            ];
            lines.into_iter().any(|(sliders, rook_like)| {
                rules::bitboard::squares(sliders).any(|s| {
                    let (before, after) = if rook_like {
                        (t.rook(s, occ_before), t.rook(s, occ_after))
                    } else {
                        (t.bishop(s, occ_before), t.bishop(s, occ_after))
                    };
                    let attacker = b.role_at(s).unwrap_or(Role::Queen);
                    rules::bitboard::squares(after & !before & enemy).any(|sq| wins(sq, attacker))
                })
            })
        }
        Variant::Chess => false,
    }
}

/// "Mate in N turns" for a mate score (positive: the side to move at the root mates), counting the
/// winner's turns along the line, the root's unfinished turn included.
pub fn mate_in_turns(root: &Position, line: &Line) -> Option<i32> {
    if line.score.abs() < MATE_BOUND {
        return None;
    }
    let plies = (MATE - line.score.abs()) as usize;
    let winner = if line.score > 0 {
        root.turn()
    } else {
        root.turn().other()
    };
    let mut pos = *root;
    let mut count = 0;
    for (i, &m) in line.moves.iter().take(plies).enumerate() {
        if pos.turn() == winner && (i == 0 || pos.at_turn_start()) {
            count += 1;
        }
        pos = pos.after(m);
    }
    let n = count.max(1);
    Some(if line.score > 0 { n } else { -n })
}

impl Searcher {
    /// A one-thread searcher with a table of about `hash_mb` megabytes.
    pub fn new(hash_mb: usize) -> Searcher {
        Searcher::with_threads(hash_mb, 1)
    }

    /// A searcher with `threads` search threads (1..=[`MAX_THREADS`]) sharing a table of about
    /// `hash_mb` megabytes.
    pub fn with_threads(hash_mb: usize, threads: usize) -> Searcher {
        let tt = Arc::new(TranspositionTable::new(hash_mb));
        let stop = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicBool::new(false));
        let mut s = Searcher {
            choice: EvalChoice::Auto,
            main: Worker::new(0, tt.clone(), stop.clone(), done.clone()),
            tt,
            helpers: Vec::new(),
            stop,
            done,
        };
        s.set_threads(threads);
        s
    }

    /// Sets the number of search threads (clamped to 1..=[`MAX_THREADS`]); the table is kept.
    pub fn set_threads(&mut self, threads: usize) {
        let helpers = threads.clamp(1, MAX_THREADS) - 1;
        self.helpers.truncate(helpers);
        while self.helpers.len() < helpers {
            let id = self.helpers.len() + 1;
            let mut w = Worker::new(id, self.tt.clone(), self.stop.clone(), self.done.clone());
            w.net = self.main.net.clone();
            self.helpers.push(w);
        }
        self.main.helper_nodes = self.helpers.iter().map(|h| h.published.clone()).collect();
    }

    pub fn threads(&self) -> usize {
        1 + self.helpers.len()
    }

    /// Evaluates with `net`, or with the hand-written evaluation for None.
    pub fn set_network(&mut self, net: Option<Arc<Network>>) {
        self.set_eval(match net {
            Some(n) => EvalChoice::Network(n),
            None => EvalChoice::Classical,
        });
    }

    /// Chooses the evaluation (the default is [`EvalChoice::Auto`]).
    pub fn set_eval(&mut self, choice: EvalChoice) {
        self.choice = choice;
    }

    /// Gives every thread the evaluation for `variant`; a change clears the table (its stored
    /// evaluations came from the other one).
    fn prepare_eval(&mut self, variant: Variant) {
        let net = match &self.choice {
            EvalChoice::Auto => network_by_default(variant).then(nnue::embedded),
            EvalChoice::Network(n) => Some(n.clone()),
            EvalChoice::Classical => None,
        };
        let same = match (&net, &self.main.net) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        if !same {
            self.tt.clear();
            self.main.net = net.clone();
            for h in &mut self.helpers {
                h.net = net.clone();
            }
        }
    }

    /// The flag that stops a running search when set (from another thread).
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        self.stop.clone()
    }

    /// Forgets everything learnt: the table and every thread's history.
    pub fn clear(&mut self) {
        self.tt.clear();
        self.main.history.clear();
        self.main.correction.clear();
        for h in &mut self.helpers {
            h.history.clear();
            h.correction.clear();
        }
    }

    /// The quiescence score of `pos` for its side to move (captures and promotions resolved), with no
    /// time or node limit. The tuner uses it to keep only quiet positions (where it equals the static
    /// evaluation).
    pub fn quiescence(&mut self, pos: &Position) -> i32 {
        self.prepare_eval(pos.variant());
        self.main.quiescence(pos)
    }

    /// Searches `game`'s current position on all threads. `info` receives a report after each
    /// iteration the main thread completes; the result is the main thread's.
    pub fn search(
        &mut self,
        game: &Game,
        limits: &Limits,
        info: &mut dyn FnMut(&Report),
    ) -> Option<SearchResult> {
        if game.position().legal_moves().is_empty() {
            return None;
        }
        self.prepare_eval(game.variant());
        self.tt.new_search();
        if self.helpers.is_empty() {
            return self.main.search(game, limits, info);
        }
        self.done.store(false, Ordering::Relaxed);
        for h in &self.helpers {
            h.published.store(0, Ordering::Relaxed);
        }
        let helper_limits = Limits {
            multipv: 1,
            ..Limits::default()
        };
        let (main, helpers, done) = (&mut self.main, &mut self.helpers, &self.done);
        std::thread::scope(|s| {
            for h in helpers.iter_mut() {
                let l = &helper_limits;
                s.spawn(move || h.search(game, l, &mut |_| {}));
            }
            let r = main.search(game, limits, info);
            done.store(true, Ordering::Relaxed);
            r
        })
    }
}

impl Worker {
    fn new(
        id: usize,
        tt: Arc<TranspositionTable>,
        stop: Arc<AtomicBool>,
        done: Arc<AtomicBool>,
    ) -> Worker {
        let mut reductions = [[0u8; 64]; 64];
        for (d, row) in reductions.iter_mut().enumerate().skip(1) {
            for (i, r) in row.iter_mut().enumerate().skip(1) {
                *r = (0.75 + (d as f64).ln() * (i as f64).ln() / 2.25) as u8;
            }
        }
        Worker {
            id,
            tt,
            history: History::new(MAX_PLY + 2),
            correction: CorrectionHistory::new(),
            stack: (0..MAX_PLY + 2).map(|_| Ply::new()).collect(),
            pv: vec![Vec::new(); MAX_PLY + 2],
            path: Vec::with_capacity(MAX_PLY + 2),
            game_keys: Vec::new(),
            nodes: 0,
            seldepth: 0,
            start: Instant::now(),
            limits: Limits::default(),
            aborted: false,
            stop,
            done,
            published: Arc::new(AtomicU64::new(0)),
            helper_nodes: Vec::new(),
            helper_sum: 0,
            pondering: false,
            time_base: Instant::now(),
            reductions,
            net: None,
            acc: AccStack::new(MAX_PLY + 2),
        }
    }

    fn refresh_helper_nodes(&mut self) {
        if !self.helper_nodes.is_empty() {
            self.helper_sum = self
                .helper_nodes
                .iter()
                .map(|n| n.load(Ordering::Relaxed))
                .sum();
        }
    }

    /// Nodes of all threads (the helpers' as last published).
    fn total_nodes(&self) -> u64 {
        self.nodes + self.helper_sum
    }

    /// Notices a `ponderhit`: from now on the time limits apply, counted from now.
    fn check_ponderhit(&mut self) {
        if self.pondering
            && !self
                .limits
                .ponder
                .as_ref()
                .is_some_and(|p| p.load(Ordering::Relaxed))
        {
            self.pondering = false;
            self.time_base = Instant::now();
        }
    }

    #[inline]
    fn should_stop(&mut self) -> bool {
        if self.aborted {
            return true;
        }
        if self.nodes & 1023 == 0 {
            self.published.store(self.nodes, Ordering::Relaxed);
            self.refresh_helper_nodes();
            self.check_ponderhit();
            let out_of_time = !self.pondering
                && self
                    .limits
                    .hard_time
                    .is_some_and(|t| self.time_base.elapsed() >= t);
            let helper_done = self.id != 0 && self.done.load(Ordering::Relaxed);
            if out_of_time || helper_done || self.stop.load(Ordering::Relaxed) {
                self.aborted = true;
            }
        }
        if self.limits.nodes.is_some_and(|n| self.total_nodes() >= n) {
            self.aborted = true;
        }
        self.aborted
    }

    /// The static evaluation of `pos`, the node entered at `ply`, for its side to move.
    #[inline]
    fn evaluate(&mut self, pos: &Position, ply: usize) -> i32 {
        match &self.net {
            None => eval::evaluate(pos),
            Some(net) => {
                let acc = self.acc.get(net, ply);
                net.output(acc, pos.turn(), nnue::position_bucket(pos)) + eval::rule_terms(pos)
            }
        }
    }

    /// `raw`, the static evaluation of `pos`, corrected by the correction history (kept clear of
    /// mate scores).
    #[inline]
    fn correct(&self, pos: &Position, raw: i32) -> i32 {
        if !uses_new_histories(pos.variant()) {
            return raw;
        }
        self.correction
            .correct(pos, raw)
            .clamp(-MATE_BOUND + 1, MATE_BOUND - 1)
    }

    fn quiescence(&mut self, pos: &Position) -> i32 {
        self.acc.enter(0, pos.board());
        self.limits = Limits::default();
        self.aborted = false;
        self.path.clear();
        self.qsearch(pos, -INF, INF, 0, true)
    }

    /// Iterative deepening on `game`'s current position (which has a legal move). `info` receives a
    /// report after each completed iteration. A helper (id > 0) returns None when told to stop.
    fn search(
        &mut self,
        game: &Game,
        limits: &Limits,
        info: &mut dyn FnMut(&Report),
    ) -> Option<SearchResult> {
        let root = *game.position();
        let root_moves = root.legal_moves();
        if root_moves.is_empty() {
            return None;
        }
        self.start = Instant::now();
        self.time_base = self.start;
        self.limits = limits.clone();
        self.pondering = limits
            .ponder
            .as_ref()
            .is_some_and(|p| p.load(Ordering::Relaxed));
        self.nodes = 0;
        self.published.store(0, Ordering::Relaxed);
        self.helper_sum = 0;
        self.seldepth = 0;
        self.aborted = false;
        for ply in self.stack.iter_mut() {
            ply.null = false;
        }
        // A position the game has seen once is not a draw when the search returns to it: the
        // opponent need not repeat it a third time. Only those seen twice are (the third time is a
        // threefold); a repetition within the search path (root included) counts at once, as usual.
        let mut earlier: Vec<u64> = game.earlier_repetition_keys().collect();
        earlier.sort_unstable();
        self.game_keys.clear();
        for w in earlier.windows(2) {
            if w[0] == w[1] && self.game_keys.last() != Some(&w[0]) {
                self.game_keys.push(w[0]);
            }
        }
        self.acc.enter(0, root.board());
        self.history.new_search();
        let multipv = limits.multipv.clamp(1, root_moves.len());
        // The first iteration covers the rest of the current turn.
        let first_depth = if root.phase() == Phase::Second || root.variant() == Variant::Chess {
            1
        } else {
            2
        };
        let max_depth = limits.depth.unwrap_or(MAX_PLY as i32 - 10).max(1);
        let mut best: Option<(Vec<Line>, i32)> = None;
        // Helpers vary the depths: odd ones search one move deeper than the main thread.
        let mut depth = (first_depth + (self.id % 2) as i32).min(max_depth);
        let (mut stable, mut falling) = (0usize, false);
        let (mut last_best, mut last_score): (Option<Move>, Option<i32>) = (None, None);
        loop {
            let mut lines: Vec<Line> = Vec::new();
            let mut excluded: Vec<Move> = Vec::new();
            for _ in 0..multipv {
                let previous = best.as_ref().map(|b| &b.0);
                let guess = previous
                    .filter(|_| multipv == 1 && depth >= 4)
                    .map(|ls| ls[0].score)
                    .filter(|s| s.abs() < MATE_BOUND);
                let (score, pv) = match guess {
                    Some(g) => self.aspiration(&root, depth, g, previous),
                    None => self.root(&root, depth, -INF, INF, &excluded, previous),
                };
                if self.aborted && !(lines.is_empty() && best.is_none()) {
                    break;
                }
                if pv.is_empty() {
                    break;
                }
                excluded.push(pv[0]);
                lines.push(Line { moves: pv, score });
                if self.aborted {
                    break;
                }
            }
            let complete = !self.aborted;
            if !lines.is_empty() && (complete || best.is_none()) {
                lines.sort_by_key(|l| std::cmp::Reverse(l.score));
                self.refresh_helper_nodes();
                info(&Report {
                    depth,
                    seldepth: self.seldepth,
                    nodes: self.total_nodes(),
                    elapsed: self.start.elapsed(),
                    hashfull: self.tt.hashfull(),
                    lines: lines.clone(),
                });
                best = Some((lines, depth));
            }
            if !complete || depth >= max_depth {
                break;
            }
            if let Some((l, _)) = &best {
                let (first, score) = (l[0].moves[0], l[0].score);
                stable = if Some(first) == last_best {
                    stable + 1
                } else {
                    0
                };
                falling = last_score.is_some_and(|s| score < s - 30);
                last_best = Some(first);
                last_score = Some(score);
            }
            self.check_ponderhit();
            if let Some(soft) = self.limits.soft_time.filter(|_| !self.pondering) {
                // A best move that keeps changing, or a score that falls, earns more time; a forced move
                // (the only legal one in a single-move turn) and a long-settled best move earn less.
                let single_move_turn =
                    root.variant() == Variant::Chess || root.phase() == Phase::Second;
                if single_move_turn && root_moves.len() == 1 {
                    break;
                }
                let stability = [1.5, 1.2, 1.0, 0.85, 0.7][stable.min(4)];
                let factor = stability * if falling { 1.3 } else { 1.0 };
                if self.time_base.elapsed().as_secs_f64() >= soft.as_secs_f64() * factor {
                    break;
                }
            }
            // A forced mate found: deeper search cannot improve the result much.
            if let Some((l, _)) = &best {
                if l[0].score.abs() >= MATE_BOUND && depth > (MATE - l[0].score.abs()) + 2 {
                    break;
                }
            }
            depth += 1;
        }
        self.published.store(self.nodes, Ordering::Relaxed);
        if self.id != 0 {
            return None;
        }
        // A pondering search that has nothing more to do waits for `ponderhit` or `stop`.
        while self.pondering && !self.stop.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(1));
            self.check_ponderhit();
        }
        // Stopped before the first iteration finished: play the best-ordered move rather than nothing.
        let (lines, depth) = best.unwrap_or_else(|| {
            let tt_move = self.tt.probe(root.hash()).and_then(|e| e.best);
            let first = root_moves
                .iter()
                .copied()
                .max_by_key(|&m| self.root_order(&root, m, tt_move))
                .expect("a legal move exists");
            (
                vec![Line {
                    moves: vec![first],
                    score: self.evaluate(&root, 0),
                }],
                0,
            )
        });
        let pv = lines[0].moves.clone();
        let turn = self.complete_turn(&root, &pv, depth);
        self.refresh_helper_nodes();
        Some(SearchResult {
            turn,
            score: lines[0].score,
            depth,
            nodes: self.total_nodes(),
            pv,
        })
    }

    /// A root search in a window around the previous iteration's score, widened on each failure.
    fn aspiration(
        &mut self,
        root: &Position,
        depth: i32,
        guess: i32,
        previous: Option<&Vec<Line>>,
    ) -> (i32, Vec<Move>) {
        let mut delta = 20;
        let mut alpha = (guess - delta).max(-INF);
        let mut beta = (guess + delta).min(INF);
        loop {
            let (score, pv) = self.root(root, depth, alpha, beta, &[], previous);
            if self.aborted {
                return (score, pv);
            }
            if score <= alpha {
                beta = (alpha + beta) / 2;
                alpha = (score - delta).max(-INF);
            } else if score >= beta {
                beta = (score + delta).min(INF);
            } else {
                return (score, pv);
            }
            delta += delta;
            if delta > 800 {
                alpha = -INF;
                beta = INF;
            }
        }
    }

    /// The whole turn that begins with the PV's first move. If the PV stops half way through the turn,
    /// the rest of the turn gets a search of its own.
    fn complete_turn(&mut self, root: &Position, pv: &[Move], depth: i32) -> Vec<Move> {
        let mut turn = vec![pv[0]];
        let mut pos = root.after(pv[0]);
        let mut k = 1;
        while pos.turn() == root.turn() && !pos.legal_moves().is_empty() {
            let legal = pos.legal_moves();
            let next = match pv.get(k).copied().filter(|m| legal.contains(*m)) {
                Some(m) => m,
                None => {
                    // Within the same clock: the hard limit still counts from the search's start.
                    self.aborted = false;
                    self.limits = Limits {
                        nodes: Some(self.total_nodes() + 20_000),
                        hard_time: self.limits.hard_time,
                        ..Limits::default()
                    };
                    let (_, line) = self.root(&pos, (depth - 1).max(1), -INF, INF, &[], None);
                    line.first().copied().unwrap_or(legal.as_slice()[0])
                }
            };
            turn.push(next);
            pos = pos.after(next);
            k += 1;
        }
        turn
    }

    /// Searches the root moves (but `excluded`) in the window (alpha, beta). Returns the best score and
    /// the principal variation, which is empty when no move scored above alpha.
    fn root(
        &mut self,
        root: &Position,
        depth: i32,
        mut alpha: i32,
        beta: i32,
        excluded: &[Move],
        previous: Option<&Vec<Line>>,
    ) -> (i32, Vec<Move>) {
        let prev_best = previous.and_then(|ls| {
            ls.iter()
                .map(|l| l.moves[0])
                .find(|m| !excluded.contains(m))
        });
        let tt_best = self.tt.probe(root.hash()).and_then(|e| e.best);
        let mut scored: Vec<(i32, Move)> = root
            .legal_moves()
            .iter()
            .copied()
            .filter(|m| !excluded.contains(m))
            .map(|m| (self.root_order(root, m, prev_best.or(tt_best)), m))
            .collect();
        if scored.is_empty() {
            return (-INF, Vec::new());
        }
        scored.sort_by_key(|e| std::cmp::Reverse(e.0));
        let mut best_score = -INF;
        let mut best_pv = Vec::new();
        self.path.clear();
        self.path.push(root.repetition_key());
        self.stack[0].side = root.turn();
        self.stack[0].static_eval = -INF;
        for (i, &(_, m)) in scored.iter().enumerate() {
            let child = root.after(m);
            self.nodes += 1;
            self.stack[0].current = Some(m);
            self.stack[0].moved = PieceTo::of(root, m);
            let score = if i == 0 {
                self.child_search(root, &child, depth - 1, alpha, beta, 1)
            } else {
                let s = self.child_search(root, &child, depth - 1, alpha, alpha + 1, 1);
                if s > alpha && !self.aborted {
                    self.child_search(root, &child, depth - 1, alpha, beta, 1)
                } else {
                    s
                }
            };
            if self.aborted {
                break;
            }
            if score > best_score {
                best_score = score;
                if score > alpha {
                    alpha = score;
                    best_pv = vec![m];
                    best_pv.extend_from_slice(&self.pv[1].clone());
                    if alpha >= beta {
                        break;
                    }
                }
            }
        }
        if !best_pv.is_empty() && excluded.is_empty() && !self.aborted {
            let bound = if best_score >= beta {
                Bound::Lower
            } else {
                Bound::Exact
            };
            self.tt.store(
                root.hash(),
                Some(best_pv[0]),
                best_score,
                -INF,
                depth,
                bound,
            );
        }
        (best_score, best_pv)
    }

    /// The child's score from the parent's side: negated only when the player changes.
    #[inline]
    fn child_search(
        &mut self,
        parent: &Position,
        child: &Position,
        depth: i32,
        alpha: i32,
        beta: i32,
        ply: usize,
    ) -> i32 {
        if child.turn() == parent.turn() {
            self.negamax(child, depth, alpha, beta, ply)
        } else {
            -self.negamax(child, depth, -beta, -alpha, ply)
        }
    }

    #[inline]
    fn child_qsearch(
        &mut self,
        parent: &Position,
        child: &Position,
        alpha: i32,
        beta: i32,
        ply: usize,
    ) -> i32 {
        if child.turn() == parent.turn() {
            self.qsearch(child, alpha, beta, ply, false)
        } else {
            -self.qsearch(child, -beta, -alpha, ply, false)
        }
    }

    /// Whether `pos` repeats an earlier position of the search path, or one the game has already seen
    /// twice (see `game_keys`). Which positions count is the rules crate's
    /// [`Position::counts_for_repetition`]; the path also holds positions that do not count, but
    /// their keys (which cover the turn state) never equal a counted one's.
    fn is_repetition(&self, pos: &Position) -> bool {
        if !pos.counts_for_repetition() {
            return false;
        }
        let key = pos.repetition_key();
        // The last entry of the path is this position itself.
        let n = self.path.len().saturating_sub(1);
        self.path[..n].contains(&key) || self.game_keys.contains(&key)
    }

    fn terminal_score(&self, pos: &Position, ply: usize) -> i32 {
        let mated = pos.in_check() && !pos.variant().king_capture();
        if mated || pos.king_captured() == Some(pos.turn()) {
            -MATE + ply as i32
        } else {
            0
        }
    }

    /// The ordering score of root move `m` ([`order_score`] at ply 0, with no previous move).
    fn root_order(&self, root: &Position, m: Move, tt_move: Option<Move>) -> i32 {
        let hints = Hints {
            tt_move,
            killers: self.history.killers(0),
            counter: None,
            context: [None; 2],
        };
        order_score(root, m, &hints, &self.history)
    }

    /// The move played at the ply before `ply` (None at the root and after a null move).
    fn previous_move(&self, ply: usize) -> Option<Move> {
        self.stack[ply.checked_sub(1)?].current
    }

    /// The continuation-history context at `ply`: the moves one and two plies before (none outside
    /// the variants of [`uses_new_histories`]).
    fn context(&self, pos: &Position, ply: usize) -> Context {
        if !uses_new_histories(pos.variant()) {
            return [None; 2];
        }
        let moved = |back: usize| ply.checked_sub(back).and_then(|p| self.stack[p].moved);
        [moved(1), moved(2)]
    }

    /// Lists `pos`'s moves at `ply` in the ply's picker.
    fn generate(&mut self, pos: &Position, ply: usize, tt_move: Option<Move>, tactical_only: bool) {
        let hints = Hints {
            tt_move,
            killers: self.history.killers(ply),
            counter: self.history.countermove(self.previous_move(ply)),
            context: self.context(pos, ply),
        };
        self.stack[ply]
            .picker
            .generate(pos, &hints, &self.history, tactical_only);
    }

    #[inline]
    fn next_move(&mut self, pos: &Position, ply: usize) -> Option<Move> {
        self.stack[ply].picker.next_move(pos, &self.history)
    }

    fn negamax(&mut self, pos: &Position, depth: i32, alpha: i32, beta: i32, ply: usize) -> i32 {
        self.pv[ply].clear();
        if self.should_stop() {
            return 0;
        }
        if pos.king_captured().is_some() {
            return self.terminal_score(pos, ply);
        }
        self.path.push(pos.repetition_key());
        self.acc.enter(ply, pos.board());
        let r = self.node(pos, depth, alpha, beta, ply);
        self.path.pop();
        r
    }

    fn node(
        &mut self,
        pos: &Position,
        mut depth: i32,
        mut alpha: i32,
        beta: i32,
        ply: usize,
    ) -> i32 {
        self.seldepth = self.seldepth.max(ply);
        if self.is_repetition(pos) {
            return 0;
        }
        if pos.at_turn_start() && pos.halfmove_clock() >= 100 {
            return 0;
        }
        if ply >= MAX_PLY {
            return self.evaluate(pos, ply);
        }
        let in_check = pos.in_check() && !pos.variant().king_capture();
        if in_check && ply < MAX_PLY / 2 {
            depth += 1;
        }
        if depth <= 0 {
            return self.qsearch(pos, alpha, beta, ply, true);
        }
        let pv_node = beta - alpha > 1;
        let excluded = self.stack[ply].excluded;
        let key = pos.hash();
        let entry = self.tt.probe(key);
        let tt_move = entry.and_then(|e| e.best);
        // The table's entry is about the whole node, not the node without its excluded move.
        if let Some(e) = entry.filter(|e| !pv_node && excluded.is_none() && e.depth as i32 >= depth)
        {
            let s = score_from_tt(e.score, ply);
            if e.bound.cuts(s, alpha, beta) {
                return s;
            }
        }

        // The table keeps the raw evaluation; the search uses it corrected.
        let raw_eval = if in_check {
            -INF
        } else {
            match entry {
                Some(e) if e.eval as i32 > -INF => e.eval as i32,
                _ => self.evaluate(pos, ply),
            }
        };
        let static_eval = if in_check {
            -INF
        } else {
            self.correct(pos, raw_eval)
        };
        // A table score bounded on the right side is a better estimate than the static evaluation.
        let mut eval = static_eval;
        if let Some(e) = entry.filter(|e| !in_check && e.score.abs() < MATE_BOUND) {
            let better = match e.bound {
                Bound::Exact => true,
                Bound::Lower => e.score > eval,
                Bound::Upper => e.score < eval,
            };
            if better {
                eval = e.score;
            }
        }
        self.stack[ply].side = pos.turn();
        self.stack[ply].static_eval = static_eval;
        let improving = !in_check
            && ply >= 2
            && self.stack[ply - 2].side == pos.turn()
            && static_eval > self.stack[ply - 2].static_eval;

        if !pv_node && !in_check && ply > 0 && excluded.is_none() {
            // Reverse futility: far above beta with little depth left.
            if depth <= 7
                && eval.abs() < MATE_BOUND
                && eval - 80 * (depth - improving as i32) >= beta
            {
                return eval;
            }
            // Razoring (orthodox chess only: half way through a variant turn the move still to come
            // is often a quiet check or mate, which quiescence does not see): far below alpha, and
            // captures do not help either.
            if pos.variant() == Variant::Chess
                && depth <= 3
                && alpha.abs() < MATE_BOUND
                && eval + 300 + 250 * depth * depth <= alpha
            {
                let v = self.qsearch(pos, alpha, alpha + 1, ply, true);
                if v <= alpha {
                    return v;
                }
            }
            // Null move, only at the start of a normal turn: passing the whole turn must still hold beta.
            let b = pos.board();
            let has_pieces = b.color(pos.turn()) & !(b.role(Role::Pawn) | b.role(Role::King)) != 0;
            if depth >= 3 && eval >= beta && has_pieces && !self.stack[ply - 1].null {
                if let Some(null) = pos.null_move() {
                    let r = 3 + depth / 3 + ((eval - beta) / 200).min(3);
                    self.nodes += 1;
                    self.stack[ply].null = true;
                    self.stack[ply].current = None;
                    self.stack[ply].moved = None;
                    let score = -self.negamax(&null, depth - 1 - r, -beta, -beta + 1, ply + 1);
                    self.stack[ply].null = false;
                    if self.aborted {
                        return 0;
                    }
                    if score >= beta {
                        return if score >= MATE_BOUND { beta } else { score };
                    }
                }
            }
        }
        // Without a move from the table this node was not searched before: a shallower search will do.
        if depth >= 4 && tt_move.is_none() {
            depth -= 1;
        }
        let tt_extension = match (tt_move, entry) {
            (Some(m), Some(e)) if excluded.is_none() && ply > 0 => {
                match self.singular(pos, m, e, depth, beta, ply) {
                    Singular::Extension(x) => x,
                    Singular::Cut(score) => return score,
                }
            }
            _ => 0,
        };
        if self.aborted {
            return 0;
        }

        self.generate(pos, ply, tt_move, false);
        if self.stack[ply].picker.is_empty() {
            return self.terminal_score(pos, ply);
        }
        let counter = self.history.countermove(self.previous_move(ply));
        let killers = self.history.killers(ply);
        let context = self.context(pos, ply);
        let lmr_history_unit = if uses_new_histories(pos.variant()) {
            8000
        } else {
            6000
        };
        let original_alpha = alpha;
        let mut best_score = -INF;
        let mut best_move = None;
        let mut quiets = [Move::normal(rules::Square(0), rules::Square(0)); 64];
        let mut quiet_count = 0;
        let mut captures = [Move::normal(rules::Square(0), rules::Square(0)); 32];
        let mut capture_count = 0;
        let mut searched = 0;
        let mut skip_quiets = false;
        let lmp_limit = (3 + depth * depth) / (2 - improving as i32);
        let king_capture = pos.variant().king_capture();
        while let Some(m) = self.next_move(pos, ply) {
            if Some(m) == excluded {
                continue;
            }
            let tactical = is_tactical(pos, m);
            // Late moves that hand the turn over without giving check, in a position that is not
            // lost: prune the hopeless. What the pruning would do is decided first; only for a
            // move it would prune is it found out whether the move hands over and checks, without
            // making it where the turn rules tell (most such moves are pruned, so making them
            // first cost more than the rest of the loop).
            let pruning = if ply == 0 || best_score <= -MATE_BOUND || in_check {
                Pruning::Keep
            } else if !tactical {
                if skip_quiets {
                    Pruning::Skip
                } else if !pv_node
                    && depth <= 8
                    && (quiet_count as i32 >= lmp_limit || eval + 100 + 100 * depth <= alpha)
                {
                    Pruning::SkipQuiets
                } else if depth <= 8 && !see_ge(pos, m, -25 * depth * depth) {
                    Pruning::Skip
                } else {
                    Pruning::Keep
                }
            } else if depth <= 6 && !see_ge(pos, m, -90 * depth) {
                Pruning::Skip
            } else {
                Pruning::Keep
            };
            let mut made = None;
            if pruning != Pruning::Keep {
                let late = match pos.passes_known(m) {
                    Some(passes) => passes && (king_capture || !pos.gives_check(m)),
                    None => {
                        let child = pos.after(m);
                        let late =
                            child.turn() != pos.turn() && (king_capture || !child.in_check());
                        made = Some(child);
                        late
                    }
                };
                if late {
                    if pruning == Pruning::SkipQuiets {
                        skip_quiets = true;
                        if quick_picking(pos.variant()) {
                            self.stack[ply].picker.skip_quiets();
                        }
                    }
                    continue;
                }
            }
            let child = made.unwrap_or_else(|| pos.after(m));
            self.tt.prefetch(child.hash());
            let gives_check = child.turn() != pos.turn() && !king_capture && child.in_check();
            self.nodes += 1;
            self.stack[ply].current = Some(m);
            self.stack[ply].moved = PieceTo::of(pos, m);
            searched += 1;
            let new_depth = depth - 1 + if Some(m) == tt_move { tt_extension } else { 0 };
            let mut score;
            if searched == 1 {
                score = self.child_search(pos, &child, new_depth, alpha, beta, ply + 1);
            } else {
                // Late move reductions for quiet moves.
                let mut r = 0;
                if depth >= 3 && !tactical && searched > 1 + pv_node as i32 {
                    r = self.reductions[depth.min(63) as usize][searched.min(63) as usize] as i32;
                    r += !improving as i32;
                    r -= pv_node as i32;
                    r -= (killers.contains(&Some(m)) || counter == Some(m)) as i32;
                    r -= (gives_check || in_check) as i32;
                    r -= self.history.quiet_score(pos, m, &context) / lmr_history_unit;
                    r = r.clamp(0, depth - 2);
                }
                score = self.child_search(pos, &child, new_depth - r, alpha, alpha + 1, ply + 1);
                if score > alpha && r > 0 {
                    score = self.child_search(pos, &child, new_depth, alpha, alpha + 1, ply + 1);
                }
                if score > alpha && score < beta {
                    score = self.child_search(pos, &child, new_depth, alpha, beta, ply + 1);
                }
            }
            if self.aborted {
                return 0;
            }
            if score > best_score {
                best_score = score;
                best_move = Some(m);
                if score > alpha {
                    alpha = score;
                    let (head, tail) = self.pv.split_at_mut(ply + 1);
                    head[ply].clear();
                    head[ply].push(m);
                    head[ply].extend_from_slice(&tail[0]);
                }
            }
            if alpha >= beta {
                if uses_new_histories(pos.variant()) {
                    self.history
                        .reward_captures(pos, m, depth, &captures[..capture_count]);
                }
                if !tactical {
                    let prev = self.previous_move(ply);
                    self.history.reward_quiet(
                        pos,
                        ply,
                        prev,
                        &context,
                        m,
                        depth,
                        &quiets[..quiet_count],
                    );
                }
                break;
            }
            if !tactical && quiet_count < quiets.len() {
                quiets[quiet_count] = m;
                quiet_count += 1;
            }
            if is_capture(pos, m) && capture_count < captures.len() {
                captures[capture_count] = m;
                capture_count += 1;
            }
        }
        if excluded.is_some() {
            // Every other move was searched (nothing prunes the first one): no move but the excluded
            // one means it is the only move, as singular as a move can be.
            return if searched == 0 { alpha } else { best_score };
        }
        let bound = Bound::of(best_score, original_alpha, beta);
        // Learn the static evaluation's error where the result says more than a bound on the wrong
        // side, and not from captures (their gain is the exchange, not the position).
        if !in_check
            && uses_new_histories(pos.variant())
            && best_move.is_none_or(|m| !is_tactical(pos, m))
            && best_score.abs() < MATE_BOUND
            && !(bound == Bound::Lower && best_score <= static_eval)
            && !(bound == Bound::Upper && best_score >= static_eval)
        {
            self.correction.update(pos, depth, best_score - static_eval);
        }
        self.tt.store(
            key,
            best_move,
            score_to_tt(best_score, ply),
            raw_eval,
            depth,
            bound,
        );
        best_score
    }

    /// Singular extensions (orthodox chess, like the histories of [`uses_new_histories`]): when the
    /// table's entry says its move `m` reached a lower bound or exact score at a depth not far below
    /// this node's, a search of half the depth over all the other moves, against a window a margin
    /// below that score, tells whether `m` is the only good move here.
    fn singular(
        &mut self,
        pos: &Position,
        m: Move,
        e: Entry,
        depth: i32,
        beta: i32,
        ply: usize,
    ) -> Singular {
        let tt_score = score_from_tt(e.score, ply);
        if !uses_new_histories(pos.variant())
            || depth < 8
            || (e.depth as i32) < depth - 3
            || e.bound == Bound::Upper
            || tt_score.abs() >= MATE_BOUND
        {
            return Singular::Extension(0);
        }
        let singular_beta = tt_score - 2 * depth;
        self.stack[ply].excluded = Some(m);
        let score = self.node(pos, (depth - 1) / 2, singular_beta - 1, singular_beta, ply);
        self.stack[ply].excluded = None;
        // The excluded search used this ply's line; the node's own search writes it afresh.
        self.pv[ply].clear();
        if score < singular_beta {
            Singular::Extension(1)
        } else if singular_beta >= beta {
            Singular::Cut(singular_beta)
        } else if tt_score >= beta {
            Singular::Extension(-1)
        } else {
            Singular::Extension(0)
        }
    }

    /// Quiescence: stand pat or captures and queen promotions (all moves when in check). At the
    /// `horizon` (the first quiescence ply), a side at the start of a turn that may move twice also
    /// tries the quiet first moves that set up a capture for its second move (see `sets_up_capture`).
    fn qsearch(
        &mut self,
        pos: &Position,
        mut alpha: i32,
        beta: i32,
        ply: usize,
        horizon: bool,
    ) -> i32 {
        self.pv[ply].clear();
        if self.should_stop() {
            return 0;
        }
        self.seldepth = self.seldepth.max(ply);
        self.acc.enter(ply, pos.board());
        if pos.king_captured().is_some() {
            return self.terminal_score(pos, ply);
        }
        if ply >= MAX_PLY {
            return self.evaluate(pos, ply);
        }
        let in_check = pos.in_check() && !pos.variant().king_capture();
        let key = pos.hash();
        let entry = self.tt.probe(key);
        if let Some(e) = entry.filter(|_| beta - alpha == 1) {
            let s = score_from_tt(e.score, ply);
            if e.bound.cuts(s, alpha, beta) {
                return s;
            }
        }
        let tt_move = entry.and_then(|e| e.best);
        let original_alpha = alpha;
        let mut best = -INF;
        let static_eval;
        let raw_eval;
        let mut threats = false;
        if in_check {
            static_eval = -INF;
            raw_eval = -INF;
            self.generate(pos, ply, tt_move, false);
            if self.stack[ply].picker.is_empty() {
                return self.terminal_score(pos, ply);
            }
        } else {
            raw_eval = match entry {
                Some(e) if e.eval as i32 > -INF => e.eval as i32,
                _ => self.evaluate(pos, ply),
            };
            static_eval = self.correct(pos, raw_eval);
            if static_eval >= beta {
                return static_eval;
            }
            best = static_eval;
            alpha = alpha.max(static_eval);
            threats = horizon && may_move_twice(pos);
            self.generate(pos, ply, tt_move, !threats);
        }
        let mut best_move = None;
        while let Some(m) = self.next_move(pos, ply) {
            if threats && !is_tactical(pos, m) {
                if !sets_up_capture(pos, m) {
                    continue;
                }
            } else if !in_check {
                if m.starts_double() || m.promotion().is_some_and(|r| r != Role::Queen) {
                    continue;
                }
                // Delta pruning: even winning this piece for free would not reach alpha.
                if m.promotion().is_none() && static_eval + victim_value(pos, m) + 200 <= alpha {
                    continue;
                }
                if !see_ge(pos, m, 0) {
                    continue;
                }
            }
            let child = pos.after(m);
            self.tt.prefetch(child.hash());
            self.nodes += 1;
            // The child's move ordering reads the moves that led to it, not what another branch
            // left on the stack.
            self.stack[ply].current = Some(m);
            self.stack[ply].moved = PieceTo::of(pos, m);
            let score = self.child_qsearch(pos, &child, alpha, beta, ply + 1);
            if self.aborted {
                return 0;
            }
            if score > best {
                best = score;
                best_move = Some(m);
                if score > alpha {
                    alpha = score;
                    if alpha >= beta {
                        break;
                    }
                }
            }
        }
        let bound = Bound::of(best, original_alpha, beta);
        self.tt
            .store(key, best_move, score_to_tt(best, ply), raw_eval, 0, bound);
        best
    }
}

fn score_to_tt(s: i32, ply: usize) -> i32 {
    if s >= MATE_BOUND {
        s + ply as i32
    } else if s <= -MATE_BOUND {
        s - ply as i32
    } else {
        s
    }
}

fn score_from_tt(s: i32, ply: usize) -> i32 {
    if s >= MATE_BOUND {
        s - ply as i32
    } else if s <= -MATE_BOUND {
        s + ply as i32
    } else {
        s
    }
}
