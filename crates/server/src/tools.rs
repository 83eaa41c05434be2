//! Stateless tools for the analysis board and the editor: PGN import (replayed, nothing stored) and
//! FEN validation.

use crate::error::ApiError;
use crate::game::view::{checked_side, legal_of, PhaseName};
use crate::game::Side;
use crate::routes::{parse_variant, ApiJson};
use axum::Json;
use rules::pgn::read_game;
use rules::Position;
use serde::Deserialize;
use serde_json::{json, Value};

#[derive(Deserialize)]
pub struct ImportReq {
    pgn: String,
    #[serde(default)]
    variant: Option<String>,
}

pub async fn import_pgn(ApiJson(req): ApiJson<ImportReq>) -> Result<Json<Value>, ApiError> {
    let given = match req.variant.as_deref() {
        None => None,
        Some(v) => Some(parse_variant(Some(v))?),
    };
    let (rec, game) =
        read_game(&req.pgn, given).map_err(|e| ApiError::bad_request(e.to_string()))?;
    let turns: Vec<Value> = game
        .turns()
        .iter()
        .zip(
            rec.turns
                .iter()
                .map(|t| t.1.clone())
                .chain(std::iter::repeat(None)),
        )
        .map(|(t, comment)| {
            let end = t.start + t.moves.len();
            json!({
                "color": Side::from(t.color),
                "fullmove": t.fullmove,
                "uci": t.moves.iter().map(|m| m.uci()).collect::<Vec<_>>().join(","),
                "san": game.turn_san(t),
                "fen_after": game.positions()[end].fen(),
                "comment": comment,
            })
        })
        .collect();
    let outcome = game.outcome();
    Ok(Json(json!({
        "variant": game.variant().name(),
        "initial_fen": game.initial().fen(),
        "fen": game.position().fen(),
        "tags": rec.tags.iter().map(|(k, v)| json!([k, v])).collect::<Vec<_>>(),
        "positions": game.positions().iter().map(|p| p.fen()).collect::<Vec<_>>(),
        "moves": game.moves().iter().map(|m| m.uci()).collect::<Vec<_>>(),
        "turns": turns,
        "result": outcome.map(|o| o.result()).or(rec.result.as_deref()),
        "reason_text": outcome.map(|o| o.describe(game.variant())),
        "legal": legal_of(game.position()),
        "check": checked_side(game.position()),
    })))
}

#[derive(Deserialize)]
pub struct FenReq {
    #[serde(default)]
    variant: Option<String>,
    fen: String,
}

pub async fn validate_fen(ApiJson(req): ApiJson<FenReq>) -> Result<Json<Value>, ApiError> {
    let variant = parse_variant(req.variant.as_deref())?;
    Ok(Json(match Position::from_fen(variant, &req.fen) {
        Ok(p) => json!({
            "ok": true,
            "variant": variant.name(),
            "fen": p.fen(),
            "turn": Side::from(p.turn()),
            "phase": PhaseName::from(p.phase()),
            "legal": legal_of(&p),
            "check": checked_side(&p),
            "result": rules::outcome::position_outcome(&p).map(|o| o.result()),
            "reason_text": rules::outcome::position_outcome(&p).map(|o| o.describe(variant)),
        }),
        Err(e) => json!({"ok": false, "error": e.to_string()}),
    }))
}
