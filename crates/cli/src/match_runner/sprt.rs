//! The sequential probability ratio test on game pairs (pentanomial), computed as fishtest does
//! (M. Van den Bergh's generalised SPRT, `LLRcalc.py`): with p̂ the observed distribution of the
//! per-pair score over the values 0, ¼, ½, ¾, 1 (empty cells set to 10⁻³, fishtest's regularisation),
//! and p0, p1 the maximum-likelihood distributions that satisfy each hypothesis,
//!
//! LLR = N · Σᵢ p̂ᵢ · (ln p1ᵢ − ln p0ᵢ)
//!
//! where N is the number of pairs. In the *logistic* model a hypothesis fixes the mean pair score,
//! μ = 1 / (1 + 10^(−Elo/400)). In the *normalised* model (the default, fishtest's) it fixes the
//! t-value (μ − ½)/σ = √2 · nElo / (800/ln 10). For a constrained mean the maximum-likelihood
//! distribution is pᵢ = p̂ᵢ / (1 + x(aᵢ − μ)) with x the root of the "secular equation"
//! Σ p̂ᵢ (aᵢ − μ)/(1 + x(aᵢ − μ)) = 0. For a constrained t-value the same is iterated.
//! For many pairs this agrees with the normal approximation
//! N · (μ1 − μ0)(2μ̂ − μ0 − μ1) / (2σ̂²) (kept, for the tests, as `llr_normal_approx`). For a handful of pairs it
//! stays sensible, where the approximation does not: a single won pair gives an LLR of 17.8 for [0, 50].

use super::elo::{mean_var, score_from_elo, PAIR_SCORES};

