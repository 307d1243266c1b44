//! Progress bars for training runs, and the observer that drives one while recording metrics.

use agent_rl_algos::StepMetrics;
use indicatif::{ProgressBar, ProgressStyle};

use crate::run_dir::MetricsSink;

/// A progress bar `label [=====>   ] pos/len msg (elapsed)` on stderr.
pub fn progress_bar(len: usize, label: &str) -> ProgressBar {
    let bar = ProgressBar::new(len as u64);
    if let Ok(style) =
        ProgressStyle::with_template("{prefix:>6} [{bar:30}] {pos}/{len} {msg} ({elapsed})")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_prefix(label.to_owned());
    bar
}

/// A trainer observer that records each step to `sink` and moves `progress` to the step's
/// number (growing its length when a run has no fixed step count), showing `message(step)`.
///
/// ```
/// use agent_rl::algos::StepMetrics;
/// use agent_rl::progress::{progress_bar, progress_observer};
/// use agent_rl::run_dir::RunDir;
///
/// let dir = tempfile::tempdir()?;
/// let mut run = RunDir::create(dir.path())?;
/// let bar = progress_bar(2, "SFT");
/// let mut observe = progress_observer(&bar, run.metrics_sink("sft")?, |m| format!("loss {:.3}", m.loss));
/// observe(&StepMetrics { step: 1, loss: 0.5, ..StepMetrics::default() });
/// assert_eq!(bar.position(), 1);
/// # Ok::<(), anyhow::Error>(())
/// ```
pub fn progress_observer(
    progress: &ProgressBar,
    sink: MetricsSink,
    message: fn(&StepMetrics) -> String,
) -> impl FnMut(&StepMetrics) + Send + 'static {
    let progress = progress.clone();
    move |m: &StepMetrics| {
        if m.step as u64 > progress.length().unwrap_or(0) {
            progress.set_length(m.step as u64);
        }
        progress.set_message(message(m));
        progress.set_position(m.step as u64);
        sink.record(m);
    }
}
