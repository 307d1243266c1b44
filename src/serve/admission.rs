//! The bounded queue: a generation request holds a [`Ticket`] from the moment it is admitted
//! until its job is dropped (finished, failed or abandoned); when every ticket is out, new
//! requests are answered 429 instead of queueing without end.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::error::ApiError;

/// Hands out at most `limit` tickets at once.
#[derive(Debug)]
pub(crate) struct Admission {
    held: AtomicUsize,
    limit: usize,
}

/// One admitted request's place; given back when dropped.
#[derive(Debug)]
pub(crate) struct Ticket(Arc<Admission>);

impl Admission {
    /// Admission of at most `limit` requests at once.
    pub fn new(limit: usize) -> Arc<Self> {
        Arc::new(Self {
            held: AtomicUsize::new(0),
            limit,
        })
    }

    /// A ticket, or 429 when `limit` are out.
    ///
    /// # Errors
    /// [`ApiError::busy`] when the server holds its limit of requests.
    pub fn admit(self: &Arc<Self>) -> Result<Ticket, ApiError> {
        self.held
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
                (held < self.limit).then_some(held + 1)
            })
            .map(|_| Ticket(Arc::clone(self)))
            .map_err(|_| ApiError::busy(self.limit))
    }

    /// Tickets out now.
    #[cfg(test)]
    fn held(&self) -> usize {
        self.held.load(Ordering::Acquire)
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.0.held.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tickets_are_bounded_and_given_back_on_drop() {
        let admission = Admission::new(2);
        let first = admission.admit();
        let second = admission.admit();
        assert!(first.is_ok() && second.is_ok());
        let third = admission.admit();
        assert_eq!(third.map(|_| ()).map_err(|e| e.status.as_u16()), Err(429));
        drop(first);
        assert_eq!(admission.held(), 1);
        assert!(admission.admit().is_ok());
        assert_eq!(admission.held(), 1, "the ticket was dropped at once");
    }
}
