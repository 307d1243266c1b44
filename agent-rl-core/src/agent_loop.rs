//! [`AgentLoop`]: runs the model against environments, token in / token out, for RL trainers.
//!
//! Each episode is one token sequence: the prompt (the chat template applied to the task's
//! opening messages), then alternating model turns and environment turns. The ids the model
//! generated are kept exactly as sampled (never decoded and re-encoded); tool results and user
//! replies are rendered with the chat template and appended as tokens with mask 0, so trainers
//! put only the policy's own tokens into the loss.
//!
//! How an environment turn is rendered: the conversation is rendered twice, once up to and
//! including the assistant message without a generation prompt (`S1`), once with the new
//! observations and a generation prompt (`S2`). `S2` must start with `S1` (true for ChatML /
//! Qwen2.5 templates, which only append); the appended text is `S2[S1.len()..]`, preceded by what
//! the template writes after the assistant's end-of-turn token (the newline after `<|im_end|>`
//! in ChatML). A turn that stopped without an eos id (a stop string) is closed with the first
//! eos id, also masked out.
//!
//! With environments, the loop keeps every live episode's key/value cache from one turn to the
//! next ([`generate_continuations`]): a turn feeds only the tokens appended since the last one
//! (the environment's reply), so an episode of many turns costs one prefill of its prompt, not
//! one per turn. The tokens and log-probabilities equal those of re-running the conversation
//! at each turn ([`AgentLoop::with_cache_reuse`]`(false)`), up to floating-point rounding.
//!
//! With [`AgentLoop::with_generator`] the turns are sampled by another engine (an inference
//! server, say): each turn sends every live episode's whole token sequence, and everything else
//! — prompts, environments, the rendering of their replies, masks — stays as above.

use burn::prelude::*;

use crate::chat::ChatTokenizer;
use crate::conversation::Message;
use crate::environment::{Action, EnvironmentFactory, Task};
use crate::error::CoreError;
use crate::generation::{
    FinishReason, Generation, SamplingConfig, StopStringCheck, TokenGenerator,
    generate_continuations, generate_ids_with_stop,
};
use crate::model::KvCache;
use crate::model::Qwen2ForCausalLm;
use crate::tool_calls::ToolCallParser;
use crate::trajectory::{AssistantTurn, Trajectory};

/// Settings of an [`AgentLoop`].
#[derive(Debug, Clone, PartialEq)]
pub struct AgentLoopConfig {
    /// Sampling of every model turn. `max_new_tokens` is the budget of the whole completion
    /// (model and environment tokens after the prompt), as TRL's `max_completion_length`.
    pub sampling: SamplingConfig,
    /// Most tool-call rounds per episode; after that many the episode ends. Default 8.
    pub max_tool_iterations: usize,
    /// Keep only the last this-many prompt tokens; `None` = no truncation. Default `None`.
    pub max_prompt_length: Option<usize>,
    /// Execute at most this many tool calls of one assistant turn (the rest stay in the text,
    /// unexecuted); `None` = all. τ-bench's original agent loop executes only the first (`Some(1)`).
    pub max_tool_calls_per_turn: Option<usize>,
}

impl Default for AgentLoopConfig {
    fn default() -> Self {
        Self {
            sampling: SamplingConfig::default(),
            max_tool_iterations: 8,
            max_prompt_length: None,
            max_tool_calls_per_turn: None,
        }
    }
}

/// One finished episode as a token sequence, with what trainers and rewards need.
#[derive(Debug, Clone, PartialEq)]
pub struct Episode {
    /// Index of the episode's task in the slice given to [`AgentLoop::run`].
    pub task_index: usize,
    /// Prompt ids followed by completion ids (model and environment tokens).
    pub token_ids: Vec<u32>,
    /// Number of prompt ids at the start of `token_ids`.
    pub prompt_len: usize,
    /// Per completion id (`token_ids[prompt_len..]`): true when the policy generated it.
    pub policy_mask: Vec<bool>,
    /// Per completion id: the sampling log-probability for policy tokens, 0 for environment
    /// tokens (see [`crate::Completion::logprobs`] for the exact quantity).
    pub logprobs: Vec<f32>,
    /// True when the completion budget ended the episode (the last turn is cut off).
    pub truncated: bool,
    /// The episode as rewards see it.
    pub trajectory: Trajectory,
}

impl Episode {
    /// The completion ids (everything after the prompt).
    pub fn completion_ids(&self) -> &[u32] {
        &self.token_ids[self.prompt_len..]
    }

