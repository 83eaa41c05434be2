//! Seeded pseudo-random numbers for the whole workspace: one generator, SplitMix64, for the Zobrist keys,
//! the match runner's random openings, the tuner's train/validation split, the load test and test
//! playouts; plus the two one-line step functions whose sequences older seeded outputs depend on.
//! Deterministic by design: never use it for secrets (the server takes those from the OS).

/// SplitMix64 (Steele, Lea and Flood 2014, as in Vigna's `splitmix64.c`): a 64-bit state advanced by
/// a Weyl increment and mixed on output. Small, fast, `const`, and the same sequence for the same seed
/// on every platform. Usable in const context (`const fn new`, `const fn next_u64`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// The Weyl increment: 2^64 divided by the golden ratio, made odd.
    const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

    pub const fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    pub const fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(Self::GAMMA);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`), as the remainder of the next output (the bias, below 2^-50 for
    /// the sizes used here, does not matter).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// A number in `[0, 1)`: the next output's top 53 bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// The first output for seed `x`: a well-mixed 64-bit hash of one number, e.g. to pick a
    /// reproducible subset by index.
    pub const fn mix(x: u64) -> u64 {
        SplitMix64::new(x).next_u64()
    }
}

/// One step of Marsaglia's xorshift64 (shifts 13, 7, 17; the state must not be 0). Kept because the
/// engine's strength levels' choices for a seed are defined by it (and a rules test's cases).
pub const fn xorshift64(mut x: u64) -> u64 {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    x
}

/// One step of Knuth's MMIX linear congruential generator. Kept because the UCI engine's per-search
/// seed sequence (and the PGN fuzz test's games) are defined by it.
pub const fn lcg64(x: u64) -> u64 {
    x.wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The published reference outputs (Vigna's splitmix64.c; Rosetta Code "Splitmix64").
    #[test]
    fn splitmix64_reference_values() {
        let mut r = SplitMix64::new(1_234_567);
        let got: Vec<u64> = (0..5).map(|_| r.next_u64()).collect();
        assert_eq!(
            got,
            [
                6457827717110365317,
                3203168211198807973,
                9817491932198370423,
                4593380528125082431,
                16408922859458223821
            ]
        );
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(SplitMix64::mix(0), 0xE220_A839_7B1D_CDAF);
        const FIRST: u64 = SplitMix64::new(1_234_567).next_u64();
        assert_eq!(FIRST, 6457827717110365317);
    }

    /// The Zobrist keys come from this generator: the start positions' hashes must never change (the
    /// engine's bench signature and anything keyed by hashes depend on them).
    #[test]
    fn zobrist_keys_are_pinned() {
        use crate::{Position, Variant};
        for (v, hash) in [
            (Variant::Chess, 0x2106_6a8a_93b1_0acc),
            (Variant::TwoMove, 0xe191_5bc7_0026_3c34),
            (Variant::DoubleMove, 0x0876_03c7_e3b5_ee4c),
            (Variant::Twinmove, 0x2106_6a8a_93b1_0acc),
        ] {
            assert_eq!(Position::start(v).hash(), hash, "{v}");
        }
    }

    #[test]
    fn helpers() {
        let mut a = SplitMix64::new(42);
        let mut b = a.clone();
        for n in [1usize, 2, 3, 7, 1000] {
            assert_eq!(a.below(n), (b.next_u64() % n as u64) as usize);
        }
        for _ in 0..1000 {
            let x = a.next_f64();
            assert!((0.0..1.0).contains(&x));
        }
        assert_eq!(xorshift64(1), 0x4082_2041);
        assert_eq!(lcg64(0), 1_442_695_040_888_963_407);
    }
}
