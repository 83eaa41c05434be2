//! Texel tuning of the evaluation weights: quiet positions from engine games, each labelled with its
//! game's result, and full-batch Adam on the mean squared error between sigmoid(K·eval) and the
//! result, over the sparse coefficient traces of `eval::trace`. Writes a new `weights.rs`.

use crate::eval::{self, evaluate, trace, ParamGroup, GROUPS, NUM_PARAMS, PHASE_MAX};
use crate::search::Searcher;
use rules::pgn::{parse_pgn, record_variant, replay};
use rules::rng::SplitMix64;
use rules::{Color, Variant};
use std::collections::HashSet;
use std::fmt::Write as _;

/// The weights file the engine is built with; its `//! run:` lines are the tuning history.
const CURRENT_WEIGHTS_SOURCE: &str = include_str!("weights.rs");

/// Which parameters move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamSet {
    All,
    /// Only the variants' own terms (tempo per variant, second move, response turn, Double Move).
    Variant,
    /// Everything but the piece-square tables (which need the most data).
    NoPst,
}

impl ParamSet {
    pub fn name(self) -> &'static str {
        match self {
            ParamSet::All => "all",
            ParamSet::Variant => "variant",
            ParamSet::NoPst => "no-pst",
        }
    }

    fn includes(self, g: &ParamGroup) -> bool {
        match self {
            ParamSet::All => true,
            ParamSet::Variant => g.variant,
            ParamSet::NoPst => !g.name.starts_with("pst "),
        }
    }
}

impl std::str::FromStr for ParamSet {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "all" => Ok(ParamSet::All),
            "variant" => Ok(ParamSet::Variant),
            "no-pst" => Ok(ParamSet::NoPst),
            _ => Err(format!(
                "unknown parameter set '{s}' (all, no-pst, variant)"
            )),
        }
    }
}

/// How positions are taken from games.
#[derive(Clone, Debug)]
pub struct LoadOptions {
    /// Only games of this variant (others are skipped and counted).
    pub variant: Option<Variant>,
    /// Positions before this many turns have been played are skipped (the openings are random).
    pub skip_turns: usize,
    /// Percentage of games whose positions form the validation set.
    pub validation_percent: u64,
    /// Chooses which games are held out.
    pub split_seed: u64,
    pub threads: usize,
}

/// Positions as sparse coefficient rows, with results.
#[derive(Clone, Debug, Default)]
pub struct Samples {
    coefs: Vec<(u16, i16)>,
    /// Row i is coefs[offsets[i]..offsets[i + 1]].
    offsets: Vec<usize>,
    phase: Vec<u8>,
    /// The untuned part of the evaluation (White's view).
    fixed: Vec<f32>,
    /// The game result from White's side: 1, 0.5 or 0.
    result: Vec<f32>,
}

impl Samples {
    pub fn len(&self) -> usize {
        self.result.len()
    }

    pub fn is_empty(&self) -> bool {
        self.result.is_empty()
    }

    fn push(&mut self, t: &eval::Trace, result: f32) {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        self.coefs.extend_from_slice(&t.coefs);
        self.offsets.push(self.coefs.len());
        self.phase.push(t.phase as u8);
        self.fixed.push(t.fixed as f32);
        self.result.push(result);
    }

    #[inline]
    fn eval(&self, i: usize, w: &[[f64; 2]]) -> f64 {
        let p = self.phase[i] as f64 / PHASE_MAX as f64;
        let (mut mg, mut eg) = (0.0, 0.0);
        for &(j, c) in &self.coefs[self.offsets[i]..self.offsets[i + 1]] {
            let wj = w[j as usize];
            mg += wj[0] * c as f64;
            eg += wj[1] * c as f64;
        }
        mg * p + eg * (1.0 - p) + self.fixed[i] as f64
    }
}

