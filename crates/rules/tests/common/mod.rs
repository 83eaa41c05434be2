//! Shared by the property and parser-fuzz test files: their proptest configuration.

use proptest::test_runner::{Config, RngSeed};

/// A reproducible proptest configuration: `cases` cases unless `PROPTEST_CASES` is set, the fixed
/// `default_seed` unless `PROPTEST_RNG_SEED` is set, and no regression files in the source tree.
pub fn config(cases: u32, default_seed: u64, max_shrink_iters: u32) -> Config {
    let base = Config::default();
    Config {
        cases: if std::env::var_os("PROPTEST_CASES").is_some() {
            base.cases
        } else {
            cases
        },
        rng_seed: match base.rng_seed {
            RngSeed::Random => RngSeed::Fixed(default_seed),
            fixed => fixed,
        },
        failure_persistence: None,
        max_shrink_iters,
        ..base
    }
}
