//! Direct challenges to a named player (accept, decline with a reason, cancel) and rematches.
//! A challenge is accepted once (the store moves it from pending atomically); the game then starts
//! for both. A rematch against the engine starts at once; between people it is an offer on the
//! finished game that the opponent agrees to (colours swapped, same settings).

use super::events::{self, UserEvent};
use super::start::{start_game, ClockSpec, ColorChoice, GameSpec};
use super::{Account, Auth};
use crate::error::ApiError;
use crate::game::{Action, Actor, Live};
use crate::hub::Shared;
use crate::routes::ApiJson;
use crate::store::players::RecordRow;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use rules::Color;
use serde::{Deserialize, Serialize};
use serde_json::json;
use ts_rs::TS;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum ChallengeStatus {
    Pending,
    Accepted,
    Declined,
    Canceled,
}

impl ChallengeStatus {
    fn as_str(self) -> &'static str {
        match self {
            ChallengeStatus::Pending => "pending",
            ChallengeStatus::Accepted => "accepted",
            ChallengeStatus::Declined => "declined",
            ChallengeStatus::Canceled => "canceled",
        }
    }
}

/// Why a challenge was declined (lichess's reasons).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum DeclineReason {
    #[default]
    Generic,
    Later,
    TooFast,
    TooSlow,
    TimeControl,
    Rated,
    Casual,
    Variant,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct Challenge {
    pub id: String,
    pub from: String,
    pub to: String,
    #[serde(flatten)]
    #[ts(flatten)]
    pub spec: GameSpec,
    /// The challenger's colour.
    pub color: ColorChoice,
    pub status: ChallengeStatus,
    pub decline_reason: Option<DeclineReason>,
    pub game_id: Option<String>,
    #[ts(type = "number")]
    pub created_at: i64,
}

impl Challenge {
    fn row(&self) -> RecordRow {
        RecordRow {
            id: self.id.clone(),
            data: serde_json::to_string(self).expect("challenges serialise"),
        }
    }
}

fn parse(r: &RecordRow) -> Result<Challenge, ApiError> {
    serde_json::from_str(&r.data).map_err(ApiError::internal)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChallengeReq {
    #[serde(default = "chess")]
    variant: String,
    #[serde(default)]
    clock: Option<ClockSpec>,
    #[serde(default)]
    days: Option<u32>,
    #[serde(default)]
    rated: bool,
    #[serde(default)]
    color: ColorChoice,
}

fn chess() -> String {
    "chess".into()
}

/// Pending challenges a player may have sent at once.
pub const MAX_OUT: usize = 20;

pub async fn create(
    State(hub): State<Shared>,
    auth: Auth,
    Path(name): Path<String>,
    ApiJson(req): ApiJson<ChallengeReq>,
) -> Result<Response, ApiError> {
    let me = auth.require()?;
    let Some(to) = hub.store.user(&name.to_ascii_lowercase()).await? else {
        return Err(ApiError::not_found(format!("no player named '{name}'")));
    };
    if to.id == me.id {
        return Err(ApiError::bad_request("you cannot challenge yourself"));
    }
    if me.bot && to.kind == "bot" {
        return Err(ApiError::forbidden("bots do not challenge bots here"));
    }
    let spec = GameSpec {
        variant: req.variant,
        clock: req.clock,
        days: req.days,
        rated: req.rated,
    };
    let (variant, _) = spec.check()?;
    let out = hub
        .store
        .challenges_of(&me.id)
        .await?
        .iter()
        .filter_map(|r| parse(r).ok())
        .filter(|c| c.from.eq_ignore_ascii_case(&me.username))
        .count();
    if out >= MAX_OUT {
        return Err(ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            format!("at most {MAX_OUT} open challenges at once"),
        ));
    }
    let now = hub.now();
    let c = Challenge {
        id: super::new_id(8),
        from: me.username.clone(),
        to: to.username.clone(),
        spec: GameSpec {
            variant: variant.name().to_string(),
            ..spec
        },
        color: req.color,
        status: ChallengeStatus::Pending,
        decline_reason: None,
        game_id: None,
        created_at: now,
    };
    hub.store
        .challenge_create(&c.row(), &me.id, &to.id, now)
        .await?;
    events::to_user(
        &hub,
        &to.id,
        &UserEvent::Challenge {
            challenge: c.clone(),
        },
    )
    .await;
    Ok((StatusCode::CREATED, Json(c)).into_response())
}

