//! [`RunDir`]: what a training run leaves behind — resolved config, per-stage metrics (JSONL +
//! CSV, TRL's metric names), a reward-curve SVG, and the final model with its tokenizer in
//! Hugging Face layout. Shared by the CLI trainers and the examples.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use agent_rl_algos::StepMetrics;
use agent_rl_core::weights::{SaveOptions, save_pretrained};
use agent_rl_core::{ChatTokenizer, Qwen2ForCausalLm};
use burn::tensor::backend::Backend;

/// Metrics of one stage, appended as they arrive.
#[derive(Debug)]
struct Log {
    jsonl: File,
    csv: File,
    columns: Option<Vec<String>>,
    header_written: bool,
    history: Vec<StepMetrics>,
}

/// An observer's handle on a stage's metrics files (clone-free: moved into the observer).
#[derive(Debug)]
pub struct MetricsSink(Arc<Mutex<Log>>);

impl MetricsSink {
    /// Appends one step to `<stage>_metrics.jsonl` and `<stage>_metrics.csv` (write errors are
    /// ignored: metrics must never stop training).
    pub fn record(&self, metrics: &StepMetrics) {
        let Ok(mut log) = self.0.lock() else { return };
        let named = metrics.named();
        let columns = log
            .columns
            .get_or_insert_with(|| named.iter().map(|(k, _)| k.clone()).collect())
            .clone();
        if !log.header_written {
            let _ = writeln!(log.csv, "{}", columns.join(","));
            log.header_written = true;
        }
        let row: Vec<String> = columns
            .iter()
            .map(|c| {
                named
                    .iter()
                    .find(|(k, _)| k == c)
                    .map_or(String::new(), |(_, v)| v.to_string())
            })
            .collect();
        let _ = writeln!(log.csv, "{}", row.join(","));
        let _ = writeln!(log.jsonl, "{}", metrics.to_json());
        log.history.push(metrics.clone());
    }
}

/// The run directory being written.
#[derive(Debug)]
pub struct RunDir {
    dir: PathBuf,
    logs: Vec<(String, Arc<Mutex<Log>>)>,
}

impl RunDir {
    /// The directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Creates (or reuses) `dir`.
    ///
    /// # Errors
    /// When the directory cannot be created.
    pub fn create(dir: &Path) -> anyhow::Result<Self> {
        std::fs::create_dir_all(dir)?;
        Ok(Self {
            dir: dir.to_owned(),
            logs: Vec::new(),
        })
    }

    /// Writes `value` as pretty JSON to `dir/name`.
    ///
    /// # Errors
    /// When the file cannot be written.
    pub fn write_json(&self, name: &str, value: &serde_json::Value) -> anyhow::Result<()> {
        std::fs::write(self.dir.join(name), serde_json::to_string_pretty(value)?)?;
        Ok(())
    }

    /// A sink for the metrics of `stage` (`<stage>_metrics.jsonl` and `.csv`).
    ///
    /// # Errors
    /// When the files cannot be created.
    pub fn metrics_sink(&mut self, stage: &str) -> anyhow::Result<MetricsSink> {
        let log = Arc::new(Mutex::new(Log {
            jsonl: File::create(self.dir.join(format!("{stage}_metrics.jsonl")))?,
            csv: File::create(self.dir.join(format!("{stage}_metrics.csv")))?,
            columns: None,
            header_written: false,
            history: Vec::new(),
        }));
        self.logs.push((stage.to_owned(), Arc::clone(&log)));
        Ok(MetricsSink(log))
    }

