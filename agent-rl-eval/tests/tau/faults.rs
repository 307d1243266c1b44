//! Fault cases per tool family on a small hand-written database: the observation equals the
//! original's text and the database is unchanged.
