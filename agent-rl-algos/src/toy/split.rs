//! Training and held-out pools of toy request values: operands and phrasings that never meet,
//! so a held-out score measures more than recall of the training requests.

use serde::{Deserialize, Serialize};

use super::tasks::ToyKind;

/// The twelve cities of [`toy_tasks`](super::toy_tasks); part of the training pool.
pub(super) const CLASSIC_CITIES: [&str; 12] = [
    "Oslo", "Paris", "Lima", "Rome", "Cairo", "Tokyo", "Dakar", "Quito", "Perth", "Seoul", "Delhi",
    "Bern",
];

/// Which pool a toy request draws its values from.
///
/// The pools share the twelve cities: a model as small as the demo's, warmed up for a hundred
/// steps, learns to reproduce the cities it was shown, not to copy unseen names, so a held-out
/// city would measure nothing GRPO can change. Everything else differs: operands and phrasings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToySplit {
    /// The twelve cities, operands 0..50, three phrasings per kind (the first is
    /// [`toy_tasks`](super::toy_tasks)'s).
    Train,
    /// The twelve cities, operands 50..100, two other phrasings per kind: no held-out request,
    /// phrasing or operand occurs in any training request.
    HeldOut,
}

impl ToySplit {
    /// The cities of this pool (the same twelve in both).
    pub fn cities(self) -> Vec<String> {
        CLASSIC_CITIES.iter().map(|c| (*c).to_owned()).collect()
    }

    /// The range of the `add` operands.
    pub fn numbers(self) -> std::ops::Range<i32> {
        match self {
            Self::Train => 0..50,
            Self::HeldOut => 50..100,
        }
    }

    /// The request templates of `kind` (`{city}`, `{a}`, `{b}` are filled in).
    pub fn phrasings(self, kind: ToyKind) -> &'static [&'static str] {
        match (self, kind) {
            (Self::Train, ToyKind::Weather) => &[
                "Weather in {city}?",
                "What is the weather in {city}?",
                "Weather report for {city}.",
            ],
            (Self::Train, ToyKind::Time) => &[
                "Time in {city}?",
                "What is the time in {city}?",
                "Local time for {city}.",
            ],
            (Self::Train, ToyKind::Add) => &[
                "Add {a} and {b}.",
                "What is {a} plus {b}?",
                "Sum of {a} and {b}?",
            ],
            (Self::HeldOut, ToyKind::Weather) => {
                &["How is the weather in {city}?", "Weather at {city} now?"]
            }
            (Self::HeldOut, ToyKind::Time) => {
                &["What time is it in {city}?", "Time at {city} now?"]
            }
            (Self::HeldOut, ToyKind::Add) => &["Please add {a} and {b}.", "Compute {a} plus {b}."],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phrasings_and_operands_are_disjoint() {
        for kind in [ToyKind::Weather, ToyKind::Time, ToyKind::Add] {
            let train = ToySplit::Train.phrasings(kind);
            assert!(
                ToySplit::HeldOut
                    .phrasings(kind)
                    .iter()
                    .all(|p| !train.contains(p))
            );
        }
        assert_eq!(
            ToySplit::Train.numbers().end,
            ToySplit::HeldOut.numbers().start
        );
    }
}
