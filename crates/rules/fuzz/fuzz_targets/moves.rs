//! UCI/SAN move parsing and comma turns (`Game::play_turn_text`). The first byte picks the position
//! (a variant's start, Kiwipete, a bare-kings position, or a mid-turn one); the rest is the text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rules::notation::{parse_move, parse_san, parse_uci, san, why_illegal};
use rules::{Game, Position, Variant};

const KIWIPETE: &str = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";

fn positions() -> Vec<Position> {
    let mut out = Vec::new();
    for v in Variant::ALL {
        let (start_of_turn, mid_turn) = match v {
            Variant::Chess => ("", None),
            Variant::TwoMove => (" T", Some(" Hd5")),
            Variant::DoubleMove => (" WB", Some(" -Bm")),
            Variant::Twinmove => (" T", Some(" P")),
        };
        out.push(Position::start(v));
        out.push(Position::from_fen(v, &format!("{KIWIPETE}{start_of_turn}")).unwrap());
        out.push(
            Position::from_fen(v, &format!("4k3/8/8/8/8/8/8/4K3 w - - 0 1{start_of_turn}"))
                .unwrap(),
        );
        if let Some(m) = mid_turn {
            out.push(Position::from_fen(v, &format!("{KIWIPETE}{m}")).unwrap());
        }
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let all = positions();
    let pos = all[which as usize % all.len()];
    for r in [
        parse_move(&pos, text),
        parse_uci(&pos, text),
        parse_san(&pos, text),
    ] {
        match r {
            Ok(m) => {
                if why_illegal(&pos, m).is_none() {
                    let child = pos.after(m);
                    assert_eq!(child.hash(), child.compute_hash());
                    let _ = san(&pos, m);
                }
            }
            Err(e) => assert!(!e.to_string().trim().is_empty(), "empty error for {text:?}"),
        }
    }
    for allow_incomplete in [false, true] {
        let mut game = Game::new(pos);
        if let Err(e) = game.play_turn_text(text, allow_incomplete) {
            assert!(!e.reason.trim().is_empty(), "empty reason for {text:?}");
            assert_eq!(game.position(), &pos, "a refused turn changed the game");
        }
    }
});
