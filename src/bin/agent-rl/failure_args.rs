//! The evaluators' failure policy on the command line: `--strict` and `--overlong`, and the
//! summary of failed items on stderr.

use std::io::Write;

use agent_rl::eval::{ItemFailure, OverlongPrompt};

/// `--strict` and `--overlong skip|truncate`, shared by `eval bfcl` and `eval tau run`.
#[derive(Debug, Clone, clap::Args)]
pub struct FailureArgs {
    /// Exit with an error when any item failed (by default failed items are reported on stderr
    /// and in the report, counted as wrong, and the command exits 0 unless every item failed).
    #[arg(long)]
    pub strict: bool,
    /// A prompt that does not fit the model's context with `--max-new-tokens`: `skip` fails
    /// that item (the default); `truncate` generates the tokens that fit instead (answers may
    /// be cut short). A prompt that fills the context by itself always fails.
    #[arg(long, default_value = "skip", value_name = "skip|truncate")]
    pub overlong: OverlongPrompt,
}

impl FailureArgs {
    /// Lists `failures` (of `total` items, named `unit`) on stderr, then fails when `--strict`
    /// was given and any item failed, or when every item failed.
    ///
    /// # Errors
    /// As above, with the counts.
    pub fn settle(
        &self,
        command: &str,
        unit: &str,
        failures: &[ItemFailure],
        total: usize,
    ) -> anyhow::Result<()> {
        if failures.is_empty() {
            return Ok(());
        }
        let mut stderr = std::io::stderr().lock();
        let _ = writeln!(
            stderr,
            "{command}: {} of {total} {unit} failed (counted as wrong):",
            failures.len()
        );
        for failure in failures {
            let _ = writeln!(stderr, "  {}: {}", failure.id, failure.reason);
        }
        if failures.len() == total {
            anyhow::bail!(
                "{command}: every one of the {total} {unit} failed; nothing was evaluated"
            );
        }
        if self.strict {
            anyhow::bail!(
                "{command}: {} of {total} {unit} failed (--strict)",
                failures.len()
            );
        }
        Ok(())
    }
}
