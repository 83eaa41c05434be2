//! The `doublemove` command line: perft, turn listing, game validation and benchmarks.

mod bench;
mod book;
mod datagen;
mod loadtest;
mod match_runner;
mod train;
mod tune;

use clap::{Parser, Subcommand};
use rules::game::{legal_turns, turn_uci};
use rules::perft::{divide, perft, perft_turns};
use rules::pgn::read_game;
use rules::{Position, Variant};
use std::io::Read;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "doublemove",
    version,
    about = "Rules, perft and tools for Two Move, Double Move and Twinmove Chess"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Count leaf nodes of the game tree (a ply is one move, or one complete turn with --turns).
    Perft {
        /// chess, two-move, double-move or twinmove
        #[arg(long, default_value = "chess")]
        variant: Variant,
        /// Extended FEN (default: the variant's start position)
        #[arg(long)]
        fen: Option<String>,
        #[arg(long)]
        depth: u32,
        /// Count complete turns instead of single moves
        #[arg(long)]
        turns: bool,
        /// Print the count below each first move (or first turn with --turns)
        #[arg(long)]
        divide: bool,
    },
    /// List every legal complete turn (from a mid-turn FEN: every completion), one per line, sorted.
    Turns {
        #[arg(long, default_value = "chess")]
        variant: Variant,
        /// Extended FEN (default: the variant's start position)
        #[arg(long)]
        fen: Option<String>,
    },
    /// Replay a PGN (or bare movetext) and check every turn; prints the final FEN and the game state.
    Validate {
        /// The variant (default: the record's [Variant] tag, else chess)
        #[arg(long)]
        variant: Option<Variant>,
        /// PGN file, or - for standard input
        #[arg(default_value = "-")]
        file: String,
    },
    /// Run the engine on standard input/output (UCI dialect, see docs/protocol.md).
    Uci {
        /// Strength: 1 random, 2 greedy, 3-7 limited search, 8 full strength
        #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u8).range(1..=8))]
        level: u8,
    },
    /// Analyse a position: the best lines with scores.
    Analyse {
        #[arg(long, default_value = "chess")]
        variant: Variant,
        /// Extended FEN (default: the variant's start position)
        #[arg(long)]
        fen: Option<String>,
        /// Search depth in moves
        #[arg(long, conflicts_with = "movetime")]
        depth: Option<i32>,
        /// Thinking time in milliseconds (default 2000 when no depth is given)
        #[arg(long)]
        movetime: Option<u64>,
        /// Number of lines
        #[arg(long, default_value_t = 1)]
        multipv: usize,
        /// Search threads (Lazy SMP over one shared table)
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
        threads: u16,
        /// Transposition table in MB
        #[arg(long, default_value_t = 64)]
        hash: usize,
    },
    /// Benchmarks that print figures: without a subcommand, a fixed search over a fixed position set.
    Bench {
        #[command(subcommand)]
        what: Option<bench::BenchCommand>,
        /// Search threads for the search bench (the node count is the search's signature only with 1)
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
        threads: u16,
        /// The evaluation: auto (the default choice per variant), network or classical
        #[arg(long, value_enum, default_value = "auto")]
        eval: EvalArg,
    },
    /// Play two engines against each other (game pairs, clocks, Elo, SPRT); see docs/match.md.
    Match(match_runner::MatchArgs),
    /// Write a balanced opening book: fair random openings our engine scores near equal; see
    /// docs/match.md ("Openings").
    Book(book::BookArgs),
    /// Load benchmark of the game server (concurrent games, latency, durability); see docs/load.md.
    Loadtest(loadtest::LoadArgs),
    /// Self-play training data for the neural network; see docs/nnue.md.
    Datagen(datagen::DatagenArgs),
    /// Train the engine's neural network on `datagen` files; see docs/nnue.md.
    Train(train::TrainArgs),
    /// Texel-tune the evaluation weights on PGN files of engine games; see docs/engine.md ("Tuning").
    Tune(tune::TuneArgs),
    /// Run the game server (HTTP API, WebSockets, storage); see docs/api.md.
    Serve {
        #[arg(long, default_value = "127.0.0.1:8080")]
        addr: String,
        /// Storage: an SQLite file path or sqlite://PATH (created if missing), or
        /// postgres://USER@HOST:PORT/DB (several nodes may share one PostgreSQL database)
        #[arg(long, default_value = "doublemove.db")]
        db: String,
        /// This node's name in logs and job leases (default: random)
        #[arg(long)]
        node: Option<String>,
        /// Several nodes: ms after which another node takes over a dead node's engine turns and
        /// flag falls
        #[arg(long, default_value_t = server::hub::LEASE_MS)]
        job_lease_ms: i64,
        #[command(flatten)]
        limits: ServeLimits,
    },
}

