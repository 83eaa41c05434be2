//! Benchmarks that print figures (perft speed, compared with Stockfish when it is on PATH).

use clap::{Args, Subcommand};
use rules::perft::perft;
use rules::{Position, Variant};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

#[derive(Subcommand)]
pub enum BenchCommand {
    /// Perft speed per variant and against Stockfish's `go perft`.
    Perft(PerftArgs),
}

#[derive(Args)]
pub struct PerftArgs {
    /// Smaller depths (a smoke test for CI; the figures are less meaningful)
    #[arg(long)]
    quick: bool,
    /// Also run our perft split over this many threads (root moves shared out); the main figures stay
    /// single-threaded
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Run every measurement this many times and keep the fastest (on a busy machine)
    #[arg(long, default_value_t = 1)]
    repeat: u32,
    /// The Stockfish binary (default: `stockfish` on PATH, else /usr/games/stockfish)
    #[arg(long)]
    stockfish: Option<PathBuf>,
    /// Do not run Stockfish even if it is found
    #[arg(long)]
    no_stockfish: bool,
}

const KIWIPETE: &str = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

pub fn run(what: BenchCommand) -> Result<(), String> {
    match what {
        BenchCommand::Perft(args) => bench_perft(&args),
    }
}

/// One timed perft.
struct Timed {
    nodes: u64,
    secs: f64,
}

impl Timed {
    fn mnps(&self) -> f64 {
        self.nodes as f64 / self.secs.max(1e-9) / 1e6
    }
}

/// The fastest of `repeat` runs of `f`.
fn best_of(repeat: u32, mut f: impl FnMut() -> Result<Timed, String>) -> Result<Timed, String> {
    let mut best = f()?;
    for _ in 1..repeat {
        let t = f()?;
        if t.secs < best.secs {
            best = t;
        }
    }
    Ok(best)
}

fn time_perft(pos: &Position, depth: u32, threads: usize) -> Timed {
    let start = Instant::now();
    let nodes = if threads <= 1 {
        perft(pos, depth)
    } else {
        perft_threaded(pos, depth, threads)
    };
    Timed {
        nodes,
        secs: start.elapsed().as_secs_f64(),
    }
}

/// Move-unit perft with the root moves shared out over `threads` threads (each takes the next
/// unclaimed root move).
fn perft_threaded(pos: &Position, depth: u32, threads: usize) -> u64 {
    if depth < 2 {
        return perft(pos, depth);
    }
    let moves: Vec<_> = pos.legal_moves().iter().copied().collect();
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut nodes = 0;
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(&m) = moves.get(i) else { break };
                        nodes += perft(&pos.after(m), depth - 1);
                    }
                    nodes
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).sum()
    })
}

/// A Stockfish process driven over UCI.
struct Stockfish {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Stockfish {
    fn find(given: Option<&Path>) -> Option<PathBuf> {
        if let Some(p) = given {
            return Some(p.to_path_buf());
        }
        let on_path = std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join("stockfish"))
                .find(|p| p.is_file())
        });
        on_path.or_else(|| {
            let p = PathBuf::from("/usr/games/stockfish");
            p.is_file().then_some(p)
        })
    }

    fn start(path: &Path) -> Result<Stockfish, String> {
        let mut child = Command::new(path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("starting {}: {e}", path.display()))?;
        let input = child.stdin.take().expect("piped stdin");
        let output = BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut sf = Stockfish {
            child,
            input,
            output,
        };
        sf.send("uci")?;
        sf.wait_for(|l| l == "uciok")?;
        sf.send("setoption name Threads value 1")?;
        sf.ready()?;
        Ok(sf)
    }

    fn send(&mut self, line: &str) -> Result<(), String> {
        writeln!(self.input, "{line}")
            .and_then(|_| self.input.flush())
            .map_err(|e| format!("writing to stockfish: {e}"))
    }

    /// Reads lines until one satisfies `done`, and returns it.
    fn wait_for(&mut self, done: impl Fn(&str) -> bool) -> Result<String, String> {
        let mut line = String::new();
        loop {
            line.clear();
            let n = self
                .output
                .read_line(&mut line)
                .map_err(|e| format!("reading from stockfish: {e}"))?;
            if n == 0 {
                return Err("stockfish closed its output".into());
            }
            let l = line.trim();
            if done(l) {
                return Ok(l.to_string());
            }
        }
    }

    fn ready(&mut self) -> Result<(), String> {
        self.send("isready")?;
        self.wait_for(|l| l == "readyok").map(|_| ())
    }

    /// `go perft depth` from `fen`, timed from the command to the "Nodes searched" line (the position is
    /// set up and Stockfish answers `readyok` before the clock starts).
    fn perft(&mut self, fen: &str, depth: u32) -> Result<Timed, String> {
        self.send(&format!("position fen {fen}"))?;
        self.ready()?;
        let start = Instant::now();
        self.send(&format!("go perft {depth}"))?;
        let line = self.wait_for(|l| l.starts_with("Nodes searched"))?;
        let secs = start.elapsed().as_secs_f64();
        let nodes = line
            .rsplit(' ')
            .next()
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| format!("unexpected stockfish line '{line}'"))?;
        Ok(Timed { nodes, secs })
    }
}

