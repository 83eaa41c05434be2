//! What a seek, a challenge or a rematch asks for ([`GameSpec`]: variant, time control, rated,
//! colour) and the one place that starts a game between two players who agreed
//! ([`start_game`]): both seats taken at once, the players told on every node.

use super::events::{self, UserEvent};
use super::Account;
use crate::error::ApiError;
use crate::game::{Clock, Live, Meta, PlayerRef, Side};
use crate::hub::Shared;
use crate::store::Status;
use rules::{Color, Position, Variant};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// The days per turn a correspondence game may have.
pub const DAYS: [u32; 6] = [1, 2, 3, 5, 7, 14];

/// A clock as asked for: seconds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct ClockSpec {
    pub limit: f64,
    #[serde(default)]
    pub increment: f64,
}

/// The colour the asking player wants.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum ColorChoice {
    White,
    Black,
    #[default]
    Random,
}

impl ColorChoice {
    /// The asking player's colour.
    pub fn pick(self) -> Color {
        match self {
            ColorChoice::White => Color::White,
            ColorChoice::Black => Color::Black,
            ColorChoice::Random if rand::random::<bool>() => Color::White,
            ColorChoice::Random => Color::Black,
        }
    }
}

/// A game as asked for by a seek, challenge or rematch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct GameSpec {
    pub variant: String,
    pub clock: Option<ClockSpec>,
    pub days: Option<u32>,
    pub rated: bool,
}

impl GameSpec {
    /// Checks a request: a known variant, a valid clock or days per turn (not both), and a rated
    /// game only with a clock or days.
    pub fn check(&self) -> Result<(Variant, Option<Clock>), ApiError> {
        let variant: Variant = self
            .variant
            .parse()
            .map_err(|e| ApiError::bad_request(format!("{e}")))?;
        if self.clock.is_some() && self.days.is_some() {
            return Err(ApiError::bad_request(
                "give either \"clock\" or \"days\", not both",
            ));
        }
        if let Some(d) = self.days {
            if !DAYS.contains(&d) {
                return Err(ApiError::bad_request(format!(
                    "days per turn must be one of {DAYS:?}, not {d}"
                )));
            }
        }
        let clock = match self.clock {
            Some(c) => Some(
                Clock::from_seconds(c.limit, c.increment)
                    .map_err(|e| ApiError::bad_request(e.0))?,
            ),
            None => None,
        };
        if self.rated && clock.is_none() && self.days.is_none() {
            return Err(ApiError::bad_request(
                "a rated game needs a clock or days per turn",
            ));
        }
        Ok((variant, clock))
    }

    /// Real time (a clock), as opposed to correspondence or unlimited.
    pub fn realtime(&self) -> bool {
        self.clock.is_some()
    }
}

/// Starts game `id` between `white` and `black` as `spec` says; both are told (`game_start`).
/// `tokens`: seat tokens to carry over (a rematch of anonymous players keeps theirs).
pub async fn start_game(
    hub: &Shared,
    id: String,
    spec: &GameSpec,
    players: [Option<&Account>; 2],
    tokens: [Option<String>; 2],
) -> Result<String, ApiError> {
    let (variant, clock) = spec.check()?;
    let mut refs: [Option<PlayerRef>; 2] = [None, None];
    for (i, a) in players.iter().enumerate() {
        if let Some(a) = a {
            refs[i] = Some(super::rating::player_ref(&*hub.store, a, variant.name()).await?);
        }
    }
    let rated = spec.rated && refs.iter().all(Option::is_some);
    let meta = Meta {
        clock,
        days: spec.days,
        rated,
        players: refs,
        ..Meta::new(None, tokens)
    };
    let now = hub.now();
    let mut live = Live::new(id, Position::start(variant), meta, Status::Waiting, now);
    live.begin(now);
    let game_id = live.id.clone();
    let owner = players
        .iter()
        .flatten()
        .next()
        .map_or_else(crate::engine_pool::ClientKey::connection, |a| {
            crate::engine_pool::ClientKey::account(a.id.clone())
        });
    hub.create(live, (owner, None)).await?;
    for (c, a) in [Color::White, Color::Black].into_iter().zip(players) {
        if let Some(a) = a {
            let e = UserEvent::GameStart {
                game_id: game_id.clone(),
                color: Side::from(c),
                variant: variant.name().to_string(),
            };
            events::to_user(hub, &a.id, &e).await;
        }
    }
    Ok(game_id)
}
