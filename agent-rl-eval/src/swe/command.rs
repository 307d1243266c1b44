//! Running external commands with a time limit and an output cap: the command gets its own
//! process group, which is killed as a whole when the limit passes (so a hanging child of a
//! shell dies too); stdout and stderr go to one pipe, in the order written, which is read while
//! the command runs and of which only the head and the tail are kept (memory stays bounded
//! whatever the command prints).

use std::collections::VecDeque;
use std::io::Read;
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
/// `timeout`; keeps at most `max_output_bytes` of output (the head and the tail), reading the
/// rest and dropping it as it comes.
///
/// # Errors
/// [`EvalError::Command`] when the program cannot be started or its output pipe cannot be made.
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
    let (mut reader, writer) =
        std::io::pipe().map_err(|error| failed(format!("no output pipe: {error}")))?;
    let err_writer = writer
        .try_clone()
        .map_err(|error| failed(format!("no output pipe: {error}")))?;
    rustix::io::ioctl_fionbio(&reader, true)
        .map_err(|error| failed(format!("no output pipe: {error}")))?;
    command
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(err_writer)
        .process_group(0);
    let start = Instant::now();
    let spawned = command.spawn();
    // The command holds our copies of the pipe's write end; without them the pipe ends with the
    // command's processes.
    drop(command);
    let mut child = spawned.map_err(|error| failed(format!("cannot start: {error}")))?;
    let mut output = CappedOutput::new(max_output_bytes);
    let mut timed_out = false;
    let status = loop {
        output.drain(&mut reader);
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if start.elapsed() >= timeout => {
                timed_out = true;
                kill_group(child.id());
                break child.wait().ok();
            }
            Ok(None) => wait_readable(&reader, Duration::from_millis(10)),
            Err(error) => {
                kill_group(child.id());
                return Err(failed(error.to_string()));
            }
        }
    };
    // Children that outlived the shell still hold the group; end them too.
    kill_group(child.id());
    output.drain(&mut reader);
    let elapsed = start.elapsed();
    Ok(CommandOutput {
        exit_code: if timed_out {
            None
        } else {
            status.and_then(|status| status.code())
        },
        timed_out,
        output: output.into_text(),
        elapsed,
    })
}

/// Sleeps until `reader` has data or `limit` passes.
fn wait_readable(reader: &std::io::PipeReader, limit: Duration) {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let timeout = Timespec {
        tv_sec: 0,
        tv_nsec: i64::from(limit.subsec_nanos()),
    };
    let mut fds = [PollFd::new(reader, PollFlags::IN)];
    if poll(&mut fds, Some(&timeout)).is_err() {
        std::thread::sleep(limit);
    }
}

/// Sends SIGKILL to the process group `pgid` (no-op when it is gone).
fn kill_group(pgid: u32) {
    if let Some(pid) = i32::try_from(pgid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

/// The head and the tail of a stream, at most `cap` bytes in all, and how much went by.
struct CappedOutput {
    head: Vec<u8>,
    head_cap: usize,
    tail: VecDeque<u8>,
    tail_cap: usize,
    total: usize,
}

/// Most bytes read in one [`CappedOutput::drain`] before the caller looks at the clock again.
const DRAIN_BYTES: usize = 8 << 20;

impl CappedOutput {
    fn new(cap: usize) -> Self {
        let head_cap = cap / 2;
        Self {
            head: Vec::new(),
            head_cap,
            tail: VecDeque::new(),
            tail_cap: cap - head_cap,
            total: 0,
        }
    }

    fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len();
        let to_head = bytes.len().min(self.head_cap - self.head.len());
        self.head.extend_from_slice(&bytes[..to_head]);
        bytes = &bytes[to_head..];
        if bytes.len() >= self.tail_cap {
            bytes = &bytes[bytes.len() - self.tail_cap..];
            self.tail.clear();
        }
        let excess = (self.tail.len() + bytes.len()).saturating_sub(self.tail_cap);
        self.tail.drain(..excess);
        self.tail.extend(bytes);
    }

    /// Reads what `reader` (non-blocking) holds now, up to [`DRAIN_BYTES`].
    fn drain(&mut self, reader: &mut impl Read) {
        let mut buffer = [0u8; 64 << 10];
        let mut read = 0;
        while read < DRAIN_BYTES {
            match reader.read(&mut buffer) {
                Ok(0) => return,
                Ok(count) => {
                    self.push(&buffer[..count]);
                    read += count;
                }
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return,
            }
        }
    }

    fn into_text(self) -> String {
        let tail: Vec<u8> = self.tail.into_iter().collect();
        let cut = self.total - self.head.len() - tail.len();
        let head = String::from_utf8_lossy(&self.head);
        let tail = String::from_utf8_lossy(&tail);
        if self.total <= self.head_cap + self.tail_cap {
            format!("{head}{tail}")
        } else {
            format!("{head}\n[... {cut} bytes cut ...]\n{tail}")
        }
    }
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

/// Settings every host-side git command gets, over whatever a repository's config says: no
/// hooks, no file-system monitor, no pager.
const GIT_OVERRIDES: [&str; 8] = [
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "advice.detachedHead=false",
    "-c",
    "core.pager=cat",
];

/// A `git` command in `dir` with a cleared environment (only `PATH`), no system or user config,
/// and hooks, the file-system monitor and the pager switched off. The repository's own config is
/// still read: on a tree the agent wrote, run git on a git directory it cannot reach ([`super::workspace::Workspace::git`]).
pub fn git_command(dir: &Path) -> Command {
    let mut command = Command::new("git");
    command
        .current_dir(dir)
        .env_clear()
        .env("PATH", host_path())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("LC_ALL", "C")
        .args(GIT_OVERRIDES);
    command
}

/// The host's `PATH`, or the usual system one when it is unset.
pub fn host_path() -> std::ffi::OsString {
    std::env::var_os("PATH")
        .unwrap_or_else(|| "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".into())
}

/// Runs `git` with `args` in `dir` (see [`git_command`]; 120 s limit) and returns its output.
///
/// # Errors
/// [`EvalError::Command`] when git cannot start, times out or exits non-zero.
pub fn git(dir: &Path, args: &[&str]) -> Result<String> {
    let mut command = git_command(dir);
    command.args(args);
    run_git(command, args)
}

/// Runs a prepared git `command` whose arguments were `args` (for the error message).
///
/// # Errors
/// [`EvalError::Command`] when git cannot start, times out or exits non-zero.
pub fn run_git(command: Command, args: &[&str]) -> Result<String> {
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
