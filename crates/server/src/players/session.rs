//! Login sessions kept in our own database: tower-sessions manages the cookie (id, expiry,
//! rotation on login); this is its [`SessionStore`] over the store's `sessions` table.

use crate::hub::TimeSource;
use crate::store::{Store, StoreError};
use async_trait::async_trait;
use std::sync::Arc;
use tower_sessions::cookie::SameSite;
use tower_sessions::session::{Id, Record};
use tower_sessions::session_store::{self, SessionStore};
use tower_sessions::{Expiry, SessionManagerLayer};

/// The sessions table of our store.
#[derive(Clone)]
pub struct DbSessions {
    store: Arc<dyn Store>,
    time: TimeSource,
}

impl std::fmt::Debug for DbSessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DbSessions")
    }
}

/// A session lives 30 days past its last use.
pub const IDLE_DAYS: i64 = 30;

/// The session layer: cookie `dm_session`, HttpOnly, SameSite=Lax, `Secure` when `secure` (the
/// site is served over TLS).
pub fn layer(
    store: Arc<dyn Store>,
    time: TimeSource,
    secure: bool,
) -> SessionManagerLayer<DbSessions> {
    SessionManagerLayer::new(DbSessions { store, time })
        .with_name(super::auth::COOKIE)
        .with_http_only(true)
        .with_same_site(SameSite::Lax)
        .with_secure(secure)
        .with_path("/")
        .with_expiry(Expiry::OnInactivity(time::Duration::days(IDLE_DAYS)))
}

fn backend(e: StoreError) -> session_store::Error {
    session_store::Error::Backend(e.to_string())
}

fn encode(r: &Record) -> session_store::Result<(String, i64)> {
    let data =
        serde_json::to_string(&r.data).map_err(|e| session_store::Error::Encode(e.to_string()))?;
    Ok((data, r.expiry_date.unix_timestamp() * 1000))
}

#[async_trait]
impl SessionStore for DbSessions {
    async fn create(&self, record: &mut Record) -> session_store::Result<()> {
        // A fresh random id until it is new (a collision of 128-bit ids is not expected).
        loop {
            let (data, exp) = encode(record)?;
            match self
                .store
                .session_create(&record.id.to_string(), &data, exp)
                .await
            {
                Ok(()) => return Ok(()),
                Err(StoreError::Conflict) => record.id = Id::default(),
                Err(e) => return Err(backend(e)),
            }
        }
    }

    async fn save(&self, record: &Record) -> session_store::Result<()> {
        let (data, exp) = encode(record)?;
        self.store
            .session_save(&record.id.to_string(), &data, exp)
            .await
            .map_err(backend)
    }

    async fn load(&self, id: &Id) -> session_store::Result<Option<Record>> {
        let Some(data) = self
            .store
            .session_load(&id.to_string(), self.time.now())
            .await
            .map_err(backend)?
        else {
            return Ok(None);
        };
        let data =
            serde_json::from_str(&data).map_err(|e| session_store::Error::Decode(e.to_string()))?;
        // The expiry is renewed on use by the layer; what is stored is only checked above.
        let expiry_date = time::OffsetDateTime::now_utc() + time::Duration::days(IDLE_DAYS);
        Ok(Some(Record {
            id: *id,
            data,
            expiry_date,
        }))
    }

    async fn delete(&self, id: &Id) -> session_store::Result<()> {
        self.store
            .session_delete(&id.to_string())
            .await
            .map_err(backend)
    }
}
