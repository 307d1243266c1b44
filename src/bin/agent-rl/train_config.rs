//! The TOML run files of `agent-rl train`: one struct per trainer, each section mirroring a
//! library config (`[sft]` = `SftConfig`, `[grpo]` = `GrpoConfig`, `[ppo]` = `PpoConfig`,
//! `[reward_model]` = `RewardConfig`, `[reward]` = `ToolUseConfig`, `[lora]` = `LoraConfig`,
//! `[rollouts]` = `RemoteConfig` and `RemoteRollouts`'s publishing settings).
//! Unknown keys are rejected with the key and the file named.

use std::path::{Path, PathBuf};

use agent_rl::algos::{CurriculumConfig, GrpoConfig, PpoConfig, RewardConfig, SftConfig};
use agent_rl::core::lora::LoraConfig;
use agent_rl::rewards::ToolUseConfig;
use anyhow::{Context, bail};

use crate::run_overrides::{apply_override, fill_completion_budget};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// Where to run (`device = "cpu"` or `"cuda"`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Device {
    /// The CPU backend (default).
    #[default]
    Cpu,
    /// The first CUDA GPU (binary built with `--features cuda`).
    Cuda,
}

/// `[model]`: a local Hugging Face snapshot (`path`) or the embedded tiny model (`tiny = true`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelSection {
    /// Snapshot directory (config.json, safetensors, tokenizer files).
    pub path: Option<PathBuf>,
    /// The embedded tiny Qwen2 (random weights, fixture tokenizer, toy chat template).
    pub tiny: bool,
    /// Seed of the tiny model's random weights (default 0).
    pub seed: u64,
    /// `cpu` (default) or `cuda`.
    pub device: Device,
}

/// `[run]`: where the run directory goes and how often GRPO checkpoints.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RunSection {
    /// The run directory, relative to the working directory (default `runs/<trainer>`).
    pub dir: Option<PathBuf>,
    /// GRPO: optimiser steps between checkpoints (`dir/checkpoint-<step>/`; one is always
    /// written at the end). Default: only at the end.
    pub checkpoint_every: Option<usize>,
}

/// Which environment executes the tool calls of GRPO rollouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EnvironmentKind {
    /// No environment: single-turn, the first reply is judged.
    None,
    /// The toy tools (weather, time, add) of `agent_rl::algos::toy`.
    Toy,
    /// GRPO on the multi-turn entries of `[data] bfcl` (`agent_rl::eval::bfcl::multi_turn`):
    /// their backends execute the calls, the reward is the share of turns the official checker
    /// passes (`[reward]` is not used); bfcl-eval's long-context data is read from
    /// `AGENT_RL_BFCL_LONG_CONTEXT` when set.
    BfclMultiTurn,
}

/// `[data]`: training (and held-out) data, from files, BFCL, or the built-in toy family.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DataSection {
    /// JSONL file: TRL-style rows for SFT (`messages`/`tools` or `prompt`/`completion`), one
    /// `Task` per line for GRPO.
    pub train: Option<PathBuf>,
    /// Held-out JSONL file in the same format (SFT: eval loss; GRPO: before/after scores).
    pub eval: Option<PathBuf>,
    /// Number of toy tool-use tasks to train on (instead of `train`).
    pub toy: Option<usize>,
    /// Number of held-out toy tasks (SFT: eval loss; GRPO: scored before and after). They
    /// come from the toy family's held-out pool: no city, number or phrasing of them occurs in
    /// the training tasks.
    pub toy_held_out: Option<usize>,
    /// GRPO: a BFCL data directory (`bfcl-eval`'s `data/`); its trainable single-turn
    /// categories become the training tasks (instead of `train`).
    pub bfcl: Option<PathBuf>,
    /// GRPO with `bfcl`: fraction of the tasks held out and scored before and after (default 0).
    pub held_out_fraction: f64,
    /// Seed of the toy tasks (held-out ones use `seed + 1000`) and of the BFCL split.
    pub seed: u64,
    /// GRPO: the environment (default: `toy` with toy data, else `none`); PPO: default `none`.
    pub environment: Option<EnvironmentKind>,
    /// GRPO with `[curriculum]`: a JSONL file of tasks (one `Task` per line) mixed into the
    /// draws at `new_scenario_ratio` (distribution shift).
    pub new_scenarios: Option<PathBuf>,
    /// RM / PPO with `toy`: the share of city (weather, time) requests the `[warmup]`'s teacher
    /// declines with a refusal instead of demonstrating (`toy_reluctant_sft_dataset`; default
    /// 0, every request demonstrated). The over-cautious warm-up that PPO then corrects.
    pub toy_refusal: Option<f32>,
    /// PPO: preference pairs (TRL's JSONL layouts) the run's reward model trains on, with
    /// `train = "tasks.jsonl"` (toy data makes its own synthetic pairs).
    pub preferences: Option<PathBuf>,
    /// PPO: held-out preference pairs scoring the reward model (with `preferences`).
    pub eval_preferences: Option<PathBuf>,
}

