//! The optional API key, compared in constant time.

use axum::http::HeaderMap;
use axum::http::header::AUTHORIZATION;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::error::ApiError;

/// The key a request must present, kept only as its SHA-256 digest: comparing digests in
/// constant time reveals neither the key's bytes nor its length through timing.
#[derive(Clone)]
pub struct ApiKey {
    digest: [u8; 32],
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(..)")
    }
}

impl ApiKey {
    /// The key clients must send.
    pub fn new(key: &str) -> Self {
        Self {
            digest: Sha256::digest(key.as_bytes()).into(),
        }
    }

    /// True when `presented` is the key.
    pub fn matches(&self, presented: &str) -> bool {
        let digest: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
        bool::from(digest.ct_eq(&self.digest))
    }

    /// Checks the request's `Authorization: Bearer <key>` header.
    ///
    /// # Errors
    /// [`ApiError::unauthorized`] when the header is missing, malformed or holds another key.
    pub fn check(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        let presented = headers
            .get(AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.strip_prefix("Bearer "))
            .map(str::trim);
        match presented {
            Some(key) if self.matches(key) => Ok(()),
            _ => Err(ApiError::unauthorized()),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn only_the_exact_bearer_key_passes() {
        let key = ApiKey::new("s3cret");
        let mut headers = HeaderMap::new();
        assert!(key.check(&headers).is_err());
        headers.insert(AUTHORIZATION, "Bearer s3cret".parse().unwrap());
        assert!(key.check(&headers).is_ok());
        for wrong in ["Bearer s3cre", "Bearer s3cret2", "Basic s3cret", "s3cret"] {
            headers.insert(AUTHORIZATION, wrong.parse().unwrap());
            assert!(key.check(&headers).is_err(), "{wrong}");
        }
        assert!(!format!("{key:?}").contains("s3cret"));
    }
}