/// What loading found, for the report.
#[derive(Clone, Debug, Default)]
pub struct LoadStats {
    pub games: usize,
    pub games_other_variant: usize,
    pub games_unfinished: usize,
    pub games_unreadable: usize,
    pub first_error: Option<String>,
    pub positions_seen: usize,
    pub skipped_opening: usize,
    pub skipped_check_or_over: usize,
    pub skipped_not_quiet: usize,
    pub skipped_duplicate: usize,
    pub validation_games: usize,
}

#[derive(Debug, Default)]
pub struct Dataset {
    pub train: Samples,
    pub validation: Samples,
    pub stats: LoadStats,
}

/// Splits a file of many PGN records (as the match runner writes them) into one text per game: a tag
/// line after movetext begins the next game.
pub fn split_games(text: &str) -> Vec<String> {
    let mut games = Vec::new();
    let mut cur = String::new();
    let mut has_moves = false;
    for line in text.lines() {
        let l = line.trim();
        if l.starts_with('[') && has_moves {
            games.push(std::mem::take(&mut cur));
            has_moves = false;
        }
        if !l.is_empty() && !l.starts_with('[') && !l.starts_with('%') {
            has_moves = true;
        }
        cur.push_str(line);
        cur.push('\n');
    }
    if has_moves || !cur.trim().is_empty() {
        games.push(cur);
    }
    games
}

/// One game's candidate positions: (hash, trace) and its result, or why it was skipped.
enum GameData {
    Positions {
        rows: Vec<(u64, eval::Trace)>,
        result: f32,
        opening: usize,
        check_or_over: usize,
        not_quiet: usize,
    },
    OtherVariant,
    Unfinished,
    Unreadable(String),
}

fn game_positions(text: &str, opts: &LoadOptions, searcher: &mut Searcher) -> GameData {
    let rec = match parse_pgn(text) {
        Ok(r) => r,
        Err(e) => return GameData::Unreadable(e.to_string()),
    };
    let variant = match record_variant(&rec, None) {
        Ok(v) => v,
        Err(e) => return GameData::Unreadable(e.to_string()),
    };
    if opts.variant.is_some_and(|v| v != variant) {
        return GameData::OtherVariant;
    }
    let result = match rec.result.as_deref().or(rec.tag("Result")) {
        Some("1-0") => 1.0,
        Some("0-1") => 0.0,
        Some("1/2-1/2") => 0.5,
        _ => return GameData::Unfinished,
    };
    let game = match replay(&rec, variant) {
        Ok(g) => g,
        Err(e) => return GameData::Unreadable(e.to_string()),
    };
    let (mut opening, mut check_or_over, mut not_quiet) = (0, 0, 0);
    let mut rows = Vec::new();
    let mut turns = 0;
    let mut previous: Option<Color> = None;
    for pos in game.positions() {
        if previous.is_some_and(|c| c != pos.turn()) {
            turns += 1;
        }
        previous = Some(pos.turn());
        if turns < opts.skip_turns {
            opening += 1;
            continue;
        }
        if pos.king_captured().is_some() || pos.in_check() || pos.legal_moves().is_empty() {
            check_or_over += 1;
            continue;
        }
        if searcher.quiescence(pos) != evaluate(pos) {
            not_quiet += 1;
            continue;
        }
        rows.push((pos.hash(), trace(pos)));
    }
    GameData::Positions {
        rows,
        result,
        opening,
        check_or_over,
        not_quiet,
    }
}