impl DataSection {
    /// `toy_refusal` shapes the demonstrations of a `train rm` / `train ppo` `[warmup]`:
    /// refused without one, where it would change nothing (commands that never read it refuse
    /// it through [`Self::refuse_unread`]).
    ///
    /// # Errors
    /// Naming the key and what it lacks.
    fn check_toy_refusal(&self, warmup: bool) -> anyhow::Result<()> {
        if self.toy_refusal.is_some() && !warmup {
            bail!("[data] toy_refusal needs a [warmup] section (it shapes the warm-up's rows)");
        }
        Ok(())
    }
}

/// Which source a run's `[data]` trains on (after [`DataSection::validate`]: exactly one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DataSource {
    /// `train = "file.jsonl"`.
    File,
    /// `toy = <count>`.
    Toy,
    /// `bfcl = "data dir"`.
    Bfcl,
}

impl DataSection {
    /// The source this section trains on.
    fn source(&self) -> DataSource {
        if self.toy.is_some() {
            DataSource::Toy
        } else if self.bfcl.is_some() {
            DataSource::Bfcl
        } else {
            DataSource::File
        }
    }

    /// The keys this section sets (`seed` aside: it has a default, and every toy source reads
    /// it).
    fn keys_set(&self) -> Vec<&'static str> {
        [
            ("train", self.train.is_some()),
            ("eval", self.eval.is_some()),
            ("toy", self.toy.is_some()),
            ("toy_held_out", self.toy_held_out.is_some()),
            ("bfcl", self.bfcl.is_some()),
            ("held_out_fraction", self.held_out_fraction != 0.0),
            ("environment", self.environment.is_some()),
            ("new_scenarios", self.new_scenarios.is_some()),
            ("toy_refusal", self.toy_refusal.is_some()),
            ("preferences", self.preferences.is_some()),
            ("eval_preferences", self.eval_preferences.is_some()),
        ]
        .into_iter()
        .filter_map(|(key, set)| set.then_some(key))
        .collect()
    }

    /// Refuses every key set in `[data]` that `command` does not read from this section's
    /// source (`reads`), so that a run never silently ignores a setting (a preference file
    /// given to `train grpo`, an `eval` file beside toy data that makes its own held-out set).
    ///
    /// # Errors
    /// Naming the unread keys, the command and what it reads instead.
    fn refuse_unread(&self, command: &str, reads: &[&str]) -> anyhow::Result<()> {
        let unread: Vec<&str> = self
            .keys_set()
            .into_iter()
            .filter(|key| !reads.contains(key))
            .collect();
        if unread.is_empty() {
            return Ok(());
        }
        bail!(
            "[data] {}: `{command}` does not read {} with this data source (it reads: {})",
            unread.join(", "),
            if unread.len() == 1 { "it" } else { "them" },
            reads.join(", ")
        )
    }
}

/// The most toy tasks `[data] toy` / `toy_held_out` may ask for: they are generated and held in
/// memory (a few kilobytes each, with their tool specs).
pub const MAX_TOY_TASKS: usize = 100_000;

impl RunSection {
    /// Checks the checkpoint interval.
    ///
    /// # Errors
    /// `checkpoint_every = 0`.
    pub fn validate(&self) -> anyhow::Result<()> {
        if self.checkpoint_every == Some(0) {
            bail!(
                "[run] checkpoint_every = 0: set >= 1 (optimiser steps between checkpoints), or \
                 leave it out to checkpoint only at the end"
            );
        }
        Ok(())
    }
}

impl DataSection {
    /// Checks that exactly one training source is given.
    ///
    /// # Errors
    /// Naming the keys of `[data]` that conflict or are missing.
    pub fn validate(&self) -> anyhow::Result<()> {
        let sources = [
            self.train.is_some(),
            self.toy.is_some(),
            self.bfcl.is_some(),
        ];
        if sources.iter().filter(|set| **set).count() != 1 {
            bail!(
                "[data]: set exactly one of `train = \"file.jsonl\"`, `toy = <task count>`, \
                 `bfcl = \"data dir\"`"
            );
        }
        for (key, count) in [("toy", self.toy), ("toy_held_out", self.toy_held_out)] {
            if let Some(count) = count
                && !(1..=MAX_TOY_TASKS).contains(&count)
            {
                bail!(
                    "[data] {key} = {count}: must lie in 1..={MAX_TOY_TASKS} (the toy tasks are \
                     generated in memory; use `train = \"file.jsonl\"` for more)"
                );
            }
        }
        if self.eval_preferences.is_some() && self.preferences.is_none() {
            bail!("[data]: `eval_preferences` needs `preferences`");
        }
        if let Some(share) = self.toy_refusal {
            if !(0.0..=1.0).contains(&share) {
                bail!("[data] toy_refusal = {share}: must lie in [0, 1]");
            }
            if self.toy.is_none() {
                bail!("[data] toy_refusal: needs `toy = <count>` (the toy warm-up's teacher)");
            }
        }
        if self.eval.is_some() && self.toy_held_out.is_some() {
            bail!("[data]: set `eval` or `toy_held_out`, not both");
        }
        if !(0.0..=1.0).contains(&self.held_out_fraction) {
            bail!(
                "[data] held_out_fraction = {}: must lie in [0, 1]",
                self.held_out_fraction
            );
        }
        Ok(())
    }
}

