//! The tuner's view of the evaluation must be the evaluation: on positions from random playouts of
//! every variant, the coefficient trace dotted with the weights gives `evaluate` (within the phase
//! blend's rounding), and the trace is antisymmetric under swapping the colours.

use engine::eval::{evaluate, trace, weights_f64};
use rules::rng::SplitMix64;
use rules::{Color, Position, Variant};

/// Positions of random games: every position after every move, up to `moves` moves per game.
fn playouts(variant: Variant, games: usize, moves: usize, seed: u64) -> Vec<Position> {
    let mut rng = SplitMix64::new(seed);
    let mut out = Vec::new();
    for _ in 0..games {
        let mut pos = Position::start(variant);
        for _ in 0..moves {
            out.push(pos);
            let legal = pos.legal_moves();
            if legal.is_empty() || pos.king_captured().is_some() {
                break;
            }
            let m = legal.as_slice()[rng.below(legal.len())];
            pos = pos.after(m);
        }
    }
    out
}

#[test]
fn trace_times_weights_is_the_evaluation() {
    let w = weights_f64();
    let mut checked = 0;
    let mut twinmove_fixed = 0;
    for (k, v) in Variant::ALL.into_iter().enumerate() {
        for pos in playouts(v, 40, 160, 7 + k as u64) {
            let t = trace(&pos);
            let white = t.eval(&w);
            let ours = if pos.turn() == Color::White {
                white
            } else {
                -white
            };
            let e = evaluate(&pos) as f64;
            assert!(
                (ours - e).abs() <= 1.0,
                "{v} {}: evaluate {e}, trace {ours}",
                pos.fen()
            );
            twinmove_fixed += (t.fixed != 0) as usize;
            checked += 1;
        }
    }
    assert!(checked > 10_000, "only {checked} positions");
    // Random Twinmove games leave kings en prise often; the fixed term must have been exercised.
    assert!(twinmove_fixed > 0);
}

#[test]
fn trace_is_antisymmetric_under_colour_swap() {
    // Mirror the board and swap colours (castling and en passant dropped: the evaluation ignores them).
    for pos in playouts(Variant::Chess, 20, 120, 99) {
        let fen = pos.fen();
        let fields: Vec<&str> = fen.split(' ').collect();
        let board: String = fields[0]
            .split('/')
            .rev()
            .map(|rank| {
                rank.chars()
                    .map(|c| {
                        if c.is_ascii_uppercase() {
                            c.to_ascii_lowercase()
                        } else {
                            c.to_ascii_uppercase()
                        }
                    })
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
            .join("/");
        let side = if fields[1] == "w" { "b" } else { "w" };
        let mirrored = format!("{board} {side} - - 0 1");
        let Ok(m) = Position::from_fen(Variant::Chess, &mirrored) else {
            continue;
        };
        let a = trace(&pos);
        let b = trace(&m);
        let negated: Vec<(u16, i16)> = b.coefs.iter().map(|&(i, c)| (i, -c)).collect();
        assert_eq!(a.coefs, negated, "{fen} vs {mirrored}");
        assert_eq!(a.phase, b.phase);
        assert_eq!(evaluate(&pos), evaluate(&m), "{fen} vs {mirrored}");
    }
}
