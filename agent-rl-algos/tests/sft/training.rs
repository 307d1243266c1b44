//! Placeholder, filled in below.
