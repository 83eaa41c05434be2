//! Stateless tools for the analysis board, the editor and the game page: PGN import (replayed,
//! nothing stored), FEN validation, and one move tried on a position.

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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TryMoveReq {
    #[serde(default)]
    variant: Option<String>,
    fen: String,
    /// UCI.
    #[serde(rename = "move")]
    mv: String,
    /// Double Move Chess: the move begins the Double Move.
    #[serde(default)]
    double: bool,
}

/// `POST /api/position/move`: the position after one legal move (nothing stored): its FEN, SAN,
/// whose turn, and which kings are attacked — e.g. for the game page to ask before a Twinmove turn
/// that leaves the mover's king capturable.
pub async fn try_move(ApiJson(req): ApiJson<TryMoveReq>) -> Result<Json<Value>, ApiError> {
    let variant = parse_variant(req.variant.as_deref())?;
    let pos = Position::from_fen(variant, &req.fen)
        .map_err(|e| ApiError::bad_request(format!("bad FEN: {e}")))?;
    let mv = rules::notation::parse_uci(&pos, &req.mv).map_err(|e| ApiError::bad_request(e.0))?;
    let mv = if req.double { mv.as_double_start() } else { mv };
    let mut game = rules::Game::new(pos);
    game.play(mv).map_err(|reason| {
        ApiError::bad_request(format!("illegal move {}: {reason}", req.mv.trim()))
    })?;
    let next = game.position();
    let attacked = |c: rules::Color| next.board().king_attacked(c);
    Ok(Json(json!({
        "fen": next.fen(),
        "san": rules::notation::san(&pos, mv),
        "turn": Side::from(next.turn()),
        "phase": PhaseName::from(next.phase()),
        "turn_passed": next.turn() != pos.turn() || game.outcome().is_some(),
        "attacked": {"white": attacked(rules::Color::White), "black": attacked(rules::Color::Black)},
        "check": checked_side(next),
        "result": game.outcome().map(|o| o.result()),
    })))
}
