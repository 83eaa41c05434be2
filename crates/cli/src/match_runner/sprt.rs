//! The sequential probability ratio test on game pairs (pentanomial), in the generalised (GSPRT)
//! normal approximation of M. Van den Bergh that fishtest and fastchess use:
//!
//! LLR ≈ N · (μ1 − μ0) · (2μ̂ − μ0 − μ1) / (2σ̂²)
//!
//! with N the number of pairs, μ̂ and σ̂² the mean and variance of the per-pair score (0, ¼, ½, ¾, 1)
//! and μ0, μ1 the mean pair scores the two hypotheses stand for. In the *normalised* model (the
//! default, fishtest's) the bounds are normalised Elo: μi = ½ + (nEloᵢ / (800/ln 10)) · √(2σ̂²); in the
//! *logistic* model they are ordinary Elo: μi = 1 / (1 + 10^(−Eloᵢ/400)). Empty pentanomial cells are
//! replaced by 10⁻³ (fishtest's regularisation) so that the variance of a short run is not zero.

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

/// The log-likelihood ratio of H1 against H0 for pentanomial counts `[LL, LD+DL, DD+WL+LW, WD+DW, WW]`.
pub fn llr_pentanomial(pairs: [u64; 5], elo0: f64, elo1: f64, model: Model) -> f64 {
    if pairs.iter().sum::<u64>() == 0 {
        return 0.0;
    }
    let counts = pairs.map(|c| if c == 0 { 1e-3 } else { c as f64 });
    let n: f64 = counts.iter().sum();
    let Some((mean, var)) = mean_var(&PAIR_SCORES, &counts) else {
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

    // Reference values computed independently (Python, same formula, fishtest's regularisation).
    #[test]
    fn llr_normalized_examples() {
        let n = Model::Normalized;
        assert!(close(
            llr_pentanomial([10, 20, 40, 20, 10], 0.0, 5.0, n),
            -0.020710539
        ));
        assert!(close(
            llr_pentanomial([5, 15, 40, 25, 15], 0.0, 5.0, n),
            0.558812183
        ));
        assert!(close(
            llr_pentanomial([5, 15, 40, 25, 15], -5.0, 0.0, n),
            0.600233262
        ));
        // Empty cells regularised to 0.001.
        assert!(close(
            llr_pentanomial([0, 3, 10, 5, 2], 0.0, 5.0, n),
            0.140707509
        ));
        assert!(close(
            llr_pentanomial([1, 2, 3, 4, 5], 0.0, 5.0, n),
            0.160073799
        ));
        // An even result is antisymmetric between [0,5] and [-5,0].
        assert!(close(
            llr_pentanomial([10, 20, 40, 20, 10], -5.0, 0.0, n),
            -llr_pentanomial([10, 20, 40, 20, 10], 0.0, 5.0, n)
        ));
        assert_eq!(llr_pentanomial([0; 5], 0.0, 5.0, n), 0.0);
    }

    #[test]
    fn llr_logistic_examples() {
        let l = Model::Logistic;
        assert!(close(
            llr_pentanomial([10, 20, 40, 20, 10], 0.0, 5.0, l),
            -0.034512801
        ));
        assert!(close(
            llr_pentanomial([5, 15, 40, 25, 15], 0.0, 5.0, l),
            0.740535536
        ));
        assert!(close(
            llr_pentanomial([5, 15, 40, 25, 15], 0.0, 10.0, l),
            1.406188509
        ));
        assert!(close(
            llr_pentanomial([0, 0, 4, 0, 0], 0.0, 10.0, l),
            -2.654787294
        ));
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
        // A lopsided run: LLR 1.806 for [0,5] (not yet decided), 17.205 for [0,50]; -19.111 reversed.
        assert!(close(s.llr([0, 1, 5, 10, 30]), 1.806272018));
        assert_eq!(s.decision(s.llr([0, 1, 5, 10, 30])), Decision::Continue);
        let wide = Sprt::parse("0,50", Model::Normalized).unwrap();
        assert!(close(wide.llr([0, 1, 5, 10, 30]), 17.205285204));
        assert_eq!(
            wide.decision(wide.llr([0, 1, 5, 10, 30])),
            Decision::AcceptH1
        );
        assert!(close(wide.llr([30, 10, 5, 1, 0]), -19.110696258));
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