pub async fn list(
    State(hub): State<Shared>,
    auth: Auth,
) -> Result<Json<serde_json::Value>, ApiError> {
    let me = auth.require()?;
    let all: Vec<Challenge> = hub
        .store
        .challenges_of(&me.id)
        .await?
        .iter()
        .filter_map(|r| parse(r).ok())
        .collect();
    let (out, inc): (Vec<_>, Vec<_>) = all
        .into_iter()
        .partition(|c| c.from.eq_ignore_ascii_case(&me.username));
    Ok(Json(json!({ "in": inc, "out": out })))
}

async fn load(hub: &Shared, id: &str) -> Result<Challenge, ApiError> {
    match hub.store.challenge(id).await? {
        Some(r) => parse(&r),
        None => Err(ApiError::not_found(format!("no challenge '{id}'"))),
    }
}

/// Moves a pending challenge to its end state; 409 if it was settled meanwhile.
async fn settle(hub: &Shared, c: &Challenge) -> Result<(), ApiError> {
    if !hub
        .store
        .challenge_settle(&c.id, c.status.as_str(), &c.row().data)
        .await?
    {
        return Err(ApiError::conflict("the challenge is no longer open"));
    }
    Ok(())
}

async fn tell_gone(hub: &Shared, c: &Challenge, user: &str, reason: &str) {
    let e = UserEvent::ChallengeGone {
        id: c.id.clone(),
        reason: reason.to_string(),
        challenge: c.clone(),
    };
    events::to_user(hub, user, &e).await;
}