    /// Number of tokens the policy generated.
    pub fn num_policy_tokens(&self) -> usize {
        self.policy_mask.iter().filter(|&&keep| keep).count()
    }
}

/// One episode in progress.
struct Running {
    episode: Episode,
    environment: Option<Box<dyn crate::environment::Environment>>,
    messages: Vec<Message>,
    tool_rounds: usize,
    done: bool,
    /// How many of `episode.token_ids` the carried key/value cache holds.
    cached: usize,
}

/// The key/value cache carried between turns: `episodes[r]` is the episode of cache row `r`.
struct Carried<B: Backend> {
    episodes: Vec<usize>,
    cache: KvCache<B>,
}

/// Runs a model against environments for a batch of episodes (see the module docs).
pub struct AgentLoop<'a, B: Backend> {
    model: &'a Qwen2ForCausalLm<B>,
    tokenizer: &'a ChatTokenizer,
    parser: &'a dyn ToolCallParser,
    config: AgentLoopConfig,
    reuse_cache: bool,
    generator: Option<&'a dyn TokenGenerator>,
}

impl<B: Backend> std::fmt::Debug for AgentLoop<'_, B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentLoop")
            .field("config", &self.config)
            .field("reuse_cache", &self.reuse_cache)
            .field("external_generator", &self.generator.is_some())
            .finish()
    }
}

