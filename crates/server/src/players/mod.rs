//! Players (docs/api.md, "Players"): who is asking ([`auth`]: session cookie or API token, CSRF),
//! accounts and their sessions ([`account`], [`session`]), Glicko-2 ratings ([`rating`]), games
//! started between accounts ([`start`]), seeks and the lobby ([`seeks`]), challenges, rematches
//! and the bot API ([`challenge`], [`bot`]), game chat ([`chat`]), player pages and leaderboards
//! ([`users`]), and the live channels that reach a user or the lobby on any node ([`events`]).

pub mod account;
pub mod auth;
pub mod bot;
pub mod challenge;
pub mod chat;
pub mod events;
pub mod rating;
pub mod seeks;
pub mod session;
pub mod start;
pub mod users;

use crate::engine_pool::ClientKey;
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use std::num::NonZeroU32;
use std::time::Duration;

pub use auth::{Account, Auth};

/// The players' limits and live channels of one node.
pub struct Players {
    /// Login attempts per client IP and per account.
    pub login_ip: DefaultKeyedRateLimiter<ClientKey>,
    pub login_user: DefaultKeyedRateLimiter<String>,
    /// Sign-ups per client IP.
    pub signup_ip: DefaultKeyedRateLimiter<ClientKey>,
    /// Chat lines per writer (account id, or `ip:…` for an anonymous writer).
    pub chat: DefaultKeyedRateLimiter<String>,
    /// Password hashes computed at once (Argon2id takes ~19 MiB and tens of ms each).
    pub hashing: tokio::sync::Semaphore,
    pub bus: events::Bus,
}

fn quota(burst: u32, every: Duration) -> Quota {
    Quota::with_period(every)
        .expect("a non-zero period")
        .allow_burst(NonZeroU32::new(burst).expect("a non-zero burst"))
}

impl Players {
    pub fn new() -> Players {
        Players {
            login_ip: RateLimiter::keyed(quota(20, Duration::from_secs(3))),
            login_user: RateLimiter::keyed(quota(8, Duration::from_secs(10))),
            signup_ip: RateLimiter::keyed(quota(5, Duration::from_secs(60))),
            chat: RateLimiter::keyed(quota(3, Duration::from_secs(1))),
            hashing: tokio::sync::Semaphore::new(2),
            bus: events::Bus::new(),
        }
    }

    /// Forgets idle limiter keys (called now and then, so that the maps stay bounded).
    pub fn retain_recent(&self) {
        self.login_ip.retain_recent();
        self.login_user.retain_recent();
        self.signup_ip.retain_recent();
        self.chat.retain_recent();
    }
}

impl Default for Players {
    fn default() -> Self {
        Players::new()
    }
}

/// A random id of `n` characters from an alphabet without look-alikes.
pub fn new_id(n: usize) -> String {
    const ALPHABET: &[u8] = b"abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
    (0..n)
        .map(|_| ALPHABET[rand::random_range(0..ALPHABET.len())] as char)
        .collect()
}
