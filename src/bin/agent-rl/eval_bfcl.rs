//! `agent-rl eval bfcl`: score a BFCL result file, or generate with a local model and score.

use std::io::Write;
use std::path::{Path, PathBuf};

use agent_rl::backend::DeviceKind;
use agent_rl::core::{BurnPolicy, Policy, SamplingConfig};
use agent_rl::eval::EvalError;
use agent_rl::eval::bfcl::{
    BfclDataset, BfclReport, BfclRunConfig, BfclRunner, Category, CheckOptions, ResultLine,
    Verdict,
    multi_turn::{LONG_CONTEXT_MODULE_PATH, LongContextData, MultiTurnDocs},
    score_results_file,
};
use agent_rl::progress::{count_bar, count_progress};
use anyhow::Context;
use burn::prelude::Backend;
use serde_json::json;

use crate::endpoint_args::EndpointArgs;
use crate::failure_args::FailureArgs;
use crate::model_args::{ModelArgs, with_policy};
use agent_rl::backend::PolicyJob;

/// Score `--results FILE.jsonl` (lines `{"id", "result"}`), or run `--model DIR` (or the
/// model behind `--endpoint URL`) on the data.
#[derive(Debug, clap::Args)]
pub struct BfclArgs {
    /// BFCL data folder (`BFCL_v4_*.json` + `possible_answer/`, or v3; or a folder holding
    /// `v4/`/`v3/`, or one holding `bfcl/`); defaults to `$AGENT_RL_DATA`.
    #[arg(long, env = "AGENT_RL_DATA")]
    data: PathBuf,
    /// Result file to score: JSON Lines `{"id": …, "result": raw text | [{"fn": {"arg": v}}]}`.
    #[arg(long, conflicts_with_all = ["model", "endpoint"], required_unless_present_any = ["model", "endpoint"])]
    results: Option<PathBuf>,
    /// The model's API wrote underscores where function names have dots.
    #[arg(long)]
    underscore_to_dot: bool,
    /// bfcl-eval's `long_context.py` (in an installed bfcl-eval:
    /// `site-packages/bfcl_eval/eval_checker/multi_turn_eval/func_source_code/`): the filler data
    /// of the multi-turn long-context category, read at run time. Found automatically when
    /// `python3` can import `bfcl_eval`; without it, long-context entries that need it are
    /// reported unsupported.
    #[arg(long, env = "AGENT_RL_BFCL_LONG_CONTEXT", value_name = "FILE")]
    long_context_data: Option<PathBuf>,
    /// Where to write one verdict per line: `{"id", "valid", "error_type"}`.
    #[arg(long, required_unless_present_any = ["model", "endpoint"])]
    verdicts: Option<PathBuf>,
    /// Where to write the aggregate report (JSON); the Markdown table goes to stdout.
    #[arg(long)]
    report: Option<PathBuf>,
    /// Hugging Face snapshot to evaluate instead of a result file.
    #[arg(long)]
    model: Option<PathBuf>,
    /// The model behind an endpoint instead (`--endpoint URL`; the `--model` options below
    /// apply to it too, `--device` aside).
    #[command(flatten)]
    endpoint: EndpointArgs,
    /// Device for `--model`: `cpu` (default) or `cuda`.
    #[arg(long, default_value = "cpu")]
    device: DeviceKind,
    /// With `--model`: at most this many entries per category.
    #[arg(long)]
    limit: Option<usize>,
    /// With `--model`: categories to run (comma-separated v4 or v3 names); default all.
    #[arg(long, value_delimiter = ',')]
    categories: Vec<String>,
    /// With `--model`: tokens to generate at most per answer.
    #[arg(long, default_value_t = 512)]
    max_new_tokens: usize,
    /// With `--model`: sampling temperature (0 = greedy).
    #[arg(long, default_value_t = 0.0)]
    temperature: f32,
    /// With `--model`: requests per generation batch.
    #[arg(long, default_value_t = 8)]
    batch_size: usize,
    /// With `--model`: also write what the model produced, as a result file.
    #[arg(long)]
    save_results: Option<PathBuf>,
    /// With `--model` or `--endpoint`: what to do with entries that fail.
    #[command(flatten)]
    failure: FailureArgs,
}

/// Runs the command.
pub fn run(args: BfclArgs) -> anyhow::Result<()> {
    let (folder, version) = BfclDataset::detect(&args.data)?;
    let mut dataset = BfclDataset::load(&args.data)?;
    let categories =
        Category::from_names(args.categories.iter().map(String::as_str)).map_err(|name| {
            let valid: Vec<&str> = Category::ALL.iter().map(|c| c.name()).collect();
            anyhow::anyhow!(
                "--categories: unknown category `{name}` (valid: {}; v3 names are accepted too)",
                valid.join(", ")
            )
        })?;
    let long_context_file = match &args.long_context_data {
        Some(path) => Some(path.clone()),
        None if needs_long_context(&dataset, &categories) => installed_long_context(),
        None => None,
    };
    if let Some(path) = &long_context_file {
        let data = LongContextData::load(path)
            .map_err(|reason| anyhow::anyhow!("--long-context-data: {reason}"))?;
        dataset.set_long_context(std::sync::Arc::new(data));
    }
    let options = CheckOptions {
        underscore_to_dot: args.underscore_to_dot,
    };
    if let Some(results) = &args.results {
        let verdicts = score_results_file(&dataset, results, options)?;
        let report = BfclReport::with_dataset_counts(&verdicts, version, &dataset.counts());
        return finish(&args, &verdicts, &report);
    }
    if let Some(url) = args.endpoint.endpoint.clone() {
        let job = Job {
            args,
            dataset,
            version,
            folder,
            categories,
        };
        let endpoint = job.args.endpoint.clone();
        return endpoint.run(&url, |policy| job.evaluate(policy));
    }
    let Some(model) = args.model.clone() else {
        anyhow::bail!("give --results FILE, --model DIR or --endpoint URL");
    };
    let model_args = ModelArgs {
        model,
        device: args.device,
    };
    with_policy(
        &model_args,
        Job {
            args,
            dataset,
            version,
            folder,
            categories,
        },
    )
}