pub async fn accept(
    State(hub): State<Shared>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let me = auth.require()?.clone();
    let mut c = load(&hub, &id).await?;
    if !c.to.eq_ignore_ascii_case(&me.username) {
        return Err(ApiError::forbidden("this challenge is not to you"));
    }
    let Some(from) = hub.store.user(&c.from.to_ascii_lowercase()).await? else {
        return Err(ApiError::not_found("the challenger's account is gone"));
    };
    let from = Account::of(&from);
    let game_id = super::new_id(10);
    c.status = ChallengeStatus::Accepted;
    c.game_id = Some(game_id.clone());
    settle(&hub, &c).await?;
    let players = match c.color.pick() {
        Color::White => [Some(&from), Some(&me)],
        Color::Black => [Some(&me), Some(&from)],
    };
    start_game(&hub, game_id.clone(), &c.spec, players, [None, None]).await?;
    tell_gone(&hub, &c, &from.id, "accepted").await;
    Ok(Json(json!({ "game_id": game_id })))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct DeclineReq {
    #[serde(default)]
    reason: DeclineReason,
}

pub async fn decline(
    State(hub): State<Shared>,
    auth: Auth,
    Path(id): Path<String>,
    body: axum::body::Bytes,
) -> Result<Json<Challenge>, ApiError> {
    // The body is optional: no body declines without a reason.
    let req: DeclineReq = if body.iter().all(u8::is_ascii_whitespace) {
        DeclineReq::default()
    } else {
        serde_json::from_slice(&body)
            .map_err(|e| ApiError::bad_request(format!("bad request body: {e}")))?
    };
    let me = auth.require()?;
    let mut c = load(&hub, &id).await?;
    if !c.to.eq_ignore_ascii_case(&me.username) {
        return Err(ApiError::forbidden("this challenge is not to you"));
    }
    c.status = ChallengeStatus::Declined;
    c.decline_reason = Some(req.reason);
    settle(&hub, &c).await?;
    tell_gone(&hub, &c, &c.from.to_ascii_lowercase(), "declined").await;
    Ok(Json(c))
}

pub async fn cancel(
    State(hub): State<Shared>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<Challenge>, ApiError> {
    let me = auth.require()?;
    let mut c = load(&hub, &id).await?;
    if !c.from.eq_ignore_ascii_case(&me.username) {
        return Err(ApiError::forbidden("this challenge is not yours"));
    }
    c.status = ChallengeStatus::Canceled;
    settle(&hub, &c).await?;
    tell_gone(&hub, &c, &c.to.to_ascii_lowercase(), "canceled").await;
    Ok(Json(c))
}

/// The game `live` again with colours swapped: its settings as a spec.
fn rematch_spec(live: &Live) -> GameSpec {
    GameSpec {
        variant: live.variant().name().to_string(),
        clock: live.meta.clock.as_ref().map(|c| ClockSpec {
            limit: c.limit_ms as f64 / 1000.0,
            increment: c.increment_ms as f64 / 1000.0,
        }),
        days: live.meta.days,
        rated: live.meta.rated,
    }
}

/// `POST /api/games/{id}/rematch`: against the engine a new game at once (201, like creating
/// one); between people an offer (`{"offered": true}`), or the rematch itself when the opponent
/// had offered (`{"game_id"}`). The work runs on its own task, so that a client that leaves
/// mid-request cannot leave a rematch half made.
pub async fn rematch(
    State(hub): State<Shared>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let slot = hub.slot(&id).await?;
    let (me, live) = {
        let live = slot.live.lock().await;
        (auth.require_seat(&live)?, live.clone())
    };
    if live.is_live() {
        return Err(crate::game::GameError::NotOver.into());
    }
    if live.meta.rematch.game_id.is_some() {
        return Err(crate::game::GameError::RematchStarted.into());
    }
    tokio::spawn(async move { rematch_task(hub, auth, slot, me, live).await })
        .await
        .map_err(ApiError::internal)?
}

async fn rematch_task(
    hub: Shared,
    auth: Auth,
    slot: std::sync::Arc<crate::hub::Slot>,
    me: Color,
    live: Live,
) -> Result<Response, ApiError> {
    let next_id = super::new_id(10);
    let offer = Action::Rematch {
        next_id: next_id.clone(),
    };
    let agreed = live.engine().is_some()
        || live.meta.rematch.offer == Some(crate::game::Side::from(me.other()));
    if !agreed {
        let state = hub.act(&slot, Actor::Player(me), &offer).await?;
        if state.rematch.game_id.as_deref() != Some(next_id.as_str()) {
            return Ok(Json(json!({ "offered": true })).into_response());
        }
        // The opponent's offer came in meanwhile: ours made the agreement; start it now.
        return start_rematch(&hub, &auth, &live, me, next_id).await;
    }
    // Agreed: the game exists before anyone is told its id.
    let answer = start_rematch(&hub, &auth, &live, me, next_id.clone()).await?;
    match hub.act(&slot, Actor::Player(me), &offer).await {
        Ok(s) if s.rematch.game_id.as_deref() == Some(next_id.as_str()) => Ok(answer),
        other => {
            // Someone else's rematch won the race: this one goes (aborted before any move).
            if let Ok(new) = hub.slot(&next_id).await {
                let engine = new.live.lock().await.engine_color();
                let c = if engine == Some(Color::White) {
                    Color::Black
                } else {
                    Color::White
                };
                let _ = hub.act(&new, Actor::Player(c), &Action::Abort).await;
            }
            match other {
                Err(e) => Err(e),
                Ok(_) => Err(crate::game::GameError::RematchStarted.into()),
            }
        }
    }
}

/// Creates the rematch of `live` as game `next_id`: colours swapped, the same settings, the
/// seats (accounts and anonymous tokens) carried over; against the engine, the engine game's answer.
async fn start_rematch(
    hub: &Shared,
    auth: &Auth,
    live: &Live,
    me: Color,
    next_id: String,
) -> Result<Response, ApiError> {
    if let Some(engine) = live.engine() {
        return crate::routes::rematch_engine(hub, auth, live, me, engine, next_id).await;
    }
    let mut accounts: Vec<Option<Account>> = Vec::new();
    for p in &live.meta.players {
        accounts.push(match p {
            Some(p) => hub.store.user(&p.id()).await?.as_ref().map(Account::of),
            None => None,
        });
    }
    let players = [accounts[1].as_ref(), accounts[0].as_ref()];
    let tokens = [live.meta.tokens[1].clone(), live.meta.tokens[0].clone()];
    start_game(hub, next_id.clone(), &rematch_spec(live), players, tokens).await?;
    Ok(Json(json!({ "game_id": next_id })).into_response())
}

pub async fn rematch_decline(
    State(hub): State<Shared>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<crate::game::GameState>, ApiError> {
    let slot = hub.slot(&id).await?;
    let me = auth.require_seat(&*slot.live.lock().await)?;
    Ok(Json(
        hub.act(&slot, Actor::Player(me), &Action::RematchDecline)
            .await?,
    ))
}
