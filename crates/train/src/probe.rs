//! What the network learnt about the turn state: the same boards scored under another turn situation
//! (an unspent Double Move spent; a second move taken away), averaged in centipawns.

use crate::data::Sample;
use crate::model::Model;
use crate::run::mean_loss;
use engine::nnue::{bucket, bucket_situation, SCALE, SITUATIONS};
use rules::Variant;

/// One probe: the mean score change of moving samples from one turn situation to another (same
/// piece count).
#[derive(Clone, Debug)]
pub struct Probe {
    pub what: &'static str,
    /// Mean of (score in `from`) − (score in `to`), centipawns, for the side to move.
    pub mean_cp: f64,
    pub positions: usize,
}

/// (description, from situation, to situation): see `engine::nnue::situation`.
const PAIRS: [(&str, u8, u8); 5] = [
    ("Double Move: own unspent vs spent (enemy's unspent)", 7, 5),
    ("Double Move: own unspent vs spent (enemy's spent)", 6, 4),
    ("Double Move: enemy's spent vs unspent (own unspent)", 6, 7),
    (
        "Two Move: a second move to make vs a response turn's one move",
        3,
        2,
    ),
    ("Two Move: a turn's start vs a response turn", 1, 2),
];

/// The situation of output bucket `b`.
fn situation_of(b: u8) -> u8 {
    bucket_situation(b as usize) as u8
}

/// The probes over the samples of each pair's `from` situation.
pub fn turn_state(model: &Model, samples: &[Sample]) -> Vec<Probe> {
    PAIRS
        .iter()
        .map(|&(what, from, to)| {
            let mut sum = 0.0f64;
            let mut n = 0;
            for s in samples.iter().filter(|s| situation_of(s.bucket) == from) {
                let moved = Sample {
                    bucket: bucket(to as usize, s.count as u32) as u8,
                    ..s.clone()
                };
                sum += (model.forward(s) - model.forward(&moved)) as f64 * SCALE as f64;
                n += 1;
            }
            Probe {
                what,
                mean_cp: if n == 0 { 0.0 } else { sum / n as f64 },
                positions: n,
            }
        })
        .collect()
}

/// The variant whose positions use output bucket `b` (see `engine::nnue::bucket`).
pub fn bucket_variant(b: u8) -> Variant {
    match situation_of(b) {
        0 => Variant::Chess,
        1..=3 => Variant::TwoMove,
        4..=9 => Variant::DoubleMove,
        _ => Variant::Twinmove,
    }
}

/// The mean loss of the samples of each of `keys` (`key_of` gives a sample's key): (key, samples,
/// loss), keys without samples left out.
fn loss_by<K: Copy + PartialEq>(
    model: &Model,
    samples: &[Sample],
    lambda: f32,
    threads: usize,
    keys: impl IntoIterator<Item = K>,
    key_of: impl Fn(&Sample) -> K,
) -> Vec<(K, usize, f64)> {
    keys.into_iter()
        .filter_map(|k| {
            let own: Vec<Sample> = samples.iter().filter(|s| key_of(s) == k).cloned().collect();
            (!own.is_empty()).then(|| (k, own.len(), mean_loss(model, &own, lambda, threads)))
        })
        .collect()
}

/// The mean loss of each variant's samples: (variant, samples, loss), variants without samples left
/// out. Where the network fits worst tells where the next data should go.
pub fn loss_by_variant(
    model: &Model,
    samples: &[Sample],
    lambda: f32,
    threads: usize,
) -> Vec<(Variant, usize, f64)> {
    loss_by(model, samples, lambda, threads, Variant::ALL, |s| {
        bucket_variant(s.bucket)
    })
}

/// The mean loss of each turn situation's samples: (situation, samples, loss), situations without
/// samples left out. Tells which situations' output layers the data fills.
pub fn loss_by_situation(
    model: &Model,
    samples: &[Sample],
    lambda: f32,
    threads: usize,
) -> Vec<(usize, usize, f64)> {
    loss_by(model, samples, lambda, threads, 0..SITUATIONS, |s| {
        situation_of(s.bucket) as usize
    })
}

/// Samples per turn situation.
pub fn situation_counts(samples: &[Sample]) -> [usize; SITUATIONS] {
    let mut c = [0; SITUATIONS];
    for s in samples {
        c[situation_of(s.bucket) as usize] += 1;
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::datagen::{Record, WDL};
    use engine::nnue::situation;
    use rules::{Color, Phase, Position};

    #[test]
    fn every_bucket_belongs_to_its_variant() {
        for v in Variant::ALL {
            for phase in [Phase::Start, Phase::Response, Phase::Second] {
                for turn in Color::ALL {
                    for dm in [[false, false], [false, true], [true, false], [true, true]] {
                        for pieces in [2, 17, 32] {
                            let b = bucket(situation(v, phase, turn, dm), pieces);
                            assert_eq!(bucket_variant(b as u8), v);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn the_variant_losses_split_the_whole_loss() {
        let mut samples = Vec::new();
        for (i, v) in Variant::ALL.into_iter().enumerate() {
            for (k, wdl) in [WDL::Win, WDL::Draw, WDL::Loss].into_iter().enumerate() {
                let r = Record::new(&Position::start(v), (i * 40 + k * 7) as i16, wdl).unwrap();
                samples.push(Sample::from_record(&r));
            }
        }
        let model = Model::new(5);
        let parts = loss_by_variant(&model, &samples, 0.75, 2);
        assert_eq!(parts.len(), 4);
        assert!(parts.iter().all(|&(_, n, loss)| n == 3 && loss > 0.0));
        let weighted: f64 = parts.iter().map(|&(_, n, l)| n as f64 * l).sum::<f64>() / 12.0;
        let whole = mean_loss(&model, &samples, 0.75, 2);
        assert!((weighted - whole).abs() < 1e-9, "{weighted} vs {whole}");
    }
}
