//! The cross-origin policy: a web page the user visits must not be able to drive the API.
//!
//! Browsers send any page's requests to a loopback server; three checks refuse them unless the
//! operator opted in:
//! - `Host` must be an IP address, `localhost` or an allowed name: a DNS-rebinding page reaches
//!   the server under its own (attacker-controlled) name.
//! - `Origin`, when present, must be allowed: browsers set it on cross-site requests, while
//!   scripts, SDKs and curl send none. Allowed origins get CORS headers and their preflights
//!   answered.
//! - `POST` bodies must be `application/json`: the content types a page may send without a CORS
//!   preflight (`text/plain`, forms) are refused.
//!
//! `GET /health` is exempt (it reveals nothing and probes name the host as they please).

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::header::{
    ACCESS_CONTROL_ALLOW_HEADERS, ACCESS_CONTROL_ALLOW_METHODS, ACCESS_CONTROL_ALLOW_ORIGIN,
    ACCESS_CONTROL_MAX_AGE, CONTENT_TYPE, HOST, ORIGIN, VARY,
};
use axum::http::{HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::error::ApiError;

/// Which origins and host names requests may carry.
#[derive(Debug, Clone, Default)]
pub(crate) struct CrossOriginPolicy {
    origins: Vec<String>,
    any_origin: bool,
    hosts: Vec<String>,
    any_host: bool,
}

impl CrossOriginPolicy {
    /// The policy of `--allow-origin` / `--allow-host` lists (`*` allows any).
    pub fn new(origins: &[String], hosts: &[String]) -> Self {
        let normalise = |list: &[String]| -> Vec<String> {
            list.iter()
                .map(|entry| entry.trim_end_matches('/').to_ascii_lowercase())
                .collect()
        };
        Self {
            any_origin: origins.iter().any(|o| o == "*"),
            origins: normalise(origins),
            any_host: hosts.iter().any(|h| h == "*"),
            hosts: normalise(hosts),
        }
    }

    /// Whether `Host: host` (with or without port) names this server without DNS: an IP
    /// literal, `localhost`, or an allowed name.
    fn host_allowed(&self, host: &str) -> bool {
        if self.any_host {
            return true;
        }
        let name = match host.strip_prefix('[') {
            Some(bracketed) => bracketed.split(']').next().unwrap_or(""),
            None => host.rsplit_once(':').map_or(host, |(name, _port)| name),
        };
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        name.parse::<std::net::IpAddr>().is_ok()
            || name == "localhost"
            || name.ends_with(".localhost")
            || self.hosts.contains(&name)
    }

    fn origin_allowed(&self, origin: &str) -> bool {
        self.any_origin
            || self
                .origins
                .contains(&origin.trim_end_matches('/').to_ascii_lowercase())
    }
}

/// 403 naming the flag that would allow the request.
fn refused(message: String, code: &'static str) -> Response {
    ApiError {
        status: StatusCode::FORBIDDEN,
        message,
        kind: "invalid_request_error",
        param: None,
        code: Some(code),
    }
    .into_response()
}

/// Whether a `Content-Type` value is JSON (`application/json`, parameters allowed).
fn is_json(content_type: &str) -> bool {
    content_type
        .split(';')
        .next()
        .is_some_and(|mime| mime.trim().eq_ignore_ascii_case("application/json"))
}

/// The middleware: refuses what [`CrossOriginPolicy`] does not allow, answers allowed
/// preflights, adds CORS headers to allowed cross-origin answers.
pub(crate) async fn guard(
    State(policy): State<Arc<CrossOriginPolicy>>,
    request: Request,
    next: Next,
) -> Response {
    if request.uri().path() == "/health" {
        return next.run(request).await;
    }
    let headers = request.headers();
    let host = headers
        .get(HOST)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned)
        .or_else(|| request.uri().authority().map(|a| a.as_str().to_owned()));
    if let Some(host) = host
        && !policy.host_allowed(&host)
    {
        return refused(
            format!(
                "requests for the host `{host}` are refused (a page on that name could reach \
                 this server by DNS rebinding); start the server with --allow-host <name> to \
                 serve it"
            ),
            "host_not_allowed",
        );
    }
    let origin = match headers.get(ORIGIN).map(HeaderValue::to_str) {
        None => None,
        Some(Ok(origin)) if policy.origin_allowed(origin) => Some(origin.to_owned()),
        Some(value) => {
            let shown = value.unwrap_or("(not text)");
            return refused(
                format!(
                    "cross-origin requests from `{shown}` are refused; start the server with \
                     --allow-origin <origin> to let that site's pages call it"
                ),
                "origin_not_allowed",
            );
        }
    };
    if let Some(origin) = &origin
        && request.method() == Method::OPTIONS
    {
        return preflight(origin);
    }
    if request.method() == Method::POST {
        let content_type = headers.get(CONTENT_TYPE).map(HeaderValue::to_str);
        if !matches!(content_type, Some(Ok(value)) if is_json(value)) {
            return ApiError {
                status: StatusCode::UNSUPPORTED_MEDIA_TYPE,
                message: "request bodies must be sent as `Content-Type: application/json`".into(),
                kind: "invalid_request_error",
                param: None,
                code: Some("unsupported_media_type"),
            }
            .into_response();
        }
    }
    let mut response = next.run(request).await;
    if let Some(origin) = origin {
        allow_origin(&mut response, &origin);
    }
    response
}