/// `bench --eval`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum EvalArg {
    Auto,
    Network,
    Classical,
}

/// The limits of `serve` (defaults: `server::limits::ServerLimits::default()`).
#[derive(clap::Args, Debug)]
struct ServeLimits {
    /// Engine threads shared by engine games and analysis (default: cores - 1, at least 1)
    #[arg(long)]
    engine_threads: Option<usize>,
    /// Search threads per engine game turn or analysis (Lazy SMP); the engine threads are shared
    /// out in searches of this many threads
    #[arg(long, default_value_t = 1)]
    engine_search_threads: usize,
    /// Engine jobs waiting for a thread, all clients together
    #[arg(long, default_value_t = 256)]
    engine_queue: usize,
    /// Analysis sockets open at once per client
    #[arg(long, default_value_t = 2)]
    analyses_per_client: usize,
    /// Unfinished games against the engine per client
    #[arg(long, default_value_t = 5)]
    engine_games_per_client: usize,
    /// Games a client may create at once (then one per --create-period-ms)
    #[arg(long, default_value_t = 10)]
    create_burst: u32,
    #[arg(long, default_value_t = 6000)]
    create_period_ms: u64,
    /// Requests a client may send at once (then one per --request-period-ms)
    #[arg(long, default_value_t = 60)]
    request_burst: u32,
    #[arg(long, default_value_t = 50)]
    request_period_ms: u64,
    /// WebSockets open at once per client
    #[arg(long, default_value_t = 20)]
    sockets_per_client: usize,
    /// WebSockets open at once on this node
    #[arg(long, default_value_t = 20_000)]
    sockets_total: usize,
    /// Mark the session cookie `Secure` (the site is served over HTTPS, e.g. behind a TLS proxy)
    #[arg(long)]
    secure_cookies: bool,
}

impl ServeLimits {
    fn into_limits(self) -> server::limits::ServerLimits {
        let d = server::limits::ServerLimits::default();
        server::limits::ServerLimits {
            engine_threads: self.engine_threads.unwrap_or(d.engine_threads).max(1),
            engine_search_threads: self.engine_search_threads.max(1),
            engine_queue: self.engine_queue.max(1),
            analyses_per_client: self.analyses_per_client,
            engine_games_per_client: self.engine_games_per_client,
            create_burst: self.create_burst.max(1),
            create_period: std::time::Duration::from_millis(self.create_period_ms.max(1)),
            request_burst: self.request_burst.max(1),
            request_period: std::time::Duration::from_millis(self.request_period_ms.max(1)),
            sockets_per_client: self.sockets_per_client,
            sockets_total: self.sockets_total,
            secure_cookies: self.secure_cookies,
            ..d
        }
    }
}

fn parse_position(variant: Variant, fen: Option<&str>) -> Result<Position, String> {
    match fen {
        None => Ok(Position::start(variant)),
        Some(f) => Position::from_fen(variant, f).map_err(|e| e.to_string()),
    }
}

