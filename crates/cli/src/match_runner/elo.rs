//! Elo difference from a match score, with a 95% error bar from the score's standard error, either per
//! game (trinomial: win/draw/loss) or per game pair (pentanomial: pair scores 0, ½, 1, 1½, 2).

/// The two-sided 95% quantile of the standard normal distribution.
pub const Z95: f64 = 1.959_963_984_540_054;

/// Elo difference for an expected score `s` in (0, 1) (logistic model): −400·log10(1/s − 1).
/// ±∞ at 1 and 0.
pub fn elo_from_score(s: f64) -> f64 {
    if s <= 0.0 {
        f64::NEG_INFINITY
    } else if s >= 1.0 {
        f64::INFINITY
    } else {
        -400.0 * (1.0 / s - 1.0).log10()
    }
}

/// The expected score for an Elo difference: 1 / (1 + 10^(−elo/400)).
pub fn score_from_elo(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// An Elo estimate: the point value and the 95% interval, from a mean score and its standard error.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EloEstimate {
    /// Mean score per game, 0..1.
    pub score: f64,
    /// Standard error of that mean.
    pub stderr: f64,
    pub elo: f64,
    pub lower: f64,
    pub upper: f64,
}

impl EloEstimate {
    fn from_mean(score: f64, stderr: f64) -> EloEstimate {
        EloEstimate {
            score,
            stderr,
            elo: elo_from_score(score),
            lower: elo_from_score(score - Z95 * stderr),
            upper: elo_from_score(score + Z95 * stderr),
        }
    }

    /// Half the width of the 95% interval (the "±" figure; cutechess prints the same).
    pub fn error(&self) -> f64 {
        (self.upper - self.lower) / 2.0
    }

    /// `+12.3 ± 45.6`; `+inf`/`-inf` for a perfect score, `± inf` when the interval reaches one.
    pub fn display(&self) -> String {
        if !self.elo.is_finite() {
            return if self.elo > 0.0 { "+inf" } else { "-inf" }.into();
        }
        let err = self.error();
        if err.is_finite() {
            format!("{:+.1} ± {:.1}", self.elo, err)
        } else {
            let end = |x: f64| {
                if x.is_finite() {
                    format!("{x:+.1}")
                } else if x > 0.0 {
                    "+inf".into()
                } else {
                    "-inf".into()
                }
            };
            format!(
                "{:+.1} ± inf [{}, {}]",
                self.elo,
                end(self.lower),
                end(self.upper)
            )
        }
    }
}

/// Mean and (population) variance of a distribution of `values` weighted by `counts`.
pub fn mean_var(values: &[f64], counts: &[f64]) -> Option<(f64, f64)> {
    let n: f64 = counts.iter().sum();
    if n <= 0.0 {
        return None;
    }
    let mean = values.iter().zip(counts).map(|(v, c)| v * c).sum::<f64>() / n;
    let var = values
        .iter()
        .zip(counts)
        .map(|(v, c)| c * (v - mean).powi(2))
        .sum::<f64>()
        / n;
    Some((mean, var))
}

/// From game results: standard error √(var/n) with the per-game variance of the scores 1, ½, 0.
pub fn trinomial(wins: u64, draws: u64, losses: u64) -> Option<EloEstimate> {
    let n = (wins + draws + losses) as f64;
    let (mean, var) = mean_var(
        &[1.0, 0.5, 0.0],
        &[wins as f64, draws as f64, losses as f64],
    )?;
    Some(EloEstimate::from_mean(mean, (var / n).sqrt()))
}

/// Pair scores for the pentanomial counts, as a per-game score: 0, ¼, ½, ¾, 1.
pub const PAIR_SCORES: [f64; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];

/// From game-pair results `[LL, LD+DL, DD+WL+LW, WD+DW, WW]` (engine A's view): standard error
/// √(var/pairs) with the variance of the per-pair score; it accounts for the correlation of the two
/// games of a pair (same opening), so it is usually smaller than the trinomial one.
pub fn pentanomial(pairs: [u64; 5]) -> Option<EloEstimate> {
    let counts = pairs.map(|c| c as f64);
    let n: f64 = counts.iter().sum();
    let (mean, var) = mean_var(&PAIR_SCORES, &counts)?;
    Some(EloEstimate::from_mean(mean, (var / n).sqrt()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, eps: f64) -> bool {
        (a - b).abs() < eps
    }

    #[test]
    fn known_elo_figures() {
        assert!(close(elo_from_score(0.75), 190.849, 1e-3));
        assert!(close(elo_from_score(0.5), 0.0, 1e-12));
        assert!(close(elo_from_score(0.25), -190.849, 1e-3));
        assert!(close(elo_from_score(0.9), 381.697, 1e-3));
        assert!(close(elo_from_score(0.64), 100.0, 0.1)); // the classic "100 Elo ≈ 64%"
        assert!(close(score_from_elo(190.848_502), 0.75, 1e-6));
        assert_eq!(elo_from_score(1.0), f64::INFINITY);
        assert_eq!(elo_from_score(0.0), f64::NEG_INFINITY);
    }

    #[test]
    fn trinomial_error_bar() {
        // 60 W, 20 D, 20 L: s = 0.7, per-game variance 0.16, se = 0.04, interval 0.7 ∓ 0.0784.
        let e = trinomial(60, 20, 20).unwrap();
        assert!(close(e.score, 0.7, 1e-12));
        assert!(close(e.stderr, 0.04, 1e-12));
        assert!(close(e.elo, 147.1907, 1e-3));
        assert!(close(e.lower, 86.2250, 1e-3));
        assert!(close(e.upper, 218.2518, 1e-3));
        assert!(close(e.error(), 66.0134, 1e-3));
        // Even score: symmetric interval.
        let e = trinomial(10, 80, 10).unwrap();
        assert!(close(e.elo, 0.0, 1e-9));
        assert!(close(e.lower, -e.upper, 1e-9));
        assert!(trinomial(0, 0, 0).is_none());
    }

    #[test]
    fn pentanomial_error_bar() {
        // Pairs [LL, LD, DD/WL, WD, WW] = [5, 10, 20, 10, 5]: mean 0.5, variance 0.075, se = √(0.075/50).
        let e = pentanomial([5, 10, 20, 10, 5]).unwrap();
        assert!(close(e.score, 0.5, 1e-12));
        assert!(close(e.stderr, (0.075f64 / 50.0).sqrt(), 1e-12));
        assert!(close(e.upper, 53.1580, 1e-3));
        assert!(close(e.lower, -53.1580, 1e-3));
        // Asymmetric: [2, 8, 20, 12, 8] → mean 0.58, variance 0.0686.
        let e = pentanomial([2, 8, 20, 12, 8]).unwrap();
        assert!(close(e.score, 0.58, 1e-12));
        assert!(close(e.stderr, (0.0686f64 / 50.0).sqrt(), 1e-12));
        assert!(close(e.elo, 56.0714, 1e-3));
        assert!(close(e.lower, 5.1438, 1e-3));
        assert!(close(e.upper, 109.5254, 1e-3));
    }

    #[test]
    fn display_handles_perfect_scores() {
        assert_eq!(trinomial(3, 0, 0).unwrap().display(), "+inf");
        assert_eq!(trinomial(0, 0, 3).unwrap().display(), "-inf");
        // 3 W 1 D: the upper end of the interval passes a score of 1.
        assert_eq!(
            trinomial(3, 1, 0).unwrap().display(),
            "+338.0 ± inf [+117.4, +inf]"
        );
        assert_eq!(trinomial(60, 20, 20).unwrap().display(), "+147.2 ± 66.0");
    }
}
