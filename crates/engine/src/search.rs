//! Iterative-deepening principal variation search over single moves. A node is one move; the score is
//! negated and the window swapped only when the player changes, since the same side often moves twice.
//! Depth counts moves; mate scores count moves internally and are reported in turns.

use crate::eval::{evaluate, PIECE_VALUE};
use crate::tt::{Bound, TranspositionTable};
use rules::game::Game;
use rules::{Move, MoveList, Phase, Position, Role, Variant};
use std::sync::atomic::{AtomicBool, Ordering};
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

/// History heuristic indices: side, phase (start/response/second), from, to.
type History = Vec<[[i32; 64]; 64]>;

pub struct Searcher {
    pub tt: TranspositionTable,
    history: History,
    killers: [[Option<Move>; 2]; MAX_PLY + 1],
    pv: Vec<Vec<Move>>,
    path: Vec<u64>,
    game_keys: Vec<u64>,
    nodes: u64,
    seldepth: usize,
    start: Instant,
    limits: Limits,
    aborted: bool,
    stop: Arc<AtomicBool>,
    /// Whether the move into each ply was a null move (no two in a row).
    null_at: [bool; MAX_PLY + 2],
}

fn phase_index(p: Phase) -> usize {
    match p {
        Phase::Start => 0,
        Phase::Response => 1,
        Phase::Second => 2,
    }
}

fn is_capture(pos: &Position, m: Move) -> bool {
    m.is_en_passant() || pos.board().piece_at(m.to()).is_some()
}

