//! Glicko-2 ratings (the `skillratings` crate) as lichess and pychess use them: τ = 0.75, a new
//! player at 1500 / RD 350 / volatility 0.06, each game its own rating period, provisional while
//! RD > 110; one rating per variant. [`settle`] computes the change a rated game's result makes,
//! written by the store in the same transaction as the result.

use crate::game::{Live, PlayerRef};
use crate::store::players::{PerfRow, RatingWrite};
use crate::store::{Status, Store, StoreResult};
use rules::outcome::Outcome;
use rules::{Color, Variant};
use serde::{Deserialize, Serialize};
use skillratings::glicko2::{glicko2, Glicko2Config, Glicko2Rating};
use skillratings::Outcomes;
use std::collections::BTreeMap;
use ts_rs::TS;

pub const TAU: f64 = 0.75;
pub const START_RATING: f64 = 1500.0;
pub const START_RD: f64 = 350.0;
pub const START_VOL: f64 = 0.06;
/// Provisional while the deviation is above this.
pub const PROVISIONAL_RD: f64 = 110.0;

/// A rating as shown: rounded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct PerfView {
    pub rating: i32,
    pub rd: i32,
    #[ts(type = "number")]
    pub games: i64,
    pub provisional: bool,
}

impl PerfView {
    pub fn of(p: Option<&PerfRow>) -> PerfView {
        let (rating, rd, games) =
            p.map_or((START_RATING, START_RD, 0), |p| (p.rating, p.rd, p.games));
        PerfView {
            rating: rating.round() as i32,
            rd: rd.round() as i32,
            games,
            provisional: rd > PROVISIONAL_RD,
        }
    }
}

/// Every variant's rating of a player, by variant name (`chess`, `two-move`, …).
pub fn perfs_view(rows: &[PerfRow]) -> BTreeMap<String, PerfView> {
    Variant::ALL
        .iter()
        .map(|v| {
            let row = rows.iter().find(|r| r.variant == v.name());
            (v.name().to_string(), PerfView::of(row))
        })
        .collect()
}

fn start_perf(user_id: &str, variant: &str) -> PerfRow {
    PerfRow {
        user_id: user_id.to_string(),
        variant: variant.to_string(),
        rating: START_RATING,
        rd: START_RD,
        vol: START_VOL,
        games: 0,
        updated_at: 0,
    }
}

/// A player's rating row in a variant (the start values if they have none).
pub async fn perf_of(store: &dyn Store, user_id: &str, variant: &str) -> StoreResult<PerfRow> {
    Ok(store
        .perfs(user_id)
        .await?
        .into_iter()
        .find(|p| p.variant == variant)
        .unwrap_or_else(|| start_perf(user_id, variant)))
}

/// The seat of an account as it starts a game: name, bot or not, rating in `variant`.
pub async fn player_ref(
    store: &dyn Store,
    a: &super::Account,
    variant: &str,
) -> StoreResult<PlayerRef> {
    let p = PerfView::of(Some(&perf_of(store, &a.id, variant).await?));
    Ok(PlayerRef {
        username: a.username.clone(),
        rating: Some(p.rating),
        provisional: p.provisional,
        bot: a.bot,
        rating_diff: None,
    })
}

/// One Glicko-2 rating period with one game: `a`'s and `b`'s new values; `score` is `a`'s (1, ½, 0).
pub fn update(a: &PerfRow, b: &PerfRow, score: f64, now: i64) -> (PerfRow, PerfRow) {
    let r = |p: &PerfRow| Glicko2Rating {
        rating: p.rating,
        deviation: p.rd,
        volatility: p.vol,
    };
    let outcome = if score > 0.75 {
        Outcomes::WIN
    } else if score < 0.25 {
        Outcomes::LOSS
    } else {
        Outcomes::DRAW
    };
    let cfg = Glicko2Config {
        tau: TAU,
        convergence_tolerance: 0.000_001,
    };
    let (na, nb) = glicko2(&r(a), &r(b), &outcome, &cfg);
    let next = |p: &PerfRow, n: Glicko2Rating| PerfRow {
        rating: n.rating,
        rd: n.deviation,
        vol: n.volatility,
        games: p.games + 1,
        updated_at: now,
        ..p.clone()
    };
    (next(a, na), next(b, nb))
}

/// Whether the change from `before` to `next` ends a rated game that counts: both seats are
/// accounts and both sides completed a turn (earlier, it could only have been aborted).
pub fn counts(before: &Live, next: &Live) -> bool {
    let n = next.completed_turns();
    next.meta.rated
        && before.status == Status::Started
        && next.status == Status::Finished
        && n[0] >= 1
        && n[1] >= 1
        && next.meta.players.iter().all(Option::is_some)
}

/// The rating writes of a rated game that just ended (see [`counts`]), read from the players'
/// current ratings; puts each side's rating change into the game's record.
pub async fn settle(store: &dyn Store, next: &mut Live, now: i64) -> StoreResult<Vec<RatingWrite>> {
    let (Some(w), Some(b)) = (&next.meta.players[0], &next.meta.players[1]) else {
        return Ok(Vec::new());
    };
    let Some(outcome) = next.game.outcome() else {
        return Ok(Vec::new());
    };
    let variant = next.variant().name();
    let (wid, bid) = (w.id(), b.id());
    let pw = perf_of(store, &wid, variant).await?;
    let pb = perf_of(store, &bid, variant).await?;
    let score = match outcome {
        Outcome::Win {
            winner: Color::White,
            ..
        } => 1.0,
        Outcome::Win { .. } => 0.0,
        Outcome::Draw(_) => 0.5,
    };
    let (nw, nb) = update(&pw, &pb, score, now);
    let diff = |old: &PerfRow, new: &PerfRow| new.rating.round() as i32 - old.rating.round() as i32;
    if let Some(p) = next.meta.players[0].as_mut() {
        p.rating_diff = Some(diff(&pw, &nw));
    }
    if let Some(p) = next.meta.players[1].as_mut() {
        p.rating_diff = Some(diff(&pb, &nb));
    }
    let id = next.id.clone();
    Ok(vec![
        RatingWrite {
            prev_games: pw.games,
            perf: nw,
            game_id: id.clone(),
        },
        RatingWrite {
            prev_games: pb.games,
            perf: nb,
            game_id: id,
        },
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Glickman's worked example is for several games; a one-game period from the start values
    /// must move a winner up by the same amount a loser goes down.
    #[test]
    fn a_first_game_between_new_players_is_symmetric() {
        let a = start_perf("a", "chess");
        let b = start_perf("b", "chess");
        let (na, nb) = update(&a, &b, 1.0, 5);
        assert!(na.rating > 1600.0 && na.rating < 1700.0, "{}", na.rating);
        assert!((na.rating - 1500.0 + nb.rating - 1500.0).abs() < 1e-9);
        assert!(na.rd < 350.0 && na.rd > 250.0, "{}", na.rd);
        assert_eq!((na.games, nb.games, na.updated_at), (1, 1, 5));
        let (da, db) = update(&a, &b, 0.5, 5);
        assert!((da.rating - 1500.0).abs() < 1e-9 && (db.rating - 1500.0).abs() < 1e-9);
    }

    #[test]
    fn provisional_until_rd_110() {
        let mut p = start_perf("a", "chess");
        assert!(PerfView::of(Some(&p)).provisional);
        p.rd = 110.0;
        assert!(!PerfView::of(Some(&p)).provisional);
        assert_eq!(PerfView::of(None).rating, 1500);
    }
}
