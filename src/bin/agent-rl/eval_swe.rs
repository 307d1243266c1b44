//! `agent-rl eval swe`: SWE-bench Verified — run the agent scaffold, grade predictions locally.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_rl::backend::{DeviceKind, PolicyJob};
use agent_rl::core::{BurnPolicy, Policy, SamplingConfig};
use agent_rl::eval::swe::{
    GradeConfig, GradeStatus, InstanceGrade, LocalGrader, SandboxMode, SweEnvConfig, SweFinish,
    SweReport, SweRunConfig, builtin_specs, episodes_path, grade_predictions, load_data_instances,
    load_specs, predictions, read_episodes, read_predictions, run_swe, tasks_for, write_episodes,
    write_predictions,
};
use agent_rl::progress::{count_bar, count_progress};
use anyhow::Context;
use burn::prelude::Backend;

use crate::endpoint_args::EndpointArgs;
use crate::model_args::{ModelArgs, with_policy};

/// SWE-bench subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum SweCommand {
    /// Run a local model as a code agent on instances (a fresh checkout each, tools confined to
    /// it) and write its patches as predictions in the official format, with the episodes
    /// (steps, tool calls, time to patch, conversation) beside them (`<out>.episodes.jsonl`).
    Run(RunArgs),
    /// Grade predictions with the local grader (per-version venvs, the test patch, the
    /// FAIL_TO_PASS / PASS_TO_PASS rules) and write the report.
    Grade(GradeArgs),
}

/// Arguments of `eval swe run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Hugging Face snapshot of the agent.
    #[arg(long, required_unless_present = "endpoint")]
    model: Option<PathBuf>,
    /// The agent behind an endpoint instead.
    #[command(flatten)]
    endpoint: EndpointArgs,
    /// Device: `cpu` (default) or `cuda`.
    #[arg(long, default_value = "cpu")]
    device: DeviceKind,
    /// Data folder holding `swebench/verified_mini50.jsonl` and `swebench/repos/` (or that
    /// folder itself); defaults to `$AGENT_RL_DATA`.
    #[arg(long, env = "AGENT_RL_DATA")]
    data: PathBuf,
    /// Instance ids (comma-separated); default all of the file.
    #[arg(long, value_delimiter = ',')]
    instances: Vec<String>,
    /// Predictions file to write (JSONL).
    #[arg(long)]
    out: PathBuf,
    /// `model_name_or_path` of the predictions; default the model folder's name (or the
    /// `--endpoint-model`).
    #[arg(long)]
    model_name: Option<String>,
    /// Most steps (tool calls and replies) per instance.
    #[arg(long, default_value_t = 50)]
    max_steps: usize,
    /// Most tokens generated per turn.
    #[arg(long, default_value_t = 1024)]
    max_new_tokens: usize,
    /// Most tokens generated per instance.
    #[arg(long, default_value_t = 32768)]
    max_total_tokens: usize,
    /// Most wall time per instance, in seconds.
    #[arg(long, default_value_t = 1800)]
    max_wall_secs: u64,
    /// Time limit of one shell command, in seconds.
    #[arg(long, default_value_t = 60)]
    command_timeout_secs: u64,
    /// Sandbox of the shell commands: `auto`, `required` or `off`.
    #[arg(long, default_value = "auto", value_parser = parse_sandbox)]
    sandbox: SandboxMode,
    /// Sampling temperature (0 = greedy).
    #[arg(long, default_value_t = 0.0)]
    temperature: f32,
    /// Episodes run together (one generation batch per step).
    #[arg(long, default_value_t = 1)]
    batch_size: usize,
}

