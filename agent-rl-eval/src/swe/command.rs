//! Running external commands with a time limit and an output cap: the command gets its own
//! process group, which is killed as a whole when the limit passes (so a hanging child of a
//! shell dies too); stdout and stderr go to one file, in the order written.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::{EvalError, Result};

/// What a finished (or killed) command left behind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandOutput {
    /// Exit code; `None` when killed by a signal (including the time limit).
    pub exit_code: Option<i32>,
    /// True when the time limit passed and the process group was killed.
    pub timed_out: bool,
    /// Stdout and stderr interleaved, cut to the cap (the cut is marked).
    pub output: String,
    /// Wall time.
    pub elapsed: Duration,
}

impl CommandOutput {
    /// True when the command exited with status 0.
    pub fn success(&self) -> bool {
        self.exit_code == Some(0)
    }
}

/// Runs `command` (its working directory, environment and arguments set by the caller) with
/// `timeout`; keeps at most `max_output_bytes` of output (the head and the tail).
///
/// # Errors
/// [`EvalError::Command`] when the program cannot be started or its output file cannot be made.
pub fn run_limited(
    mut command: Command,
    timeout: Duration,
    max_output_bytes: usize,
) -> Result<CommandOutput> {
    use std::os::unix::process::CommandExt;
    let describe = format!("{command:?}");
    let failed = |reason: String| EvalError::Command {
        command: describe.clone(),
        reason,
    };
    let sink = tempfile::tempfile().map_err(|error| failed(format!("no output file: {error}")))?;
    let err_sink = sink
        .try_clone()
        .map_err(|error| failed(format!("no output file: {error}")))?;
    command
        .stdin(Stdio::null())
        .stdout(
            sink.try_clone()
                .map_err(|error| failed(error.to_string()))?,
        )
        .stderr(err_sink)
        .process_group(0);
    let start = Instant::now();
    let mut child = command
        .spawn()
        .map_err(|error| failed(format!("cannot start: {error}")))?;
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if start.elapsed() >= timeout => {
                timed_out = true;
                kill_group(child.id());
                break child.wait().ok();
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(error) => return Err(failed(error.to_string())),
        }
    };
    // Children that outlived the shell still hold the group; end them too.
    kill_group(child.id());
    let elapsed = start.elapsed();
    let output = read_capped(sink, max_output_bytes);
    Ok(CommandOutput {
        exit_code: if timed_out {
            None
        } else {
            status.and_then(|status| status.code())
        },
        timed_out,
        output,
        elapsed,
    })
}

/// Sends SIGKILL to the process group `pgid` (no-op when it is gone).
fn kill_group(pgid: u32) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

fn read_capped(mut file: std::fs::File, cap: usize) -> String {
    use std::io::{Read, Seek};
    let mut bytes = Vec::new();
    if file.rewind().is_err() || file.read_to_end(&mut bytes).is_err() {
        return String::new();
    }
    let text = String::from_utf8_lossy(&bytes).into_owned();
    cap_text(&text, cap)
}

/// `text` cut to about `cap` bytes: its head and tail with a marker between.
pub fn cap_text(text: &str, cap: usize) -> String {
    if text.len() <= cap {
        return text.to_string();
    }
    let half = cap / 2;
    let mut head_end = half;
    while !text.is_char_boundary(head_end) {
        head_end -= 1;
    }
    let mut tail_start = text.len() - half;
    while !text.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    format!(
        "{}\n[... {} bytes cut ...]\n{}",
        &text[..head_end],
        tail_start - head_end,
        &text[tail_start..]
    )
}

/// Runs `git` with `args` in `dir` (30 s limit) and returns its output.
///
/// # Errors
/// [`EvalError::Command`] when git cannot start, times out or exits non-zero.
pub fn git(dir: &Path, args: &[&str]) -> Result<String> {
    let mut command = Command::new("git");
    command
        .current_dir(dir)
        .args([
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "advice.detachedHead=false",
        ])
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0");
    let out = run_limited(command, Duration::from_secs(120), 64 << 20)?;
    if out.success() {
        Ok(out.output)
    } else {
        Err(EvalError::Command {
            command: format!("git {}", args.join(" ")),
            reason: cap_text(&out.output, 2000),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hanging_command_is_killed_with_its_children() {
        let mut command = Command::new("sh");
        command.args(["-c", "sleep 30 & sleep 30; echo never"]);
        let out = run_limited(command, Duration::from_millis(300), 1000).expect("runs");
        assert!(out.timed_out && out.exit_code.is_none());
        assert!(out.elapsed < Duration::from_secs(5));
        assert!(!out.output.contains("never"));
    }

    #[test]
    fn output_is_capped_head_and_tail() {
        let mut command = Command::new("sh");
        command.args(["-c", "echo start; seq 1 100000; echo end >&2; exit 3"]);
        let out = run_limited(command, Duration::from_secs(20), 200).expect("runs");
        assert_eq!(out.exit_code, Some(3));
        assert!(out.output.starts_with("start") && out.output.trim_end().ends_with("end"));
        assert!(out.output.contains("bytes cut"));
    }
}
