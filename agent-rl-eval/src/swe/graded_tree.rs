//! Every command the grader runs on a tree once a model patch has been offered to it (applying
//! it, resetting, the test patch, the tests) runs in the agent's sandbox
//! ([`super::sandbox::shell_command`]): what the patch put in the tree (code, git config,
//! hooks) never runs on the host. The git commands also ignore the system and user config and
//! disable hooks and the file-system monitor.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::command::{CommandOutput, run_limited};
use super::sandbox::{SandboxMode, shell_command};
use crate::Result;

/// `git` with hooks and the file-system monitor off, prefixed to git commands in scripts.
pub const SAFE_GIT: &str = "GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null \
GIT_TERMINAL_PROMPT=0 git -c core.hooksPath=/dev/null -c core.fsmonitor=false \
-c advice.detachedHead=false";

/// `text` quoted for `sh` (single quotes; a single quote as `'\''`).
pub fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// `argv` quoted for `sh`, joined with spaces.
pub fn shell_words(argv: &[String]) -> String {
    argv.iter()
        .map(|arg| shell_quote(arg))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A tree under grading: where commands run and which directory they may write besides it.
#[derive(Debug, Clone)]
pub struct GradedTree {
    root: PathBuf,
    mode: SandboxMode,
}

impl GradedTree {
    /// The tree at `root`, its commands run under `mode`.
    pub fn new(root: &Path, mode: SandboxMode) -> Self {
        Self {
            root: root.to_path_buf(),
            mode,
        }
    }

    /// The tree's root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Runs `script` with `sh -c` in the tree, sandboxed as the mode allows, `scratch` the
    /// only other writable directory; output capped at `max_output_bytes`.
    ///
    /// # Errors
    /// The sandbox is required but unavailable, or the command cannot start.
    pub fn run(
        &self,
        script: &str,
        scratch: &Path,
        timeout: Duration,
        max_output_bytes: usize,
    ) -> Result<CommandOutput> {
        let (command, _sandboxed) = shell_command(script, &self.root, scratch, self.mode)?;
        run_limited(command, timeout, max_output_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_survives_a_round_trip_through_sh() {
        let argv = vec![
            "a b".to_string(),
            "it's".to_string(),
            "$HOME;`x`".to_string(),
        ];
        let out = std::process::Command::new("sh")
            .args(["-c", &format!("printf '%s\\n' {}", shell_words(&argv))])
            .output()
            .expect("sh runs");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "a b\nit's\n$HOME;`x`\n"
        );
    }
}
