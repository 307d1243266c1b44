//! The agent's shell commands, confined to the workspace by the operating system where it can:
//! in new user, mount, PID and network namespaces (`unshare -Urmn --pid --fork --mount-proc`, no
//! privileges needed) every mount is remounted read-only except the workspace tree and its
//! scratch directory, so a write anywhere else fails with "Read-only file system" whatever program
//! attempts it; the network is absent; and the command's shell is the namespace's first process,
//! so every process it started (daemons and `setsid` ones included) is killed when it ends.
//! Every command, sandboxed or not, gets a cleared environment: only the variables of
//! [`PASSED_VARIABLES`] are taken from the host, `HOME` and `TMPDIR` are the scratch directory.
//! Where user namespaces are disabled the command runs without them ([`SandboxMode::Auto`]) and
//! only the static check of [`super::confine::command_escape`], the cleared environment and the
//! process-group kill stand between it and the machine: writes outside the tree by programs, the
//! network and processes that leave the group are then not stopped.

use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use super::command::host_path;
use crate::{EvalError, Result};

/// Whether shell commands run in the namespace sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SandboxMode {
    /// Use the sandbox when this machine allows it, run unconfined (static checks only) when not.
    #[default]
    Auto,
    /// Refuse to run commands when the sandbox is unavailable.
    Required,
    /// Never use it (static checks only).
    Off,
}

/// Host variables a command sees (when set; `PATH` has a default); every other one is removed.
pub const PASSED_VARIABLES: [&str; 4] = ["PATH", "LANG", "LC_ALL", "LC_CTYPE"];

/// The namespaces: user (mapped to root), mount, network, PID with a fresh `/proc`; the shell
/// forked by `unshare` is the PID namespace's first process, killed if `unshare` dies.
const UNSHARE: [&str; 5] = ["-Urmn", "--pid", "--fork", "--mount-proc", "--kill-child"];

/// The setup script: `$1` the agent's command, `$2` the tree, `$3` the scratch directory.
const SETUP: &str = r#"c=$1; r=$2; t=$3
mount --bind "$r" "$r" && mount --bind "$t" "$t" || { echo "sandbox: cannot bind the workspace" >&2; exit 97; }
awk '{print $5}' /proc/self/mountinfo | while read -r m; do
  case "$m" in "$r"|"$t") ;; *) mount -o remount,bind,ro "$m" 2>/dev/null ;; esac
done
cd "$r" && exec sh -c "$c""#;

/// True when `unshare` with the sandbox's namespaces works here (probed once per process).
pub fn sandbox_available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        Command::new("unshare")
            .args(UNSHARE)
            .args(["sh", "-c", "mount --bind / / 2>/dev/null; true"])
            .output()
            .is_ok_and(|out| out.status.success())
    })
}

/// The command that runs `script` with `sh -c` in `root` with a cleared environment, sandboxed
/// when `mode` and the machine allow it; the second value says whether it is. Callers add the
/// variables their program needs (after this call, so that they are kept).
///
/// # Errors
/// [`EvalError::MissingTool`] when `mode` is [`SandboxMode::Required`] and user namespaces are
/// unavailable.
pub fn shell_command(
    script: &str,
    root: &Path,
    scratch: &Path,
    mode: SandboxMode,
) -> Result<(Command, bool)> {
    let sandboxed = match mode {
        SandboxMode::Off => false,
        SandboxMode::Auto => sandbox_available(),
        SandboxMode::Required if sandbox_available() => true,
        SandboxMode::Required => {
            return Err(EvalError::MissingTool {
                tool: "unshare -Urmn --pid --fork --mount-proc (user namespaces)".into(),
                reason: "the agent's commands must run sandboxed (sandbox = required); enable \
                         unprivileged user namespaces or set the sandbox to auto/off"
                    .into(),
            });
        }
    };
    let mut command = if sandboxed {
        let mut command = Command::new("unshare");
        command
            .args(UNSHARE)
            .args(["sh", "-c", SETUP, "sandbox", script])
            .arg(root)
            .arg(scratch);
        command
    } else {
        let mut command = Command::new("sh");
        command.args(["-c", script]);
        command
    };
    command.current_dir(root).env_clear();
    for name in PASSED_VARIABLES {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
    command
        .env("PATH", host_path())
        .env("HOME", scratch)
        .env("TMPDIR", scratch)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("PAGER", "cat")
        .env("GIT_PAGER", "cat");
    Ok((command, sandboxed))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::swe::command::run_limited;

    #[test]
    fn the_sandbox_lets_the_tree_be_written_and_nothing_else() {
        if !sandbox_available() {
            // Nothing to check on a machine without user namespaces; `Required` must refuse.
            let dir = tempfile::tempdir().expect("temp dir");
            let error = shell_command("true", dir.path(), dir.path(), SandboxMode::Required);
            assert!(error.is_err());
            return;
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let (root, scratch) = (dir.path().join("repo"), dir.path().join("scratch"));
        std::fs::create_dir_all(&root).expect("root");
        std::fs::create_dir_all(&scratch).expect("scratch");
        let outside = tempfile::tempdir().expect("outside dir");
        let target = outside.path().join("escaped");
        let script = format!(
            "echo in > inside.txt; echo tmp > \"$TMPDIR/t\"; \
             python3 -c \"open('{}', 'w').write('x')\"; echo done",
            target.display()
        );
        let (command, sandboxed) =
            shell_command(&script, &root, &scratch, SandboxMode::Auto).expect("command");
        assert!(sandboxed);
        let out = run_limited(command, Duration::from_secs(30), 10_000).expect("runs");
        assert!(
            out.output.contains("Read-only file system"),
            "{}",
            out.output
        );
        assert!(out.output.contains("done"), "{}", out.output);
        assert!(
            !target.exists(),
            "a write outside the workspace got through"
        );
        assert!(root.join("inside.txt").exists() && scratch.join("t").exists());
    }
}