/// The run file of `agent-rl train sft`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SftRunConfig {
    /// `[model]`.
    #[serde(default)]
    pub model: ModelSection,
    /// `[data]`.
    #[serde(default)]
    pub data: DataSection,
    /// `[run]`.
    #[serde(default)]
    pub run: RunSection,
    /// `[sft]`: the trainer's config.
    #[serde(default)]
    pub sft: SftConfig,
    /// `[lora]`: train LoRA adapters on the frozen model instead of every weight.
    pub lora: Option<LoraConfig>,
}

/// The run file of `agent-rl train grpo`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrpoRunConfig {
    /// `[model]`.
    #[serde(default)]
    pub model: ModelSection,
    /// `[data]`.
    #[serde(default)]
    pub data: DataSection,
    /// `[run]`.
    #[serde(default)]
    pub run: RunSection,
    /// `[warmup]`: an optional SFT warm-up before GRPO, on the toy demonstrations of the
    /// training tasks (toy data only); skipped when resuming.
    pub warmup: Option<SftConfig>,
    /// `[grpo]`: the trainer's config.
    #[serde(default)]
    pub grpo: GrpoConfig,
    /// `[reward]`: the tool-use reward recipe.
    #[serde(default)]
    pub reward: ToolUseConfig,
    /// `[lora]`: GRPO trains LoRA adapters on the frozen model instead of every weight (the KL
    /// reference is then the model with the adapters off; `[warmup]` still trains every weight).
    pub lora: Option<LoraConfig>,
    /// `[curriculum]`: draw GRPO's tasks by difficulty level (= `CurriculumConfig`). The levels
    /// are the toy family's tiers (one call, two calls, chained; `[data] toy` tasks each) with
    /// toy data, else the tasks' `data.level` (0 when absent); `[data] new_scenarios` feeds the
    /// new-scenario pool.
    pub curriculum: Option<CurriculumConfig>,
    /// `[rollouts]`: sample GRPO's episodes on an OpenAI-compatible server.
    pub rollouts: Option<RolloutsSection>,
}

/// `[rollouts]` of a GRPO run file: GRPO's episodes sampled on an OpenAI-compatible server, the
/// policy published to it after every optimiser step (`agent_rl::remote::RemoteRollouts`): with
/// `[lora]` as an adapter (`agent-rl serve --allow-runtime-lora`, vLLM with runtime LoRA
/// updating), without it as full weights (`agent-rl serve --allow-weight-updates`, SGLang).
/// Unset optional keys take `RemoteConfig`'s defaults.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RolloutsSection {
    /// Base URL up to and including `/v1`, e.g. `http://127.0.0.1:8000/v1`.
    pub base_url: String,
    /// The served base model's name (`--served-model-name`); default `"agent-rl"`.
    pub model: Option<String>,
    /// Environment variable holding the server's API key; none = no key.
    pub api_key_env: Option<String>,
    /// Where each step's policy is written (`<publish_dir>/<adapter_name>` with LoRA, else
    /// `<publish_dir>/<adapter_name>-weights`); the server must read it at the same path.
    pub publish_dir: PathBuf,
    /// The name the policy is published under; default `agent-rl-policy`.
    pub adapter_name: Option<String>,
    /// Whole-request timeout in seconds.
    pub timeout_secs: Option<u64>,
    /// Connection timeout in seconds.
    pub connect_timeout_secs: Option<u64>,
    /// Retries after a 429, a 5xx or a transport error.
    pub max_retries: Option<u32>,
    /// Requests in flight at once.
    pub max_concurrency: Option<usize>,
}

#[cfg(feature = "serve")]
impl RolloutsSection {
    /// The client settings, `RemoteConfig`'s defaults for unset keys.
    pub fn remote_config(&self) -> agent_rl::remote::RemoteConfig {
        let defaults = agent_rl::remote::RemoteConfig::default();
        agent_rl::remote::RemoteConfig {
            base_url: self.base_url.clone(),
            model: self.model.clone().unwrap_or(defaults.model),
            api_key_env: self.api_key_env.clone(),
            timeout_secs: self.timeout_secs.unwrap_or(defaults.timeout_secs),
            connect_timeout_secs: self
                .connect_timeout_secs
                .unwrap_or(defaults.connect_timeout_secs),
            max_retries: self.max_retries.unwrap_or(defaults.max_retries),
            max_concurrency: self.max_concurrency.unwrap_or(defaults.max_concurrency),
            ..defaults
        }
    }

