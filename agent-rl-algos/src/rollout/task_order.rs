//! [`TaskOrder`]: which tasks each step trains on, a pure function of the seed and a counter.

use agent_rl_core::Task;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use crate::error::{AlgoError, Result};

/// Epoch-wise shuffled task order: epoch `e` is a permutation drawn from a ChaCha8 stream
/// `(seed, e)`, so the tasks of any step depend only on the seed and how many tasks were drawn
/// before — a resumed run draws exactly what the uninterrupted run would have drawn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskOrder {
    seed: u64,
    num_tasks: usize,
    cached_epoch: Option<(u64, Vec<usize>)>,
}

impl TaskOrder {
    /// An order over `num_tasks` tasks.
    pub fn new(seed: u64, num_tasks: usize) -> Self {
        Self {
            seed,
            num_tasks,
            cached_epoch: None,
        }
    }

    /// The task index drawn at position `position` (0-based, counting over all epochs).
    ///
    /// # Panics
    /// Never for `num_tasks > 0`; with no tasks it returns 0.
    pub fn task_at(&mut self, position: u64) -> usize {
        if self.num_tasks == 0 {
            return 0;
        }
        let epoch = position / self.num_tasks as u64;
        let within = (position % self.num_tasks as u64) as usize;
        if self.cached_epoch.as_ref().is_none_or(|(e, _)| *e != epoch) {
            let mut order: Vec<usize> = (0..self.num_tasks).collect();
            let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
            rng.set_stream(epoch);
            order.shuffle(&mut rng);
            self.cached_epoch = Some((epoch, order));
        }
        self.cached_epoch
            .as_ref()
            .map_or(0, |(_, order)| order[within])
    }

    /// `count` consecutive draws starting at `position`.
    pub fn take(&mut self, position: u64, count: usize) -> Vec<usize> {
        (0..count as u64)
            .map(|i| self.task_at(position + i))
            .collect()
    }
}

/// Draws the next `count` tasks of `tasks` in the order of `seed`, from position `*drawn`,
/// advancing it.
///
/// # Errors
/// [`AlgoError::InvalidInput`] for an empty task list.
pub(crate) fn draw_tasks(
    seed: u64,
    tasks: &[Task],
    drawn: &mut u64,
    count: usize,
) -> Result<Vec<Task>> {
    if tasks.is_empty() {
        return Err(AlgoError::input(
            "tasks",
            "is empty; give at least one task",
        ));
    }
    let picked = TaskOrder::new(seed, tasks.len()).take(*drawn, count);
    *drawn += count as u64;
    Ok(picked.iter().map(|&i| tasks[i].clone()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_epoch_is_a_permutation_and_draws_are_reproducible() {
        let mut order = TaskOrder::new(7, 5);
        let mut first: Vec<usize> = order.take(0, 5);
        let again = TaskOrder::new(7, 5).take(0, 5);
        assert_eq!(first, again);
        first.sort_unstable();
        assert_eq!(first, vec![0, 1, 2, 3, 4]);
        let mut second = order.take(5, 5);
        second.sort_unstable();
        assert_eq!(second, vec![0, 1, 2, 3, 4]);
        assert_eq!(order.take(3, 4), TaskOrder::new(7, 5).take(3, 4));
    }
}
