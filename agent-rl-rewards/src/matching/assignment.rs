//! Optimal one-to-one assignment (Hungarian algorithm) for rectangular weight matrices.

/// Finds a one-to-one assignment of rows to columns that maximises the total weight.
///
/// `weights[row][column]` must be finite; every row must have the same length. Returns, per row,
/// the column assigned to it, or `None` when there are more rows than columns and the row is
/// left out. Runs in `O(n² m)` for `n = min(rows, columns)`, `m = max(rows, columns)`.
///
/// ```
/// use agent_rl_rewards::matching::max_weight_assignment;
/// // Greedy would take (0,0)=3 and then (1,1)=0; the optimum is 2 + 2.
/// let assignment = max_weight_assignment(&[vec![3.0, 2.0], vec![2.0, 0.0]]);
/// assert_eq!(assignment, vec![Some(1), Some(0)]);
/// ```
///
/// # Panics
/// When the rows have different lengths (an internal invariant of the callers).
pub fn max_weight_assignment(weights: &[Vec<f64>]) -> Vec<Option<usize>> {
    let rows = weights.len();
    let columns = weights.first().map_or(0, Vec::len);
    assert!(
        weights.iter().all(|row| row.len() == columns),
        "weight matrix must be rectangular"
    );
    if rows == 0 || columns == 0 {
        return vec![None; rows];
    }
    if rows <= columns {
        min_cost_rows_to_columns(rows, columns, |row, column| -weights[row][column])
    } else {
        let by_column =
            min_cost_rows_to_columns(columns, rows, |column, row| -weights[row][column]);
        let mut assignment = vec![None; rows];
        for (column, row) in by_column.into_iter().enumerate() {
            if let Some(row) = row {
                assignment[row] = Some(column);
            }
        }
        assignment
    }
}

/// Shortest-augmenting-path Hungarian algorithm with potentials, for `rows <= columns`.
fn min_cost_rows_to_columns(
    rows: usize,
    columns: usize,
    cost: impl Fn(usize, usize) -> f64,
) -> Vec<Option<usize>> {
    // 1-based arrays; index 0 of `row_of_column` is the virtual column used while augmenting.
    let mut row_potential = vec![0.0_f64; rows + 1];
    let mut column_potential = vec![0.0_f64; columns + 1];
    let mut row_of_column = vec![0_usize; columns + 1];
    let mut previous_column = vec![0_usize; columns + 1];
    for row in 1..=rows {
        row_of_column[0] = row;
        let mut current_column = 0;
        let mut min_slack = vec![f64::INFINITY; columns + 1];
        let mut visited = vec![false; columns + 1];
        loop {
            visited[current_column] = true;
            let current_row = row_of_column[current_column];
            let mut delta = f64::INFINITY;
            let mut next_column = 0;
            for column in 1..=columns {
                if visited[column] {
                    continue;
                }
                let slack = cost(current_row - 1, column - 1)
                    - row_potential[current_row]
                    - column_potential[column];
                if slack < min_slack[column] {
                    min_slack[column] = slack;
                    previous_column[column] = current_column;
                }
                if min_slack[column] < delta {
                    delta = min_slack[column];
                    next_column = column;
                }
            }
            for column in 0..=columns {
                if visited[column] {
                    row_potential[row_of_column[column]] += delta;
                    column_potential[column] -= delta;
                } else {
                    min_slack[column] -= delta;
                }
            }
            current_column = next_column;
            if row_of_column[current_column] == 0 {
                break;
            }
        }
        while current_column != 0 {
            let before = previous_column[current_column];
            row_of_column[current_column] = row_of_column[before];
            current_column = before;
        }
    }
    let mut assignment = vec![None; rows];
    for column in 1..=columns {
        if row_of_column[column] != 0 {
            assignment[row_of_column[column] - 1] = Some(column - 1);
        }
    }
    assignment
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn total(weights: &[Vec<f64>], assignment: &[Option<usize>]) -> f64 {
        assignment
            .iter()
            .enumerate()
            .filter_map(|(row, column)| column.map(|c| weights[row][c]))
            .sum()
    }

    fn brute_force(weights: &[Vec<f64>]) -> f64 {
        fn go(weights: &[Vec<f64>], row: usize, used: &mut Vec<bool>) -> f64 {
            if row == weights.len() {
                return 0.0;
            }
            let mut best = go(weights, row + 1, used); // leave the row out
            for column in 0..used.len() {
                if !used[column] {
                    used[column] = true;
                    best = best.max(weights[row][column] + go(weights, row + 1, used));
                    used[column] = false;
                }
            }
            best
        }
        let columns = weights.first().map_or(0, Vec::len);
        go(weights, 0, &mut vec![false; columns])
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn matches_brute_force_on_small_matrices(
            rows in 0_usize..5, columns in 0_usize..5, seed in proptest::collection::vec(0_u8..5, 25)
        ) {
            let weights: Vec<Vec<f64>> = (0..rows)
                .map(|r| (0..columns).map(|c| f64::from(seed[r * 5 + c])).collect())
                .collect();
            let assignment = max_weight_assignment(&weights);
            prop_assert_eq!(assignment.len(), rows);
            let used: Vec<usize> = assignment.iter().flatten().copied().collect();
            let mut unique = used.clone();
            unique.sort_unstable();
            unique.dedup();
            prop_assert_eq!(unique.len(), used.len());
            prop_assert_eq!(used.len(), rows.min(columns));
            prop_assert!((total(&weights, &assignment) - brute_force(&weights)).abs() < 1e-9);
        }
    }
}
