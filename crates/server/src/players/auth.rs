//! Who is asking: an account (by the session cookie, or a personal API token `dmp_…` sent as
//! `Authorization: Bearer`), and/or a game seat token (anonymous play). Cookie-authenticated
//! changes must come from our own pages (the Origin check of [`csrf`]).

use crate::error::ApiError;
use crate::game::Live;
use crate::hub::Shared;
use crate::store::players::UserRow;
use axum::extract::{FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rules::Color;
use sha2::{Digest, Sha256};
use tower_sessions::Session;

/// The session key that holds the account id.
pub const USER_KEY: &str = "user";
/// The session cookie's name.
pub const COOKIE: &str = "dm_session";
/// The prefix of personal API tokens (game seat tokens are bare hex).
pub const TOKEN_PREFIX: &str = "dmp_";

/// A logged-in account.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Account {
    /// The username in lowercase.
    pub id: String,
    pub username: String,
    pub bot: bool,
}

impl Account {
    pub fn of(u: &UserRow) -> Account {
        Account {
            id: u.id.clone(),
            username: u.username.clone(),
            bot: u.kind == "bot",
        }
    }
}

/// The credentials of a request.
#[derive(Clone, Debug, Default)]
pub struct Auth {
    pub account: Option<Account>,
    /// A game seat token (a Bearer that is not an API token, or a socket's `?token=`).
    pub seat_token: Option<String>,
    /// The account came from an API token (not the session).
    pub by_token: bool,
}

/// The SHA-256 of an API token, as stored.
pub fn token_hash(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn bearer(headers: &HeaderMap) -> Option<String> {
    let v = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    v.strip_prefix("Bearer ").map(|t| t.trim().to_string())
}

impl Auth {
    /// The account, or 401.
    pub fn require(&self) -> Result<&Account, ApiError> {
        self.account
            .as_ref()
            .ok_or_else(|| ApiError::unauthorized("sign in first (or send an API token)"))
    }

    /// A human account (bots play through challenges and the bot API only), or 401/403.
    pub fn require_human(&self) -> Result<&Account, ApiError> {
        let a = self.require()?;
        if a.bot {
            return Err(ApiError::forbidden(
                "bot accounts play through challenges and the bot API",
            ));
        }
        Ok(a)
    }

    /// The requester's seat in `live`: by account, else by seat token.
    pub fn seat(&self, live: &Live) -> Option<Color> {
        self.account
            .as_ref()
            .and_then(|a| live.color_of_user(&a.id))
            .or_else(|| {
                self.seat_token
                    .as_deref()
                    .and_then(|t| live.color_of_token(t))
            })
    }

    /// The seat, or why not (401 with nothing to go by, 403 for a stranger).
    pub fn require_seat(&self, live: &Live) -> Result<Color, ApiError> {
        match self.seat(live) {
            Some(c) => Ok(c),
            None if self.account.is_none() && self.seat_token.is_none() => {
                Err(crate::game::GameError::NoToken.into())
            }
            None => Err(crate::game::GameError::NotAPlayer.into()),
        }
    }

    /// Reads the credentials of a request: `Authorization: Bearer` (an API token, or a seat
    /// token) and the session (cookie).
    pub async fn read(
        hub: &Shared,
        headers: &HeaderMap,
        session: Option<&Session>,
    ) -> Result<Auth, ApiError> {
        let mut auth = Auth::default();
        if let Some(b) = bearer(headers) {
            if b.starts_with(TOKEN_PREFIX) {
                let Some(id) = hub.store.token_user(&token_hash(&b)).await? else {
                    return Err(ApiError::unauthorized("unknown API token"));
                };
                auth.account = hub.store.user(&id).await?.as_ref().map(Account::of);
                auth.by_token = true;
                return Ok(auth);
            }
            auth.seat_token = Some(b);
        }
        if let Some(s) = session {
            let id: Option<String> = s.get(USER_KEY).await.map_err(|e| {
                tracing::warn!("session unreadable: {e}");
                ApiError::new(
                    axum::http::StatusCode::SERVICE_UNAVAILABLE,
                    "sessions are unavailable",
                )
            })?;
            if let Some(id) = id {
                auth.account = hub.store.user(&id).await?.as_ref().map(Account::of);
            }
        }
        Ok(auth)
    }
}

impl FromRequestParts<Shared> for Auth {
    type Rejection = ApiError;
    async fn from_request_parts(parts: &mut Parts, hub: &Shared) -> Result<Auth, ApiError> {
        let session = parts.extensions.get::<Session>().cloned();
        Auth::read(hub, &parts.headers, session.as_ref()).await
    }
}

/// Whether a request carries our session cookie.
fn has_session_cookie(headers: &HeaderMap) -> bool {
    headers.get_all(header::COOKIE).iter().any(|v| {
        v.to_str().is_ok_and(|s| {
            s.split(';')
                .any(|c| c.trim_start().starts_with(&format!("{COOKIE}=")))
        })
    })
}

/// CSRF protection: a change (not GET/HEAD/OPTIONS) authenticated by the session cookie alone
/// must name our own site in `Origin` (or, without it, `Referer`). SameSite=Lax already keeps
/// the cookie off most cross-site requests; this covers the rest (and old browsers).
pub async fn csrf(req: Request, next: Next) -> Response {
    let safe = matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS);
    let headers = req.headers();
    if !safe && has_session_cookie(headers) && bearer(headers).is_none() {
        let ok = if headers.contains_key(header::ORIGIN) {
            crate::limits::origin_allowed(headers, None)
        } else {
            referer_same_site(headers)
        };
        if !ok {
            return ApiError::forbidden(
                "cross-site request refused: a change made with the session cookie must come from this site's pages",
            )
            .into_response();
        }
    }
    next.run(req).await
}

fn referer_same_site(headers: &HeaderMap) -> bool {
    let Some(r) = headers.get(header::REFERER).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let Some((scheme, rest)) = r.split_once("://") else {
        return false;
    };
    let authority = rest.split('/').next().unwrap_or("");
    let mut h = HeaderMap::new();
    let Ok(origin) = format!("{scheme}://{authority}").parse() else {
        return false;
    };
    h.insert(header::ORIGIN, origin);
    if let Some(host) = headers.get(header::HOST) {
        h.insert(header::HOST, host.clone());
    }
    crate::limits::origin_allowed(&h, None)
}
