//! Training and held-out pools of toy request values: cities, number ranges and phrasings that
//! never meet, so a held-out score measures generalisation rather than recall.

use serde::{Deserialize, Serialize};

use super::tasks::ToyKind;

/// The twelve cities of [`toy_tasks`](super::toy_tasks); part of the training pool.
pub(super) const CLASSIC_CITIES: [&str; 12] = [
    "Oslo", "Paris", "Lima", "Rome", "Cairo", "Tokyo", "Dakar", "Quito", "Perth", "Seoul", "Delhi",
    "Bern",
];

/// Syllables of the generated city names (`Ka` + `ro` → `Karo`).
const SYLLABLES: [&str; 16] = [
    "ka", "lo", "mi", "re", "su", "ta", "no", "vi", "be", "do", "ru", "se", "fa", "gi", "po", "ze",
];

/// Every fifth generated name is held out (51 of 256); the rest train.
const HELD_OUT_EVERY: usize = 5;

/// Which pool a toy request draws its values from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToySplit {
    /// The classic twelve cities and 205 generated names, numbers 0..50, three phrasings per
    /// kind (the first is [`toy_tasks`](super::toy_tasks)'s).
    Train,
    /// 51 other generated names, numbers 50..100, two other phrasings per kind: no city,
    /// number or phrasing of a held-out request occurs in any training request.
    HeldOut,
}

/// A generated city name: syllable `index / 16` then `index % 16`, capitalised.
fn generated_city(index: usize) -> String {
    let (first, second) = (SYLLABLES[index / 16], SYLLABLES[index % 16]);
    let mut name = first.to_owned();
    name[..1].make_ascii_uppercase();
    name + second
}

impl ToySplit {
    /// The cities of this pool, in a fixed order.
    pub fn cities(self) -> Vec<String> {
        let generated = (0..SYLLABLES.len() * SYLLABLES.len())
            .filter(|i| (i % HELD_OUT_EVERY == 0) == (self == Self::HeldOut))
            .map(generated_city);
        match self {
            Self::Train => CLASSIC_CITIES
                .iter()
                .map(|c| (*c).to_owned())
                .chain(generated)
                .collect(),
            Self::HeldOut => generated.collect(),
        }
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
    fn pools_are_disjoint_and_sized_as_documented() {
        let (train, held) = (ToySplit::Train.cities(), ToySplit::HeldOut.cities());
        assert_eq!((train.len(), held.len()), (12 + 205, 51));
        assert!(held.iter().all(|c| !train.contains(c)));
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
