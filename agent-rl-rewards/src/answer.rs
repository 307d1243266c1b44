//! Comparing a final answer with the expected one.

use serde::{Deserialize, Serialize};

/// How a final answer is compared with the acceptable answers.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnswerComparison {
    /// Identical strings.
    Exact,
    /// Equal after lowercasing, trimming, collapsing whitespace and dropping trailing `.`/`!`
    /// (the default).
    #[default]
    Normalized,
    /// The normalised acceptable answer occurs in the normalised final answer. Lenient, and
    /// farmable by listing many candidates: prefer [`AnswerComparison::Normalized`] for training.
    Contains,
    /// The last number in the answer equals an acceptable number within `tolerance`.
    Numeric {
        /// Absolute tolerance, `>= 0`.
        tolerance: f64,
    },
}

/// The expected final answer: acceptable strings and how to compare.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedAnswer {
    /// Any of these is a correct answer.
    pub acceptable: Vec<String>,
    /// How to compare (default [`AnswerComparison::Normalized`]).
    #[serde(default)]
    pub comparison: AnswerComparison,
}

impl ExpectedAnswer {
    /// An answer compared with [`AnswerComparison::Normalized`].
    pub fn new(acceptable: impl IntoIterator<Item = impl Into<String>>) -> Self {
        Self {
            acceptable: acceptable.into_iter().map(Into::into).collect(),
            comparison: AnswerComparison::Normalized,
        }
    }

    /// Sets the comparison.
    #[must_use]
    pub fn with_comparison(mut self, comparison: AnswerComparison) -> Self {
        self.comparison = comparison;
        self
    }

    /// True when `answer` is acceptable.
    ///
    /// ```
    /// use agent_rl_rewards::{AnswerComparison, ExpectedAnswer};
    /// assert!(ExpectedAnswer::new(["Paris"]).accepts("  paris. "));
    /// let numeric = ExpectedAnswer::new(["42"]).with_comparison(AnswerComparison::Numeric { tolerance: 1e-6 });
    /// assert!(numeric.accepts("The answer is 42.0"));
    /// assert!(!numeric.accepts("The answer is 41"));
    /// ```
    pub fn accepts(&self, answer: &str) -> bool {
        match self.comparison {
            AnswerComparison::Exact => self.acceptable.iter().any(|want| want == answer),
            AnswerComparison::Normalized => {
                let answer = normalize(answer);
                self.acceptable.iter().any(|want| normalize(want) == answer)
            }
            AnswerComparison::Contains => {
                let answer = normalize(answer);
                self.acceptable
                    .iter()
                    .map(|want| normalize(want))
                    .any(|want| !want.is_empty() && answer.contains(&want))
            }
            AnswerComparison::Numeric { tolerance } => match last_number(answer) {
                Some(found) => self
                    .acceptable
                    .iter()
                    .filter_map(|want| last_number(want))
                    .any(|want| (want - found).abs() <= tolerance.max(0.0)),
                None => false,
            },
        }
    }
}

fn normalize(text: &str) -> String {
    let collapsed = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase();
    collapsed.trim_end_matches(['.', '!']).trim_end().to_owned()
}

fn last_number(text: &str) -> Option<f64> {
    text.split(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '-' | 'e' | 'E' | '+')))
        .filter_map(|token| token.trim_end_matches('.').parse::<f64>().ok())
        .rfind(|number| number.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparison_table() {
        let cases = [
            (AnswerComparison::Exact, "Paris", "Paris", true),
            (AnswerComparison::Exact, "Paris", "paris", false),
            (
                AnswerComparison::Normalized,
                "Paris, France",
                "paris,   france!",
                true,
            ),
            (
                AnswerComparison::Normalized,
                "Paris",
                "Paris, France",
                false,
            ),
            (AnswerComparison::Contains, "Paris", "It is Paris.", true),
            (AnswerComparison::Contains, "", "anything", false),
            (
                AnswerComparison::Numeric { tolerance: 0.01 },
                "3.14",
                "pi is about 3.141",
                true,
            ),
            (
                AnswerComparison::Numeric { tolerance: 0.0 },
                "-2",
                "it is -2.",
                true,
            ),
            (
                AnswerComparison::Numeric { tolerance: 0.0 },
                "2",
                "no number",
                false,
            ),
        ];
        for (comparison, want, answer, accepted) in cases {
            let expected = ExpectedAnswer::new([want]).with_comparison(comparison);
            assert_eq!(
                expected.accepts(answer),
                accepted,
                "{comparison:?} {want:?} vs {answer:?}"
            );
        }
    }
}
