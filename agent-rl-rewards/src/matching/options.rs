//! How values are compared: string normalisation, int→float leniency, float tolerance, partial credit.

use serde::{Deserialize, Serialize};

/// How strings are normalised before they are compared.
///
/// Both the model's string and every acceptable string go through the same normalisation, at every
/// depth (inside lists and objects too).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StringNormalization {
    /// Compare case-insensitively (Unicode lowercase). Default `true`.
    pub lowercase: bool,
    /// Characters removed from both strings before comparing. Default: space and `,./-_*^`
    /// (the set BFCL's checker ignores).
    pub ignored_chars: String,
}

impl Default for StringNormalization {
    fn default() -> Self {
        Self::bfcl()
    }
}

impl StringNormalization {
    /// BFCL's normalisation: lowercase, and ignore spaces and the punctuation `,./-_*^`.
    pub fn bfcl() -> Self {
        Self {
            lowercase: true,
            ignored_chars: " ,./-_*^".to_owned(),
        }
    }

    /// No normalisation: strings must be identical.
    pub fn exact() -> Self {
        Self {
            lowercase: false,
            ignored_chars: String::new(),
        }
    }

    /// Applies the normalisation to `text`.
    ///
    /// ```
    /// use agent_rl_rewards::matching::StringNormalization;
    /// assert_eq!(StringNormalization::bfcl().apply("San Francisco, CA"), "sanfranciscoca");
    /// assert_eq!(StringNormalization::exact().apply("San Francisco, CA"), "San Francisco, CA");
    /// ```
    pub fn apply(&self, text: &str) -> String {
        let kept = text.chars().filter(|c| !self.ignored_chars.contains(*c));
        if self.lowercase {
            kept.flat_map(char::to_lowercase).collect()
        } else {
            kept.collect()
        }
    }
}

/// Options of the call-matching engine.
///
/// The default is BFCL's semantics: strings normalised with [`StringNormalization::bfcl`], an
/// integer accepted where a float is expected (not the reverse), floats compared exactly, and
/// all-or-nothing credit per call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MatchOptions {
    /// How strings are normalised before comparison; `None` compares them exactly.
    /// Default: [`StringNormalization::bfcl`].
    pub string_normalization: Option<StringNormalization>,
    /// Accept an integer where a float is expected (`1` matches `1.0`). The reverse (a float
    /// where an integer is expected) is always a type mismatch. Default `true`.
    pub int_as_float: bool,
    /// Absolute tolerance when comparing numbers, `>= 0`. Default `0.0` (exact).
    pub float_tolerance: f64,
    /// Score a call with the right function but some wrong arguments by the fraction of
    /// argument checks it passed, instead of 0. Default `false` (BFCL is all-or-nothing).
    pub partial_credit: bool,
}

impl Default for MatchOptions {
    fn default() -> Self {
        Self::bfcl()
    }
}

impl MatchOptions {
    /// BFCL's checker semantics (the default).
    pub fn bfcl() -> Self {
        Self {
            string_normalization: Some(StringNormalization::bfcl()),
            int_as_float: true,
            float_tolerance: 0.0,
            partial_credit: false,
        }
    }

    /// Strict comparison: strings must be identical, otherwise as [`MatchOptions::bfcl`].
    pub fn strict() -> Self {
        Self {
            string_normalization: None,
            ..Self::bfcl()
        }
    }

    /// Sets [`MatchOptions::partial_credit`].
    #[must_use]
    pub fn with_partial_credit(mut self, partial_credit: bool) -> Self {
        self.partial_credit = partial_credit;
        self
    }

    /// Sets [`MatchOptions::string_normalization`].
    #[must_use]
    pub fn with_string_normalization(mut self, normalization: Option<StringNormalization>) -> Self {
        self.string_normalization = normalization;
        self
    }

    /// Sets [`MatchOptions::int_as_float`].
    #[must_use]
    pub fn with_int_as_float(mut self, int_as_float: bool) -> Self {
        self.int_as_float = int_as_float;
        self
    }

    /// Sets [`MatchOptions::float_tolerance`].
    #[must_use]
    pub fn with_float_tolerance(mut self, float_tolerance: f64) -> Self {
        self.float_tolerance = float_tolerance;
        self
    }

    /// Checks the field ranges.
    ///
    /// # Errors
    /// [`RewardError::InvalidConfig`](crate::RewardError::InvalidConfig) when `float_tolerance` is
    /// negative or not finite.
    pub fn validate(&self) -> crate::Result<()> {
        if !(self.float_tolerance.is_finite() && self.float_tolerance >= 0.0) {
            return Err(crate::RewardError::InvalidConfig {
                field: "float_tolerance".into(),
                reason: format!("must be finite and >= 0, found {}", self.float_tolerance),
            });
        }
        Ok(())
    }

    /// Normalises a string with these options.
    pub(crate) fn normalize<'a>(&self, text: &'a str) -> std::borrow::Cow<'a, str> {
        match &self.string_normalization {
            Some(normalization) => std::borrow::Cow::Owned(normalization.apply(text)),
            None => std::borrow::Cow::Borrowed(text),
        }
    }
}