/// Reads games (PGN texts, one per game, with a name for messages) into training and validation
/// samples: quiet positions only, duplicates dropped (the first occurrence counts), games split
/// between the two sets at random so that no game's positions are on both sides.
pub fn load(files: &[(String, String)], opts: &LoadOptions) -> Result<Dataset, String> {
    // (file index, game number in the file, text)
    let mut games: Vec<(usize, usize, String)> = Vec::new();
    for (f, (name, text)) in files.iter().enumerate() {
        let g = split_games(text);
        if g.is_empty() {
            return Err(format!("{name}: no PGN games in the file"));
        }
        games.extend(g.into_iter().enumerate().map(|(i, t)| (f, i + 1, t)));
    }
    let threads = opts.threads.max(1);
    let chunk = games.len().div_ceil(threads).max(1);
    let per_chunk: Vec<Vec<(usize, usize, GameData)>> = std::thread::scope(|s| {
        let handles: Vec<_> = games
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    // The tuner fits the hand-written evaluation: quiet means quiet for it.
                    let mut searcher = Searcher::new(1);
                    searcher.set_network(None);
                    part.iter()
                        .map(|(f, n, g)| (*f, *n, game_positions(g, opts, &mut searcher)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a loader thread panicked"))
            .collect()
    });

    let mut data = Dataset::default();
    let st = &mut data.stats;
    let mut seen = HashSet::new();
    for (index, (file, number, g)) in per_chunk.into_iter().flatten().enumerate() {
        st.games += 1;
        match g {
            GameData::OtherVariant => st.games_other_variant += 1,
            GameData::Unfinished => st.games_unfinished += 1,
            GameData::Unreadable(e) => {
                st.games_unreadable += 1;
                st.first_error
                    .get_or_insert_with(|| format!("{}, game {number}: {e}", files[file].0));
            }
            GameData::Positions {
                rows,
                result,
                opening,
                check_or_over,
                not_quiet,
            } => {
                st.positions_seen += opening + check_or_over + not_quiet + rows.len();
                st.skipped_opening += opening;
                st.skipped_check_or_over += check_or_over;
                st.skipped_not_quiet += not_quiet;
                let validation = SplitMix64::mix(index as u64 ^ opts.split_seed << 32) % 100
                    < opts.validation_percent;
                st.validation_games += validation as usize;
                for (hash, t) in rows {
                    let set = if validation {
                        &mut data.validation
                    } else {
                        &mut data.train
                    };
                    if seen.insert(hash) {
                        set.push(&t, result);
                    } else {
                        st.skipped_duplicate += 1;
                    }
                }
            }
        }
    }
    if data.train.is_empty() {
        let usable = st.games - st.games_other_variant - st.games_unfinished - st.games_unreadable;
        let mut msg = format!(
            "no training positions: {} games read, {usable} usable ({} of another variant, {} \
             without a result, {} unreadable)",
            st.games, st.games_other_variant, st.games_unfinished, st.games_unreadable
        );
        if let Some(e) = &st.first_error {
            let _ = write!(msg, "; first error: {e}");
        }
        return Err(msg);
    }
    Ok(data)
}

#[inline]
fn sigmoid(k: f64, e: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-k * e / 400.0))
}

/// Runs `f` over `threads` contiguous ranges of `0..n` and returns the results in order.
fn parallel<T: Send>(
    n: usize,
    threads: usize,
    f: impl Fn(std::ops::Range<usize>) -> T + Sync,
) -> Vec<T> {
    let chunk = n.div_ceil(threads.max(1)).max(1);
    std::thread::scope(|s| {
        let f = &f;
        let handles: Vec<_> = (0..n)
            .step_by(chunk)
            .map(|a| s.spawn(move || f(a..(a + chunk).min(n))))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a tuner thread panicked"))
            .collect()
    })
}

/// Mean squared error of sigmoid(K·eval) against the results.
pub fn error(samples: &Samples, w: &[[f64; 2]], k: f64, threads: usize) -> f64 {
    if samples.is_empty() {
        return f64::NAN;
    }
    let sums = parallel(samples.len(), threads, |r| {
        r.map(|i| {
            let d = sigmoid(k, samples.eval(i, w)) - samples.result[i] as f64;
            d * d
        })
        .sum::<f64>()
    });
    sums.iter().sum::<f64>() / samples.len() as f64
}

