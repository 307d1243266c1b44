//! Errors: [`ServeError`] for the library caller, [`ApiError`] for HTTP clients (OpenAI's JSON
//! shape).

use axum::http::header::{CONNECTION, RETRY_AFTER};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// What can go wrong starting or running the server (request errors go to the client instead).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// A setting is out of range.
    #[error("serve config `{field}`: {reason}")]
    InvalidConfig {
        /// The field.
        field: String,
        /// What is wrong and what is valid.
        reason: String,
    },
    /// The address could not be bound.
    #[error("cannot listen on {address}")]
    Bind {
        /// `host:port`.
        address: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The async runtime or a worker thread could not start, or the server failed.
    #[error("server runtime: {0}")]
    Runtime(#[source] std::io::Error),
}

/// An OpenAI-style error answer: `{"error": {"message", "type", "param", "code"}}` with a status.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    /// HTTP status.
    pub status: StatusCode,
    /// Human-readable message naming the offending field.
    pub message: String,
    /// OpenAI's `type` (`invalid_request_error`, `authentication_error`, …).
    pub kind: &'static str,
    /// The request field at fault, when one is.
    pub param: Option<String>,
    /// OpenAI's `code` (`model_not_found`, `invalid_api_key`, …).
    pub code: Option<&'static str>,
}

impl ApiError {
    /// 400 `invalid_request_error` about `param`.
    pub fn invalid(param: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
            kind: "invalid_request_error",
            param: Some(param.into()),
            code: None,
        }
    }

    /// 400 for a body that is not the JSON the endpoint expects.
    pub fn bad_json(message: impl Into<String>) -> Self {
        Self {
            param: None,
            code: Some("invalid_json"),
            ..Self::invalid("", message)
        }
    }

    /// 404 for a model name the server does not serve.
    pub fn unknown_model(name: &str) -> Self {
        Self {
            status: StatusCode::NOT_FOUND,
            message: format!("the model `{name}` does not exist (GET /v1/models lists them)"),
            kind: "invalid_request_error",
            param: Some("model".into()),
            code: Some("model_not_found"),
        }
    }

    /// 401 for a missing or wrong API key.
    pub fn unauthorized() -> Self {
        Self {
            status: StatusCode::UNAUTHORIZED,
            message: "missing or invalid API key (send `Authorization: Bearer <key>`)".into(),
            kind: "authentication_error",
            param: None,
            code: Some("invalid_api_key"),
        }
    }

    /// 413 for a body over the size limit.
    pub fn too_large(limit: usize) -> Self {
        Self {
            status: StatusCode::PAYLOAD_TOO_LARGE,
            message: format!("the request body exceeds the server's limit of {limit} bytes"),
            kind: "invalid_request_error",
            param: None,
            code: Some("request_too_large"),
        }
    }

    /// 429 when the server already holds as many requests as it admits.
    pub fn busy(limit: usize) -> Self {
        Self {
            status: StatusCode::TOO_MANY_REQUESTS,
            message: format!(
                "the server is busy: it holds its limit of {limit} generation requests; retry later"
            ),
            kind: "server_error",
            param: None,
            code: Some("server_busy"),
        }
    }

    /// 408 for a request body not received within the read timeout (the connection is closed).
    pub fn request_timeout(timeout_ms: u64) -> Self {
        Self {
            status: StatusCode::REQUEST_TIMEOUT,
            message: format!("the request body was not received within {timeout_ms} ms"),
            kind: "invalid_request_error",
            param: None,
            code: Some("request_timeout"),
        }
    }

    /// 500 for a generation failure (the server keeps running).
    pub fn internal(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            message: message.into(),
            kind: "server_error",
            param: None,
            code: None,
        }
    }

    /// The JSON body.
    pub fn body(&self) -> serde_json::Value {
        json!({"error": {
            "message": self.message,
            "type": self.kind,
            "param": self.param.as_deref().filter(|p| !p.is_empty()),
            "code": self.code,
        }})
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, axum::Json(self.body())).into_response();
        let headers = response.headers_mut();
        match self.status {
            StatusCode::TOO_MANY_REQUESTS | StatusCode::SERVICE_UNAVAILABLE => {
                headers.insert(RETRY_AFTER, HeaderValue::from_static("1"));
            }
            // The rest of a half-sent body would be read as the next request.
            StatusCode::REQUEST_TIMEOUT => {
                headers.insert(CONNECTION, HeaderValue::from_static("close"));
            }
            _ => {}
        }
        response
    }
}