fn run(cli: Cli) -> Result<ExitCode, String> {
    match cli.command {
        Command::Perft {
            variant,
            fen,
            depth,
            turns,
            divide: div,
        } => {
            let pos = parse_position(variant, fen.as_deref())?;
            let nodes = if div {
                let mut total = 0;
                for (moves, n) in divide(&pos, depth, turns) {
                    let text: Vec<String> = moves.iter().map(|m| m.uci()).collect();
                    println!("{}: {n}", text.join(","));
                    total += n;
                }
                println!();
                total
            } else if turns {
                perft_turns(&pos, depth)
            } else {
                perft(&pos, depth)
            };
            println!("{nodes}");
            Ok(ExitCode::SUCCESS)
        }
        Command::Turns { variant, fen } => {
            let pos = parse_position(variant, fen.as_deref())?;
            let mut lines: Vec<String> = legal_turns(&pos).iter().map(|t| turn_uci(t)).collect();
            lines.sort();
            for l in lines {
                println!("{l}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Validate { variant, file } => validate(variant, &file),
        Command::Match(args) => match_runner::run(args),
        Command::Book(args) => book::run(args),
        Command::Loadtest(args) => loadtest::run(args),
        Command::Tune(args) => tune::run(args),
        Command::Datagen(args) => datagen::run(args),
        Command::Train(args) => train::run(args),
        Command::Serve {
            addr,
            db,
            node,
            job_lease_ms,
            limits,
        } => tokio::runtime::Runtime::new()
            .map_err(|e| e.to_string())?
            .block_on(server::serve(
                &addr,
                server::Config {
                    addr: "127.0.0.1:0".parse().expect("an address"),
                    db,
                    node,
                    lease_ms: Some(job_lease_ms),
                    limits: limits.into_limits(),
                    clock: Default::default(),
                },
            ))
            .map(|_| ExitCode::SUCCESS)
            .map_err(|e| format!("{e:#}")),
        Command::Bench {
            what: Some(what), ..
        } => bench::run(what).map(|_| ExitCode::SUCCESS),
        Command::Bench {
            what: None,
            threads,
            eval,
        } => {
            let choice = match eval {
                EvalArg::Auto => engine::search::EvalChoice::Auto,
                EvalArg::Network => engine::search::EvalChoice::Network(engine::nnue::embedded()),
                EvalArg::Classical => engine::search::EvalChoice::Classical,
            };
            engine::bench::run_threads(&mut std::io::stdout(), threads as usize, choice);
            Ok(ExitCode::SUCCESS)
        }
        Command::Uci { level } => {
            let out: engine::uci::Output =
                std::sync::Arc::new(std::sync::Mutex::new(Box::new(std::io::stdout())));
            engine::uci::run(std::io::stdin().lock(), out, engine::levels::Level(level));
            Ok(ExitCode::SUCCESS)
        }
        Command::Analyse {
            variant,
            fen,
            depth,
            movetime,
            multipv,
            threads,
            hash,
        } => {
            let pos = parse_position(variant, fen.as_deref())?;
            let game = rules::Game::new(pos);
            let mut searcher = engine::search::Searcher::with_threads(hash, threads as usize);
            let limits = engine::search::Limits {
                depth,
                multipv,
                soft_time: movetime
                    .or(depth.is_none().then_some(2000))
                    .map(std::time::Duration::from_millis),
                hard_time: movetime.map(std::time::Duration::from_millis),
                ..Default::default()
            };
            let mut last = None;
            let result = searcher.search(&game, &limits, &mut |r| {
                last = Some(r.clone());
                eprintln!(
                    "depth {} nodes {} time {} ms",
                    r.depth,
                    r.nodes,
                    r.elapsed.as_millis()
                );
            });
            let Some(report) = last else {
                println!(
                    "no legal move: {}",
                    game.outcome()
                        .map_or("game over".to_string(), |o| o.describe(variant))
                );
                return Ok(ExitCode::SUCCESS);
            };
            for (i, line) in report.lines.iter().enumerate() {
                let score = match engine::search::mate_in_turns(&pos, line) {
                    Some(n) => format!("mate {n}"),
                    None => format!("{:+.2}", line.score as f64 / 100.0),
                };
                println!(
                    "{}. {score}  {}",
                    i + 1,
                    engine::uci::format_line(&pos, &line.moves)
                );
            }
            if let Some(r) = result {
                println!("best turn: {}", turn_uci(&r.turn));
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn validate(variant: Option<Variant>, file: &str) -> Result<ExitCode, String> {
    let text = if file == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| format!("reading standard input: {e}"))?;
        s
    } else {
        std::fs::read_to_string(file).map_err(|e| format!("reading {file}: {e}"))?
    };
    match read_game(&text, variant) {
        Ok((rec, game)) => {
            println!("{}", game.position().fen());
            let state = match game.outcome() {
                Some(o) => o.describe(game.variant()),
                None => {
                    let mut s = "ongoing".to_string();
                    if !game.position().at_turn_start() {
                        s += " (half way through a turn)";
                    }
                    if let Some(claim) = game.claimable_draw() {
                        s += &format!(
                            "; {} may claim a draw by {}",
                            game.position().turn().name(),
                            claim.describe(game.variant())
                        );
                    }
                    s
                }
            };
            match rec.result.as_deref() {
                Some(r) if r != "*" && game.outcome().is_none_or(|o| o.result() != r) => {
                    println!("{state}; the record's result {r} was decided off the board")
                }
                _ => println!("{state}"),
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            println!("{e}");
            Ok(ExitCode::from(1))
        }
    }
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
