//! Splitting a batch of completions into micro-batches for gradient accumulation.

/// Splits the selected completions into at most `accumulation_steps` micro-batches of equal
/// size (the last may be shorter), in order. Every index lands in exactly one micro-batch.
pub(crate) fn plan_micro_batches(selected: &[usize], accumulation_steps: usize) -> Vec<&[usize]> {
    if selected.is_empty() {
        return Vec::new();
    }
    let chunks = accumulation_steps.clamp(1, selected.len());
    selected.chunks(selected.len().div_ceil(chunks)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn micro_batch_plan_covers_every_completion_once() {
        let selected: Vec<usize> = (0..10).collect();
        for steps in 0..=12 {
            let plan = plan_micro_batches(&selected, steps);
            let flat: Vec<usize> = plan.iter().flat_map(|c| c.iter().copied()).collect();
            assert_eq!(flat, selected, "accumulation steps {steps}");
            assert!(
                plan.len() <= steps.clamp(1, 10),
                "{steps}: {} chunks",
                plan.len()
            );
        }
        assert_eq!(
            plan_micro_batches(&selected, 4)
                .iter()
                .map(|c| c.len())
                .collect::<Vec<_>>(),
            [3, 3, 3, 1]
        );
        assert!(plan_micro_batches(&[], 4).is_empty());
    }
}