/// The scale K that best fits the current weights to the results (golden-section search; the error
/// is unimodal in K).
pub fn fit_k(samples: &Samples, w: &[[f64; 2]], threads: usize) -> f64 {
    let (mut a, mut b) = (0.01f64, 5.0f64);
    let g = (5f64.sqrt() - 1.0) / 2.0;
    let mut c = b - g * (b - a);
    let mut d = a + g * (b - a);
    let mut fc = error(samples, w, c, threads);
    let mut fd = error(samples, w, d, threads);
    while b - a > 1e-4 {
        if fc < fd {
            b = d;
            d = c;
            fd = fc;
            c = b - g * (b - a);
            fc = error(samples, w, c, threads);
        } else {
            a = c;
            c = d;
            fc = fd;
            d = a + g * (b - a);
            fd = error(samples, w, d, threads);
        }
    }
    (a + b) / 2.0
}

/// The gradient of the mean squared error with respect to every (mg, eg) weight.
fn gradient(samples: &Samples, w: &[[f64; 2]], k: f64, threads: usize) -> Vec<[f64; 2]> {
    let scale = 2.0 * k * std::f64::consts::LN_10 / 400.0 / samples.len() as f64;
    let parts = parallel(samples.len(), threads, |r| {
        let mut g = vec![[0.0f64; 2]; w.len()];
        for i in r {
            let s = sigmoid(k, samples.eval(i, w));
            let common = (s - samples.result[i] as f64) * s * (1.0 - s) * scale;
            let p = samples.phase[i] as f64 / PHASE_MAX as f64;
            let (gm, ge) = (common * p, common * (1.0 - p));
            for &(j, c) in &samples.coefs[samples.offsets[i]..samples.offsets[i + 1]] {
                let gj = &mut g[j as usize];
                gj[0] += gm * c as f64;
                gj[1] += ge * c as f64;
            }
        }
        g
    });
    let mut total = vec![[0.0f64; 2]; w.len()];
    for part in parts {
        for (t, p) in total.iter_mut().zip(part) {
            t[0] += p[0];
            t[1] += p[1];
        }
    }
    total
}

#[derive(Clone, Debug)]
pub struct TuneOptions {
    pub epochs: usize,
    /// Adam's step size in centipawns.
    pub learning_rate: f64,
    pub params: ParamSet,
    pub threads: usize,
    /// Call the progress callback every this many epochs.
    pub report_every: usize,
    /// Weight of the penalty l2 · Σ (w − w_start)² added to the error: it keeps parameters that few
    /// positions see near their starting values instead of fitting noise.
    pub l2: f64,
}

/// Whether each parameter may move under `set`.
pub fn movable(set: ParamSet) -> Vec<bool> {
    let mut m = vec![false; NUM_PARAMS];
    for g in GROUPS.iter().filter(|g| set.includes(g)) {
        m[g.start..g.start + g.len].fill(true);
    }
    m
}

/// Full-batch Adam from `w` with K fixed; `progress(epoch, train error)` is called every
/// `report_every` epochs. Returns the tuned weights (not rounded).
pub fn tune(
    train: &Samples,
    w: &[[f64; 2]],
    k: f64,
    opts: &TuneOptions,
    progress: &mut dyn FnMut(usize, &[[f64; 2]]),
) -> Vec<[f64; 2]> {
    let (b1, b2, eps) = (0.9f64, 0.999f64, 1e-8);
    let mask = movable(opts.params);
    let start = w;
    let mut w = w.to_vec();
    let mut m = vec![[0.0f64; 2]; w.len()];
    let mut v = vec![[0.0f64; 2]; w.len()];
    for epoch in 1..=opts.epochs {
        let mut g = gradient(train, &w, k, opts.threads);
        for ((gj, wj), sj) in g.iter_mut().zip(&w).zip(start) {
            for h in 0..2 {
                gj[h] += 2.0 * opts.l2 * (wj[h] - sj[h]);
            }
        }
        let (c1, c2) = (1.0 - b1.powi(epoch as i32), 1.0 - b2.powi(epoch as i32));
        for j in (0..w.len()).filter(|&j| mask[j]) {
            for h in 0..2 {
                m[j][h] = b1 * m[j][h] + (1.0 - b1) * g[j][h];
                v[j][h] = b2 * v[j][h] + (1.0 - b2) * g[j][h] * g[j][h];
                w[j][h] -= opts.learning_rate * (m[j][h] / c1) / ((v[j][h] / c2).sqrt() + eps);
            }
        }
        if opts.report_every > 0 && (epoch % opts.report_every == 0 || epoch == opts.epochs) {
            progress(epoch, &w);
        }
    }
    w
}

