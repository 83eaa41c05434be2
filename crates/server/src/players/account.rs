//! Accounts: sign up, log in, log out, who am I, personal API tokens. Passwords are hashed with
//! Argon2id (the `argon2` crate, its default parameters) on a blocking thread, at most two at
//! once; they are never logged or returned. Login attempts are rate-limited per client address
//! and per account.

use super::auth::{token_hash, USER_KEY};
use super::Auth;
use crate::engine_pool::ClientKey;
use crate::error::ApiError;
use crate::hub::Shared;
use crate::routes::ApiJson;
use crate::store::players::UserRow;
use crate::store::StoreError;
use argon2::password_hash::{
    rand_core::OsRng, PasswordHash, PasswordHasher, PasswordVerifier, SaltString,
};
use argon2::Argon2;
use axum::extract::{ConnectInfo, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::json;
use std::net::SocketAddr;
use tower_sessions::Session;

pub const MIN_PASSWORD: usize = 6;
pub const MAX_PASSWORD: usize = 128;
/// API tokens per account.
pub const MAX_TOKENS: i64 = 20;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Credentials {
    username: String,
    password: String,
}

/// A username is 2–20 of `A-Z a-z 0-9 _ -`.
pub fn check_username(name: &str) -> Result<(), ApiError> {
    let ok_len = (2..=20).contains(&name.len());
    let ok_chars = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !ok_len || !ok_chars {
        return Err(ApiError::bad_request(
            "a username has 2 to 20 characters, each a letter, digit, '_' or '-'",
        ));
    }
    Ok(())
}

fn check_password(p: &str) -> Result<(), ApiError> {
    let n = p.chars().count();
    if !(MIN_PASSWORD..=MAX_PASSWORD).contains(&n) {
        return Err(ApiError::bad_request(format!(
            "a password has {MIN_PASSWORD} to {MAX_PASSWORD} characters"
        )));
    }
    Ok(())
}

/// Runs a password hash or check on a blocking thread, at most two at once.
async fn hashing<T: Send + 'static>(
    hub: &Shared,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ApiError> {
    let _permit = hub
        .players
        .hashing
        .acquire()
        .await
        .map_err(|_| ApiError::unavailable("shutting down"))?;
    tokio::task::spawn_blocking(f)
        .await
        .map_err(ApiError::internal)
}

fn client(peer: &Option<Extension<ConnectInfo<SocketAddr>>>) -> ClientKey {
    match peer {
        Some(Extension(addr)) => crate::limits::client_key(addr),
        None => ClientKey::connection(),
    }
}

fn too_many(what: &str) -> ApiError {
    ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        format!("too many {what}: wait a minute and try again"),
    )
}

async fn log_in(session: &Session, id: &str) -> Result<(), ApiError> {
    // A new session id on login (no fixation).
    session
        .cycle_id()
        .await
        .map_err(|e| ApiError::unavailable(format!("session: {e}")))?;
    session
        .insert(USER_KEY, id)
        .await
        .map_err(|e| ApiError::unavailable(format!("session: {e}")))
}

pub async fn signup(
    State(hub): State<Shared>,
    peer: Option<Extension<ConnectInfo<SocketAddr>>>,
    session: Session,
    ApiJson(req): ApiJson<Credentials>,
) -> Result<Response, ApiError> {
    check_username(&req.username)?;
    check_password(&req.password)?;
    if hub.players.signup_ip.check_key(&client(&peer)).is_err() {
        return Err(too_many("sign-ups from your address"));
    }
    let id = req.username.to_ascii_lowercase();
    if hub.store.user(&id).await?.is_some() {
        return Err(ApiError::conflict("this username is taken"));
    }
    let password = req.password;
    let hash = hashing(&hub, move || {
        Argon2::default()
            .hash_password(password.as_bytes(), &SaltString::generate(&mut OsRng))
            .map(|h| h.to_string())
    })
    .await?
    .map_err(ApiError::internal)?;
    let user = UserRow {
        id: id.clone(),
        username: req.username.clone(),
        password_hash: hash,
        kind: "human".into(),
        created_at: hub.now(),
    };
    match hub.store.user_create(&user).await {
        Ok(()) => {}
        Err(StoreError::Conflict) => return Err(ApiError::conflict("this username is taken")),
        Err(e) => return Err(e.into()),
    }
    log_in(&session, &id).await?;
    let body = json!({"username": user.username, "kind": "human"});
    Ok((StatusCode::CREATED, Json(body)).into_response())
}

