//! The web UI: files of `web/dist` embedded at build time (see build.rs), else a placeholder page.

use axum::http::{header, StatusCode, Uri};
use axum::response::{Html, IntoResponse, Response};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/assets.rs"));
}

const PLACEHOLDER: &str = r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>doublemove</title></head>
<body>
<h1>doublemove</h1>
<p>The game server is running. The web interface is not built into this binary yet;
the API is described in <code>docs/api.md</code> (start with <code>POST /api/games</code>).</p>
</body></html>
"#;

fn asset(path: &str) -> Option<&'static [u8]> {
    embedded::ASSETS
        .iter()
        .find(|(p, _)| *p == path)
        .map(|(_, b)| *b)
}

fn mime(path: &str) -> &'static str {
    match path.rsplit('.').next().unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "woff2" => "font/woff2",
        "wasm" => "application/wasm",
        _ => "application/octet-stream",
    }
}

/// Serves an embedded file; unknown non-API paths get the index page (client-side routing).
pub async fn static_file(uri: Uri) -> Response {
    let path = uri.path().trim_start_matches('/');
    if path.starts_with("api/") || path == "api" {
        return crate::error::ApiError::not_found(format!("no such endpoint: {}", uri.path()))
            .into_response();
    }
    if let Some(bytes) = asset(path).filter(|_| !path.is_empty()) {
        return ([(header::CONTENT_TYPE, mime(path))], bytes).into_response();
    }
    match asset("index.html") {
        Some(bytes) => ([(header::CONTENT_TYPE, mime("index.html"))], bytes).into_response(),
        None if path.is_empty() || !path.contains('.') => Html(PLACEHOLDER).into_response(),
        None => (StatusCode::NOT_FOUND, "not found").into_response(),
    }
}
