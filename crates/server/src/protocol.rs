//! The wire protocol's TypeScript: declarations generated from the Rust types (`ts-rs`) into
//! `web/src/protocol.ts`, so the browser and the server share one definition. A test fails when the
//! committed file is stale; `UPDATE_PROTOCOL=1 cargo test -p doublemove-server protocol` rewrites it.

use crate::game::action::{ClientMessage, DrawAction, MoveAction, TakebackAction};
use crate::game::view::{
    ClockView, ErrorMessage, Legal, Offers, PerSide, PhaseName, Seat, StateKind, TurnKind, TurnView,
};
use crate::game::{Action, ChatRoom, GameState, PlayerRef, Reason, Rematch, Side, TakebackRecord};
use crate::players::challenge::{Challenge, ChallengeStatus, DeclineReason};
use crate::players::chat::{ChatLine, ChatMessage};
use crate::players::events::{LobbyEvent, UserEvent};
use crate::players::rating::PerfView;
use crate::players::seeks::Seek;
use crate::players::start::{ClockSpec, ColorChoice, GameSpec};
use crate::players::users::{BoardEntry, HistoryPoint, Playing};
use crate::store::Status;
use ts_rs::{Config, TS};

/// The generated file's text.
pub fn typescript() -> String {
    let cfg = Config::new().with_large_int("number");
    let decls = [
        Side::decl(&cfg),
        Status::decl(&cfg),
        Reason::decl(&cfg),
        PhaseName::decl(&cfg),
        TurnKind::decl(&cfg),
        StateKind::decl(&cfg),
        Seat::decl(&cfg),
        TurnView::decl(&cfg),
        ClockView::decl(&cfg),
        Offers::decl(&cfg),
        PerSide::<bool>::decl(&cfg),
        Legal::decl(&cfg),
        TakebackRecord::decl(&cfg),
        GameState::decl(&cfg),
        ErrorMessage::decl(&cfg),
        MoveAction::decl(&cfg),
        DrawAction::decl(&cfg),
        TakebackAction::decl(&cfg),
        Action::decl(&cfg),
        ChatRoom::decl(&cfg),
        ClientMessage::decl(&cfg),
        PlayerRef::decl(&cfg),
        Rematch::decl(&cfg),
        ChatLine::decl(&cfg),
        ChatMessage::decl(&cfg),
        PerfView::decl(&cfg),
        ClockSpec::decl(&cfg),
        ColorChoice::decl(&cfg),
        GameSpec::decl(&cfg),
        Seek::decl(&cfg),
        ChallengeStatus::decl(&cfg),
        DeclineReason::decl(&cfg),
        Challenge::decl(&cfg),
        LobbyEvent::decl(&cfg),
        UserEvent::decl(&cfg),
        HistoryPoint::decl(&cfg),
        BoardEntry::decl(&cfg),
        Playing::decl(&cfg),
    ];
    let mut out = String::from(
        "// Generated from the server's Rust types by ts-rs (crates/server/src/protocol.rs).\n\
         // Do not edit: UPDATE_PROTOCOL=1 cargo test -p doublemove-server protocol\n\n",
    );
    for d in decls {
        out.push_str("export ");
        out.push_str(&d);
        out.push_str("\n\n");
    }
    out.truncate(out.trim_end().len());
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    fn committed() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../web/src/protocol.ts")
    }

    #[test]
    fn protocol_ts_is_fresh() {
        let want = super::typescript();
        let path = committed();
        if std::env::var("UPDATE_PROTOCOL").is_ok_and(|v| v == "1") {
            std::fs::write(&path, &want).expect("write web/src/protocol.ts");
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            have == want,
            "web/src/protocol.ts is stale: regenerate it with \
             `UPDATE_PROTOCOL=1 cargo test -p doublemove-server protocol` and commit it"
        );
    }

    #[test]
    fn protocol_declares_the_tagged_unions() {
        let ts = super::typescript();
        assert!(ts.contains("export type Action ="), "{ts}");
        assert!(ts.contains("\"type\": \"move\""), "{ts}");
        assert!(ts.contains("export type GameState ="), "{ts}");
        assert!(ts.contains("\"kind\": \"engine\""), "{ts}");
    }
}
