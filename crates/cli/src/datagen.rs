//! `doublemove datagen`: self-play training data for the network (engine::datagen) on several threads,
//! appended to one file of 32-byte records with a progress bar; run it again to resume.

use clap::Args;
use engine::datagen::{play_game, Record, SelfPlay, RECORD_BYTES};
use engine::nnue::Network;
use engine::search::Searcher;
use indicatif::{ProgressBar, ProgressStyle};
use rules::rng::SplitMix64;
use rules::Variant;
use std::fs::OpenOptions;
use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

#[derive(Args)]
pub struct DatagenArgs {
    /// The data file: records are appended; an existing file is continued (resumed)
    #[arg(long)]
    out: String,
    /// Stop when the file holds this many positions
    #[arg(long)]
    positions: u64,
    /// Nodes per search (one search per move)
    #[arg(long, default_value_t = 5000, value_parser = clap::value_parser!(u64).range(100..))]
    nodes: u64,
    /// Games played at once (one search thread each)
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=256))]
    threads: u64,
    /// Variants, comma-separated (games cycle through them)
    #[arg(
        long,
        default_value = "chess,two-move,double-move,twinmove",
        value_delimiter = ','
    )]
    variants: Vec<Variant>,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Search with the hand-written evaluation instead of the embedded network
    #[arg(long)]
    classical: bool,
    /// Search with this network file instead of the embedded one
    #[arg(long, conflicts_with = "classical")]
    net: Option<String>,
}

pub fn run(args: DatagenArgs) -> Result<ExitCode, String> {
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .read(true)
        .open(&args.out)
        .map_err(|e| format!("opening {}: {e}", args.out))?;
    let len = file
        .metadata()
        .map_err(|e| format!("{}: {e}", args.out))?
        .len();
    // A run stopped mid-write leaves a partial record: drop it.
    let whole = len - len % RECORD_BYTES as u64;
    if whole != len {
        file.set_len(whole)
            .map_err(|e| format!("truncating {}: {e}", args.out))?;
    }
    let have = whole / RECORD_BYTES as u64;
    if have >= args.positions {
        println!("{} already holds {have} positions", args.out);
        return Ok(ExitCode::SUCCESS);
    }
    let cfg = SelfPlay {
        nodes: args.nodes,
        ..SelfPlay::default()
    };
    let net = match &args.net {
        None => (!args.classical).then(engine::nnue::embedded),
        Some(p) => {
            let bytes = std::fs::read(p).map_err(|e| format!("reading {p}: {e}"))?;
            Some(Arc::new(
                Network::from_bytes(&bytes).map_err(|e| format!("{p}: {e}"))?,
            ))
        }
    };
    println!(
        "datagen: {} positions into {} ({} there), {} nodes per move, {} threads, variants {}, seed {}, evaluation {}",
        args.positions,
        args.out,
        have,
        args.nodes,
        args.threads,
        args.variants
            .iter()
            .map(|v| v.name())
            .collect::<Vec<_>>()
            .join(","),
        args.seed,
        match (&args.net, args.classical) {
            (Some(p), _) => p.as_str(),
            (None, true) => "classical",
            (None, false) => "embedded network",
        }
    );
    let pb = ProgressBar::new(args.positions);
    pb.set_style(
        ProgressStyle::with_template(
            "{bar:30.cyan/blue} {pos}/{len} positions [{elapsed} / {eta}] {per_sec} {msg}",
        )
        .expect("a valid template")
        .progress_chars("=> "),
    );
    pb.set_position(have);
    let written = AtomicU64::new(have);
    let games = AtomicU64::new(0);
    // Each run continues the random stream from where the file ends, so a resumed run plays new games.
    let base = SplitMix64::mix(args.seed ^ have.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let out = Mutex::new((file, None::<String>));
    std::thread::scope(|s| {
        for _ in 0..args.threads {
            let (cfg, written, games, out, pb, variants, net) =
                (&cfg, &written, &games, &out, &pb, &args.variants, &net);
            let (path, target) = (&args.out, args.positions);
            s.spawn(move || {
                let mut searcher = Searcher::new(cfg.hash_mb);
                searcher.set_network(net.clone());
                while written.load(Ordering::SeqCst) < target {
                    let g = games.fetch_add(1, Ordering::SeqCst);
                    let variant = variants[g as usize % variants.len()];
                    let seed = SplitMix64::mix(base ^ g);
                    let game = play_game(variant, cfg, &mut searcher, seed);
                    let bytes: Vec<u8> = game.records.iter().flat_map(Record::to_bytes).collect();
                    let mut o = out.lock().expect("writer lock");
                    if o.1.is_some() {
                        return;
                    }
                    if let Err(e) = o.0.write_all(&bytes).and_then(|_| o.0.flush()) {
                        o.1 = Some(format!("writing {path}: {e}"));
                        return;
                    }
                    let n = written.fetch_add(game.records.len() as u64, Ordering::SeqCst)
                        + game.records.len() as u64;
                    pb.set_position(n);
                    pb.set_message(format!("{} games", g + 1));
                }
            });
        }
    });
    pb.finish();
    let (_, err) = out.into_inner().expect("writer lock");
    if let Some(e) = err {
        return Err(e);
    }
    println!(
        "{} positions in {} ({} games this run)",
        written.load(Ordering::SeqCst),
        args.out,
        games.load(Ordering::SeqCst)
    );
    Ok(ExitCode::SUCCESS)
}
