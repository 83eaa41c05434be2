//! The network in floats: one flat parameter vector, a forward pass and its gradient for one sample.
//!
//! A *factoriser* stands beside the king buckets: each piece-square feature also has a row shared by
//! every king bucket, added to its bucket's row in training and merged into it in the quantised
//! network. What a feature is worth wherever the king stands is learnt from all positions; a bucket's
//! own row learns only what differs there (four times the inputs on the same data otherwise fit the
//! training positions and not the held-out ones).

use crate::data::Sample;
use engine::nnue::{Network, BUCKETS, HIDDEN, INPUTS, PIECE_INPUTS, SCALE};
use rules::rng::SplitMix64;

pub const FT_W: usize = 0;
/// The factoriser: one row per piece-square feature, shared by the king buckets.
pub const FACT_W: usize = FT_W + INPUTS * HIDDEN;
pub const FT_B: usize = FACT_W + PIECE_INPUTS * HIDDEN;
pub const OUT_W: usize = FT_B + HIDDEN;
pub const OUT_B: usize = OUT_W + BUCKETS * 2 * HIDDEN;
pub const PARAMS: usize = OUT_B + BUCKETS;

#[inline]
fn screlu(x: f32) -> f32 {
    let c = x.clamp(0.0, 1.0);
    c * c
}

#[inline]
fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

pub struct Model {
    pub params: Vec<f32>,
}

/// The blended target: `lambda` of the score's expectation, the rest the result.
#[inline]
pub fn target(s: &Sample, lambda: f32) -> f32 {
    lambda * sigmoid(s.score / SCALE as f32) + (1.0 - lambda) * s.result
}

impl Model {
    /// Random weights from `seed`: each layer uniform in ±1/√fan-in, the first layer in the
    /// factoriser (the king buckets' own rows start at zero: every bucket starts alike).
    pub fn new(seed: u64) -> Model {
        let mut rng = SplitMix64::new(seed);
        let mut params = vec![0.0f32; PARAMS];
        let mut fill = |range: std::ops::Range<usize>, scale: f32| {
            for p in &mut params[range] {
                *p = (rng.next_f64() as f32 * 2.0 - 1.0) * scale;
            }
        };
        fill(FACT_W..FT_B, 1.0 / (32.0f32).sqrt());
        fill(OUT_W..OUT_B, 1.0 / (2.0 * HIDDEN as f32).sqrt());
        Model { params }
    }

    /// The two first-layer rows of input `f`: its king bucket's and the factoriser's.
    #[inline]
    fn rows(f: u16) -> [usize; 2] {
        let f = f as usize;
        [FT_W + f * HIDDEN, FACT_W + (f % PIECE_INPUTS) * HIDDEN]
    }

    fn accumulate(&self, feats: &[u16], acc: &mut [f32; HIDDEN]) {
        acc.copy_from_slice(&self.params[FT_B..FT_B + HIDDEN]);
        for &f in feats {
            for at in Model::rows(f) {
                let row = &self.params[at..][..HIDDEN];
                for (a, w) in acc.iter_mut().zip(row) {
                    *a += w;
                }
            }
        }
    }

    /// The raw output (its sigmoid is the expected score; times SCALE it is centipawns).
    pub fn forward(&self, s: &Sample) -> f32 {
        let n = s.count as usize;
        let mut acc = [[0.0f32; HIDDEN]; 2];
        self.accumulate(&s.features[0][..n], &mut acc[0]);
        self.accumulate(&s.features[1][..n], &mut acc[1]);
        let w = &self.params[OUT_W + s.bucket as usize * 2 * HIDDEN..][..2 * HIDDEN];
        let mut out = self.params[OUT_B + s.bucket as usize];
        for (a, w) in acc.iter().flatten().zip(w) {
            out += screlu(*a) * w;
        }
        out
    }

    /// Adds the gradient of this sample's loss `(σ(out) − target)²` to `grad`; returns the loss.
    pub fn backward(&self, s: &Sample, lambda: f32, grad: &mut [f32]) -> f32 {
        let n = s.count as usize;
        let mut acc = [[0.0f32; HIDDEN]; 2];
        self.accumulate(&s.features[0][..n], &mut acc[0]);
        self.accumulate(&s.features[1][..n], &mut acc[1]);
        let b = s.bucket as usize;
        let w_at = OUT_W + b * 2 * HIDDEN;
        let w = &self.params[w_at..w_at + 2 * HIDDEN];
        let mut out = self.params[OUT_B + b];
        for (a, w) in acc.iter().flatten().zip(w) {
            out += screlu(*a) * w;
        }
        let p = sigmoid(out);
        let err = p - target(s, lambda);
        let g = 2.0 * err * p * (1.0 - p);
        grad[OUT_B + b] += g;
        let mut dacc = [[0.0f32; HIDDEN]; 2];
        for (side, (acc, dacc)) in acc.iter().zip(dacc.iter_mut()).enumerate() {
            for (j, (a, d)) in acc.iter().zip(dacc.iter_mut()).enumerate() {
                let k = side * HIDDEN + j;
                grad[w_at + k] += g * screlu(*a);
                *d = if *a > 0.0 && *a < 1.0 {
                    g * w[k] * 2.0 * a
                } else {
                    0.0
                };
            }
        }
        for (feats, dacc) in s.features.iter().zip(&dacc) {
            for (gb, d) in grad[FT_B..FT_B + HIDDEN].iter_mut().zip(dacc) {
                *gb += d;
            }
            for &f in &feats[..n] {
                for at in Model::rows(f) {
                    let row = &mut grad[at..][..HIDDEN];
                    for (g, d) in row.iter_mut().zip(dacc) {
                        *g += d;
                    }
                }
            }
        }
        err * err
    }

