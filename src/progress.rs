//! Progress bars for training runs, and the observer that drives one while recording metrics.

use std::io::{IsTerminal, Write};

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

/// An unlabelled bar `[====    ] pos/len unit elapsed/eta` on stderr, for counts that arrive
/// through [`count_progress`] (its length is set by the first report).
pub fn count_bar(unit: &str) -> ProgressBar {
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template(&format!(
            "{{bar:40}} {{pos}}/{{len}} {unit} {{elapsed}}/{{eta}}"
        ))
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

/// A `(done, total)` progress hook, the shape the BFCL and τ-bench runners report in, that moves
/// `bar` to `done` of `total`.
///
/// ```
/// use agent_rl::progress::count_progress;
///
/// let bar = indicatif::ProgressBar::new(0);
/// count_progress(&bar)(3, 10);
/// assert_eq!((bar.position(), bar.length()), (3, Some(10)));
/// ```
pub fn count_progress(bar: &ProgressBar) -> impl FnMut(usize, usize) + '_ {
    move |done, total| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    }
}

/// Finishes `bar`, leaving it drawn, and ends its line so that whatever is printed next starts
/// on a line of its own (indicatif leaves the cursor at the end of the bar).
pub fn finish_bar(bar: &ProgressBar) {
    bar.finish();
    if !bar.is_hidden() {
        let _ = writeln!(std::io::stderr().lock());
    }
}

/// Steps between two plain progress lines ([`plain_progress_line`]) in a run of `planned`
/// steps: about 20 lines per run; every 10 steps when the number of steps is not known (0).
pub fn plain_line_interval(planned: u64) -> u64 {
    if planned == 0 {
        10
    } else {
        (planned / 20).max(1)
    }
}

/// The line written to stderr for `step` when stderr is not a terminal (a log file, CI), where
/// the bar itself is not drawn: `label step/len message (elapsed)` on the first step, every
/// [`plain_line_interval`]`(planned)` steps and the planned last step; `None` on the others.
///
/// ```
/// use agent_rl::progress::{plain_progress_line, progress_bar};
///
/// let bar = progress_bar(100, "GRPO");
/// bar.set_message("reward 0.5");
/// assert!(plain_progress_line(&bar, 1, 100).unwrap().starts_with("GRPO 1/100 reward 0.5 ("));
/// assert!(plain_progress_line(&bar, 2, 100).is_none());
/// assert!(plain_progress_line(&bar, 5, 100).is_some());
/// assert!(plain_progress_line(&bar, 100, 100).is_some());
/// ```
pub fn plain_progress_line(bar: &ProgressBar, step: u64, planned: u64) -> Option<String> {
    let due = step == 1 || step == planned || step.is_multiple_of(plain_line_interval(planned));
    due.then(|| {
        format!(
            "{} {step}/{} {} ({:.1}s)",
            bar.prefix().trim(),
            bar.length().unwrap_or(step).max(step),
            bar.message(),
            bar.elapsed().as_secs_f64()
        )
    })
}

/// A trainer observer that records each step to `sink` and moves `progress` to the step's
/// number (growing its length when a run has no fixed step count), showing `message(step)`.
///
/// When stderr is not a terminal the bar is not drawn; a [`plain_progress_line`] is written to
/// stderr instead, about 20 per run.
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
    let plain = !std::io::stderr().is_terminal();
    let planned = progress.length().unwrap_or(0);
    move |m: &StepMetrics| {
        if m.step as u64 > progress.length().unwrap_or(0) {
            progress.set_length(m.step as u64);
        }
        progress.set_message(message(m));
        progress.set_position(m.step as u64);
        sink.record(m);
        if plain && let Some(line) = plain_progress_line(&progress, m.step as u64, planned) {
            let _ = writeln!(std::io::stderr().lock(), "{line}");
        }
    }
}
