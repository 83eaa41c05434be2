//! `doublemove tune`: reads PGN files of engine games, tunes the evaluation weights (engine::tune) and
//! writes a new weights.rs; prints the data, K and the errors as it goes.

use clap::Args;
use engine::eval::weights_f64;
use engine::tune::{self, LoadOptions, ParamSet, TuneOptions};
use rules::Variant;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Args)]
pub struct TuneArgs {
    /// PGN file of games (many per file, as `doublemove match --pgn` writes them); repeatable
    #[arg(long = "pgn", required = true)]
    pgn: Vec<String>,
    /// Only games of this variant (default: every game in the files)
    #[arg(long)]
    variant: Option<Variant>,
    /// Full-batch gradient steps
    #[arg(long, default_value_t = 1000)]
    epochs: usize,
    /// all; no-pst (all but the piece-square tables); variant (only the variants' own terms move)
    #[arg(long, default_value = "all")]
    params: ParamSet,
    /// Start from this weights file (as written by --out) instead of the weights built in
    #[arg(long)]
    init: Option<String>,
    /// Write the tuned weights here as Rust source (e.g. crates/engine/src/weights.rs)
    #[arg(long)]
    out: Option<String>,
    /// Adam step size in centipawns
    #[arg(long, default_value_t = 1.0)]
    lr: f64,
    /// Skip positions before this many turns of each game (the openings are random)
    #[arg(long, default_value_t = 8)]
    skip_turns: usize,
    /// Percentage of games held out for validation
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(0..=50))]
    validation: u64,
    /// Seed of the choice of validation games
    #[arg(long, default_value_t = 0)]
    split_seed: u64,
    /// Sigmoid scale K (default: fitted to the current weights on the training positions)
    #[arg(long)]
    k: Option<f64>,
    /// L2 penalty towards the starting weights, per squared centipawn (0: none)
    #[arg(long, default_value_t = 0.0)]
    l2: f64,
    /// Print the errors every N epochs
    #[arg(long, default_value_t = 100)]
    report_every: usize,
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=64))]
    threads: u64,
}

pub fn run(args: TuneArgs) -> Result<ExitCode, String> {
    if !(args.lr > 0.0 && args.lr.is_finite()) {
        return Err(format!("--lr must be a positive number, not {}", args.lr));
    }
    if !(args.l2 >= 0.0 && args.l2.is_finite()) {
        return Err(format!("--l2 must be zero or positive, not {}", args.l2));
    }
    if args.k.is_some_and(|k| !(k > 0.0 && k.is_finite())) {
        return Err("--k must be a positive number".into());
    }
    let threads = args.threads as usize;
    let started = Instant::now();
    let (w0, source) = match &args.init {
        None => (weights_f64(), tune::current_source().to_string()),
        Some(p) => {
            let text = std::fs::read_to_string(p).map_err(|e| format!("reading {p}: {e}"))?;
            let w = tune::parse_weights(&text).map_err(|e| format!("{p}: {e}"))?;
            (w.iter().map(|x| [x[0] as f64, x[1] as f64]).collect(), text)
        }
    };
    let mut files = Vec::new();
    for p in &args.pgn {
        let text = std::fs::read_to_string(p).map_err(|e| format!("reading {p}: {e}"))?;
        files.push((p.clone(), text));
    }
    let data = tune::load(
        &files,
        &LoadOptions {
            variant: args.variant,
            skip_turns: args.skip_turns,
            validation_percent: args.validation,
            split_seed: args.split_seed,
            threads,
        },
    )?;
    drop(files);
    let st = &data.stats;
    println!(
        "games: {} read, {} of another variant, {} without a result, {} unreadable{}",
        st.games,
        st.games_other_variant,
        st.games_unfinished,
        st.games_unreadable,
        st.first_error
            .as_ref()
            .map_or(String::new(), |e| format!(" (first: {e})"))
    );
    println!(
        "positions: {} seen; skipped {} in the opening, {} in check or final, {} not quiet, {} \
         duplicates; kept {} training, {} validation ({} validation games) [{:.1} s]",
        st.positions_seen,
        st.skipped_opening,
        st.skipped_check_or_over,
        st.skipped_not_quiet,
        st.skipped_duplicate,
        data.train.len(),
        data.validation.len(),
        st.validation_games,
        started.elapsed().as_secs_f64()
    );
    let k = match args.k {
        Some(k) => k,
        None => tune::fit_k(&data.train, &w0, threads),
    };
    let err = |w: &[[f64; 2]]| {
        (
            tune::error(&data.train, w, k, threads),
            tune::error(&data.validation, w, k, threads),
        )
    };
    let before = err(&w0);
    println!(
        "K = {k:.4}{}; error before: train {:.6}, validation {:.6}",
        if args.k.is_some() {
            " (given)"
        } else {
            " (fitted)"
        },
        before.0,
        before.1
    );
    let opts = TuneOptions {
        epochs: args.epochs,
        learning_rate: args.lr,
        params: args.params,
        threads,
        report_every: args.report_every,
        l2: args.l2,
    };
    let tuned = tune::tune(&data.train, &w0, k, &opts, &mut |epoch, w| {
        let (t, v) = err(w);
        println!(
            "epoch {epoch:>5}: train {t:.6}, validation {v:.6} [{:.1} s]",
            started.elapsed().as_secs_f64()
        );
    });
    let rounded = tune::rounded(&tuned);
    let as_f64: Vec<[f64; 2]> = rounded.iter().map(|x| [x[0] as f64, x[1] as f64]).collect();
    let after = err(&as_f64);
    println!(
        "error after (rounded weights): train {:.6}, validation {:.6}",
        after.0, after.1
    );
    if let Some(out) = &args.out {
        let command: Vec<String> = std::env::args().skip(1).collect();
        let run = format!(
            "`doublemove {}`: {} games, {} training + {} validation positions, K {k:.4}, params {}, \
             {} epochs, lr {}, l2 {}; MSE train {:.6} -> {:.6}, validation {:.6} -> {:.6}",
            command.join(" "),
            st.games - st.games_other_variant - st.games_unfinished - st.games_unreadable,
            data.train.len(),
            data.validation.len(),
            args.params.name(),
            args.epochs,
            args.lr,
            args.l2,
            before.0,
            after.0,
            before.1,
            after.1
        );
        std::fs::write(
            out,
            tune::render_weights(&rounded, &tune::history(&source), &run),
        )
        .map_err(|e| format!("writing {out}: {e}"))?;
        println!("wrote {out}");
    }
    Ok(ExitCode::SUCCESS)
}
