//! The benchmarks' deterministic workload generator.

/// Knuth's MMIX linear congruential generator: the same token ids and prompt words on every
/// machine and build, with no dependency.
#[derive(Debug, Clone)]
pub struct Lcg {
    state: u64,
}

impl Lcg {
    /// A generator starting from `state`.
    pub fn new(state: u64) -> Self {
        Self { state }
    }

    /// Advances the generator and returns its new state.
    pub fn next_state(&mut self) -> u64 {
        self.state = self
            .state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.state
    }

    /// The next value below `bound` (from the state's high bits).
    ///
    /// # Panics
    /// When `bound` is 0.
    pub fn below(&mut self, bound: u64) -> u64 {
        (self.next_state() >> 33) % bound
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_the_mmix_recurrence() {
        let mut lcg = Lcg::new(7);
        let first = 7u64
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        assert_eq!(lcg.next_state(), first);
        let second = first
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        assert_eq!(lcg.below(1000), (second >> 33) % 1000);
    }
}
