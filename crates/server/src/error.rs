//! API errors: a status code and `{"error": "..."}`. Game-logic errors ([`GameError`]) and storage
//! errors ([`StoreError`]) become statuses here, in one place, for HTTP and the WebSocket alike.

use crate::game::GameError;
use crate::store::StoreError;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
        }
    }
    pub fn bad_request(m: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, m)
    }
    pub fn conflict(m: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::CONFLICT, m)
    }
    pub fn not_found(m: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, m)
    }
    pub fn unauthorized(m: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::UNAUTHORIZED, m)
    }
    pub fn forbidden(m: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::FORBIDDEN, m)
    }
    /// An internal failure: the detail goes to the log, never to the client.
    pub fn internal(m: impl std::fmt::Display) -> ApiError {
        tracing::error!("internal error: {m}");
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal error")
    }
    /// The store cannot durably keep a change now: nothing was acknowledged.
    pub fn unavailable(m: impl std::fmt::Display) -> ApiError {
        tracing::error!("storage unavailable: {m}");
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "storage unavailable: the change was not made; try again later",
        )
    }
}

impl From<GameError> for ApiError {
    fn from(e: GameError) -> ApiError {
        let status = StatusCode::from_u16(e.status()).unwrap_or(StatusCode::BAD_REQUEST);
        ApiError::new(status, e.to_string())
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> ApiError {
        match e {
            StoreError::Conflict => ApiError::new(
                StatusCode::CONFLICT,
                "the game changed meanwhile; fetch it and try again",
            ),
            StoreError::Unavailable(m) => ApiError::unavailable(m),
        }
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (
            self.status,
            Json(serde_json::json!({ "error": self.message })),
        )
            .into_response()
    }
}
