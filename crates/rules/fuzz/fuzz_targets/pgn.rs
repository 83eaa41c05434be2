//! PGN reading with no variant given and with each variant: no panic, errors carry a message.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rules::pgn::read_game;
use rules::Variant;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for v in std::iter::once(None).chain(Variant::ALL.into_iter().map(Some)) {
        match read_game(&text, v) {
            Ok((_, game)) => {
                let end = game.position();
                assert_eq!(end.hash(), end.compute_hash());
            }
            Err(e) => assert!(!e.to_string().trim().is_empty(), "empty error for {text:?}"),
        }
    }
});