/// Weights rounded to whole centipawns (as the engine uses them).
pub fn rounded(w: &[[f64; 2]]) -> Vec<[i32; 2]> {
    w.iter()
        .map(|x| [x[0].round() as i32, x[1].round() as i32])
        .collect()
}

/// The source of the weights the engine was built with.
pub fn current_source() -> &'static str {
    CURRENT_WEIGHTS_SOURCE
}

/// The `//! run:` lines (the tuning history) of a weights file's source.
pub fn history(source: &str) -> Vec<String> {
    source
        .lines()
        .filter(|l| l.starts_with("//! run:"))
        .map(|l| l.to_string())
        .collect()
}

/// Reads the weights back from a `weights.rs` source (as [`render_weights`] writes it), to start a
/// run from a file instead of the built weights.
pub fn parse_weights(source: &str) -> Result<Vec<[i32; 2]>, String> {
    let start = source
        .find("pub const WEIGHTS")
        .and_then(|i| source[i..].find('=').map(|j| i + j + 1))
        .ok_or("no 'pub const WEIGHTS ... =' in the weights file")?;
    let mut values = Vec::new();
    for (n, line) in source[start..].lines().enumerate() {
        let l = line.trim();
        if l.is_empty() || l.starts_with("//") || l == "[" || l == "];" {
            continue;
        }
        for cell in l.split("],").map(str::trim).filter(|c| !c.is_empty()) {
            let pair = cell
                .strip_prefix('[')
                .and_then(|c| c.split_once(','))
                .and_then(|(a, b)| Some([a.trim().parse().ok()?, b.trim().parse().ok()?]))
                .ok_or_else(|| format!("weights line {}: cannot read '{cell}'", n + 1))?;
            values.push(pair);
        }
    }
    if values.len() != NUM_PARAMS {
        return Err(format!(
            "the weights file has {} parameters, the evaluation {NUM_PARAMS}",
            values.len()
        ));
    }
    Ok(values)
}

/// The source of a `weights.rs` holding `w`, with the earlier runs (`history`) and `run` (one line)
/// in its header.
pub fn render_weights(w: &[[i32; 2]], history: &[String], run: &str) -> String {
    let mut s = String::new();
    s.push_str(
        "//! The evaluation's weights: (middlegame, endgame) per parameter, in the layout of `eval.rs`.\n\
         //! Written by `doublemove tune` (docs/engine.md, \"Tuning\"); edit by tuning, not by hand.\n\
         //!\n",
    );
    for l in history {
        s.push_str(l);
        s.push('\n');
    }
    let _ = writeln!(s, "//! run: {}", run.replace('\n', " "));
    s.push_str(
        "\nuse crate::eval::NUM_PARAMS;\n\n#[rustfmt::skip]\npub const WEIGHTS: [[i32; 2]; NUM_PARAMS] = [\n",
    );
    for g in GROUPS {
        let _ = writeln!(s, "    // {}", g.name);
        for row in w[g.start..g.start + g.len].chunks(8) {
            let cells: Vec<String> = row
                .iter()
                .map(|x| format!("[{}, {}],", x[0], x[1]))
                .collect();
            let _ = writeln!(s, "    {}", cells.join(" "));
        }
    }
    s.push_str("];\n");
    s
}
