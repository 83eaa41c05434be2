//! Extended FEN in every variant: no panic, errors carry a message, and an accepted FEN re-serialises
//! to a FEN that parses to an equal position whose moves can be generated, played and written in SAN.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rules::notation::{parse_san, san};
use rules::{Position, Variant};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for v in Variant::ALL {
        match Position::from_fen(v, text) {
            Ok(pos) => {
                let fen = pos.fen();
                let back = Position::from_fen(v, &fen).unwrap_or_else(|e| {
                    panic!("{v}: {text:?} accepted, its FEN {fen} refused: {e}")
                });
                assert_eq!(back, pos, "{v}: {text:?} -> {fen}");
                assert_eq!(pos.hash(), pos.compute_hash(), "{v}: {fen}");
                for &m in pos.legal_moves().iter() {
                    let child = pos.after(m);
                    assert_eq!(child.hash(), child.compute_hash(), "{v}: {fen} {m:?}");
                    let s = san(&pos, m);
                    assert_eq!(
                        parse_san(&pos, &s),
                        Ok(m.chess_move()),
                        "{v}: {fen} SAN {s}"
                    );
                }
            }
            Err(e) => assert!(
                !e.reason.trim().is_empty(),
                "{v}: empty reason for {text:?}"
            ),
        }
    }
});