/// Arguments of `eval swe grade`.
#[derive(Debug, clap::Args)]
pub struct GradeArgs {
    /// Predictions (JSONL, or `.json` list / id-keyed object).
    #[arg(long)]
    predictions: PathBuf,
    /// Data folder (as for `run`); defaults to `$AGENT_RL_DATA`.
    #[arg(long, env = "AGENT_RL_DATA")]
    data: PathBuf,
    /// Report file to write (JSON); the Markdown goes to stdout.
    #[arg(long)]
    report: PathBuf,
    /// Environment specs (`{"specs": [...]}`); default the built-in table.
    #[arg(long)]
    env_specs: Option<PathBuf>,
    /// Where the per-version venvs are cached.
    #[arg(long, default_value = "swe-envs")]
    cache_dir: PathBuf,
    /// Episodes of the run (for steps, tool calls, time to patch); default
    /// `<predictions>.episodes.jsonl` when it exists.
    #[arg(long)]
    episodes: Option<PathBuf>,
    /// Limit of one test run, in seconds.
    #[arg(long, default_value_t = 1800)]
    test_timeout_secs: u64,
    /// Folder for the per-instance test logs.
    #[arg(long)]
    log_dir: Option<PathBuf>,
    /// Sandbox of everything run on a patched tree (applying the patch, the tests): `auto`,
    /// `required` or `off`.
    #[arg(long, default_value = "auto", value_parser = parse_sandbox)]
    sandbox: SandboxMode,
}

/// `path` made absolute against the current directory, so that it means the same in the
/// other directories commands run in (`flag` names it in the error).
fn absolute(flag: &str, path: &Path) -> anyhow::Result<PathBuf> {
    std::path::absolute(path).with_context(|| format!("{flag} {}", path.display()))
}

/// The data folder, which must exist, as an absolute path.
fn data_folder(path: &Path) -> anyhow::Result<PathBuf> {
    path.canonicalize().with_context(|| {
        format!(
            "--data {}: not a folder (pass the folder holding swebench/)",
            path.display()
        )
    })
}

fn parse_sandbox(text: &str) -> Result<SandboxMode, String> {
    serde_json::from_value(serde_json::Value::String(text.into()))
        .map_err(|_| format!("`{text}` is not a sandbox mode (auto, required, off)"))
}

/// Runs one `eval swe` subcommand.
pub fn run(command: SweCommand) -> anyhow::Result<()> {
    match command {
        SweCommand::Grade(args) => grade(&args),
        SweCommand::Run(args) => {
            if let Some(url) = args.endpoint.endpoint.clone() {
                let endpoint = args.endpoint.clone();
                let job = RunJob { args };
                return endpoint.run(&url, |policy| job.evaluate(policy));
            }
            let Some(model) = args.model.clone() else {
                anyhow::bail!("give --model DIR or --endpoint URL");
            };
            let model = ModelArgs {
                model,
                device: args.device,
            };
            with_policy(&model, RunJob { args })
        }
    }
}

struct RunJob {
    args: RunArgs,
}

impl PolicyJob for RunJob {
    type Output = ();

    fn run<B: Backend>(self, mut policy: BurnPolicy<B>) -> anyhow::Result<()> {
        self.evaluate(&mut policy)
    }
}