    /// The loss of one sample.
    pub fn loss(&self, s: &Sample, lambda: f32) -> f32 {
        let e = sigmoid(self.forward(s)) - target(s, lambda);
        e * e
    }

    /// A model starting from a network's weights (fine-tuning an earlier network on new data): the
    /// king buckets' rows are the network's, the factoriser starts at zero.
    pub fn from_network(net: &Network) -> Model {
        let [ft_w, ft_b, out_w, out_b] = net.dequantise();
        let mut params = ft_w;
        params.resize(FT_B, 0.0);
        params.extend(ft_b.into_iter().chain(out_w).chain(out_b));
        debug_assert_eq!(params.len(), PARAMS);
        Model { params }
    }

    /// The first layer's weights as the network has them: each king bucket's row plus the
    /// factoriser's row of its piece-square feature.
    pub fn merged_ft_weights(&self) -> Vec<f32> {
        let p = &self.params;
        (0..INPUTS)
            .flat_map(|f| {
                let [own, shared] = Model::rows(f as u16);
                (0..HIDDEN).map(move |j| p[own + j] + p[shared + j])
            })
            .collect()
    }

    /// The engine's quantised network.
    pub fn quantise(&self) -> Network {
        let p = &self.params;
        Network::quantise(
            &self.merged_ft_weights(),
            &p[FT_B..OUT_W],
            &p[OUT_W..OUT_B],
            &p[OUT_B..PARAMS],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::datagen::{Record, WDL};
    use rules::{Position, Variant};

    fn sample(fen: &str, v: Variant) -> Sample {
        let pos = Position::from_fen(v, fen).unwrap();
        Sample::from_record(&Record::new(&pos, 35, WDL::Win).unwrap())
    }

    /// The analytic gradient matches finite differences on a few parameters of each layer.
    #[test]
    fn gradient_matches_finite_differences() {
        let mut m = Model::new(9);
        let s = sample(
            "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
            Variant::Chess,
        );
        let mut grad = vec![0.0; PARAMS];
        m.backward(&s, 0.5, &mut grad);
        let f = s.features[0][3] as usize;
        let shared = FACT_W + (f % PIECE_INPUTS) * HIDDEN + 5;
        for i in [FT_W + f * HIDDEN + 5, shared, FT_B + 7, OUT_W + 11, OUT_B] {
            let h = 1e-2;
            let x = m.params[i];
            m.params[i] = x + h;
            let up = m.loss(&s, 0.5) as f64;
            m.params[i] = x - h;
            let down = m.loss(&s, 0.5) as f64;
            m.params[i] = x;
            let numeric = (up - down) / (2.0 * h as f64);
            let diff = (numeric - grad[i] as f64).abs();
            assert!(
                diff < 1e-4 + 0.02 * numeric.abs(),
                "param {i}: {numeric} vs {}",
                grad[i]
            );
        }
    }

    /// A network read back into floats quantises to the very same network, and the floats are within
    /// half a quantisation step of the model's.
    #[test]
    fn a_network_round_trips_through_the_float_model() {
        let mut m = Model::new(7);
        for p in &mut m.params[OUT_B..] {
            *p = 0.05;
        }
        // King buckets that differ, on top of the random factoriser.
        for (i, p) in m.params[FT_W..FACT_W].iter_mut().enumerate() {
            *p = ((i % 7) as f32 - 3.0) * 0.01;
        }
        let net = m.quantise();
        let back = Model::from_network(&net);
        assert_eq!(back.params.len(), PARAMS);
        assert!(back.params[FACT_W..FT_B].iter().all(|&p| p == 0.0));
        assert_eq!(back.quantise().to_bytes(), net.to_bytes());
        let (qa, qb) = (engine::nnue::QA as f32, engine::nnue::QB as f32);
        let close = |a: &[f32], b: &[f32], step: f32| {
            for (i, (a, b)) in a.iter().zip(b).enumerate() {
                assert!((a - b).abs() <= step / 2.0 + 1e-6, "{i}: {a} vs {b}");
            }
        };
        close(&m.merged_ft_weights(), &back.merged_ft_weights(), 1.0 / qa);
        close(&m.params[FT_B..OUT_W], &back.params[FT_B..OUT_W], 1.0 / qa);
        close(
            &m.params[OUT_W..OUT_B],
            &back.params[OUT_W..OUT_B],
            1.0 / qb,
        );
        close(&m.params[OUT_B..], &back.params[OUT_B..], 1.0 / (qa * qb));
    }

    /// The quantised network in the engine agrees with the float model to a few centipawns.
    #[test]
    fn quantised_network_agrees_with_the_float_model() {
        let mut m = Model::new(4);
        // Output weights on the quantisation grid, so that what is compared is the layout and the
        // integer arithmetic, not the rounding of 512 random output weights (tens of centipawns).
        let qb = engine::nnue::QB as f32;
        for p in &mut m.params[OUT_W..OUT_B] {
            *p = (*p * qb).round() / qb;
        }
        for p in &mut m.params[OUT_B..] {
            *p = 0.1;
        }
        let net = m.quantise();
        for (v, fen) in [
            (
                Variant::Chess,
                "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 2 3",
            ),
            (
                Variant::DoubleMove,
                "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1 WB",
            ),
            (Variant::Twinmove, "4k3/8/8/3q4/8/8/4P3/4K3 w - - 0 1"),
        ] {
            let pos = Position::from_fen(v, fen).unwrap();
            let s = Sample::from_record(&Record::new(&pos, 0, WDL::Draw).unwrap());
            let float_cp = m.forward(&s) * SCALE as f32;
            let int_cp = net.evaluate(&pos) as f32;
            assert!(
                (float_cp - int_cp).abs() < 5.0,
                "{v}: {float_cp} vs {int_cp}"
            );
        }
    }
}
