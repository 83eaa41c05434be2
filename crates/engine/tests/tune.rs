//! The Texel tuner on real match-runner PGN (tests/data: small `doublemove match --nodes 300` files,
//! the Double Move one from openings of single-move turns so that Double Moves stay unspent):
//! splitting and loading games, lowering the error, freezing the non-variant terms, rejecting bad
//! input with a message, and writing a weights file that reads back as the weights.

use engine::eval::{weights_f64, GROUPS, NUM_PARAMS};
use engine::tune::{
    current_source, error, fit_k, history, load, parse_weights, render_weights, rounded,
    split_games, tune, Dataset, LoadOptions, ParamSet, TuneOptions,
};
use engine::weights::WEIGHTS;
use rules::Variant;

const CHESS: &str = include_str!("data/chess-300-nodes.pgn");
const DOUBLE_MOVE: &str = include_str!("data/double-move-300-nodes.pgn");

fn opts(variant: Option<Variant>) -> LoadOptions {
    LoadOptions {
        variant,
        skip_turns: 4,
        validation_percent: 0,
        split_seed: 0,
        threads: 2,
    }
}

fn load_one(name: &str, text: &str, variant: Option<Variant>) -> Result<Dataset, String> {
    load(&[(name.to_string(), text.to_string())], &opts(variant))
}

#[test]
fn splits_a_match_file_into_its_games() {
    let games = split_games(CHESS);
    assert_eq!(games.len(), CHESS.matches("[Event ").count());
    assert_eq!(games.len(), 16);
    for g in &games {
        assert!(g.starts_with("[Event "), "{g}");
        assert_eq!(g.matches("[Result ").count(), 1);
    }
}

#[test]
fn loads_quiet_positions_and_lowers_the_error() {
    let data = load_one("chess", CHESS, None).unwrap();
    let st = &data.stats;
    assert_eq!(st.games, 16);
    assert_eq!(st.games_unreadable + st.games_unfinished, 0);
    assert!(st.skipped_not_quiet > 0 && st.skipped_opening > 0);
    assert!(data.train.len() > 300, "{} positions", data.train.len());
    assert!(data.validation.is_empty());

    let w0 = weights_f64();
    let k = fit_k(&data.train, &w0, 2);
    assert!(k > 0.05 && k < 4.9, "K {k}");
    // K is a minimum of the error.
    let e0 = error(&data.train, &w0, k, 2);
    assert!(e0 <= error(&data.train, &w0, k * 1.2, 2));
    assert!(e0 <= error(&data.train, &w0, k / 1.2, 2));

    let tuned = tune(
        &data.train,
        &w0,
        k,
        &TuneOptions {
            epochs: 100,
            learning_rate: 1.0,
            params: ParamSet::All,
            threads: 2,
            report_every: 25,
            l2: 0.0,
        },
        &mut |_, _| {},
    );
    let e1 = error(&data.train, &tuned, k, 2);
    assert!(e1 < e0 * 0.95, "error {e0} -> {e1}");
    // The rounded weights the engine would use keep the gain.
    let r: Vec<[f64; 2]> = rounded(&tuned)
        .iter()
        .map(|x| [x[0] as f64, x[1] as f64])
        .collect();
    assert!(error(&data.train, &r, k, 2) < e0 * 0.95);
}

#[test]
fn variant_tuning_moves_only_the_variant_terms() {
    let data = load_one("double-move", DOUBLE_MOVE, Some(Variant::DoubleMove)).unwrap();
    let w0 = weights_f64();
    let k = fit_k(&data.train, &w0, 2);
    let e0 = error(&data.train, &w0, k, 2);
    let tuned = tune(
        &data.train,
        &w0,
        k,
        &TuneOptions {
            epochs: 50,
            learning_rate: 2.0,
            params: ParamSet::Variant,
            threads: 1,
            report_every: 0,
            l2: 0.0,
        },
        &mut |_, _| {},
    );
    assert!(error(&data.train, &tuned, k, 2) < e0);
    let mut moved = Vec::new();
    for g in GROUPS {
        let changed = (g.start..g.start + g.len).any(|i| tuned[i] != w0[i]);
        if changed {
            moved.push(g.name);
        }
        assert!(g.variant || !changed, "{} moved", g.name);
    }
    // Double Move positions have a second move and Double Move abilities to weigh.
    assert!(moved.contains(&"double move ability"), "{moved:?}");
}

#[test]
fn bad_input_is_an_error_with_a_reason() {
    let e = load_one("empty.pgn", "", None).unwrap_err();
    assert!(e.contains("empty.pgn: no PGN games"), "{e}");

    let e = load_one("bad.pgn", "[Event \"x\"]\n\n1.e4 e5 2.Qxx9 1-0\n", None).unwrap_err();
    assert!(
        e.contains("no training positions") && e.contains("1 unreadable"),
        "{e}"
    );
    assert!(e.contains("bad.pgn, game 1: "), "{e}");

    let e = load_one("unfinished.pgn", "1.e4 e5 2.Nf3 *\n", None).unwrap_err();
    assert!(e.contains("1 without a result"), "{e}");

    let e = load_one("chess", CHESS, Some(Variant::Twinmove)).unwrap_err();
    assert!(e.contains("16 of another variant"), "{e}");

    // Games too short to pass the skipped opening leave nothing to tune.
    let e = load_one("short.pgn", "1.e4 e5 2.Nf3 1/2-1/2\n", None).unwrap_err();
    assert!(e.contains("no training positions"), "{e}");
}

#[test]
fn rendered_weights_read_back_as_the_weights() {
    let current: Vec<[i32; 2]> = WEIGHTS.to_vec();
    let text = render_weights(&current, &history(current_source()), "test run");
    assert_eq!(parse_weights(&text).unwrap(), current);
    assert!(
        parse_weights("pub const WEIGHTS: [[i32; 2]; 3] = [\n    [1, 2],\n];\n")
            .unwrap_err()
            .contains("has 1 parameters")
    );
    assert!(parse_weights("fn main() {}").is_err());
    assert!(text.contains("//! run: test run\n"));
    let body = &text[text.find("pub const WEIGHTS").unwrap()..];
    let numbers: Vec<i32> = body
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .flat_map(|l| {
            l.split(|c: char| !(c.is_ascii_digit() || c == '-'))
                .filter(|t| !t.is_empty() && *t != "-")
                .map(|t| t.parse::<i32>().unwrap())
                .collect::<Vec<_>>()
        })
        .collect();
    // "[[i32; 2]; NUM_PARAMS]" contributes the 32 and the 2 of its type.
    let values = &numbers[2..];
    assert_eq!(values.len(), NUM_PARAMS * 2);
    let flat: Vec<i32> = current.iter().flat_map(|w| [w[0], w[1]]).collect();
    assert_eq!(values, &flat[..]);
    // And the engine's own file is exactly in this format (apart from its header).
    let own = include_str!("../src/weights.rs");
    assert_eq!(
        &own[own.find("use crate::eval").unwrap()..],
        &text[text.find("use crate::eval").unwrap()..]
    );
}