/// A seed per turn, so that turns draw from different streams.
fn turn_seed(seed: u64, turn: usize) -> u64 {
    let mut z = seed ^ (turn as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl<'a, B: Backend> AgentLoop<'a, B> {
    /// A loop over `model` (use `model.valid()` of a training model), rendering with
    /// `tokenizer`'s chat template and reading tool calls with `parser`.
    pub fn new(
        model: &'a Qwen2ForCausalLm<B>,
        tokenizer: &'a ChatTokenizer,
        parser: &'a dyn ToolCallParser,
        config: AgentLoopConfig,
    ) -> Self {
        Self {
            model,
            tokenizer,
            parser,
            config,
            reuse_cache: true,
            generator: None,
        }
    }

    /// Samples every turn with `generator` instead of the local model (which then only lends
    /// its shape; no cache is kept): each turn sends the live episodes' whole token sequences.
    #[must_use]
    pub fn with_generator(mut self, generator: &'a dyn TokenGenerator) -> Self {
        self.generator = Some(generator);
        self
    }

    /// Whether multi-turn episodes keep their key/value cache between turns (default `true`);
    /// `false` re-runs each conversation from its first token at every turn (slower; the same
    /// tokens up to floating-point rounding).
    #[must_use]
    pub fn with_cache_reuse(mut self, reuse: bool) -> Self {
        self.reuse_cache = reuse;
        self
    }

    /// Runs `group_size` episodes of every task (task-major: task 0's group first).
    ///
    /// Without `environments` each episode is one assistant turn (single-turn GRPO). With them,
    /// each episode gets a fresh environment: `reset` gives the opening messages, the tool
    /// calls of a turn are sent together ([`Environment::step_message`](crate::Environment::step_message)), each as
    /// [`Action::ToolCall`], a turn without calls as [`Action::Respond`]; the episode ends when the environment says `done`, after
    /// `max_tool_iterations` tool rounds, or when the completion budget is spent. All live
    /// episodes generate together, one batch per turn.
    ///
    /// # Errors
    /// Environment and template failures, invalid sampling settings, prompts too long for the
    /// model.
    pub fn run(
        &self,
        tasks: &[Task],
        group_size: usize,
        environments: Option<&dyn EnvironmentFactory>,
    ) -> Result<Vec<Episode>, CoreError> {
        let mut running = Vec::with_capacity(tasks.len() * group_size);
        for (task_index, task) in tasks.iter().enumerate() {
            for _ in 0..group_size {
                running.push(self.start(task_index, task, environments)?);
            }
        }
        let budget = self.config.sampling.max_new_tokens;
        let reuse = self.reuse_cache && environments.is_some() && self.generator.is_none();
        let mut carried: Option<Carried<B>> = None;
        for turn in 0.. {
            let live: Vec<usize> = (0..running.len()).filter(|&i| !running[i].done).collect();
            if live.is_empty() {
                break;
            }
            // One batch, one budget: the largest remaining one; longer turns are cut afterwards.
            let remaining = live
                .iter()
                .map(|&i| budget - running[i].episode.policy_mask.len())
                .max()
                .unwrap_or(0);
            let sampling = SamplingConfig {
                max_new_tokens: remaining,
                seed: turn_seed(self.config.sampling.seed, turn),
                ..self.config.sampling.clone()
            };
            let generations = if reuse {
                let (generations, next) =
                    self.continue_turn(&mut running, &live, carried.take(), &sampling)?;
                carried = Some(next);
                generations
            } else {
                let prompts: Vec<Vec<u32>> = live
                    .iter()
                    .map(|&i| running[i].episode.token_ids.clone())
                    .collect();
                self.generate(&prompts, &sampling)?
            };
            for (&i, generation) in live.iter().zip(generations) {
                let run = &mut running[i];
                self.absorb(run, tasks, generation, budget)?;
            }
        }
        Ok(running.into_iter().map(|run| run.episode).collect())
    }

    /// One turn on the carried cache: each live episode feeds the tokens appended since its
    /// last turn.
    fn continue_turn(
        &self,
        running: &mut [Running],
        live: &[usize],
        carried: Option<Carried<B>>,
        sampling: &SamplingConfig,
    ) -> Result<(Vec<Generation>, Carried<B>), CoreError> {
        let cache = match carried {
            Some(Carried {
                episodes,
                mut cache,
            }) => {
                let rows: Vec<usize> = live
                    .iter()
                    .filter_map(|i| episodes.iter().position(|e| e == i))
                    .collect();
                if rows.len() != live.len() {
                    return Err(CoreError::InvalidArgument {
                        field: "AgentLoop".into(),
                        reason: "a live episode has no cached row (internal error)".into(),
                    });
                }
                cache.retain(&rows);
                Some(cache)
            }
            None => None,
        };
        let segments: Vec<Vec<u32>> = live
            .iter()
            .map(|&i| running[i].episode.token_ids[running[i].cached..].to_vec())
            .collect();
        let continued = self.with_stop_check(sampling, |stop_check| {
            generate_continuations(
                self.model,
                cache,
                &segments,
                sampling,
                &self.tokenizer.eos_ids,
                stop_check,
            )
        })?;
        for ((&i, segment), generation) in live.iter().zip(&segments).zip(&continued.generations) {
            running[i].cached += segment.len() + generation.token_ids.len().saturating_sub(1);
        }
        Ok((
            continued.generations,
            Carried {
                episodes: live.to_vec(),
                cache: continued.cache,
            },
        ))
    }

    fn generate(
        &self,
        prompts: &[Vec<u32>],
        sampling: &SamplingConfig,
    ) -> Result<Vec<Generation>, CoreError> {
        if let Some(generator) = self.generator {
            return generator.generate_ids(prompts, sampling);
        }
        self.with_stop_check(sampling, |stop_check| {
            generate_ids_with_stop(
                self.model,
                prompts,
                sampling,
                &self.tokenizer.eos_ids,
                stop_check,
            )
        })
    }

    /// Calls `run` with the check for `sampling`'s stop strings (none when there are none).
    fn with_stop_check<T>(
        &self,
        sampling: &SamplingConfig,
        run: impl FnOnce(Option<StopStringCheck<'_>>) -> T,
    ) -> T {
        let stops = &sampling.stop_strings;
        let check = |ids: &[u32]| {
            self.tokenizer
                .decode(ids, false)
                .is_ok_and(|text| stops.iter().any(|s| text.contains(s.as_str())))
        };
        run(if stops.is_empty() { None } else { Some(&check) })
    }

    fn start(
        &self,
        task_index: usize,
        task: &Task,
        environments: Option<&dyn EnvironmentFactory>,
    ) -> Result<Running, CoreError> {
        let mut environment = environments.map(EnvironmentFactory::create);
        let messages = match environment.as_mut() {
            Some(environment) => environment.reset(task)?,
            None => task.messages.clone(),
        };
        let mut prompt = self.tokenizer.encode_chat(&messages, &task.tools, true)?;
        if let Some(limit) = self.config.max_prompt_length
            && prompt.len() > limit
        {
            prompt.drain(..prompt.len() - limit);
        }
        let done = self.config.sampling.max_new_tokens == 0;
        Ok(Running {
            episode: Episode {
                task_index,
                prompt_len: prompt.len(),
                token_ids: prompt,
                policy_mask: Vec::new(),
                logprobs: Vec::new(),
                truncated: done,
                trajectory: Trajectory {
                    task_id: task.id.clone(),
                    tools: task.tools.clone(),
                    prompt: messages.clone(),
                    turns: Vec::new(),
                    max_new_tokens: self.config.sampling.max_new_tokens,
                    environment_reward: None,
                },
            },
            environment,
            messages,
            tool_rounds: 0,
            done,
            cached: 0,
        })
    }

    /// Appends one model turn, steps the environment, appends its observations.
    fn absorb(
        &self,
        run: &mut Running,
        tasks: &[Task],
        mut generation: Generation,
        budget: usize,
    ) -> Result<(), CoreError> {
        let room = budget - run.episode.policy_mask.len();
        if generation.token_ids.len() > room {
            generation.token_ids.truncate(room);
            generation.logprobs.truncate(room);
            generation.finish_reason = FinishReason::Length;
        }
        let text = self.tokenizer.decode(&generation.token_ids, true)?;
        let parsed = self.parser.parse(&text);
        let episode = &mut run.episode;
        episode.token_ids.extend_from_slice(&generation.token_ids);
        episode
            .policy_mask
            .extend(std::iter::repeat_n(true, generation.token_ids.len()));
        episode.logprobs.extend_from_slice(&generation.logprobs);
        let closed = generation
            .token_ids
            .last()
            .is_some_and(|id| self.tokenizer.eos_ids.contains(id));
        let cut = generation.finish_reason == FinishReason::Length;
        episode.trajectory.turns.push(AssistantTurn {
            text,
            parsed: parsed.clone(),
            finish_reason: generation.finish_reason,
            num_tokens: generation.token_ids.len(),
            observations: Vec::new(),
        });
        let used = episode.policy_mask.len();
        let Some(environment) = run.environment.as_mut() else {
            run.done = true;
            episode.truncated = cut;
            return Ok(());
        };
        if cut || used >= budget || run.tool_rounds >= self.config.max_tool_iterations {
            run.done = true;
            episode.truncated = cut || used >= budget;
            return Ok(());
        }
        let assistant = if parsed.tool_calls.is_empty() {
            Message::assistant(parsed.content.clone())
        } else {
            let content = Some(parsed.content.clone()).filter(|c| !c.is_empty());
            Message::assistant_tool_calls(content, parsed.tool_calls.clone())
        };
        let actions: Vec<Action> = if parsed.tool_calls.is_empty() {
            vec![Action::Respond(parsed.content.clone())]
        } else {
            run.tool_rounds += 1;
            let limit = self.config.max_tool_calls_per_turn.unwrap_or(usize::MAX);
            parsed
                .tool_calls
                .into_iter()
                .take(limit)
                .map(Action::ToolCall)
                .collect()
        };
        let mut observations = Vec::new();
        for outcome in environment.step_message(&actions)? {
            observations.push(outcome.observation);
            if outcome.reward.is_some() {
                episode.trajectory.environment_reward = outcome.reward;
            }
            if outcome.done {
                run.done = true;
                break;
            }
        }
        if let Some(turn) = episode.trajectory.turns.last_mut() {
            turn.observations.clone_from(&observations);
        }
        if run.done {
            return Ok(());
        }
        let tools = &tasks[episode.task_index].tools;
        let env_ids =
            self.render_observations(&mut run.messages, assistant, observations, tools, closed)?;
        let room = budget - used;
        let take = env_ids.len().min(room);
        episode.token_ids.extend_from_slice(&env_ids[..take]);
        episode.policy_mask.extend(std::iter::repeat_n(false, take));
        episode.logprobs.extend(std::iter::repeat_n(0.0, take));
        if episode.policy_mask.len() >= budget {
            run.done = true;
            episode.truncated = true;
        }
        Ok(())
    }

    /// The tokens of the environment's turn (see the module docs).
    fn render_observations(
        &self,
        messages: &mut Vec<Message>,
        assistant: Message,
        observations: Vec<Message>,
        tools: &[crate::conversation::ToolSpec],
        closed: bool,
    ) -> Result<Vec<u32>, CoreError> {
        messages.push(assistant);
        let before = self.tokenizer.apply_chat_template(messages, tools, false)?;
        messages.extend(observations);
        let after = self.tokenizer.apply_chat_template(messages, tools, true)?;
        let Some(appended) = after.strip_prefix(before.as_str()) else {
            return Err(CoreError::ChatTemplate {
                source_name: "AgentLoop".into(),
                reason: "rendering the conversation with the new observations does not extend \
                         its rendering without them; token-level multi-turn rollouts need a \
                         template that only appends"
                    .into(),
            });
        };
        let eos = match self.tokenizer.eos_ids.first() {
            Some(&id) => self.tokenizer.decode(&[id], false)?,
            None => String::new(),
        };
        let separator = match before.rfind(eos.as_str()) {
            Some(at) if !eos.is_empty() => &before[at + eos.len()..],
            _ => "",
        };
        let closing = if closed { "" } else { eos.as_str() };
        self.tokenizer
            .encode(&format!("{closing}{separator}{appended}"))
    }
}
