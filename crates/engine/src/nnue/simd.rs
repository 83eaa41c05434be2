//! The network's two hot loops, written so the compiler vectorises them: accumulator updates (add and
//! subtract weight rows) and the output layer's SCReLU dot product. On x86-64 a copy of each is
//! compiled for AVX2 and chosen at run time; the portable copy (SSE2 there) is the reference.

use super::{HIDDEN, QA};

/// Lanes handled together: one AVX2 register of i16, two SSE2 ones.
const LANES: usize = 16;

/// `dst = src + Σ rows(add) - Σ rows(sub)`, portable. Block by block, so each block of the sum stays
/// in registers while every row is added to it (one pass over `dst`, not one per row).
#[inline(always)]
fn update_body(
    dst: &mut [i16; HIDDEN],
    src: &[i16; HIDDEN],
    add: &[&[i16; HIDDEN]],
    sub: &[&[i16; HIDDEN]],
) {
    // The search's common cases with the row counts known at compile time, so the loop over the
    // rows unrolls: a quiet move (1, 1), a capture (1, 2), castling (2, 2).
    match (add, sub) {
        ([a], [s]) => update_rows(dst, src, &[*a], &[*s]),
        ([a], [s, t]) => update_rows(dst, src, &[*a], &[*s, *t]),
        ([a, b], [s, t]) => update_rows(dst, src, &[*a, *b], &[*s, *t]),
        _ => update_rows(dst, src, add, sub),
    }
}

/// The loop of [`update_body`]; inlined, so with row lists of a length known where it is called
/// the loops over the rows unroll.
#[inline(always)]
fn update_rows(
    dst: &mut [i16; HIDDEN],
    src: &[i16; HIDDEN],
    add: &[&[i16; HIDDEN]],
    sub: &[&[i16; HIDDEN]],
) {
    for (i, (d, s)) in dst
        .chunks_exact_mut(LANES)
        .zip(src.chunks_exact(LANES))
        .enumerate()
    {
        let mut v = [0i16; LANES];
        v.copy_from_slice(s);
        let at = i * LANES;
        for r in add {
            for (x, w) in v.iter_mut().zip(&r[at..at + LANES]) {
                *x = x.wrapping_add(*w);
            }
        }
        for r in sub {
            for (x, w) in v.iter_mut().zip(&r[at..at + LANES]) {
                *x = x.wrapping_sub(*w);
            }
        }
        d.copy_from_slice(&v);
    }
}

/// Σ clamp(a, 0, QA)² · w, portable. 181² fits an i16; the products are summed in i32.
#[inline(always)]
fn screlu_dot_body(acc: &[i16; HIDDEN], w: &[i16; HIDDEN]) -> i32 {
    let mut sum = 0i32;
    for (a, w) in acc.iter().zip(w.iter()) {
        let v = (*a).clamp(0, QA as i16);
        sum = sum.wrapping_add((v * v) as i32 * *w as i32);
    }
    sum
}

pub(crate) fn update_portable(
    dst: &mut [i16; HIDDEN],
    src: &[i16; HIDDEN],
    add: &[&[i16; HIDDEN]],
    sub: &[&[i16; HIDDEN]],
) {
    update_body(dst, src, add, sub)
}

pub(crate) fn screlu_dot_portable(acc: &[i16; HIDDEN], w: &[i16; HIDDEN]) -> i32 {
    screlu_dot_body(acc, w)
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::*;

    #[target_feature(enable = "avx2")]
    pub(super) fn update(
        dst: &mut [i16; HIDDEN],
        src: &[i16; HIDDEN],
        add: &[&[i16; HIDDEN]],
        sub: &[&[i16; HIDDEN]],
    ) {
        update_body(dst, src, add, sub)
    }

    #[target_feature(enable = "avx2")]
    pub(super) fn screlu_dot(acc: &[i16; HIDDEN], w: &[i16; HIDDEN]) -> i32 {
        screlu_dot_body(acc, w)
    }

    pub(super) fn available() -> bool {
        std::arch::is_x86_feature_detected!("avx2")
    }
}

/// `dst = src + Σ rows(add) - Σ rows(sub)`.
#[inline]
pub(crate) fn update(
    dst: &mut [i16; HIDDEN],
    src: &[i16; HIDDEN],
    add: &[&[i16; HIDDEN]],
    sub: &[&[i16; HIDDEN]],
) {
    #[cfg(target_arch = "x86_64")]
    if avx2::available() {
        // SAFETY: the CPU has AVX2 (checked just above), the only requirement of this function.
        return unsafe { avx2::update(dst, src, add, sub) };
    }
    update_portable(dst, src, add, sub)
}

/// Σ clamp(a, 0, QA)² · w.
#[inline]
pub(crate) fn screlu_dot(acc: &[i16; HIDDEN], w: &[i16; HIDDEN]) -> i32 {
    #[cfg(target_arch = "x86_64")]
    if avx2::available() {
        // SAFETY: the CPU has AVX2 (checked just above), the only requirement of this function.
        return unsafe { avx2::screlu_dot(acc, w) };
    }
    screlu_dot_portable(acc, w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rules::rng::SplitMix64;

    fn random_row(rng: &mut SplitMix64, range: i32) -> [i16; HIDDEN] {
        std::array::from_fn(|_| (rng.below(2 * range as usize + 1) as i32 - range) as i16)
    }

    /// The dispatched (AVX2 where the CPU has it) loops equal the portable reference.
    #[test]
    fn dispatched_loops_equal_the_portable_reference() {
        let mut rng = SplitMix64::new(3);
        for _ in 0..200 {
            let acc = random_row(&mut rng, 400);
            let w = random_row(&mut rng, 127);
            assert_eq!(screlu_dot(&acc, &w), screlu_dot_portable(&acc, &w));
            let src = random_row(&mut rng, 3000);
            let rows: Vec<[i16; HIDDEN]> = (0..6).map(|_| random_row(&mut rng, 360)).collect();
            // Every shape, the unrolled ones (1, 1), (1, 2) and (2, 2) among them.
            for n_add in 0..=3 {
                for n_sub in 0..=3 {
                    let add: Vec<&[i16; HIDDEN]> = rows[..n_add].iter().collect();
                    let sub: Vec<&[i16; HIDDEN]> = rows[3..3 + n_sub].iter().collect();
                    let (mut a, mut b) = ([0; HIDDEN], [0; HIDDEN]);
                    update(&mut a, &src, &add, &sub);
                    update_portable(&mut b, &src, &add, &sub);
                    assert_eq!(a, b);
                    let want: Vec<i16> = (0..HIDDEN)
                        .map(|i| {
                            src[i] + add.iter().map(|r| r[i]).sum::<i16>()
                                - sub.iter().map(|r| r[i]).sum::<i16>()
                        })
                        .collect();
                    assert_eq!(a.to_vec(), want, "{n_add} added, {n_sub} removed");
                }
            }
        }
        // The largest sum the clipping allows does not overflow.
        let acc = [QA as i16; HIDDEN];
        let w = [127i16; HIDDEN];
        let one = screlu_dot(&acc, &w) as i64;
        assert_eq!(one, HIDDEN as i64 * 181 * 181 * 127);
        assert!(2 * one < i32::MAX as i64);
    }
}