    /// Checks the section against the rest of the run file.
    ///
    /// # Errors
    /// `[rollouts]` with an invalid key.
    fn validate(&self) -> anyhow::Result<()> {
        if self.adapter_name.as_deref() == Some("") {
            bail!("[rollouts] adapter_name: must not be empty");
        }
        self.remote_config().validate().context("[rollouts]")
    }
}

#[cfg(not(feature = "serve"))]
impl RolloutsSection {
    /// Without the `serve` feature there is no HTTP client: the section is refused.
    fn validate(&self) -> anyhow::Result<()> {
        bail!("[rollouts] needs the binary built with the `serve` feature (the HTTP client)")
    }
}

/// The run file of `agent-rl train rm`: a reward model trained on preference pairs, from the
/// model (after an optional SFT warm-up).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RmRunConfig {
    /// `[model]`: the policy the reward model starts from (its backbone, a fresh score head).
    #[serde(default)]
    pub model: ModelSection,
    /// `[data]`: `train` / `eval` are preference JSONL files, or `toy` / `toy_held_out` make
    /// synthetic pairs on toy tasks.
    #[serde(default)]
    pub data: DataSection,
    /// `[run]`.
    #[serde(default)]
    pub run: RunSection,
    /// `[warmup]`: an optional SFT warm-up on the toy demonstrations (toy data only).
    pub warmup: Option<SftConfig>,
    /// `[reward_model]`: the trainer's config.
    #[serde(default)]
    pub reward_model: RewardConfig,
    /// `[lora]`: train LoRA adapters plus the score head instead of every weight.
    pub lora: Option<LoraConfig>,
}

/// The run file of `agent-rl train ppo`: an optional SFT warm-up, an optional reward model
/// trained in the run, then PPO against the learned reward, rule rewards, or both.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PpoRunConfig {
    /// `[model]`.
    #[serde(default)]
    pub model: ModelSection,
    /// `[data]`: tasks (`train` / `eval` task files or `toy` / `toy_held_out`), and for the
    /// reward model `preferences` / `eval_preferences` (toy data makes its own).
    #[serde(default)]
    pub data: DataSection,
    /// `[run]`.
    #[serde(default)]
    pub run: RunSection,
    /// `[warmup]`: an optional SFT warm-up on the toy demonstrations (toy data only).
    pub warmup: Option<SftConfig>,
    /// `[reward_model]`: trains a reward model (after the warm-up) and scores PPO's episodes
    /// with it.
    pub reward_model: Option<RewardConfig>,
    /// `[ppo]`: the trainer's config.
    #[serde(default)]
    pub ppo: PpoConfig,
    /// `[reward]`: the tool-use rule rewards, summed with the learned one when both are set.
    pub reward: Option<ToolUseConfig>,
    /// `[lora]`: PPO trains LoRA adapters on the policy (the critic in full).
    pub lora: Option<LoraConfig>,
}

/// A parsed run file (relative paths in it are relative to the working directory, as in
/// TRL's and accelerate's config files).
pub trait RunFile: DeserializeOwned + Serialize {
    /// The sections every trainer has.
    fn sections(&mut self) -> (&mut ModelSection, &mut DataSection, &mut RunSection);

    /// Validates the trainer sections (`[sft]`, `[grpo]`, `[warmup]`, `[reward]`) before any
    /// model or data is loaded, so that a bad size fails at once rather than after allocating.
    ///
    /// # Errors
    /// The section and field that are invalid.
    fn validate_trainers(&self) -> anyhow::Result<()>;
}

impl RunFile for SftRunConfig {
    fn sections(&mut self) -> (&mut ModelSection, &mut DataSection, &mut RunSection) {
        (&mut self.model, &mut self.data, &mut self.run)
    }

    fn validate_trainers(&self) -> anyhow::Result<()> {
        self.data
            .refuse_unread("train sft", &["train", "eval", "toy", "toy_held_out"])?;
        self.sft.validate().context("[sft]")
    }
}

impl RunFile for GrpoRunConfig {
    fn sections(&mut self) -> (&mut ModelSection, &mut DataSection, &mut RunSection) {
        (&mut self.model, &mut self.data, &mut self.run)
    }

    fn validate_trainers(&self) -> anyhow::Result<()> {
        let mut reads = vec![
            "train",
            "eval",
            "toy",
            "toy_held_out",
            "environment",
            "new_scenarios",
        ];
        if self.data.source() == DataSource::Bfcl {
            reads.extend(["bfcl", "held_out_fraction"]);
        }
        self.data.refuse_unread("train grpo", &reads)?;
        if let Some(warmup) = &self.warmup {
            warmup.validate().context("[warmup]")?;
        }
        self.grpo.validate().context("[grpo]")?;
        if let Some(curriculum) = &self.curriculum {
            curriculum.validate().context("[curriculum]")?;
        } else if self.data.new_scenarios.is_some() {
            bail!("[data] new_scenarios needs a [curriculum] section (it mixes them in)");
        }
        if self.data.environment == Some(EnvironmentKind::BfclMultiTurn) {
            let data = &self.data;
            if data.bfcl.is_none() {
                bail!("[data] environment = \"bfcl_multi_turn\" needs `bfcl = \"data dir\"`");
            }
            if data.held_out_fraction != 0.0 || data.eval.is_some() || self.curriculum.is_some() {
                bail!(
                    "[data] environment = \"bfcl_multi_turn\": held-out scoring (`eval`, \
                     `held_out_fraction`) and [curriculum] are not wired for multi-turn tasks; \
                     score a checkpoint with `agent-rl eval bfcl --model`"
                );
            }
        }
        if let Some(rollouts) = &self.rollouts {
            rollouts.validate()?;
        }
        self.reward.validate().context("[reward]")
    }
}

