//! What the network learnt about the turn state: the same boards scored under another bucket (an
//! unspent Double Move spent; a second move taken away), averaged in centipawns.

use crate::data::Sample;
use crate::model::Model;
use engine::nnue::SCALE;

/// One probe: the mean score change of moving samples from one bucket to another.
#[derive(Clone, Debug)]
pub struct Probe {
    pub what: &'static str,
    /// Mean of (score in `from`) − (score in `to`), centipawns, for the side to move.
    pub mean_cp: f64,
    pub positions: usize,
}

/// (description, from bucket, to bucket): see `engine::nnue::bucket`.
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

/// The probes over the samples of each pair's `from` bucket.
pub fn turn_state(model: &Model, samples: &[Sample]) -> Vec<Probe> {
    PAIRS
        .iter()
        .map(|&(what, from, to)| {
            let mut sum = 0.0f64;
            let mut n = 0;
            for s in samples.iter().filter(|s| s.bucket == from) {
                let moved = Sample {
                    bucket: to,
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

/// Samples per bucket.
pub fn bucket_counts(samples: &[Sample]) -> [usize; engine::nnue::BUCKETS] {
    let mut c = [0; engine::nnue::BUCKETS];
    for s in samples {
        c[s.bucket as usize] += 1;
    }
    c
}