impl Drop for Stockfish {
    fn drop(&mut self) {
        let _ = self.send("quit");
        // Give it a moment to exit by itself, then make sure it is gone.
        for _ in 0..50 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The variant's 7th FEN field for a position at the start of a turn (Two Move: a normal turn).
fn seventh_field(v: Variant) -> &'static str {
    match v {
        Variant::Chess => "",
        Variant::TwoMove | Variant::Twinmove => " T",
        Variant::DoubleMove => " WB",
    }
}

fn bench_perft(args: &PerftArgs) -> Result<(), String> {
    let q = args.quick;
    // (name, fen, depth, full depth, known node count at full depth)
    let orthodox = [
        ("start", START, if q { 5 } else { 6 }, 6, 119_060_324u64),
        ("kiwipete", KIWIPETE, if q { 4 } else { 5 }, 5, 193_690_690),
    ];
    // Depths chosen for roughly 0.3-4 s a run on one core (the branching factors leave no depth in
    // between for Double Move Chess).
    let variants: [(Variant, [u32; 2]); 3] = if q {
        [
            (Variant::TwoMove, [5, 4]),
            (Variant::DoubleMove, [4, 4]),
            (Variant::Twinmove, [5, 4]),
        ]
    } else {
        [
            (Variant::TwoMove, [6, 5]),
            (Variant::DoubleMove, [6, 5]),
            (Variant::Twinmove, [7, 5]),
        ]
    };

    // Warm up (attack tables built and in cache) before any clock runs.
    let _ = perft(&Position::start(Variant::Chess), 4);
    let _ = perft(
        &Position::from_fen(Variant::Chess, KIWIPETE).map_err(|e| e.to_string())?,
        3,
    );

    let mut sf = if args.no_stockfish {
        None
    } else {
        match Stockfish::find(args.stockfish.as_deref()) {
            Some(path) => match Stockfish::start(&path) {
                Ok(sf) => Some(sf),
                Err(e) => {
                    eprintln!("stockfish not used: {e}");
                    None
                }
            },
            None => None,
        }
    };

    println!(
        "Perft with bulk counting, release build, single-threaded{}",
        if args.repeat > 1 {
            format!(", fastest of {} runs", args.repeat)
        } else {
            String::new()
        }
    );
    println!();
    println!("Orthodox chess");
    let sf_cols = if sf.is_some() {
        format!("  {:>8}  {:>8}  {:>10}", "SF s", "SF Mnps", "ours/SF t")
    } else {
        String::new()
    };
    println!(
        "{:<10} {:>5} {:>12} {:>8} {:>8}{sf_cols}",
        "position", "depth", "nodes", "seconds", "Mnps"
    );
    let mut ortho_mnps = Vec::new();
    let mut problems = Vec::new();
    for (name, fen, depth, full, known) in orthodox {
        let pos = Position::from_fen(Variant::Chess, fen).map_err(|e| e.to_string())?;
        let ours = best_of(args.repeat, || Ok(time_perft(&pos, depth, 1)))?;
        if depth == full && ours.nodes != known {
            problems.push(format!(
                "{name} depth {depth}: {} nodes, expected {known}",
                ours.nodes
            ));
        }
        let mut line = format!(
            "{:<10} {:>5} {:>12} {:>8.3} {:>8.1}",
            name,
            depth,
            ours.nodes,
            ours.secs,
            ours.mnps()
        );
        if let Some(s) = sf.as_mut() {
            let theirs = best_of(args.repeat, || s.perft(fen, depth))?;
            if theirs.nodes != ours.nodes {
                problems.push(format!(
                    "{name} depth {depth}: stockfish counts {} nodes, we count {}",
                    theirs.nodes, ours.nodes
                ));
            }
            line += &format!(
                "  {:>8.3}  {:>8.1}  {:>10.2}",
                theirs.secs,
                theirs.mnps(),
                ours.secs / theirs.secs.max(1e-9)
            );
        }
        println!("{line}");
        ortho_mnps.push(ours.mnps());
    }
    match &sf {
        Some(_) => println!(
            "(Stockfish: `go perft` timed from the command to \"Nodes searched\", after readyok; \
             ours/SF t < 1 means we are faster)"
        ),
        None => println!("(stockfish not found: no comparison)"),
    }
    drop(sf);

    println!();
    println!("Variants, move-unit perft (vs orthodox = Mnps / orthodox Mnps on the same position)");
    println!(
        "{:<12} {:<10} {:>5} {:>12} {:>8} {:>8} {:>12}",
        "variant", "position", "depth", "nodes", "seconds", "Mnps", "vs orthodox"
    );
    let mut runs = Vec::new();
    for (v, depths) in variants {
        let positions = [
            ("start", v.start_fen()),
            ("kiwipete", format!("{KIWIPETE}{}", seventh_field(v))),
        ];
        for (i, (name, fen)) in positions.iter().enumerate() {
            let pos = Position::from_fen(v, fen).map_err(|e| e.to_string())?;
            let r = best_of(args.repeat, || Ok(time_perft(&pos, depths[i], 1)))?;
            println!(
                "{:<12} {:<10} {:>5} {:>12} {:>8.3} {:>8.1} {:>12.2}",
                v.name(),
                name,
                depths[i],
                r.nodes,
                r.secs,
                r.mnps(),
                r.mnps() / ortho_mnps[i]
            );
            runs.push((v, *name, pos, depths[i], r));
        }
    }

    if args.threads > 1 {
        let n = args.threads;
        println!();
        println!("With {n} threads (root moves shared out)");
        println!(
            "{:<12} {:<10} {:>5} {:>12} {:>8} {:>8} {:>8}",
            "variant", "position", "depth", "nodes", "seconds", "Mnps", "speedup"
        );
        let mut all = Vec::new();
        for (name, fen, depth, _, _) in orthodox {
            let pos = Position::from_fen(Variant::Chess, fen).map_err(|e| e.to_string())?;
            let one = best_of(args.repeat, || Ok(time_perft(&pos, depth, 1)))?;
            all.push((Variant::Chess, name, pos, depth, one));
        }
        all.extend(runs);
        for (v, name, pos, depth, one) in &all {
            let r = best_of(args.repeat, || Ok(time_perft(pos, *depth, n)))?;
            if r.nodes != one.nodes {
                problems.push(format!(
                    "{v} {name} depth {depth}: {} nodes threaded, {} single",
                    r.nodes, one.nodes
                ));
            }
            println!(
                "{:<12} {:<10} {:>5} {:>12} {:>8.3} {:>8.1} {:>8.2}",
                v.name(),
                name,
                depth,
                r.nodes,
                r.secs,
                r.mnps(),
                one.secs / r.secs.max(1e-9)
            );
        }
    }

    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("node counts disagree: {}", problems.join("; ")))
    }
}
