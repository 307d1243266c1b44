//! Unit-level behaviour of the checker on hand-written entries (no benchmark data needed).