/// True when the run covers multi-turn long-context entries.
fn needs_long_context(dataset: &BfclDataset, categories: &[Category]) -> bool {
    let wanted = categories.is_empty() || categories.contains(&Category::MultiTurnLongContext);
    wanted
        && dataset.categories.iter().any(|(category, entries)| {
            *category == Category::MultiTurnLongContext && !entries.is_empty()
        })
}

/// bfcl-eval's `long_context.py` in the `bfcl_eval` package `python3` imports, or `None` after
/// a line on stderr saying how to supply it.
fn installed_long_context() -> Option<PathBuf> {
    let script =
        "import bfcl_eval, os; print(os.path.dirname(os.path.dirname(bfcl_eval.__file__)))";
    let found = std::process::Command::new("python3")
        .args(["-c", script])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|output| output.status.success())
        .and_then(|output| String::from_utf8(output.stdout).ok())
        .map(|root| Path::new(root.trim()).join(LONG_CONTEXT_MODULE_PATH))
        .filter(|path| path.is_file());
    let mut stderr = std::io::stderr().lock();
    let _ = match &found {
        Some(path) => writeln!(stderr, "long-context data: {}", path.display()),
        None => writeln!(
            stderr,
            "long-context entries need bfcl-eval's data (`pip install --no-deps bfcl-eval`, found \
             automatically, or --long-context-data FILE); without it they are not scored"
        ),
    };
    found
}

struct Job {
    args: BfclArgs,
    dataset: BfclDataset,
    version: agent_rl::eval::bfcl::BfclVersion,
    /// The folder holding the data files (and `multi_turn_func_doc/`).
    folder: PathBuf,
    /// `--categories`, parsed.
    categories: Vec<Category>,
}

impl PolicyJob for Job {
    type Output = ();

    fn run<B: Backend>(self, mut policy: BurnPolicy<B>) -> anyhow::Result<()> {
        self.evaluate(&mut policy)
    }
}

impl Job {
    /// Runs the data through `policy`, writes the outputs and prints the table.
    fn evaluate(&self, policy: &mut dyn Policy) -> anyhow::Result<()> {
        let args = &self.args;
        let config = BfclRunConfig {
            sampling: SamplingConfig {
                max_new_tokens: args.max_new_tokens,
                temperature: args.temperature,
                ..SamplingConfig::default()
            },
            limit: args.limit,
            batch_size: args.batch_size,
            categories: self.categories.clone(),
            check: CheckOptions {
                underscore_to_dot: args.underscore_to_dot,
            },
            overlong: args.failure.overlong,
        };
        // Multi-turn entries run when the data has the classes' function docs.
        let docs = if self.folder.join("multi_turn_func_doc").is_dir() {
            Some(MultiTurnDocs::load(&self.folder)?)
        } else {
            None
        };
        // Each result line is written (and flushed) as its entry finishes: an error later in
        // the run keeps everything generated before it.
        let mut saved = match &args.save_results {
            Some(path) => Some((
                std::fs::File::create(path)
                    .with_context(|| format!("creating --save-results {}", path.display()))?,
                path.clone(),
            )),
            None => None,
        };
        let bar = count_bar("entries");
        let mut runner = BfclRunner::new(&self.dataset, self.version, config)
            .with_progress(count_progress(&bar))
            .with_result_sink(|line: &ResultLine| {
                let Some((file, path)) = saved.as_mut() else {
                    return Ok(());
                };
                // one write per line, so a line is never left half-written by a later error
                let text = format!("{}\n", json!(line));
                file.write_all(text.as_bytes())
                    .map_err(|source| EvalError::Write {
                        path: path.clone(),
                        source,
                    })
            });
        if let Some(docs) = &docs {
            runner = runner.with_multi_turn_docs(docs);
        }
        let run = runner.run(policy)?;
        bar.finish_and_clear();
        finish(args, &run.verdicts, &run.report)?;
        args.failure.settle(
            "eval bfcl",
            "entries",
            &run.report.failures,
            run.verdicts.len(),
        )
    }
}

fn write_lines(path: &Path, lines: impl Iterator<Item = serde_json::Value>) -> anyhow::Result<()> {
    let mut file = std::io::BufWriter::new(
        std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?,
    );
    for line in lines {
        writeln!(file, "{line}")?;
    }
    file.flush()?;
    Ok(())
}

fn finish(args: &BfclArgs, verdicts: &[Verdict], report: &BfclReport) -> anyhow::Result<()> {
    if let Some(path) = &args.verdicts {
        let lines = verdicts
            .iter()
            .map(|v| json!({"id": v.id, "valid": v.valid, "error_type": v.error_type}));
        write_lines(path, lines)?;
    }
    if let Some(path) = &args.report {
        std::fs::write(path, serde_json::to_string_pretty(report)? + "\n")
            .with_context(|| format!("writing {}", path.display()))?;
    }
    write!(std::io::stdout().lock(), "{}", report.to_markdown())?;
    Ok(())
}