fn is_tactical(pos: &Position, m: Move) -> bool {
    is_capture(pos, m) || m.promotion() == Some(Role::Queen)
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
    pub fn new(hash_mb: usize) -> Searcher {
        Searcher {
            tt: TranspositionTable::new(hash_mb),
            history: vec![[[0; 64]; 64]; 6],
            killers: [[None; 2]; MAX_PLY + 1],
            pv: vec![Vec::new(); MAX_PLY + 2],
            path: Vec::with_capacity(MAX_PLY + 2),
            game_keys: Vec::new(),
            nodes: 0,
            seldepth: 0,
            start: Instant::now(),
            limits: Limits::default(),
            aborted: false,
            stop: Arc::new(AtomicBool::new(false)),
            null_at: [false; MAX_PLY + 2],
        }
    }

    /// The flag that stops a running search when set (from another thread).
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        self.stop.clone()
    }

    pub fn clear(&mut self) {
        self.tt.clear();
        self.history.iter_mut().for_each(|h| *h = [[0; 64]; 64]);
    }

    fn hist(&mut self, pos: &Position, m: Move) -> &mut i32 {
        let i = pos.turn().index() * 3 + phase_index(pos.phase());
        &mut self.history[i][m.from().index()][m.to().index()]
    }

    #[inline]
    fn should_stop(&mut self) -> bool {
        if self.aborted {
            return true;
        }
        if self.nodes & 1023 == 0 {
            let out_of_time = self
                .limits
                .hard_time
                .is_some_and(|t| self.start.elapsed() >= t);
            if out_of_time || self.stop.load(Ordering::Relaxed) {
                self.aborted = true;
            }
        }
        if self.limits.nodes.is_some_and(|n| self.nodes >= n) {
            self.aborted = true;
        }
        self.aborted
    }

    /// The quiescence score of `pos` for its side to move (captures and promotions resolved), with no
    /// time or node limit. The tuner uses it to keep only quiet positions (where it equals the static
    /// evaluation).
    pub fn quiescence(&mut self, pos: &Position) -> i32 {
        self.limits = Limits::default();
        self.aborted = false;
        self.path.clear();
        self.qsearch(pos, -INF, INF, 0)
    }

    /// Searches `game`'s current position. `info` receives a report after each completed iteration.
    pub fn search(
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
        self.limits = limits.clone();
        self.nodes = 0;
        self.seldepth = 0;
        self.aborted = false;
        self.tt.new_search();
        self.killers = [[None; 2]; MAX_PLY + 1];
        self.game_keys = counted_keys(game);
        for h in self.history.iter_mut() {
            for row in h.iter_mut() {
                for v in row.iter_mut() {
                    *v /= 4;
                }
            }
        }
        let multipv = limits.multipv.clamp(1, root_moves.len());
        // The first iteration covers the rest of the current turn.
        let first_depth = if root.phase() == Phase::Second || root.variant() == Variant::Chess {
            1
        } else {
            2
        };
        let max_depth = limits.depth.unwrap_or(MAX_PLY as i32 - 10).max(1);
        let mut best: Option<(Vec<Line>, i32)> = None;
        let mut depth = first_depth.min(max_depth);
        loop {
            let mut lines: Vec<Line> = Vec::new();
            let mut excluded: Vec<Move> = Vec::new();
            for _ in 0..multipv {
                let (score, pv) = self.root(&root, depth, &excluded, best.as_ref().map(|b| &b.0));
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
                info(&Report {
                    depth,
                    seldepth: self.seldepth,
                    nodes: self.nodes,
                    elapsed: self.start.elapsed(),
                    hashfull: self.tt.hashfull(),
                    lines: lines.clone(),
                });
                best = Some((lines, depth));
            }
            if !complete || depth >= max_depth {
                break;
            }
            if self
                .limits
                .soft_time
                .is_some_and(|t| self.start.elapsed() >= t)
            {
                break;
            }
            // A forced mate found: deeper search cannot improve the result much.
            if let Some((l, _)) = &best {
                if l[0].score.abs() >= MATE_BOUND && depth > (MATE - l[0].score.abs()) + 2 {
                    break;
                }
            }
            depth += 1;
        }
        // Stopped before the first iteration finished: play the best-ordered move rather than nothing.
        let (lines, depth) = best.unwrap_or_else(|| {
            let tt_move = self.tt.probe(root.hash()).and_then(|e| e.best);
            let first = root_moves
                .iter()
                .copied()
                .max_by_key(|&m| self.order_score(&root, m, tt_move, 0))
                .expect("a legal move exists");
            (
                vec![Line {
                    moves: vec![first],
                    score: evaluate(&root),
                }],
                0,
            )
        });
        let pv = lines[0].moves.clone();
        let turn = self.complete_turn(&root, &pv, depth);
        Some(SearchResult {
            turn,
            score: lines[0].score,
            depth,
            nodes: self.nodes,
            pv,
        })
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
                        nodes: Some(self.nodes + 20_000),
                        hard_time: self.limits.hard_time,
                        ..Limits::default()
                    };
                    let (_, line) = self.root(&pos, (depth - 1).max(1), &[], None);
                    line.first().copied().unwrap_or(legal.as_slice()[0])
                }
            };
            turn.push(next);
            pos = pos.after(next);
            k += 1;
        }
        turn
    }

    fn root(
        &mut self,
        root: &Position,
        depth: i32,
        excluded: &[Move],
        previous: Option<&Vec<Line>>,
    ) -> (i32, Vec<Move>) {
        let mut moves: Vec<Move> = root
            .legal_moves()
            .iter()
            .copied()
            .filter(|m| !excluded.contains(m))
            .collect();
        if moves.is_empty() {
            return (-INF, Vec::new());
        }
        let prev_best = previous.and_then(|ls| {
            ls.iter()
                .map(|l| l.moves[0])
                .find(|m| !excluded.contains(m))
        });
        let tt_best = self.tt.probe(root.hash()).and_then(|e| e.best);
        let mut scored: Vec<(i32, Move)> = moves
            .drain(..)
            .map(|m| (self.order_score(root, m, prev_best.or(tt_best), 0), m))
            .collect();
        scored.sort_by_key(|e| std::cmp::Reverse(e.0));
        let mut alpha = -INF;
        let beta = INF;
        let mut best_pv = Vec::new();
        self.path.clear();
        self.path.push(root.hash());
        for (i, &(_, m)) in scored.iter().enumerate() {
            let child = root.after(m);
            self.nodes += 1;
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
            if score > alpha {
                alpha = score;
                best_pv = vec![m];
                best_pv.extend_from_slice(&self.pv[1].clone());
            }
        }
        if !best_pv.is_empty() && excluded.is_empty() && !self.aborted {
            self.tt
                .store(root.hash(), Some(best_pv[0]), alpha, depth, Bound::Exact);
        }
        (alpha, best_pv)
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
            self.qsearch(child, alpha, beta, ply)
        } else {
            -self.qsearch(child, -beta, -alpha, ply)
        }
    }

    fn is_repetition(&self, pos: &Position) -> bool {
        if !(pos.at_turn_start() || pos.variant().counts_half_way_positions()) {
            return false;
        }
        let key = pos.hash();
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

    fn order_score(&mut self, pos: &Position, m: Move, tt_move: Option<Move>, ply: usize) -> i32 {
        if Some(m) == tt_move {
            return 10_000_000;
        }
        let b = pos.board();
        if let Some(victim) = b.role_at(m.to()) {
            let attacker = b.role_at(m.from()).map_or(0, |r| PIECE_VALUE[r.index()]);
            return 1_000_000 + PIECE_VALUE[victim.index()] * 10 - attacker / 10;
        }
        if m.is_en_passant() {
            return 1_000_000 + 1000 - 10;
        }
        if let Some(p) = m.promotion() {
            return 900_000 + PIECE_VALUE[p.index()];
        }
        if self.killers[ply][0] == Some(m) {
            return 800_000;
        }
        if self.killers[ply][1] == Some(m) {
            return 790_000;
        }
        *self.hist(pos, m)
    }

    fn negamax(
        &mut self,
        pos: &Position,
        mut depth: i32,
        mut alpha: i32,
        beta: i32,
        ply: usize,
    ) -> i32 {
        self.pv[ply].clear();
        if self.should_stop() {
            return 0;
        }
        if pos.king_captured().is_some() {
            return self.terminal_score(pos, ply);
        }
        self.path.push(pos.hash());
        let r = self.negamax_inner(pos, &mut depth, &mut alpha, beta, ply);
        self.path.pop();
        r
    }

    fn negamax_inner(
        &mut self,
        pos: &Position,
        depth: &mut i32,
        alpha: &mut i32,
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
            return evaluate(pos);
        }
        let in_check = pos.in_check() && !pos.variant().king_capture();
        if in_check && ply < MAX_PLY / 2 {
            *depth += 1;
        }
        if *depth <= 0 {
            return self.qsearch(pos, *alpha, beta, ply);
        }
        let key = pos.hash();
        let entry = self.tt.probe(key);
        let tt_move = entry.and_then(|e| e.best);
        let pv_node = beta - *alpha > 1;
        if let Some(e) = entry.filter(|_| !pv_node) {
            if e.depth as i32 >= *depth {
                let s = score_from_tt(e.score, ply);
                let cut = match e.bound {
                    Bound::Exact => true,
                    Bound::Lower => s >= beta,
                    Bound::Upper => s <= *alpha,
                };
                if cut {
                    return s;
                }
            }
        }
        // Null-move pruning, only at the start of a turn: passing the whole turn must still hold beta.
        let b = pos.board();
        let has_pieces = b.color(pos.turn()) & !(b.role(Role::Pawn) | b.role(Role::King)) != 0;
        if !pv_node && !in_check && *depth >= 3 && ply > 0 && has_pieces && !self.null_at[ply - 1] {
            if let Some(null) = pos.null_move() {
                if evaluate(pos) >= beta {
                    let r = 2 + (*depth >= 7) as i32;
                    self.nodes += 1;
                    self.null_at[ply] = true;
                    let score = -self.negamax(&null, *depth - 1 - r, -beta, -beta + 1, ply + 1);
                    self.null_at[ply] = false;
                    if self.aborted {
                        return 0;
                    }
                    if score >= beta {
                        return if score >= MATE_BOUND { beta } else { score };
                    }
                }
            }
        }
        let moves = pos.legal_moves();
        if moves.is_empty() {
            return self.terminal_score(pos, ply);
        }
        let mut scored: Vec<(i32, Move)> = moves
            .iter()
            .map(|&m| (self.order_score(pos, m, tt_move, ply), m))
            .collect();
        scored.sort_unstable_by_key(|e| std::cmp::Reverse(e.0));
        let original_alpha = *alpha;
        let mut best_score = -INF;
        let mut best_move = None;
        for (i, &(_, m)) in scored.iter().enumerate() {
            let child = pos.after(m);
            self.nodes += 1;
            let tactical = is_tactical(pos, m);
            let mut score;
            if i == 0 {
                score = self.child_search(pos, &child, *depth - 1, *alpha, beta, ply + 1);
            } else {
                // Late move reductions for quiet moves.
                let mut r = 0;
                if *depth >= 3 && i >= 3 && !tactical && !in_check {
                    r = 1 + (i >= 10) as i32 + (*depth >= 8) as i32;
                    if child.in_check() {
                        r = 0;
                    }
                }
                score = self.child_search(pos, &child, *depth - 1 - r, *alpha, *alpha + 1, ply + 1);
                if score > *alpha && r > 0 {
                    score = self.child_search(pos, &child, *depth - 1, *alpha, *alpha + 1, ply + 1);
                }
                if score > *alpha && score < beta {
                    score = self.child_search(pos, &child, *depth - 1, *alpha, beta, ply + 1);
                }
            }
            if self.aborted {
                return 0;
            }
            if score > best_score {
                best_score = score;
                best_move = Some(m);
                if score > *alpha {
                    *alpha = score;
                    let (head, tail) = self.pv.split_at_mut(ply + 1);
                    head[ply].clear();
                    head[ply].push(m);
                    head[ply].extend_from_slice(&tail[0]);
                }
            }
            if *alpha >= beta {
                if !tactical {
                    if self.killers[ply][0] != Some(m) {
                        self.killers[ply][1] = self.killers[ply][0];
                        self.killers[ply][0] = Some(m);
                    }
                    let bonus = *depth * *depth;
                    let h = self.hist(pos, m);
                    *h = (*h + bonus).min(700_000);
                }
                break;
            }
        }
        let bound = if best_score >= beta {
            Bound::Lower
        } else if best_score > original_alpha {
            Bound::Exact
        } else {
            Bound::Upper
        };
        self.tt
            .store(key, best_move, score_to_tt(best_score, ply), *depth, bound);
        best_score
    }

    fn qsearch(&mut self, pos: &Position, mut alpha: i32, beta: i32, ply: usize) -> i32 {
        self.pv[ply].clear();
        if self.should_stop() {
            return 0;
        }
        self.seldepth = self.seldepth.max(ply);
        if pos.king_captured().is_some() {
            return self.terminal_score(pos, ply);
        }
        let in_check = pos.in_check() && !pos.variant().king_capture();
        let moves: MoveList = pos.legal_moves();
        if moves.is_empty() {
            return self.terminal_score(pos, ply);
        }
        if ply >= MAX_PLY {
            return evaluate(pos);
        }
        let mut best = -INF;
        if !in_check {
            let stand = evaluate(pos);
            if stand >= beta {
                return stand;
            }
            best = stand;
            alpha = alpha.max(stand);
        }
        let mut scored: Vec<(i32, Move)> = moves
            .iter()
            .copied()
            .filter(|&m| in_check || (is_tactical(pos, m) && !m.starts_double()))
            .map(|m| (self.order_score(pos, m, None, ply.min(MAX_PLY)), m))
            .collect();
        scored.sort_unstable_by_key(|e| std::cmp::Reverse(e.0));
        for &(_, m) in &scored {
            let child = pos.after(m);
            self.nodes += 1;
            let score = self.child_qsearch(pos, &child, alpha, beta, ply + 1);
            if self.aborted {
                return 0;
            }
            if score > best {
                best = score;
                if score > alpha {
                    alpha = score;
                    if alpha >= beta {
                        break;
                    }
                }
            }
        }
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

/// The keys of the game's earlier positions that count for repetition.
fn counted_keys(game: &Game) -> Vec<u64> {
    let ps = game.positions();
    ps[..ps.len() - 1]
        .iter()
        .filter(|p| p.at_turn_start() || p.variant().counts_half_way_positions())
        .map(|p| p.hash())
        .collect()
}
