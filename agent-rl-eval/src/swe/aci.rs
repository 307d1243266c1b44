//! The agent-computer interface: the tools a code agent gets over its workspace, their JSON
//! schemas ([`tool_specs`]) and their execution ([`Aci::execute`]).
//!
//! | tool | arguments | effect |
//! |---|---|---|
//! | `bash` | `command` | `sh -c` in the tree root, time limit, output cap, process group killed on timeout |
//! | `view` | `path`, `start_line`?, `end_line`? | a window of a file with line numbers, or a directory listing |
//! | `search` | `pattern`, `path`? | regular-expression search, `file:line: text` |
//! | `str_replace` | `path`, `old_str`, `new_str` | replaces the one exact occurrence of `old_str` |
//! | `insert` | `path`, `line`, `text` | inserts after line `line` (0 = top) |
//! | `create` | `path`, `content` | a new file |
//! | `submit` | — | ends the episode; the patch is the tree's `git diff` |
//!
//! Nothing is written outside the tree: file paths are resolved inside it, every component by
//! the kernel ([`super::confine::relative_in`], [`super::beneath`]), commands that visibly write
//! elsewhere are refused ([`super::confine::command_escape`]), and where the machine allows it
//! commands run in a namespace sandbox where everything but the tree is read-only, with a
//! cleared environment, and whose processes all die with the command ([`super::sandbox`]). The
//! file tools only touch regular files and a search stops at the command time limit.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use agent_rl_core::{ToolCall, ToolSpec};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::command::{cap_text, run_limited};
use super::confine::command_escape;
use super::file_tools;
use super::sandbox::{SandboxMode, shell_command};
use crate::{EvalError, Result};

/// The name of the tool that ends an episode.
pub const SUBMIT_TOOL: &str = "submit";

/// Settings of the tools.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AciConfig {
    /// Time limit of one `bash` command in seconds. Default 60, at least 1.
    pub command_timeout_secs: u64,
    /// Most bytes of one tool result the model sees (head and tail kept). Default 10,000.
    pub max_output_bytes: usize,
    /// Lines `view` shows when no end line is given. Default 100.
    pub view_window_lines: usize,
    /// Most matches `search` lists. Default 50.
    pub max_search_results: usize,
    /// Whether `bash` runs in the namespace sandbox. Default [`SandboxMode::Auto`].
    pub sandbox: SandboxMode,
}

impl Default for AciConfig {
    fn default() -> Self {
        Self {
            command_timeout_secs: 60,
            max_output_bytes: 10_000,
            view_window_lines: 100,
            max_search_results: 50,
            sandbox: SandboxMode::Auto,
        }
    }
}

impl AciConfig {
    /// Checks the settings.
    ///
    /// # Errors
    /// [`EvalError::InvalidConfig`] naming the field that is zero.
    pub fn validate(&self) -> Result<()> {
        for (field, value) in [
            ("command_timeout_secs", self.command_timeout_secs as usize),
            ("max_output_bytes", self.max_output_bytes),
            ("view_window_lines", self.view_window_lines),
            ("max_search_results", self.max_search_results),
        ] {
            if value == 0 {
                return Err(EvalError::InvalidConfig {
                    field: field.into(),
                    reason: "must be at least 1".into(),
                });
            }
        }
        Ok(())
    }
}

/// The result of one tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResult {
    /// What the model sees.
    pub output: String,
    /// True when the call failed (bad arguments, refused, non-zero exit, timeout).
    pub failed: bool,
    /// True for `bash` commands killed at their time limit.
    pub timed_out: bool,
    /// True for `submit`.
    pub submitted: bool,
}

impl ToolResult {
    fn from(result: std::result::Result<String, String>) -> Self {
        let failed = result.is_err();
        Self {
            output: result.unwrap_or_else(|error| error),
            failed,
            timed_out: false,
            submitted: false,
        }
    }
}

/// The tools over one workspace tree.
#[derive(Debug, Clone)]
pub struct Aci {
    root: PathBuf,
    scratch: PathBuf,
    config: AciConfig,
}

impl Aci {
    /// Tools over the tree `root` (canonical), with `scratch` (outside the tree) as the
    /// commands' home and temporary directory.
    ///
    /// # Errors
    /// [`EvalError::Io`] when `scratch` cannot be created.
    pub fn new(root: PathBuf, scratch: PathBuf, config: AciConfig) -> Result<Self> {
        std::fs::create_dir_all(&scratch).map_err(|source| EvalError::Io {
            path: scratch.clone(),
            source,
        })?;
        Ok(Self {
            root,
            scratch,
            config,
        })
    }