/// `Access-Control-Allow-Origin: origin` and `Vary: Origin`.
fn allow_origin(response: &mut Response, origin: &str) {
    if let Ok(value) = HeaderValue::from_str(origin) {
        let headers = response.headers_mut();
        headers.insert(ACCESS_CONTROL_ALLOW_ORIGIN, value);
        headers.append(VARY, HeaderValue::from_static("origin"));
    }
}

/// The answer to an allowed origin's CORS preflight.
fn preflight(origin: &str) -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    allow_origin(&mut response, origin);
    let headers = response.headers_mut();
    headers.insert(
        ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, POST, OPTIONS"),
    );
    headers.insert(
        ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static("authorization, content-type"),
    );
    headers.insert(ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("600"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_without_dns_pass_and_names_need_opting_in() {
        let policy = CrossOriginPolicy::new(&[], &["gpu-box".into()]);
        for host in [
            "127.0.0.1:8000",
            "127.0.0.1",
            "[::1]:8000",
            "10.1.2.3:80",
            "localhost:8000",
            "LocalHost.",
            "app.localhost:3000",
            "gpu-box:8000",
            "GPU-BOX",
        ] {
            assert!(policy.host_allowed(host), "{host}");
        }
        for host in [
            "evil.example:8000",
            "evil.example",
            "127.0.0.1.evil.example",
            "[zz]:1",
            "",
        ] {
            assert!(!policy.host_allowed(host), "{host}");
        }
        assert!(CrossOriginPolicy::new(&[], &["*".into()]).host_allowed("evil.example"));
    }

    #[test]
    fn origins_match_exactly_and_json_is_required() {
        let policy = CrossOriginPolicy::new(&["https://App.example/".into()], &[]);
        assert!(policy.origin_allowed("https://app.example"));
        assert!(!policy.origin_allowed("https://app.example.evil"));
        assert!(!policy.origin_allowed("http://app.example"));
        assert!(!policy.origin_allowed("null"));
        assert!(CrossOriginPolicy::new(&["*".into()], &[]).origin_allowed("null"));
        assert!(is_json("application/json"));
        assert!(is_json("Application/JSON; charset=utf-8"));
        for other in [
            "text/plain",
            "application/x-www-form-urlencoded",
            "application/jsonp",
            "",
        ] {
            assert!(!is_json(other), "{other}");
        }
    }
}