pub async fn login(
    State(hub): State<Shared>,
    peer: Option<Extension<ConnectInfo<SocketAddr>>>,
    session: Session,
    ApiJson(req): ApiJson<Credentials>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let id = req.username.to_ascii_lowercase();
    if hub.players.login_ip.check_key(&client(&peer)).is_err() {
        return Err(too_many("login attempts from your address"));
    }
    if id.len() <= 64 && hub.players.login_user.check_key(&id).is_err() {
        return Err(too_many("login attempts for this account"));
    }
    let wrong = || ApiError::unauthorized("wrong username or password");
    if req.password.len() > 4 * MAX_PASSWORD {
        return Err(wrong());
    }
    let user = hub.store.user(&id).await?;
    let stored = user.as_ref().map(|u| u.password_hash.clone());
    let password = req.password;
    // An unknown user costs the same hash as a known one.
    let ok = hashing(&hub, move || {
        let decoy;
        let phc = match &stored {
            Some(s) => s.as_str(),
            None => {
                decoy = Argon2::default()
                    .hash_password(b"decoy", &SaltString::generate(&mut OsRng))
                    .map(|h| h.to_string())
                    .unwrap_or_default();
                decoy.as_str()
            }
        };
        stored.is_some()
            && PasswordHash::new(phc).is_ok_and(|h| {
                Argon2::default()
                    .verify_password(password.as_bytes(), &h)
                    .is_ok()
            })
    })
    .await?;
    let (true, Some(user)) = (ok, user) else {
        return Err(wrong());
    };
    log_in(&session, &user.id).await?;
    Ok(Json(json!({"username": user.username, "kind": user.kind})))
}

pub async fn logout(session: Session) -> Result<StatusCode, ApiError> {
    session
        .flush()
        .await
        .map_err(|e| ApiError::unavailable(format!("session: {e}")))?;
    Ok(StatusCode::NO_CONTENT)
}

pub async fn me(
    State(hub): State<Shared>,
    auth: Auth,
) -> Result<Json<serde_json::Value>, ApiError> {
    let me = auth.require()?;
    let Some(u) = hub.store.user(&me.id).await? else {
        return Err(ApiError::unauthorized("sign in first"));
    };
    let perfs = super::rating::perfs_view(&hub.store.perfs(&me.id).await?);
    Ok(Json(json!({
        "username": u.username,
        "kind": u.kind,
        "perfs": perfs,
        "created_at": u.created_at,
    })))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenReq {
    #[serde(default)]
    description: String,
}

/// A new personal API token (shown once; only its hash is kept). Needs the session: a token
/// cannot make more tokens.
pub async fn token(
    State(hub): State<Shared>,
    auth: Auth,
    ApiJson(req): ApiJson<TokenReq>,
) -> Result<Response, ApiError> {
    let me = auth.require()?;
    if auth.by_token {
        return Err(ApiError::forbidden(
            "create API tokens while signed in, not with a token",
        ));
    }
    if req.description.chars().count() > 100 {
        return Err(ApiError::bad_request(
            "a token description has at most 100 characters",
        ));
    }
    if hub.store.token_count(&me.id).await? >= MAX_TOKENS {
        return Err(ApiError::conflict(format!(
            "an account has at most {MAX_TOKENS} API tokens"
        )));
    }
    let bytes: [u8; 24] = rand::random();
    let token = format!(
        "{}{}",
        super::auth::TOKEN_PREFIX,
        bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
    );
    hub.store
        .token_create(&token_hash(&token), &me.id, &req.description, hub.now())
        .await?;
    Ok((StatusCode::CREATED, Json(json!({ "token": token }))).into_response())
}
