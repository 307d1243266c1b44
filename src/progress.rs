//! Progress bars for training runs ([`StageProgress`], a pipeline observer) and for evaluations.

use std::io::{IsTerminal, Write};

use agent_rl_algos::pipeline::PipelineObserver;
use agent_rl_algos::{StepMetrics, ToolUseScores};
use indicatif::{ProgressBar, ProgressStyle};

/// A progress bar `label [=====>   ] pos/len msg (elapsed, rate, eta)` on stderr.
pub fn progress_bar(len: usize, label: &str) -> ProgressBar {
    let bar = ProgressBar::new(len as u64);
    if let Ok(style) = ProgressStyle::with_template(
        "{prefix:>6} [{bar:30}] {pos}/{len} {msg} ({elapsed}, {per_sec}, eta {eta})",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_prefix(label.to_owned());
    bar
}

/// An unlabelled bar `[====    ] pos/len unit elapsed/eta rate` on stderr, for counts that
/// arrive through [`count_progress`] (its length is set by the first report; `unit` is also the
/// prefix of the plain lines written off a terminal).
pub fn count_bar(unit: &str) -> ProgressBar {
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template(&format!(
            "{{bar:40}} {{pos}}/{{len}} {unit} {{elapsed}}/{{eta}} {{per_sec}}"
        ))
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_prefix(unit.to_owned());
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
    let plain = !std::io::stderr().is_terminal();
    let mut last_line = 0;
    move |done, total| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
        // Off a terminal (a log file, CI) the bar is not drawn: about 20 plain lines instead.
        let step = done as u64;
        if plain
            && step > last_line
            && let Some(line) = plain_progress_line(bar, step, total as u64)
        {
            last_line = step;
            let _ = writeln!(std::io::stderr().lock(), "{line}");
        }
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
        let message = bar.message();
        let rate = bar.per_sec();
        let eta = if rate > 0.0 {
            format!(", eta {:.0}s", bar.eta().as_secs_f64())
        } else {
            String::new()
        };
        format!(
            "{} {step}/{}{}{message} ({:.1}s, {rate:.2}/s{eta})",
            bar.prefix().trim(),
            bar.length().unwrap_or(step).max(step),
            if message.is_empty() { "" } else { " " },
            bar.elapsed().as_secs_f64()
        )
    })
}

/// A [`PipelineObserver`] that draws one progress bar per stage on stderr
/// (`SFT [=====>   ] 40/100 loss 0.412`, `GRPO … reward 2.31`) and prints each held-out
/// evaluation above the bars. When stderr is not a terminal (a log file, CI) the bars are not
/// drawn; a [`plain_progress_line`] is written instead, about 20 per stage.
///
/// ```
/// use agent_rl::algos::StepMetrics;
/// use agent_rl::algos::pipeline::PipelineObserver;
/// use agent_rl::progress::StageProgress;
///
/// let mut progress = StageProgress::default();
/// progress.stage_started("sft", 2, 0);
/// progress.step("sft", &StepMetrics { step: 1, loss: 0.5, ..StepMetrics::default() });
/// assert_eq!(progress.position(), Some(1));
/// progress.stage_finished("sft");
/// ```
#[derive(Debug, Default)]
pub struct StageProgress {
    bar: Option<ProgressBar>,
    planned: u64,
}

impl StageProgress {
    /// The current stage's step, while a stage runs.
    pub fn position(&self) -> Option<u64> {
        self.bar.as_ref().map(ProgressBar::position)
    }
}

impl PipelineObserver for StageProgress {
    fn stage_started(&mut self, stage: &str, total_steps: usize, first_step: usize) {
        let bar = progress_bar(total_steps, &stage.to_uppercase());
        bar.set_position(first_step as u64);
        self.bar = Some(bar);
        self.planned = total_steps as u64;
    }

    fn step(&mut self, stage: &str, metrics: &StepMetrics) {
        let Some(bar) = &self.bar else { return };
        if metrics.step as u64 > bar.length().unwrap_or(0) {
            bar.set_length(metrics.step as u64);
        }
        bar.set_message(match stage {
            "sft" => format!("loss {:.3}", metrics.loss),
            _ => format!("reward {:.2}", metrics.reward),
        });
        bar.set_position(metrics.step as u64);
        if !std::io::stderr().is_terminal()
            && let Some(line) = plain_progress_line(bar, metrics.step as u64, self.planned)
        {
            let _ = writeln!(std::io::stderr().lock(), "{line}");
        }
    }

    fn stage_finished(&mut self, _stage: &str) {
        if let Some(bar) = self.bar.take() {
            finish_bar(&bar);
        }
    }

    // The facade is the application layer: it may write to stderr (libraries never do).
    #[allow(clippy::print_stderr)]
    fn evaluated(&mut self, point: &str, scores: &ToolUseScores) {
        let line = format!(
            "held-out {point}: format {:.1}%, arguments {:.1}%, success {:.1}% ({} episodes)",
            100.0 * scores.format_accuracy,
            100.0 * scores.argument_match,
            100.0 * scores.success_rate,
            scores.episodes
        );
        match &self.bar {
            Some(bar) => bar.println(line),
            None => eprintln!("{line}"),
        }
    }
}
