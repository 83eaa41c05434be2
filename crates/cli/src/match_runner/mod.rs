//! `doublemove match`: plays engines against each other in game pairs (each opening twice, colours
//! swapped), with our rules crate as the arbiter, and reports W/D/L, Elo with an error bar, and a
//! pentanomial SPRT. See docs/match.md.

pub mod elo;
pub mod engine_proc;
pub mod openings;
pub mod play;
pub mod sprt;

use engine_proc::{Engine, EngineSpec};
use indicatif::{ProgressBar, ProgressStyle};
use openings::Opening;
use play::{play_game, Limits, Played, Seats};
use rules::{Color, Variant};
use sprt::{Decision, Sprt};
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::channel;
use std::time::Duration;

/// The options of `doublemove match` (boxed: they are large next to the other subcommands').
#[derive(clap::Args, Debug)]
pub struct MatchArgs {
    #[command(flatten)]
    pub opts: Box<MatchOptions>,
}

#[derive(clap::Args, Debug)]
pub struct MatchOptions {
    /// chess, two-move, double-move or twinmove
    #[arg(long, default_value = "chess")]
    pub variant: Variant,
    /// Engine A's command line (shell-like quoting; `doublemove ...` runs this executable)
    #[arg(long, value_name = "CMD")]
    pub engine_a: String,
    /// Engine B's command line
    #[arg(long, value_name = "CMD")]
    pub engine_b: String,
    /// Number of games (played in pairs with colours swapped)
    #[arg(long, default_value_t = 2)]
    pub games: usize,
    /// Time control BASE+INC in seconds, Fischer increment per turn
    #[arg(long, default_value = "10+0.1")]
    pub tc: String,
    /// Search this many nodes per turn (`go nodes N`) instead of using a clock
    #[arg(long, value_name = "N")]
    pub nodes: Option<u64>,
    /// With --nodes: seconds an engine may take per turn before it loses for not answering
    #[arg(long, default_value_t = 30.0, value_name = "SECS")]
    pub turn_timeout: f64,
    /// Milliseconds past zero on the clock that are forgiven
    #[arg(long, default_value_t = 0, value_name = "MS")]
    pub timemargin: u64,
    /// Openings: one per line, an extended FEN or turns from the start (`e2e4 c7c5,d7d6`)
    #[arg(long, value_name = "FILE")]
    pub openings: Option<PathBuf>,
    /// Seed for the built-in random openings (2–4 random legal turns, one per pair)
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Double Move Chess: the built-in openings may spend the Double Moves (by default they never
    /// do), and an openings file that spends them is not warned about
    #[arg(long)]
    pub spend_double_moves: bool,
    /// Games played at once
    #[arg(long, default_value_t = 1, value_name = "K")]
    pub concurrency: usize,
    /// Sequential test on game pairs: elo0,elo1 (alpha = beta = 0.05); stops when a bound is crossed
    #[arg(long, value_name = "ELO0,ELO1", allow_hyphen_values = true)]
    pub sprt: Option<String>,
    /// Elo model of the --sprt bounds: normalized (fishtest's nElo) or logistic
    #[arg(long, value_enum, default_value = "normalized")]
    pub sprt_model: SprtModel,
    /// Append every game to this PGN file
    #[arg(long, value_name = "OUT")]
    pub pgn: Option<PathBuf>,
    /// A `setoption` for engine A (repeatable)
    #[arg(long = "option-a", value_name = "NAME=VALUE")]
    pub option_a: Vec<String>,
    /// A `setoption` for engine B (repeatable)
    #[arg(long = "option-b", value_name = "NAME=VALUE")]
    pub option_b: Vec<String>,
    /// Adjudicate a draw when a game reaches this many turns
    #[arg(long, default_value_t = 400)]
    pub max_turns: usize,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum SprtModel {
    Normalized,
    Logistic,
}

/// A finished game, from a worker.
struct Finished {
    index: usize,
    pair: usize,
    a_white: bool,
    played: Played,
}

const FAULT_KINDS: [&str; 3] = ["time", "illegal", "crash"];

/// Running totals, from engine A's point of view.
#[derive(Default)]
struct Tally {
    wins: u64,
    draws: u64,
    losses: u64,
    /// Pairs by A's pair score 0, ½, 1, 1½, 2.
    penta: [u64; 5],
    /// A's score in the first finished game of each incomplete pair.
    open_pairs: HashMap<usize, f64>,
    /// [engine][time, illegal, crash] losses.
    faults: [[u64; 3]; 2],
    terminations: BTreeMap<String, u64>,
}

impl Tally {
    fn games(&self) -> u64 {
        self.wins + self.draws + self.losses
    }
    fn pairs(&self) -> u64 {
        self.penta.iter().sum()
    }
    fn wdl(&self) -> String {
        format!("+{} ={} -{}", self.wins, self.draws, self.losses)
    }
    /// Adds a game; returns A's pair score when this game completes a pair.
    fn add(&mut self, f: &Finished, variant: Variant) -> (f64, Option<f64>) {
        let winner = f.played.game.outcome().and_then(|o| o.winner());
        let a_color = if f.a_white {
            Color::White
        } else {
            Color::Black
        };
        let score = match winner {
            None => 0.5,
            Some(c) if c == a_color => 1.0,
            Some(_) => 0.0,
        };
        match winner {
            None => self.draws += 1,
            Some(c) if c == a_color => self.wins += 1,
            Some(_) => self.losses += 1,
        }
        let t = &f.played.termination;
        *self.terminations.entry(t.kind(variant)).or_default() += 1;
        if let Some((loser, kind)) = t.fault() {
            let engine = usize::from(loser != a_color);
            let k = FAULT_KINDS.iter().position(|x| *x == kind).unwrap();
            self.faults[engine][k] += 1;
        }
        let pair_score = match self.open_pairs.remove(&f.pair) {
            Some(first) => {
                let s = first + score;
                self.penta[(s * 2.0).round() as usize] += 1;
                Some(s)
            }
            None => {
                self.open_pairs.insert(f.pair, score);
                None
            }
        };
        (score, pair_score)
    }
}

/// Warns (without stopping) when openings of a file are not fair starts ([`openings::check_start`]):
/// a hand-made file may mean them, but a match from them measures something else.
fn warn_unfair(openings: &[Opening], variant: Variant, spend_double_moves: bool, file: &str) {
    let unfair: Vec<(&Opening, String)> = openings
        .iter()
        .filter_map(|o| {
            let game = o.game(variant).ok()?;
            openings::check_start(&game, spend_double_moves)
                .err()
                .map(|e| (o, e))
        })
        .collect();
    if let Some((o, why)) = unfair.first() {
        eprintln!(
            "warning: {} of the {} openings in {file} are not fair starts (see docs/match.md), e.g. {}: {why}",
            unfair.len(),
            openings.len(),
            o.label()
        );
    }
}

fn start_engine(spec: &EngineSpec, variant: Variant, label: &str) -> Result<String, String> {
    let e = Engine::start(spec, variant.name()).map_err(|e| format!("engine {label}: {e}"))?;
    for w in &e.warnings {
        eprintln!("warning: engine {label}: {w}");
    }
    let name = e.name.clone();
    e.quit();
    Ok(name)
}

pub fn run(args: MatchArgs) -> Result<ExitCode, String> {
    let args = *args.opts;
    let variant = args.variant;
    if args.games == 0 {
        return Err("--games must be at least 1".into());
    }
    let limits = match args.nodes {
        Some(0) => return Err("--nodes must be at least 1".into()),
        Some(nodes) => {
            if !(args.turn_timeout > 0.0 && args.turn_timeout.is_finite()) {
                return Err("--turn-timeout must be positive".into());
            }
            Limits::Nodes {
                nodes,
                timeout: Duration::from_secs_f64(args.turn_timeout),
            }
        }
        None => Limits::parse_tc(&args.tc, Duration::from_millis(args.timemargin))?,
    };
    let model = match args.sprt_model {
        SprtModel::Normalized => sprt::Model::Normalized,
        SprtModel::Logistic => sprt::Model::Logistic,
    };
    let sprt = args
        .sprt
        .as_deref()
        .map(|s| Sprt::parse(s, model))
        .transpose()?;
    let specs = [
        EngineSpec::parse(&args.engine_a, &args.option_a)?,
        EngineSpec::parse(&args.engine_b, &args.option_b)?,
    ];
    let games = args.games;
    let pairs = games.div_ceil(2);
    let (openings, opening_source): (Vec<Opening>, String) = match &args.openings {
        Some(p) => {
            let text =
                std::fs::read_to_string(p).map_err(|e| format!("reading {}: {e}", p.display()))?;
            let o = openings::parse_file(&text, variant)
                .map_err(|e| format!("{}: {e}", p.display()))?;
            warn_unfair(
                &o,
                variant,
                args.spend_double_moves,
                &p.display().to_string(),
            );
            let src = format!("{} ({} lines)", p.display(), o.len());
            (o, src)
        }
        None => {
            let kept = if variant == Variant::DoubleMove && !args.spend_double_moves {
                ", Double Moves kept"
            } else {
                ""
            };
            (
                openings::random_openings(variant, pairs, args.seed, args.spend_double_moves)?,
                format!("built-in: 2-4 random turns{kept}, seed {}", args.seed),
            )
        }
    };
    let mut pgn = match &args.pgn {
        Some(p) => Some(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .map_err(|e| format!("opening {}: {e}", p.display()))?,
        ),
        None => None,
    };
    // Start each engine once: it must be able to start, and we learn its name.
    let mut names = [
        start_engine(&specs[0], variant, "A")?,
        start_engine(&specs[1], variant, "B")?,
    ];
    if names[0] == names[1] {
        names[0] += " (A)";
        names[1] += " (B)";
    }
    let concurrency = args.concurrency.clamp(1, games);
    let tc_text = match limits {
        Limits::Clock { .. } => format!("tc {}", limits.pgn_tag()),
        Limits::Nodes { nodes, .. } => format!("{nodes} nodes per turn"),
    };
    println!(
        "Match A: {} vs B: {}: {}, {} games ({} pairs), {}, concurrency {}, openings {}",
        names[0], names[1], variant, games, pairs, tc_text, concurrency, opening_source
    );

    let pb = ProgressBar::new(games as u64);
    pb.set_style(
        ProgressStyle::with_template("{bar:30.cyan/blue} {pos}/{len} games [{elapsed}] {msg}")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let mut tally = Tally::default();
    let mut sprt_result: Option<(f64, Decision, u64)> = None;
    let mut pgn_error: Option<String> = None;
    let (tx, rx) = channel::<Finished>();
    std::thread::scope(|scope| {
        for _ in 0..concurrency {
            let tx = tx.clone();
            let (next, stop, openings, specs) = (&next, &stop, &openings, &specs);
            scope.spawn(move || {
                let mut seats = Seats::new(specs.clone(), variant);
                while !stop.load(Ordering::SeqCst) {
                    let index = next.fetch_add(1, Ordering::SeqCst);
                    if index >= games {
                        break;
                    }
                    let pair = index / 2;
                    let a_white = index % 2 == 0;
                    let opening = &openings[pair % openings.len()];
                    let played = play_game(&mut seats, opening, a_white, limits, args.max_turns);
                    if tx
                        .send(Finished {
                            index,
                            pair,
                            a_white,
                            played,
                        })
                        .is_err()
                    {
                        break;
                    }
                }
                seats.quit();
            });
        }
        drop(tx);
        for f in rx {
            let (_, pair_score) = tally.add(&f, variant);
            let (white, black) = if f.a_white {
                (&names[0], &names[1])
            } else {
                (&names[1], &names[0])
            };
            if let Some(out) = pgn.as_mut() {
                let tags: Vec<(String, String)> = [
                    ("Event", "doublemove match".to_string()),
                    ("Round", (f.index + 1).to_string()),
                    ("White", white.clone()),
                    ("Black", black.clone()),
                    ("TimeControl", limits.pgn_tag()),
                    ("Termination", f.played.termination.pgn_tag().to_string()),
                ]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect();
                // Each engine turn's score/depth and time; the last also says how the game ended.
                let mut comments = f.played.notes.clone();
                if let Some(last) = comments.last_mut() {
                    *last = Some(match last.take() {
                        Some(note) => format!("{note}, {}", f.played.detail),
                        None => f.played.detail.clone(),
                    });
                }
                let text = rules::pgn::write_pgn(&f.played.game, &tags, &comments);
                if let Err(e) = out.write_all(format!("{text}\n").as_bytes()) {
                    pgn_error.get_or_insert(format!("writing the PGN: {e}"));
                }
            }
            if f.played.termination.fault().is_some() {
                pb.suspend(|| {
                    println!(
                        "Game {} ({white} - {black}): {}",
                        f.index + 1,
                        f.played.detail
                    )
                });
            }
            if let Some(ps) = pair_score {
                let llr_text = match &sprt {
                    Some(s) => {
                        let llr = s.llr(tally.penta);
                        let d = s.decision(llr);
                        if d != Decision::Continue && sprt_result.is_none() {
                            sprt_result = Some((llr, d, tally.pairs()));
                            stop.store(true, Ordering::SeqCst);
                        }
                        format!(", LLR {llr:.2}")
                    }
                    None => String::new(),
                };
                let opening = openings[f.pair % openings.len()].label();
                pb.suspend(|| {
                    println!(
                        "Pair {:>3} ({opening}): A {ps}/2 | total {}, {:.1}%{llr_text}",
                        f.pair + 1,
                        tally.wdl(),
                        100.0 * (tally.wins as f64 + 0.5 * tally.draws as f64)
                            / tally.games() as f64,
                    )
                });
            }
            pb.set_message(tally.wdl());
            pb.inc(1);
        }
    });
    pb.finish_and_clear();
    if let Some(e) = pgn_error {
        eprintln!("warning: {e}");
    }
    report(&tally, &names, variant, sprt.as_ref(), sprt_result);
    Ok(ExitCode::SUCCESS)
}

fn report(
    t: &Tally,
    names: &[String; 2],
    variant: Variant,
    sprt: Option<&Sprt>,
    decided: Option<(f64, Decision, u64)>,
) {
    let n = t.games();
    let score = t.wins as f64 + 0.5 * t.draws as f64;
    println!();
    println!(
        "Score of {} vs {}: {} - {} - {} (W-L-D) [{:.3}] {} games",
        names[0],
        names[1],
        t.wins,
        t.losses,
        t.draws,
        score / n as f64,
        n
    );
    println!(
        "Score for A: {score}/{n} = {:.1}%",
        100.0 * score / n as f64
    );
    if let Some(e) = elo::trinomial(t.wins, t.draws, t.losses) {
        println!("Elo difference: {} (95%, trinomial)", e.display());
    }
    if t.pairs() > 0 {
        let p = elo::pentanomial(t.penta).expect("pairs were counted");
        let nelo =
            sprt::normalized_elo(t.penta).map_or(String::new(), |x| format!(", nElo {x:+.1}"));
        let shown = if t.pairs() >= 2 {
            p.display()
        } else {
            "? (one pair is too few)".to_string()
        };
        println!(
            "Elo difference: {shown} (95%, pentanomial, {} pairs){nelo}",
            t.pairs()
        );
        println!("Pentanomial [0, 1/2, 1, 3/2, 2]: {:?}", t.penta);
    }
    if let Some(s) = sprt {
        let llr = s.llr(t.penta);
        let (lo, hi) = s.bounds();
        let unit = match s.model {
            sprt::Model::Normalized => "nElo",
            sprt::Model::Logistic => "Elo",
        };
        let name = |d: Decision| match d {
            Decision::AcceptH1 => "H1 accepted",
            Decision::AcceptH0 => "H0 accepted",
            Decision::Continue => "no decision yet",
        };
        let verdict = match decided {
            Some((l, d, p)) => format!("{} after {p} pairs (LLR {l:.2}); stopped", name(d)),
            None => name(s.decision(llr)).to_string(),
        };
        println!(
            "SPRT [{unit}0 {}, {unit}1 {}], alpha = beta = 0.05: LLR {llr:.2} [{lo:.2}, {hi:.2}]: {verdict}",
            s.elo0, s.elo1
        );
    }
    let faults = |e: usize| {
        FAULT_KINDS
            .iter()
            .zip(t.faults[e])
            .map(|(k, c)| format!("{k} {c}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!("Losses by reason: A {}; B {}", faults(0), faults(1));
    let ends: Vec<String> = t
        .terminations
        .iter()
        .map(|(k, c)| format!("{k} {c}"))
        .collect();
    println!("Game ends ({variant}): {}", ends.join(", "));
}