impl GrpoRunConfig {
    /// Whether GRPO runs multi-turn episodes (in the toy or BFCL multi-turn environment):
    /// `[data] environment`, by default the toy environment with toy data.
    pub fn multi_turn(&self) -> bool {
        let default = if self.data.toy.is_some() {
            EnvironmentKind::Toy
        } else {
            EnvironmentKind::None
        };
        self.data.environment.unwrap_or(default) != EnvironmentKind::None
    }
}

impl RunFile for RmRunConfig {
    fn sections(&mut self) -> (&mut ModelSection, &mut DataSection, &mut RunSection) {
        (&mut self.model, &mut self.data, &mut self.run)
    }

    fn validate_trainers(&self) -> anyhow::Result<()> {
        self.data.check_toy_refusal(self.warmup.is_some())?;
        let reads: &[&str] = match self.data.source() {
            DataSource::Toy => &["toy", "toy_held_out", "toy_refusal"],
            DataSource::File | DataSource::Bfcl => &["train", "eval"],
        };
        self.data.refuse_unread("train rm", reads)?;
        if let Some(warmup) = &self.warmup {
            warmup.validate().context("[warmup]")?;
        }
        self.reward_model.validate().context("[reward_model]")
    }
}

impl RunFile for PpoRunConfig {
    fn sections(&mut self) -> (&mut ModelSection, &mut DataSection, &mut RunSection) {
        (&mut self.model, &mut self.data, &mut self.run)
    }

    fn validate_trainers(&self) -> anyhow::Result<()> {
        self.data.check_toy_refusal(self.warmup.is_some())?;
        let reads: &[&str] = match self.data.source() {
            DataSource::Toy => &["toy", "toy_held_out", "toy_refusal", "environment"],
            DataSource::File | DataSource::Bfcl => &[
                "train",
                "eval",
                "environment",
                "preferences",
                "eval_preferences",
            ],
        };
        self.data.refuse_unread("train ppo", reads)?;
        if let Some(warmup) = &self.warmup {
            warmup.validate().context("[warmup]")?;
        }
        if let Some(reward_model) = &self.reward_model {
            reward_model.validate().context("[reward_model]")?;
        }
        self.ppo.validate().context("[ppo]")?;
        match &self.reward {
            Some(reward) => reward.validate().context("[reward]"),
            None if self.reward_model.is_none() => bail!(
                "no reward: add a [reward_model] section (a reward model trained in the run), a \
                 [reward] section (the tool-use rule rewards), or both"
            ),
            None => Ok(()),
        }
    }
}

/// `config` as JSON with each `f32` written at `f32` precision (`0.9`, not the
/// `0.8999999761581421` that `serde_json::to_value` gives through `f64`).
///
/// # Errors
/// A config that does not serialise (a non-string map key).
pub fn config_json(config: &impl Serialize) -> anyhow::Result<serde_json::Value> {
    Ok(serde_json::from_str(&serde_json::to_string(config)?)?)
}

