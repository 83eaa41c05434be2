//! The training loop: epochs of shuffled mini-batches, each batch's gradient summed over a fixed number
//! of chunks (so the threads change only the speed, never the result), Adam with a cosine-decayed
//! step, and the validation loss after every epoch.

use crate::data::Sample;
use crate::model::{Model, PARAMS};
use crate::optim::Adam;
use engine::nnue::WEIGHT_CLIP;
use rules::rng::SplitMix64;

/// Gradient chunks per batch: the unit of work of a thread and of the fixed summation order.
const CHUNKS: usize = 8;

#[derive(Clone, Debug)]
pub struct TrainConfig {
    pub epochs: usize,
    pub batch: usize,
    /// Adam's step size at the start; it decays along a cosine to `lr_end`.
    pub lr: f32,
    pub lr_end: f32,
    /// Weight of the search score in the target (the rest is the game result).
    pub lambda: f32,
    pub threads: usize,
    pub seed: u64,
}

impl Default for TrainConfig {
    fn default() -> Self {
        TrainConfig {
            epochs: 20,
            batch: 16384,
            lr: 0.001,
            lr_end: 0.00002,
            lambda: 0.75,
            threads: 2,
            seed: 1,
        }
    }
}

#[derive(Clone, Debug)]
pub struct EpochReport {
    pub epoch: usize,
    pub train_loss: f64,
    pub validation_loss: f64,
    pub lr: f32,
}

/// Mean loss over `samples`, on `threads` threads (summed in a fixed order).
pub fn mean_loss(model: &Model, samples: &[Sample], lambda: f32, threads: usize) -> f64 {
    if samples.is_empty() {
        return 0.0;
    }
    let parts = split(samples.len(), CHUNKS);
    let mut sums = vec![0.0f64; parts.len()];
    std::thread::scope(|s| {
        for (t, sums) in chunk_slots(&mut sums, threads) {
            let parts = &parts;
            s.spawn(move || {
                for (k, slot) in sums {
                    let (a, b) = parts[k];
                    *slot = samples[a..b]
                        .iter()
                        .map(|x| model.loss(x, lambda) as f64)
                        .sum();
                }
                t
            });
        }
    });
    sums.iter().sum::<f64>() / samples.len() as f64
}

/// `n` items in `k` nearly equal consecutive ranges.
fn split(n: usize, k: usize) -> Vec<(usize, usize)> {
    (0..k).map(|i| (n * i / k, n * (i + 1) / k)).collect()
}

/// Slots dealt round-robin to `threads` threads: (thread, [(slot index, slot)]).
fn chunk_slots<T>(slots: &mut [T], threads: usize) -> Vec<(usize, Vec<(usize, &mut T)>)> {
    let threads = threads.clamp(1, slots.len().max(1));
    let mut out: Vec<(usize, Vec<(usize, &mut T)>)> =
        (0..threads).map(|t| (t, Vec::new())).collect();
    for (i, s) in slots.iter_mut().enumerate() {
        out[i % threads].1.push((i, s));
    }
    out
}

/// Trains `model` on `train`, reporting each epoch (with the loss on `validation`) to `report`.
pub fn train(
    model: &mut Model,
    train: &[Sample],
    validation: &[Sample],
    cfg: &TrainConfig,
    report: &mut dyn FnMut(&EpochReport, &Model),
) {
    let mut adam = Adam::new(PARAMS);
    let mut order: Vec<u32> = (0..train.len() as u32).collect();
    let mut rng = SplitMix64::new(cfg.seed ^ 0x7EA1_0000);
    let mut grads: Vec<Vec<f32>> = (0..CHUNKS).map(|_| vec![0.0; PARAMS]).collect();
    let mut total = vec![0.0f32; PARAMS];
    let batches = train.len().div_ceil(cfg.batch).max(1);
    for epoch in 1..=cfg.epochs {
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i + 1));
        }
        let progress = (epoch - 1) as f32 / cfg.epochs.max(1) as f32;
        let lr = cfg.lr_end
            + 0.5 * (cfg.lr - cfg.lr_end) * (1.0 + (std::f32::consts::PI * progress).cos());
        let mut loss_sum = 0.0f64;
        for b in 0..batches {
            let batch = &order[b * cfg.batch..((b + 1) * cfg.batch).min(order.len())];
            if batch.is_empty() {
                continue;
            }
            let parts = split(batch.len(), CHUNKS);
            let mut losses = [0.0f64; CHUNKS];
            {
                let model = &*model;
                let mut work: Vec<(&mut Vec<f32>, &mut f64)> =
                    grads.iter_mut().zip(losses.iter_mut()).collect();
                std::thread::scope(|s| {
                    for (_, mine) in chunk_slots(&mut work, cfg.threads) {
                        let parts = &parts;
                        s.spawn(move || {
                            for (k, (grad, loss)) in mine {
                                grad.iter_mut().for_each(|g| *g = 0.0);
                                let (a, z) = parts[k];
                                let mut l = 0.0f64;
                                for &i in &batch[a..z] {
                                    l +=
                                        model.backward(&train[i as usize], cfg.lambda, grad) as f64;
                                }
                                **loss = l;
                            }
                        });
                    }
                });
            }
            total.iter_mut().for_each(|t| *t = 0.0);
            let scale = 1.0 / batch.len() as f32;
            for g in &grads {
                for (t, x) in total.iter_mut().zip(g) {
                    *t += x;
                }
            }
            total.iter_mut().for_each(|t| *t *= scale);
            adam.step(&mut model.params, &total, lr, WEIGHT_CLIP);
            loss_sum += losses.iter().sum::<f64>();
        }
        let r = EpochReport {
            epoch,
            train_loss: loss_sum / train.len().max(1) as f64,
            validation_loss: mean_loss(model, validation, cfg.lambda, cfg.threads),
            lr,
        };
        report(&r, model);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::load;
    use engine::datagen::{play_game, Record, SelfPlay};
    use engine::search::Searcher;
    use rules::Variant;

    fn tiny_data() -> Vec<Sample> {
        let cfg = SelfPlay {
            nodes: 200,
            max_moves: 60,
            ..SelfPlay::default()
        };
        let mut s = Searcher::new(1);
        let mut bytes = Vec::new();
        for g in 0..8u64 {
            let v = Variant::ALL[g as usize % 4];
            for r in play_game(v, &cfg, &mut s, g).records {
                bytes.extend_from_slice(&Record::to_bytes(&r));
            }
        }
        load(&bytes).unwrap()
    }

    /// Training lowers the loss, and the result depends on the seed only, not on the threads.
    #[test]
    fn training_learns_and_is_deterministic() {
        let data = tiny_data();
        assert!(data.len() > 100, "{} samples", data.len());
        let (tr, va) = data.split_at(data.len() * 9 / 10);
        let cfg = TrainConfig {
            epochs: 4,
            batch: 64,
            lr: 0.002,
            threads: 1,
            ..TrainConfig::default()
        };
        let run = |threads: usize| {
            let mut m = Model::new(3);
            let before = mean_loss(&m, tr, cfg.lambda, 1);
            let mut last = 0.0;
            let c = TrainConfig {
                threads,
                ..cfg.clone()
            };
            train(&mut m, tr, va, &c, &mut |r, _| last = r.train_loss);
            (m.params, before, last)
        };
        let (a, before, after) = run(1);
        assert!(after < before * 0.9, "loss {before} -> {after}");
        let (b, _, _) = run(3);
        assert!(a == b, "threads changed the result");
    }
}