    /// Like [`Self::metrics_sink`], but appends to the stage's existing files (a resumed run
    /// keeps the steps logged before it; the CSV keeps its header's columns).
    ///
    /// # Errors
    /// When the files cannot be opened.
    pub fn metrics_sink_appending(&mut self, stage: &str) -> anyhow::Result<MetricsSink> {
        let csv_path = self.dir.join(format!("{stage}_metrics.csv"));
        let columns: Option<Vec<String>> = std::fs::read_to_string(&csv_path)
            .ok()
            .and_then(|text| text.lines().next().map(str::to_owned))
            .filter(|header| !header.is_empty())
            .map(|header| header.split(',').map(str::to_owned).collect());
        let open = |path: PathBuf| {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
        };
        let log = Arc::new(Mutex::new(Log {
            jsonl: open(self.dir.join(format!("{stage}_metrics.jsonl")))?,
            csv: open(csv_path)?,
            header_written: columns.is_some(),
            columns,
            history: Vec::new(),
        }));
        self.logs.push((stage.to_owned(), Arc::clone(&log)));
        Ok(MetricsSink(log))
    }

    /// Writes the reward curve of the GRPO stage (`reward_curve.svg`) and the final model with
    /// its tokenizer in Hugging Face layout (`final_model/`).
    ///
    /// # Errors
    /// The file that could not be written.
    pub fn finish<B: Backend>(
        &self,
        model: &Qwen2ForCausalLm<B>,
        tokenizer: &ChatTokenizer,
    ) -> anyhow::Result<()> {
        for (stage, log) in &self.logs {
            let Ok(log) = log.lock() else { continue };
            if stage == "grpo" {
                let rewards: Vec<f32> = log.history.iter().map(|m| m.reward).collect();
                std::fs::write(self.dir.join("reward_curve.svg"), reward_svg(&rewards))?;
            }
        }
        let model_dir = self.dir.join("final_model");
        save_pretrained(model, &model_dir, SaveOptions::default())?;
        tokenizer.save_to_dir(&model_dir)?;
        Ok(())
    }
}

/// A line chart of the per-step mean reward and its 5-step moving average.
fn reward_svg(rewards: &[f32]) -> String {
    let (width, height, pad) = (640.0f32, 320.0f32, 40.0f32);
    let finite: Vec<f32> = rewards.iter().copied().filter(|r| r.is_finite()).collect();
    let low = finite
        .iter()
        .copied()
        .fold(f32::INFINITY, f32::min)
        .min(0.0);
    let high = finite
        .iter()
        .copied()
        .fold(f32::NEG_INFINITY, f32::max)
        .max(low + 1e-3);
    let x = |i: usize| pad + (width - 2.0 * pad) * i as f32 / (rewards.len().max(2) - 1) as f32;
    let y = |r: f32| height - pad - (height - 2.0 * pad) * (r - low) / (high - low);
    let line = |values: &[f32]| -> String {
        values
            .iter()
            .enumerate()
            .filter(|(_, r)| r.is_finite())
            .map(|(i, &r)| format!("{:.1},{:.1}", x(i), y(r)))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let smooth: Vec<f32> = (0..rewards.len())
        .map(|i| {
            let window = &rewards[i.saturating_sub(4)..=i];
            window.iter().sum::<f32>() / window.len() as f32
        })
        .collect();
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{pad}\" y=\"20\">GRPO mean reward per step (grey) and 5-step average (blue)</text>\n\
         <line x1=\"{pad}\" y1=\"{b}\" x2=\"{r}\" y2=\"{b}\" stroke=\"black\"/>\n\
         <line x1=\"{pad}\" y1=\"{pad}\" x2=\"{pad}\" y2=\"{b}\" stroke=\"black\"/>\n\
         <text x=\"4\" y=\"{b}\">{low:.2}</text><text x=\"4\" y=\"{pad}\">{high:.2}</text>\n\
         <text x=\"{r}\" y=\"{tb}\" text-anchor=\"end\">step {n}</text>\n\
         <polyline fill=\"none\" stroke=\"#999\" points=\"{raw}\"/>\n\
         <polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"{avg}\"/>\n</svg>\n",
        b = height - pad,
        r = width - pad,
        tb = height - pad + 16.0,
        n = rewards.len(),
        raw = line(rewards),
        avg = line(&smooth),
    )
}