/// Reads and parses a run file with the `--set KEY=VALUE` `overrides` applied, rejecting
/// unknown keys; `[grpo]` and `[ppo]` that set only one of `max_completion_length` and
/// `sampling.max_new_tokens` get the other from it (the run directory defaults to
/// `runs/<default_dir>`).
///
/// # Errors
/// The file that cannot be read; TOML syntax errors and unknown or mistyped keys, with the key,
/// line and file (or the `--set` override) named; a `[model]` or `[data]` section that is
/// inconsistent.
pub fn load<T: RunFile>(path: &Path, overrides: &[String], default_dir: &str) -> anyhow::Result<T> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read run file {}", path.display()))?;
    // Parsed from the text first, so that errors in the file name their line.
    toml::from_str::<T>(&text)
        .map_err(|err| anyhow::anyhow!("invalid run file {}:\n{err}", path.display()))?;
    let mut table: toml::Table = toml::from_str(&text)
        .map_err(|err| anyhow::anyhow!("invalid run file {}:\n{err}", path.display()))?;
    for assignment in overrides {
        apply_override(&mut table, assignment)?;
        table
            .clone()
            .try_into::<T>()
            .map_err(|err| anyhow::anyhow!("--set {assignment}: {}", err.message()))?;
    }
    fill_completion_budget(&mut table, &["grpo", "ppo"]);
    let mut config: T = table
        .try_into()
        .map_err(|err| anyhow::anyhow!("invalid run file {}:\n{err}", path.display()))?;
    let (model, data, run) = config.sections();
    match (&model.path, model.tiny) {
        (Some(_), true) => bail!(
            "{}: [model]: set `path` or `tiny = true`, not both",
            path.display()
        ),
        (None, false) => bail!(
            "{}: [model]: set `path = \"snapshot dir\"` or `tiny = true`",
            path.display()
        ),
        _ => {}
    }
    data.validate()
        .with_context(|| format!("invalid run file {}", path.display()))?;
    run.validate()
        .with_context(|| format!("invalid run file {}", path.display()))?;
    config
        .validate_trainers()
        .with_context(|| format!("invalid run file {}", path.display()))?;
    let (_, _, run) = config.sections();
    run.dir
        .get_or_insert_with(|| PathBuf::from("runs").join(default_dir));
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Generated malformed run files (the committed examples with lines dropped, duplicated,
    /// or with values replaced) parse to a config or an error, never a panic, and quickly.
    #[test]
    fn malformed_run_files_load_or_err() {
        let configs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/configs");
        let sources: Vec<String> = [
            "grpo_toy.toml",
            "sft_toy.toml",
            "grpo_qwen25.toml",
            "rm_toy.toml",
            "ppo_toy.toml",
        ]
        .iter()
        .map(|name| std::fs::read_to_string(configs.join(name)).expect("committed example"))
        .collect();
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("run.toml");
        let value = prop_oneof![
            Just("0".to_owned()),
            Just("-1".to_owned()),
            Just("1000000000000".to_owned()),
            Just("18446744073709551615".to_owned()),
            Just("nan".to_owned()),
            Just("inf".to_owned()),
            Just("1e400".to_owned()),
            Just("\"\"".to_owned()),
            Just("[1, 2]".to_owned()),
            Just("{ a = 1 }".to_owned()),
            "[ -~]{0,12}",
        ];
        let edit = (any::<usize>(), 0usize..3, value);
        let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
            cases: 96,
            failure_persistence: None,
            ..ProptestConfig::default()
        });
        runner
            .run(
                &(0..sources.len(), prop::collection::vec(edit, 1..5)),
                |(source, edits)| {
                    let mut lines: Vec<String> =
                        sources[source].lines().map(str::to_owned).collect();
                    for (at, kind, value) in edits {
                        let at = at % lines.len().max(1);
                        match kind {
                            0 if !lines.is_empty() => {
                                lines.remove(at);
                            }
                            1 if !lines.is_empty() => {
                                let line = lines[at].clone();
                                lines.insert(at, line);
                            }
                            _ => {
                                if let Some(line) = lines.get_mut(at)
                                    && let Some((key, _)) = line.split_once('=')
                                {
                                    *line = format!("{key}= {value}");
                                }
                            }
                        }
                    }
                    std::fs::write(&path, lines.join("\n")).expect("write");
                    let started = std::time::Instant::now();
                    let grpo =
                        std::panic::catch_unwind(|| load::<GrpoRunConfig>(&path, &[], "g").is_ok());
                    let sft =
                        std::panic::catch_unwind(|| load::<SftRunConfig>(&path, &[], "s").is_ok());
                    let rm =
                        std::panic::catch_unwind(|| load::<RmRunConfig>(&path, &[], "r").is_ok());
                    let ppo =
                        std::panic::catch_unwind(|| load::<PpoRunConfig>(&path, &[], "p").is_ok());
                    prop_assert!(
                        grpo.is_ok() && sft.is_ok() && rm.is_ok() && ppo.is_ok(),
                        "panicked on:\n{}",
                        lines.join("\n")
                    );
                    prop_assert!(started.elapsed().as_secs() < 10);
                    Ok(())
                },
            )
            .expect("no panic");
    }

    #[test]
    fn toy_refusal_needs_the_warmup_it_shapes() {
        let example =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/configs/ppo_toy.toml");
        load::<PpoRunConfig>(&example, &[], "p").expect("the committed example loads");
        let text = std::fs::read_to_string(&example).expect("committed example");
        let (before, rest) = text.split_once("[warmup]").expect("a [warmup] section");
        let (_, after) = rest
            .split_once("[reward_model]")
            .expect("then [reward_model]");
        assert!(before.contains("toy_refusal"));
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("run.toml");
        std::fs::write(&path, format!("{before}[reward_model]{after}")).expect("write");
        let message = format!(
            "{:#}",
            load::<PpoRunConfig>(&path, &[], "p").expect_err("no [warmup]")
        );
        assert!(
            message.contains("toy_refusal needs a [warmup]") && message.contains("run.toml"),
            "{message}"
        );
    }

    #[test]
    fn impossible_sizes_and_intervals_are_refused() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("run.toml");
        for (text, expected) in [
            ("[data]\ntoy = 1000000000000\n", "toy = 1000000000000"),
            ("[data]\ntoy = 4\ntoy_held_out = 0\n", "toy_held_out = 0"),
            (
                "[data]\ntoy = 4\n[run]\ncheckpoint_every = 0\n",
                "checkpoint_every = 0",
            ),
            (
                "[data]\ntoy = 4\n[grpo]\nnum_generations = 1000000000\n",
                "num_generations",
            ),
            (
                "[data]\ntoy = 4\n[grpo]\nprompts_per_step = 100000\n",
                "num_generations",
            ),
            (
                "[data]\ntoy = 4\n[curriculum]\nreplay_ratio = 0.7\nnew_scenario_ratio = 0.7\n",
                "[curriculum]",
            ),
            (
                "[data]\ntoy = 4\nnew_scenarios = \"new.jsonl\"\n",
                "new_scenarios needs a [curriculum]",
            ),
            ("[data]\ntoy = 4\n[grpo]\neval_steps = 0\n", "eval_steps"),
            ("[data]\ntoy = 4\ntoy_refusal = 1.5\n", "toy_refusal = 1.5"),
            (
                "[data]\ntrain = \"t.jsonl\"\ntoy_refusal = 0.5\n",
                "toy_refusal: needs `toy",
            ),
            (
                "[data]\ntoy = 4\ntoy_refusal = 0.5\n",
                "`train grpo` does not read it",
            ),
        ] {
            std::fs::write(&path, format!("[model]\ntiny = true\n{text}")).expect("write");
            let err = load::<GrpoRunConfig>(&path, &[], "g").expect_err(text);
            let message = format!("{err:#}");
            assert!(
                message.contains(expected) && message.contains("run.toml"),
                "{message}"
            );
        }
        std::fs::write(&path, "[model]\ntiny = true\n[data]\ntoy = 100000\n").expect("write");
        load::<GrpoRunConfig>(&path, &[], "g").expect("the largest toy set is accepted");
    }

    /// Loads `text` (after a tiny `[model]`) as the run file of `command`.
    fn load_as(command: &str, path: &Path, text: &str) -> anyhow::Result<()> {
        std::fs::write(path, format!("[model]\ntiny = true\n{text}")).expect("write");
        load_file(command, path)
    }

    /// Loads the run file at `path` as `command`'s.
    fn load_file(command: &str, path: &Path) -> anyhow::Result<()> {
        match command {
            "sft" => load::<SftRunConfig>(path, &[], "s").map(drop),
            "grpo" => load::<GrpoRunConfig>(path, &[], "g").map(drop),
            "rm" => load::<RmRunConfig>(path, &[], "r").map(drop),
            "ppo" => load::<PpoRunConfig>(path, &[], "p").map(drop),
            other => panic!("no command {other}"),
        }
    }

    #[test]
    fn data_keys_a_command_does_not_read_are_refused() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("run.toml");
        for (command, text, expected) in [
            (
                "sft",
                "[data]\ntoy = 4\npreferences = \"p.jsonl\"\n",
                "[data] preferences: `train sft` does not read it",
            ),
            (
                "sft",
                "[data]\ntrain = \"t.jsonl\"\nenvironment = \"toy\"\n",
                "[data] environment: `train sft`",
            ),
            (
                "grpo",
                "[data]\ntoy = 4\npreferences = \"p.jsonl\"\neval_preferences = \"e.jsonl\"\n",
                "[data] preferences, eval_preferences: `train grpo` does not read them",
            ),
            (
                "grpo",
                "[data]\ntoy = 4\nheld_out_fraction = 0.2\n",
                "[data] held_out_fraction: `train grpo`",
            ),
            (
                "rm",
                "[data]\ntoy = 4\neval = \"e.jsonl\"\n",
                "[data] eval: `train rm`",
            ),
            ("rm", "[data]\nbfcl = \"d\"\n", "[data] bfcl: `train rm`"),
            (
                "rm",
                "[data]\ntrain = \"t.jsonl\"\npreferences = \"p.jsonl\"\n",
                "[data] preferences: `train rm`",
            ),
            (
                "ppo",
                "[data]\ntoy = 4\npreferences = \"p.jsonl\"\n",
                "[data] preferences: `train ppo`",
            ),
            (
                "ppo",
                "[data]\ntoy = 4\neval = \"e.jsonl\"\n",
                "[data] eval: `train ppo`",
            ),
            (
                "ppo",
                "[data]\ntrain = \"t.jsonl\"\nnew_scenarios = \"n.jsonl\"\n",
                "[data] new_scenarios: `train ppo`",
            ),
        ] {
            let err = load_as(command, &path, text).expect_err(text);
            let message = format!("{err:#}");
            assert!(
                message.contains(expected) && message.contains("run.toml"),
                "{command}: {message}"
            );
        }
        for (command, text) in [
            (
                "ppo",
                "[data]\ntrain = \"t.jsonl\"\neval = \"e.jsonl\"\npreferences = \"p.jsonl\"\n\
                 eval_preferences = \"q.jsonl\"\nenvironment = \"toy\"\n[reward]\n",
            ),
            ("grpo", "[data]\nbfcl = \"d\"\nheld_out_fraction = 0.2\n"),
            ("rm", "[data]\ntrain = \"p.jsonl\"\neval = \"q.jsonl\"\n"),
            ("sft", "[data]\ntoy = 4\neval = \"e.jsonl\"\n"),
        ] {
            load_as(command, &path, text).unwrap_or_else(|err| panic!("{command}: {err:#}"));
        }
        let configs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/configs");
        for (command, name) in [
            ("grpo", "grpo_toy.toml"),
            ("grpo", "grpo_qwen25.toml"),
            ("sft", "sft_toy.toml"),
            ("rm", "rm_toy.toml"),
            ("ppo", "ppo_toy.toml"),
        ] {
            load_file(command, &configs.join(name)).unwrap_or_else(|err| panic!("{name}: {err:#}"));
        }
    }

    #[test]
    fn curriculum_section_reaches_the_sampler_with_toy_tiers_and_new_scenarios() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (path, tasks) = (dir.path().join("run.toml"), dir.path().join("new.jsonl"));
        let task = agent_rl::algos::toy::toy_tasks(1, 3).remove(0);
        std::fs::write(&tasks, serde_json::to_string(&task).expect("task json")).expect("write");
        let text = format!(
            "[model]\ntiny = true\n[data]\ntoy = 6\nnew_scenarios = {:?}\n\
             [curriculum]\nwindow = 4\npromote_threshold = 0.5\nnew_scenario_ratio = 1.0\n\
             replay_ratio = 0.0\n",
            tasks.display().to_string()
        );
        std::fs::write(&path, text).expect("write");
        let config = load::<GrpoRunConfig>(&path, &[], "g").expect("loads");
        let curriculum = config.curriculum.as_ref().expect("[curriculum]");
        assert_eq!((curriculum.window, curriculum.promote_threshold), (4, 0.5));
        let mut sampler =
            crate::train_grpo::curriculum(curriculum, &config.data, &[]).expect("sampler");
        assert_eq!(sampler.num_levels(), 3, "the three toy tiers");
        let draws = sampler.sample(5);
        assert!(
            draws.iter().all(|d| d.task.id == task.id),
            "ratio 1: only new scenarios"
        );
    }

    #[cfg(feature = "serve")]
    #[test]
    fn rollouts_section_is_checked_naming_file_section_and_key() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("run.toml");
        let head = "[model]\ntiny = true\n[data]\ntoy = 4\nenvironment = \"none\"\n";
        let lora = "[lora]\nr = 4\n";
        let good = "[rollouts]\nbase_url = \"http://127.0.0.1:8000/v1\"\npublish_dir = \"pub\"\n";
        for (text, expected) in [
            (
                format!("{lora}{good}max_concurency = 2\n"),
                "unknown field `max_concurency`",
            ),
            (
                format!("{lora}[rollouts]\nbase_url = \"http://127.0.0.1:8000/v1\"\n"),
                "missing field `publish_dir`",
            ),
            (
                format!("{lora}{good}timeout_secs = 0\n"),
                "[rollouts]: invalid argument `timeout_secs`",
            ),
            (
                format!("{lora}[rollouts]\nbase_url = \"127.0.0.1:8000\"\npublish_dir = \"pub\"\n"),
                "base_url",
            ),
        ] {
            std::fs::write(&path, format!("{head}{text}")).expect("write");
            let err = load::<GrpoRunConfig>(&path, &[], "g").expect_err(&text);
            let message = format!("{err:#}");
            assert!(
                message.contains(expected) && message.contains("run.toml"),
                "{text}: {message}"
            );
        }
        // The toy data's default environment is multi-turn, which remote rollouts serve too.
        std::fs::write(
            &path,
            format!("[model]\ntiny = true\n[data]\ntoy = 4\n{lora}{good}"),
        )
        .expect("write");
        load::<GrpoRunConfig>(&path, &[], "g").expect("multi-turn data with [rollouts]");
        std::fs::write(
            &path,
            format!("{head}{lora}{good}model = \"tiny\"\nmax_concurrency = 1\n"),
        )
        .expect("write");
        let config = load::<GrpoRunConfig>(&path, &[], "g").expect("loads");
        let remote = config.rollouts.expect("[rollouts]").remote_config();
        assert_eq!(
            (
                remote.model.as_str(),
                remote.max_concurrency,
                remote.timeout_secs
            ),
            ("tiny", 1, 600),
            "set keys reach the client, unset ones keep RemoteConfig's defaults"
        );
    }

    #[test]
    fn misspelled_key_is_named() {
        let result = toml::from_str::<GrpoRunConfig>("[grpo]\nnum_generation = 8\n");
        let message = result.err().map(|err| err.to_string()).unwrap_or_default();
        assert!(
            message.contains("unknown field `num_generation`"),
            "{message}"
        );
    }
}
