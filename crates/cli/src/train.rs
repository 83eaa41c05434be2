//! `doublemove train`: trains a network (the `train` crate) on `datagen` files and writes it with its
//! provenance; prints the training and validation loss of each epoch.

use clap::Args;
use engine::nnue::Network;
use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Instant;
use train::{load, probe, train, Model, TrainConfig};

#[derive(Args)]
pub struct TrainArgs {
    /// A data file written by `doublemove datagen`; repeatable
    #[arg(long = "data", required = true)]
    data: Vec<String>,
    /// The network file to write: the epoch with the lowest validation loss so far; its provenance
    /// (settings, every epoch's losses) goes to OUT.txt
    #[arg(long)]
    out: String,
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..=1000))]
    epochs: u64,
    #[arg(long, default_value_t = 16384, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    batch: u64,
    /// Adam's first step size (decays along a cosine to lr/50)
    #[arg(long, default_value_t = 0.001)]
    lr: f32,
    /// Weight of the search score in the target; the rest is the game result
    #[arg(long, default_value_t = 0.75)]
    lambda: f32,
    /// Percentage of each file's last records held out for validation (whole games but one)
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=50))]
    validation: u64,
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=256))]
    threads: u64,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Also train on every training position mirrored left to right (files a↔h)
    #[arg(long)]
    mirror: bool,
    /// Start from this network file's weights instead of random ones (fine-tuning an earlier net)
    #[arg(long)]
    init: Option<String>,
}

pub fn run(args: TrainArgs) -> Result<ExitCode, String> {
    if !(args.lr > 0.0 && args.lr.is_finite()) {
        return Err(format!("--lr must be a positive number, not {}", args.lr));
    }
    if !(0.0..=1.0).contains(&args.lambda) {
        return Err(format!(
            "--lambda must be within 0..=1, not {}",
            args.lambda
        ));
    }
    let started = Instant::now();
    let (mut tr, mut va) = (Vec::new(), Vec::new());
    for path in &args.data {
        let bytes = std::fs::read(path).map_err(|e| format!("reading {path}: {e}"))?;
        let samples = load(&bytes).map_err(|e| format!("{path}: {e}"))?;
        let cut = samples.len() - samples.len() * args.validation as usize / 100;
        let (a, b) = samples.split_at(cut);
        tr.extend_from_slice(a);
        va.extend_from_slice(b);
    }
    if args.mirror {
        let mirrored: Vec<_> = tr.iter().map(|s| s.mirrored()).collect();
        tr.extend(mirrored);
    }
    if tr.is_empty() || va.is_empty() {
        return Err("the data holds too few positions to train and validate".into());
    }
    let cfg = TrainConfig {
        epochs: args.epochs as usize,
        batch: args.batch as usize,
        lr: args.lr,
        lr_end: args.lr / 50.0,
        lambda: args.lambda,
        threads: args.threads as usize,
        seed: args.seed,
    };
    println!(
        "train: {} positions, {} for validation, loaded in {:.1}s; {cfg:?}",
        tr.len(),
        va.len(),
        started.elapsed().as_secs_f64()
    );
    let mut provenance = String::new();
    let _ = writeln!(provenance, "data: {}", args.data.join(" "));
    let _ = writeln!(
        provenance,
        "positions: {} training, {} validation",
        tr.len(),
        va.len()
    );
    let _ = writeln!(provenance, "settings: {cfg:?}, mirror {}", args.mirror);
    let _ = writeln!(
        provenance,
        "trainer: doublemove {} (crates/train)",
        env!("CARGO_PKG_VERSION")
    );
    let mut model = match &args.init {
        None => Model::new(args.seed),
        Some(path) => {
            let bytes = std::fs::read(path).map_err(|e| format!("reading {path}: {e}"))?;
            let net = Network::from_bytes(&bytes).map_err(|e| format!("{path}: {e}"))?;
            Model::from_network(&net)
        }
    };
    let _ = writeln!(
        provenance,
        "initial weights: {}",
        args.init.as_deref().unwrap_or("random")
    );
    // The network a run starts from, measured on the same validation positions as its epochs: the
    // figure a fine-tuned network has to beat.
    if args.init.is_some() {
        // One pass over the validation positions: the overall loss is the count-weighted mean of
        // the variants' losses.
        let by_variant = probe::loss_by_variant(&model, &va, cfg.lambda, cfg.threads);
        let count: usize = by_variant.iter().map(|&(_, n, _)| n).sum();
        let total: f64 = by_variant.iter().map(|&(_, n, loss)| n as f64 * loss).sum();
        emit(
            &mut provenance,
            &format!(
                "epoch   0  initial weights  validation {:.6}",
                total / count.max(1) as f64
            ),
        );
        for (v, n, loss) in by_variant {
            emit(
                &mut provenance,
                &format!("initial weights: validation loss {v}: {loss:.6} over {n} positions"),
            );
        }
    }
    let mut failure = None;
    let mut best = f64::INFINITY;
    let mut best_params = None;
    train(&mut model, &tr, &va, &cfg, &mut |r, m| {
        // The file keeps the epoch with the lowest validation loss: more epochs cannot make it worse.
        let kept = r.validation_loss < best;
        let line = format!(
            "epoch {:>3}  lr {:.6}  train {:.6}  validation {:.6}{}  [{:.0}s]",
            r.epoch,
            r.lr,
            r.train_loss,
            r.validation_loss,
            if kept { " *" } else { "" },
            started.elapsed().as_secs_f64()
        );
        emit(&mut provenance, &line);
        let written = if kept {
            best = r.validation_loss;
            best_params = Some(m.params.clone());
            std::fs::write(&args.out, m.quantise().to_bytes())
        } else {
            Ok(())
        }
        .and_then(|_| std::fs::write(format!("{}.txt", args.out), &provenance));
        if let Err(e) = written {
            failure.get_or_insert(format!("writing {}: {e}", args.out));
        }
    });
    if let Some(e) = failure {
        return Err(e);
    }
    // What the kept network says about the turn state, on the validation positions.
    let kept = Model {
        params: best_params.unwrap_or(model.params),
    };
    let _ = writeln!(
        provenance,
        "validation positions per turn situation: {:?}",
        probe::situation_counts(&va)
    );
    for p in probe::turn_state(&kept, &va) {
        let line = format!(
            "turn state: {}: {:+.0} cp over {} positions",
            p.what, p.mean_cp, p.positions
        );
        emit(&mut provenance, &line);
    }
    for (v, n, loss) in probe::loss_by_variant(&kept, &va, cfg.lambda, cfg.threads) {
        let line = format!("validation loss {v}: {loss:.6} over {n} positions");
        emit(&mut provenance, &line);
    }
    for (k, n, loss) in probe::loss_by_situation(&kept, &va, cfg.lambda, cfg.threads) {
        let line = format!("validation loss situation {k:2}: {loss:.6} over {n} positions");
        emit(&mut provenance, &line);
    }
    std::fs::write(format!("{}.txt", args.out), &provenance)
        .map_err(|e| format!("writing {}.txt: {e}", args.out))?;
    println!(
        "wrote {} (validation loss {best:.6}, the epoch marked *) and {}.txt",
        args.out, args.out
    );
    Ok(ExitCode::SUCCESS)
}

/// Prints a report line and appends it to the network's provenance (the `.txt` beside it).
fn emit(provenance: &mut String, line: &str) {
    println!("{line}");
    provenance.push_str(line);
    provenance.push('\n');
}