/// nElo per unit of t-value (fishtest's `nelo_divided_by_nt`).
pub const NELO_PER_T: f64 = 800.0 / std::f64::consts::LN_10;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Model {
    Normalized,
    Logistic,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Continue,
    /// The lower bound was crossed: H0 (elo0) accepted.
    AcceptH0,
    /// The upper bound was crossed: H1 (elo1) accepted.
    AcceptH1,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sprt {
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: f64,
    pub beta: f64,
    pub model: Model,
}

impl Sprt {
    /// `elo0,elo1` (e.g. `0,5`), alpha = beta = 0.05.
    pub fn parse(text: &str, model: Model) -> Result<Sprt, String> {
        let bad = || format!("--sprt expects elo0,elo1 (e.g. 0,5), not '{text}'");
        let (a, b) = text.split_once(',').ok_or_else(bad)?;
        let elo0: f64 = a.trim().parse().map_err(|_| bad())?;
        let elo1: f64 = b.trim().parse().map_err(|_| bad())?;
        if elo0 >= elo1 || elo0.is_nan() || elo1.is_nan() {
            return Err(format!("--sprt needs elo0 < elo1, got {elo0},{elo1}"));
        }
        Ok(Sprt {
            elo0,
            elo1,
            alpha: 0.05,
            beta: 0.05,
            model,
        })
    }

    /// (lower, upper) = (ln(β/(1−α)), ln((1−β)/α)); ±2.944 for α = β = 0.05.
    pub fn bounds(&self) -> (f64, f64) {
        (
            (self.beta / (1.0 - self.alpha)).ln(),
            ((1.0 - self.beta) / self.alpha).ln(),
        )
    }

    pub fn llr(&self, pairs: [u64; 5]) -> f64 {
        llr_pentanomial(pairs, self.elo0, self.elo1, self.model)
    }

    pub fn decision(&self, llr: f64) -> Decision {
        let (lo, hi) = self.bounds();
        if llr >= hi {
            Decision::AcceptH1
        } else if llr <= lo {
            Decision::AcceptH0
        } else {
            Decision::Continue
        }
    }
}

/// The observed distribution of the pair score, regularised, and the number of pairs.
fn regularised(pairs: [u64; 5]) -> (f64, [f64; 5]) {
    let counts = pairs.map(|c| if c == 0 { 1e-3 } else { c as f64 });
    let n: f64 = counts.iter().sum();
    (n, counts.map(|c| c / n))
}

/// The root x of Σ pᵢ aᵢ / (1 + x aᵢ) = 0 with every 1 + x aᵢ > 0 (the left side falls from +∞ to −∞
/// on that interval, so bisection finds it). `None` when the aᵢ do not have both signs.
fn secular(a: &[f64; 5], p: &[f64; 5]) -> Option<f64> {
    let v = a.iter().cloned().fold(f64::INFINITY, f64::min);
    let w = a.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    if v >= 0.0 || w <= 0.0 {
        return None;
    }
    let f = |x: f64| (0..5).map(|i| p[i] * a[i] / (1.0 + x * a[i])).sum::<f64>();
    let (mut lo, mut hi) = (-1.0 / w + 1e-9, -1.0 / v - 1e-9);
    for _ in 0..200 {
        let m = 0.5 * (lo + hi);
        if f(m) > 0.0 {
            lo = m;
        } else {
            hi = m;
        }
    }
    Some(0.5 * (lo + hi))
}

/// The distribution closest (in likelihood) to `ph` whose mean is `s`.
fn mle_expected(ph: &[f64; 5], s: f64) -> Option<[f64; 5]> {
    let a = PAIR_SCORES.map(|v| v - s);
    let x = secular(&a, ph)?;
    Some(std::array::from_fn(|i| ph[i] / (1.0 + x * a[i])))
}

/// The distribution closest (in likelihood) to `ph` whose t-value (μ − `reference`)/σ is `t`.
fn mle_t_value(ph: &[f64; 5], reference: f64, t: f64) -> Option<[f64; 5]> {
    let mut pdf = [0.2; 5];
    for _ in 0..10 {
        let prev = pdf;
        let (mu, var) = mean_var(&PAIR_SCORES, &pdf)?;
        let sigma = var.sqrt();
        let a: [f64; 5] = std::array::from_fn(|i| {
            let ai = PAIR_SCORES[i];
            ai - reference - t * sigma * (1.0 + ((mu - ai) / sigma).powi(2)) / 2.0
        });
        let x = secular(&a, ph)?;
        pdf = std::array::from_fn(|i| ph[i] / (1.0 + x * a[i]));
        if (0..5).all(|i| (prev[i] - pdf[i]).abs() < 1e-9) {
            break;
        }
    }
    Some(pdf)
}

/// The log-likelihood ratio of H1 against H0 for pentanomial counts `[LL, LD+DL, DD+WL+LW, WD+DW, WW]`.
pub fn llr_pentanomial(pairs: [u64; 5], elo0: f64, elo1: f64, model: Model) -> f64 {
    if pairs.iter().sum::<u64>() == 0 {
        return 0.0;
    }
    let (n, ph) = regularised(pairs);
    let (p0, p1) = match model {
        Model::Logistic => (
            mle_expected(&ph, score_from_elo(elo0)),
            mle_expected(&ph, score_from_elo(elo1)),
        ),
        Model::Normalized => {
            let t = |e: f64| std::f64::consts::SQRT_2 * e / NELO_PER_T;
            (
                mle_t_value(&ph, 0.5, t(elo0)),
                mle_t_value(&ph, 0.5, t(elo1)),
            )
        }
    };
    let (Some(p0), Some(p1)) = (p0, p1) else {
        return 0.0;
    };
    n * (0..5)
        .map(|i| ph[i] * (p1[i].ln() - p0[i].ln()))
        .sum::<f64>()
}

/// The normal approximation of the same LLR: N · (μ1 − μ0)(2μ̂ − μ0 − μ1) / (2σ̂²), with
/// μᵢ = ½ + tᵢ·√(2σ̂²) (normalised) or the logistic score.
#[cfg(test)]
pub fn llr_normal_approx(pairs: [u64; 5], elo0: f64, elo1: f64, model: Model) -> f64 {
    if pairs.iter().sum::<u64>() == 0 {
        return 0.0;
    }
    let (n, ph) = regularised(pairs);
    let Some((mean, var)) = mean_var(&PAIR_SCORES, &ph) else {
        return 0.0;
    };
    if var <= 0.0 {
        return 0.0;
    }
    let (mu0, mu1) = match model {
        Model::Logistic => (score_from_elo(elo0), score_from_elo(elo1)),
        Model::Normalized => {
            let sigma_per_game = (2.0 * var).sqrt();
            (
                0.5 + elo0 / NELO_PER_T * sigma_per_game,
                0.5 + elo1 / NELO_PER_T * sigma_per_game,
            )
        }
    };
    n * (mu1 - mu0) * (2.0 * mean - mu0 - mu1) / (2.0 * var)
}

/// Normalised Elo of pentanomial counts: (μ̂ − ½) / √(2σ̂²) · 800/ln 10 (no regularisation).
pub fn normalized_elo(pairs: [u64; 5]) -> Option<f64> {
    let (mean, var) = mean_var(&PAIR_SCORES, &pairs.map(|c| c as f64))?;
    if var <= 0.0 {
        return None;
    }
    Some((mean - 0.5) / (2.0 * var).sqrt() * NELO_PER_T)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6
    }

    // Reference values from an independent Python transcription of fishtest's LLRcalc.py (bisection
    // for the secular equation instead of scipy's brentq), with its regularisation.
    #[test]
    fn llr_normalized_examples() {
        let n = Model::Normalized;
        let cases: [([u64; 5], f64, f64, f64); 8] = [
            ([10, 20, 40, 20, 10], 0.0, 5.0, -0.020709467),
            ([10, 20, 40, 20, 10], -5.0, 0.0, 0.020709467),
            ([5, 15, 40, 25, 15], 0.0, 5.0, 0.537279242),
            ([5, 15, 40, 25, 15], -5.0, 0.0, 0.577440847),
            ([0, 3, 10, 5, 2], 0.0, 5.0, 0.146460481),
            ([1, 2, 3, 4, 5], 0.0, 50.0, 1.140503565),
            ([0, 0, 0, 0, 1], 0.0, 50.0, 0.181887922),
            ([30, 10, 5, 1, 0], 0.0, 50.0, -8.954731588),
        ];
        for (pairs, e0, e1, want) in cases {
            let got = llr_pentanomial(pairs, e0, e1, n);
            assert!(
                (got - want).abs() < 1e-6,
                "{pairs:?} [{e0},{e1}]: {got} != {want}"
            );
        }
        assert_eq!(llr_pentanomial([0; 5], 0.0, 5.0, n), 0.0);
    }

    #[test]
    fn llr_logistic_examples() {
        let l = Model::Logistic;
        let cases: [([u64; 5], f64, f64, f64); 6] = [
            ([10, 20, 40, 20, 10], 0.0, 5.0, -0.034506851),
            ([10, 20, 40, 20, 10], 0.0, 50.0, -3.352121207),
            ([5, 15, 40, 25, 15], 0.0, 50.0, 3.870591660),
            ([0, 0, 4, 0, 0], 0.0, 50.0, -0.610444071),
            ([0, 0, 0, 0, 2], 0.0, 50.0, 0.267429514),
            ([4, 0, 1, 0, 0], 0.0, 50.0, -0.771270470),
        ];
        for (pairs, e0, e1, want) in cases {
            let got = llr_pentanomial(pairs, e0, e1, l);
            assert!(
                (got - want).abs() < 1e-6,
                "{pairs:?} [{e0},{e1}]: {got} != {want}"
            );
        }
    }

    #[test]
    fn normal_approximation_agrees_for_many_pairs_only() {
        for model in [Model::Normalized, Model::Logistic] {
            let p = [10, 20, 40, 20, 10];
            let d = llr_pentanomial(p, 0.0, 5.0, model) - llr_normal_approx(p, 0.0, 5.0, model);
            assert!(d.abs() < 1e-4, "{model:?}");
        }
        assert!(close(
            llr_normal_approx([10, 20, 40, 20, 10], 0.0, 5.0, Model::Normalized),
            -0.020710539
        ));
        assert!(close(
            llr_normal_approx([5, 15, 40, 25, 15], 0.0, 5.0, Model::Logistic),
            0.740535536
        ));
        // One won pair: the approximation claims a decision, the exact LLR does not.
        assert!(llr_normal_approx([0, 0, 0, 0, 1], 0.0, 50.0, Model::Logistic) > 10.0);
        assert!(llr_pentanomial([0, 0, 0, 0, 1], 0.0, 50.0, Model::Logistic) < 0.2);
    }

    #[test]
    fn bounds_and_decisions() {
        let s = Sprt::parse("0,5", Model::Normalized).unwrap();
        let (lo, hi) = s.bounds();
        assert!(close(lo, -2.944438979));
        assert!(close(hi, 2.944438979));
        assert_eq!(s.decision(3.0), Decision::AcceptH1);
        assert_eq!(s.decision(-3.0), Decision::AcceptH0);
        assert_eq!(s.decision(0.5), Decision::Continue);
        // A lopsided run: LLR 0.802 for [0,5] (not yet decided), 7.179 for [0,50]; -8.955 reversed.
        assert!(close(s.llr([0, 1, 5, 10, 30]), 0.801654697));
        assert_eq!(s.decision(s.llr([0, 1, 5, 10, 30])), Decision::Continue);
        let wide = Sprt::parse("0,50", Model::Normalized).unwrap();
        assert!(close(wide.llr([0, 1, 5, 10, 30]), 7.179128200));
        assert_eq!(
            wide.decision(wide.llr([0, 1, 5, 10, 30])),
            Decision::AcceptH1
        );
        assert!(close(wide.llr([30, 10, 5, 1, 0]), -8.954731588));
        assert_eq!(
            wide.decision(wide.llr([30, 10, 5, 1, 0])),
            Decision::AcceptH0
        );
        assert!(Sprt::parse("5,0", Model::Normalized).is_err());
        assert!(Sprt::parse("5", Model::Normalized).is_err());
        assert!(Sprt::parse(" -3 , 1.5", Model::Logistic).is_ok());
    }

    #[test]
    fn normalized_elo_figure() {
        // [5,15,40,25,15]: mean 0.575, variance 0.069375 → t = 0.075/√0.13875.
        let e = normalized_elo([5, 15, 40, 25, 15]).unwrap();
        assert!((e - 0.075 / 0.13875f64.sqrt() * NELO_PER_T).abs() < 1e-9);
        assert!(normalized_elo([0, 0, 3, 0, 0]).is_none());
    }
}