    /// Runs one call; `time_left` caps a command's time limit (the episode's wall-time budget).
    pub fn execute(&self, call: &ToolCall, time_left: Duration) -> ToolResult {
        let args = &call.arguments;
        let text = |key: &str| -> std::result::Result<String, String> {
            match args.get(key) {
                Some(Value::String(text)) => Ok(text.clone()),
                Some(_) => Err(format!(
                    "argument `{key}` of {} must be a string",
                    call.name
                )),
                None => Err(format!("{} needs the argument `{key}`", call.name)),
            }
        };
        let line = |key: &str| -> std::result::Result<Option<usize>, String> {
            match args.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(value) => value
                    .as_u64()
                    .or_else(|| value.as_str().and_then(|s| s.trim().parse().ok()))
                    .map(|n| Some(n as usize))
                    .ok_or_else(|| format!("argument `{key}` must be a line number")),
            }
        };
        let root = &self.root;
        let mut result = ToolResult::from(match call.name.as_str() {
            "bash" => return self.bash(text("command"), time_left),
            "view" => text("path").and_then(|path| {
                let (start, end) = (line("start_line")?, line("end_line")?);
                file_tools::view(root, &path, start, end, self.config.view_window_lines)
            }),
            "search" => text("pattern").and_then(|pattern| {
                let path = args.get("path").and_then(Value::as_str);
                let limit = Duration::from_secs(self.config.command_timeout_secs).min(time_left);
                let deadline = Instant::now() + limit;
                file_tools::search(
                    root,
                    &pattern,
                    path,
                    self.config.max_search_results,
                    deadline,
                )
            }),
            "str_replace" => text("path").and_then(|path| {
                let new = args.get("new_str").and_then(Value::as_str).unwrap_or("");
                file_tools::replace(root, &path, &text("old_str")?, new)
            }),
            "insert" => text("path").and_then(|path| {
                let after = line("line")?.ok_or("insert needs the argument `line`")?;
                file_tools::insert(root, &path, after, &text("text")?)
            }),
            "create" => text("path").and_then(|path| {
                let content = args.get("content").and_then(Value::as_str).unwrap_or("");
                file_tools::create(root, &path, content)
            }),
            SUBMIT_TOOL => Ok("submitted".into()),
            other => Err(format!(
                "unknown tool `{other}`; the tools are bash, view, search, str_replace, insert, \
                 create, submit"
            )),
        });
        result.submitted = call.name == SUBMIT_TOOL;
        result.output = cap_text(&result.output, self.config.max_output_bytes);
        result
    }

    fn bash(
        &self,
        command: std::result::Result<String, String>,
        time_left: Duration,
    ) -> ToolResult {
        let command = match command {
            Ok(command) => command,
            Err(error) => return ToolResult::from(Err(error)),
        };
        if let Some(refusal) = command_escape(&command, &self.root) {
            return ToolResult::from(Err(refusal));
        }
        let limit = Duration::from_secs(self.config.command_timeout_secs).min(time_left);
        let spawned = shell_command(&command, &self.root, &self.scratch, self.config.sandbox)
            .and_then(|(process, _)| run_limited(process, limit, self.config.max_output_bytes));
        match spawned {
            Ok(out) if out.timed_out => ToolResult {
                output: format!(
                    "{}\n[killed: the command ran past its limit of {} s]",
                    out.output,
                    limit.as_secs_f64()
                ),
                failed: true,
                timed_out: true,
                submitted: false,
            },
            Ok(out) => {
                let code = out.exit_code.unwrap_or(-1);
                let mut output = out.output;
                if code != 0 {
                    output.push_str(&format!("\n[exit code {code}]"));
                }
                ToolResult {
                    output,
                    failed: code != 0,
                    timed_out: false,
                    submitted: false,
                }
            }
            Err(error) => ToolResult::from(Err(error.to_string())),
        }
    }
}

/// The JSON schemas of the tools (OpenAI function format), in the order of the module docs.
pub fn tool_specs() -> Vec<ToolSpec> {
    let string = |description: &str| json!({"type": "string", "description": description});
    let integer = |description: &str| json!({"type": "integer", "description": description});
    let object = |properties: Value, required: &[&str]| json!({"type": "object", "properties": properties, "required": required});
    vec![
        ToolSpec::new(
            "bash",
            "Run a shell command in the repository root (time-limited; long output is cut). \
             Writing outside the repository is refused.",
            object(
                json!({"command": string("the command, run with sh -c")}),
                &["command"],
            ),
        ),
        ToolSpec::new(
            "view",
            "Show a file with line numbers (a window of lines), or list a directory.",
            object(
                json!({"path": string("file or directory, relative to the repository root"),
                       "start_line": integer("first line to show (1-based)"),
                       "end_line": integer("last line to show")}),
                &["path"],
            ),
        ),
        ToolSpec::new(
            "search",
            "Search files for a regular expression; lists file:line: text.",
            object(
                json!({"pattern": string("a regular expression"),
                       "path": string("file or directory to search (default: the whole repository)")}),
                &["pattern"],
            ),
        ),
        ToolSpec::new(
            "str_replace",
            "Replace the one exact occurrence of old_str in a file by new_str.",
            object(
                json!({"path": string("the file"), "old_str": string("text that occurs exactly once"),
                       "new_str": string("the replacement")}),
                &["path", "old_str", "new_str"],
            ),
        ),
        ToolSpec::new(
            "insert",
            "Insert text after a line of a file (line 0 = at the top).",
            object(
                json!({"path": string("the file"), "line": integer("insert after this line"),
                       "text": string("the lines to insert")}),
                &["path", "line", "text"],
            ),
        ),
        ToolSpec::new(
            "create",
            "Create a new file with the given content.",
            object(
                json!({"path": string("the new file"), "content": string("its content")}),
                &["path", "content"],
            ),
        ),
        ToolSpec::new(
            SUBMIT_TOOL,
            "Submit: end the task; your changes to the repository are the patch.",
            object(json!({}), &[]),
        ),
    ]
}
