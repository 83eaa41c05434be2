//! Databases of the first server (one JSON record per game in a `games(id, status, variant,
//! created_at, updated_at, data)` table) are imported into the current schema when they are first
//! opened: this module turns one old record into a stored game (header row and move rows).

use super::clock::Clock;
use super::live::Live;
use super::record::{EngineSeat, Imposed, Meta, Reason, Side, TakebackRecord};
use crate::store::{Status, StoredGame};
use serde::Deserialize;

#[derive(Deserialize)]
struct OldClock {
    limit_ms: i64,
    increment_ms: i64,
    remaining_ms: [i64; 2],
}

#[derive(Deserialize)]
struct OldImposed {
    winner: Option<String>,
    reason: String,
}

#[derive(Deserialize)]
struct OldTakeback {
    by: String,
    from_ply: usize,
    to_ply: usize,
    at_ms: i64,
}

#[derive(Deserialize)]
struct Old {
    id: String,
    variant: String,
    initial_fen: String,
    moves: Vec<String>,
    status: Status,
    imposed: Option<OldImposed>,
    engine_level: Option<u8>,
    engine_color: Option<String>,
    tokens: [Option<String>; 2],
    invite: Option<String>,
    public: bool,
    clock: Option<OldClock>,
    turn_clocks: Vec<Option<i64>>,
    draw_offer: Option<String>,
    takeback_offer: Option<String>,
    takebacks: Vec<OldTakeback>,
    takebacks_used: [u32; 2],
    created_at: i64,
    updated_at: i64,
}

fn side(s: &str) -> Result<Side, String> {
    Side::parse(s).ok_or_else(|| format!("unknown colour '{s}'"))
}

/// One old record as a stored game; a running clock runs again from `now` (the old server did not
/// charge downtime either).
pub fn convert(json: &str, now: i64) -> Result<StoredGame, String> {
    let old: Old = serde_json::from_str(json).map_err(|e| format!("old record: {e}"))?;
    let imposed = match &old.imposed {
        None => None,
        Some(i) => Some(Imposed {
            winner: i.winner.as_deref().map(side).transpose()?,
            reason: serde_json::from_value::<Reason>(serde_json::Value::String(i.reason.clone()))
                .map_err(|_| format!("unknown result reason '{}'", i.reason))?,
        }),
    };
    let engine = match (old.engine_level, old.engine_color.as_deref()) {
        (Some(level), Some(c)) => Some(EngineSeat {
            level,
            color: side(c)?,
        }),
        _ => None,
    };
    let meta = Meta {
        engine,
        tokens: old.tokens,
        invite: old.invite,
        public: old.public,
        clock: old.clock.map(|c| Clock {
            limit_ms: c.limit_ms,
            increment_ms: c.increment_ms,
            remaining_ms: c.remaining_ms,
            running: None,
        }),
        draw_offer: old.draw_offer.as_deref().map(side).transpose()?,
        takeback_offer: old.takeback_offer.as_deref().map(side).transpose()?,
        takebacks: old
            .takebacks
            .iter()
            .map(|t| {
                Ok(TakebackRecord {
                    by: side(&t.by)?,
                    from_ply: t.from_ply,
                    to_ply: t.to_ply,
                    at_ms: t.at_ms,
                })
            })
            .collect::<Result<_, String>>()?,
        takebacks_used: old.takebacks_used,
        imposed,
        ..Meta::new(None, [None, None])
    };
    let moves = old
        .moves
        .iter()
        .enumerate()
        .map(|(i, uci)| crate::store::MoveRow {
            ply: i as i32,
            uci: uci.clone(),
            clock_ms: None,
            at: old.updated_at,
        })
        .collect();
    let mut stored = StoredGame {
        row: crate::store::GameRow {
            id: old.id,
            variant: old.variant,
            status: old.status,
            created_at: old.created_at,
            updated_at: old.updated_at,
            version: 1,
            initial_fen: old.initial_fen,
            meta: serde_json::to_string(&meta).map_err(|e| e.to_string())?,
            flag_at: None,
            engine_to_move: false,
            white_user: None,
            black_user: None,
            rated: false,
            winner: None,
        },
        moves,
    };
    // Rebuild to check every move, put each turn's clock on its last move, and start the clock.
    let mut live = Live::from_stored(stored.clone())?;
    for (t, clock) in live.game.turns().iter().zip(&old.turn_clocks) {
        let last = t.start + t.moves.len() - 1;
        if let Some(m) = live.moves.get_mut(last) {
            m.clock_ms = *clock;
        }
    }
    live.restart_clock(now);
    stored = live.to_stored();
    Ok(stored)
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_old_record_becomes_the_same_game() {
        // A record as the first server stored it: a Double Move game in progress with a clock.
        let old = r#"{"id":"k7QzP2mWxa","variant":"double-move",
            "initial_fen":"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 WB",
            "moves":["e2e4*","d2d4","e7e5"],"status":"started","imposed":null,
            "engine_level":null,"engine_color":null,"tokens":["wt","bt"],"invite":"inv",
            "public":false,"clock":{"limit_ms":300000,"increment_ms":2000,"remaining_ms":[290000,299000]},
            "turn_clocks":[null,null],"draw_offer":"black","takeback_offer":null,
            "takebacks":[{"by":"white","from_ply":3,"to_ply":1,"at_ms":5}],"takebacks_used":[1,0],
            "created_at":1,"updated_at":2}"#;
        let s = super::convert(old, 1_000).unwrap();
        assert_eq!(s.row.id, "k7QzP2mWxa");
        assert_eq!(s.row.status, crate::store::Status::Started);
        assert_eq!(s.moves.len(), 3);
        assert_eq!(s.moves[0].uci, "e2e4*");
        let live = crate::game::Live::from_stored(s).unwrap();
        assert_eq!(live.color_of_token("bt"), Some(rules::Color::Black));
        assert_eq!(live.meta.draw_offer, Some(crate::game::Side::Black));
        assert_eq!(live.meta.takebacks_used, [1, 0]);
        let c = live.meta.clock.as_ref().unwrap();
        assert_eq!(c.remaining_ms, [290_000, 299_000]);
        // White to move, both sides have played a turn: White's clock runs from the import.
        assert_eq!(c.running_side(), Some(rules::Color::White));
        assert_eq!(live.flag_at(), Some(1_000 + 290_000));
        // A finished game keeps its result.
        let done = old
            .replace(r#""status":"started""#, r#""status":"finished""#)
            .replace(
                r#""imposed":null"#,
                r#""imposed":{"winner":"black","reason":"resignation"}"#,
            );
        let live = crate::game::Live::from_stored(super::convert(&done, 1_000).unwrap()).unwrap();
        assert_eq!(
            live.state(crate::game::StateKind::GameFull, 0).reason,
            Some(crate::game::Reason::Resignation)
        );
        assert!(super::convert("{}", 0).is_err());
    }
}