impl RunJob {
    /// Runs the instances with `policy` as the agent and writes the predictions and episodes.
    fn evaluate(&self, policy: &mut dyn Policy) -> anyhow::Result<()> {
        let args = &self.args;
        let tasks = tasks_for(&data_folder(&args.data)?, &args.instances)?;
        let mut env = SweEnvConfig {
            max_steps: args.max_steps,
            max_wall_secs: args.max_wall_secs,
            ..SweEnvConfig::default()
        };
        env.aci.command_timeout_secs = args.command_timeout_secs;
        env.aci.sandbox = args.sandbox;
        let config = SweRunConfig {
            env,
            sampling: SamplingConfig {
                max_new_tokens: args.max_new_tokens,
                temperature: args.temperature,
                ..SamplingConfig::default()
            },
            max_total_tokens: args.max_total_tokens,
            batch_size: args.batch_size,
        };
        let bar = count_bar("instances");
        let episodes = run_swe(policy, &tasks, &config, None, &mut count_progress(&bar))?;
        bar.finish_and_clear();
        let name = args.model_name.clone().unwrap_or_else(|| {
            let folder = args.model.as_ref().and_then(|dir| dir.file_name());
            match (folder, &args.endpoint.endpoint_model) {
                (Some(folder), _) => folder.to_string_lossy().into_owned(),
                (None, Some(model)) => model.clone(),
                (None, None) => "agent-rl".into(),
            }
        });
        write_predictions(&args.out, &predictions(&episodes, &name))?;
        let log = episodes_path(&args.out);
        write_episodes(&log, &episodes)?;
        let broken = episodes
            .iter()
            .filter(|e| e.outcome.finish_reason == SweFinish::EnvironmentError)
            .count();
        if broken > 0 && broken == episodes.len() {
            anyhow::bail!(
                "every instance ({broken}) failed to set up its workspace (environment_error); \
                 see {} — is --data right?",
                log.display()
            );
        }
        let submitted = episodes
            .iter()
            .filter(|e| !e.outcome.patch.trim().is_empty())
            .count();
        writeln!(
            std::io::stdout().lock(),
            "{} instances, {submitted} non-empty patches; wrote {} and {}",
            episodes.len(),
            args.out.display(),
            log.display()
        )?;
        Ok(())
    }
}

fn grade(args: &GradeArgs) -> anyhow::Result<()> {
    let specs = match &args.env_specs {
        Some(path) => load_specs(path)?,
        None => builtin_specs(),
    };
    let data = data_folder(&args.data)?;
    let mut config = GradeConfig::new(absolute("--cache-dir", &args.cache_dir)?);
    config.test_timeout_secs = args.test_timeout_secs;
    config.log_dir = match &args.log_dir {
        Some(dir) => Some(absolute("--log-dir", dir)?),
        None => None,
    };
    config.sandbox = args.sandbox;
    let grader = Arc::new(LocalGrader::new(specs, config));
    let instances = load_data_instances(&data)?;
    let predictions = read_predictions(&args.predictions)?;
    let bar = count_bar("instances");
    let grades = grade_predictions(
        &grader,
        &instances,
        &predictions,
        &data,
        &mut count_progress(&bar),
    )?;
    bar.finish_and_clear();
    let default_log = episodes_path(&args.predictions);
    let episodes = match &args.episodes {
        Some(path) => read_episodes(path)?,
        None if default_log.is_file() => read_episodes(&default_log)?,
        None => Vec::new(),
    };
    let report = SweReport::new(&grades, &episodes);
    std::fs::write(&args.report, serde_json::to_string_pretty(&report)? + "\n")
        .with_context(|| format!("writing {}", args.report.display()))?;
    write!(std::io::stdout().lock(), "{}", report.to_markdown())?;
    environment_check(&grades, &args.report)
}

/// An error when every graded prediction (empty patches aside) failed for want of a working
/// environment (`install_failed`, `error`): such a run measured nothing, and exiting 0 would
/// pass it off as a 0% score.
fn environment_check(grades: &[InstanceGrade], report: &Path) -> anyhow::Result<()> {
    let graded: Vec<&InstanceGrade> = grades
        .iter()
        .filter(|grade| grade.status != GradeStatus::EmptyPatch)
        .collect();
    let broken = |grade: &&InstanceGrade| {
        matches!(
            grade.status,
            GradeStatus::InstallFailed | GradeStatus::Error
        )
    };
    match graded.first() {
        Some(first) if graded.iter().all(broken) => anyhow::bail!(
            "every graded instance ({}) failed for its environment (install_failed or error), \
             so nothing was measured; the first, {}: {} (report written to {})",
            graded.len(),
            first.instance_id,
            first.detail.as_deref().unwrap_or("no detail"),
            report.display()
        ),
        _ => Ok(()),
    }
}
