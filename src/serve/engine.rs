//! The generation worker: one thread owns the model and decodes whatever requests are queued
//! as one batch ([`generate_rows`]), so concurrent clients share the model's forward passes.

use std::collections::{HashMap, VecDeque};
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use agent_rl_core::generation::{Generation, GenerationRow, RowHooks, generate_rows};
use agent_rl_core::lora::load_adapter;
use agent_rl_core::weights::{LoadOptions, load_pretrained};
use agent_rl_core::{ChatTokenizer, Qwen2ForCausalLm};
use burn::prelude::Backend;
use tokio::sync::mpsc::UnboundedSender;
use tokio::sync::oneshot;

use super::admission::{Admission, Ticket};
use super::error::{ApiError, ServeError};
use super::metrics::ServeMetrics;

/// What the worker tells a request's handler.
#[derive(Debug)]
pub(crate) enum JobEvent {
    /// Row `row` of the job sampled `token`.
    Token {
        /// The job's row.
        row: usize,
        /// The sampled id.
        token: u32,
    },
    /// All rows finished (or failed).
    Done(Result<Vec<Generation>, String>),
}

/// What the worker is asked to do.
pub(crate) enum Command {
    /// Generate.
    Generate(Job),
    /// Load a PEFT adapter from `path` and serve it as `name`.
    LoadAdapter {
        name: String,
        path: PathBuf,
        reply: oneshot::Sender<Result<(), String>>,
    },
    /// Replace the base model's weights with the checkpoint in `path` (same architecture); the
    /// loaded adapters are re-read from their directories onto the new weights.
    LoadWeights {
        path: PathBuf,
        reply: oneshot::Sender<Result<String, String>>,
    },
    /// Forget adapter `name`.
    UnloadAdapter {
        name: String,
        reply: oneshot::Sender<bool>,
    },
}

/// One request's rows, queued for the worker.
pub(crate) struct Job {
    /// The adapter to decode with (`None`: the base model).
    pub adapter: Option<String>,
    /// The sequences to decode (`n` per prompt).
    pub rows: Vec<GenerationRow>,
    /// Stop strings of every row (ends a row when its decoded text contains one).
    pub stops: Vec<String>,
    /// Send [`JobEvent::Token`] for every token (streaming requests).
    pub stream_tokens: bool,
    /// Where events go; closed when the client went away.
    pub events: UnboundedSender<JobEvent>,
    /// The request's place in the bounded queue, given back when the job is dropped.
    #[expect(dead_code, reason = "held only for its Drop")]
    pub ticket: Ticket,
}

impl Job {
    /// Whether nobody waits for the job any more (the handler or the stream was dropped
    /// because the client went away): its rows stop at the next decode step.
    fn is_abandoned(&self) -> bool {
        self.events.is_closed()
    }
}

/// The handle handlers submit jobs through.
#[derive(Clone)]
pub(crate) struct Engine {
    sender: Sender<Command>,
    admission: Arc<Admission>,
    /// Shared counters.
    pub metrics: Arc<ServeMetrics>,
}

/// Limits of the batcher.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BatchLimits {
    pub max_batch: usize,
    pub wait: Duration,
    pub max_positions: usize,
}

impl Engine {
    /// Starts the worker thread, which owns `model`.
    ///
    /// # Errors
    /// [`ServeError::Runtime`] when the thread cannot be spawned.
    pub fn spawn<B: Backend>(
        model: Qwen2ForCausalLm<B>,
        tokenizer: Arc<ChatTokenizer>,
        limits: BatchLimits,
        max_requests: usize,
    ) -> Result<Self, ServeError>
    where
        Qwen2ForCausalLm<B>: Send + 'static,
    {
        let (sender, receiver) = std::sync::mpsc::channel();
        let metrics = Arc::new(ServeMetrics::default());
        let worker_metrics = Arc::clone(&metrics);
        std::thread::Builder::new()
            .name("agent-rl-generate".into())
            .spawn(move || {
                worker(model, &tokenizer, &receiver, limits, &worker_metrics);
            })
            .map_err(ServeError::Runtime)?;
        Ok(Self {
            sender,
            admission: Admission::new(max_requests),
            metrics,
        })
    }

    /// A place in the bounded queue for one generation request.
    ///
    /// # Errors
    /// 429 when the server holds its limit of requests.
    pub fn admit(&self) -> Result<Ticket, ApiError> {
        self.admission.admit().inspect_err(|_| {
            self.metrics.refused_busy.fetch_add(1, Ordering::Relaxed);
        })
    }

    /// Queues a job.
    ///
    /// # Errors
    /// 500 when the worker has stopped.
    pub fn submit(&self, job: Job) -> Result<(), ApiError> {
        self.metrics.requests.fetch_add(1, Ordering::Relaxed);
        self.command(Command::Generate(job))
    }

    /// Sends any command to the worker.
    ///
    /// # Errors
    /// 500 when the worker has stopped.
    pub fn command(&self, command: Command) -> Result<(), ApiError> {
        self.sender
            .send(command)
            .map_err(|_| ApiError::internal("the generation worker has stopped"))
    }
}

/// The worker loop: waits for a job, gathers what else is queued (up to `max_batch` rows of
/// one model or adapter that fit the context together), decodes them as one batch; loads and
/// unloads adapters and replaces weights between batches; ends when every handle is dropped.
fn worker<B: Backend>(
    mut model: Qwen2ForCausalLm<B>,
    tokenizer: &ChatTokenizer,
    receiver: &Receiver<Command>,
    limits: BatchLimits,
    metrics: &ServeMetrics,
) {
    let mut pending: VecDeque<Job> = VecDeque::new();
    let mut adapters: HashMap<String, Adapter<B>> = HashMap::new();
    loop {
        if pending.is_empty() {
            match receiver.recv() {
                Ok(command) => handle(command, &mut pending, &mut adapters, &mut model),
                Err(_) => return,
            }
            if pending.is_empty() {
                continue;
            }
            let deadline = Instant::now() + limits.wait;
            while pending.iter().map(|j| j.rows.len()).sum::<usize>() < limits.max_batch {
                let left = deadline.saturating_duration_since(Instant::now());
                match receiver.recv_timeout(left) {
                    Ok(command) => handle(command, &mut pending, &mut adapters, &mut model),
                    Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => break,
                }
            }
        }
        while let Ok(command) = receiver.try_recv() {
            handle(command, &mut pending, &mut adapters, &mut model);
        }
        let queued = pending.len();
        pending.retain(|job| !job.is_abandoned());
        let dropped = (queued - pending.len()) as u64;
        metrics.abandoned.fetch_add(dropped, Ordering::Relaxed);
        if pending.is_empty() {
            continue;
        }
        let batch = take_batch(&mut pending, limits);
        let adapter = batch.first().and_then(|job| job.adapter.clone());
        match adapter {
            None => run_batch(&model, tokenizer, batch, metrics),
            Some(name) => match adapters.get(&name) {
                Some(adapter) => run_batch(&adapter.model, tokenizer, batch, metrics),
                None => {
                    for job in batch {
                        let message = format!("the adapter `{name}` was unloaded");
                        let _ = job.events.send(JobEvent::Done(Err(message)));
                    }
                }
            },
        }
    }
}

/// A loaded adapter: the base model with it attached, and where it was read from (to re-read
/// it when the base weights change).
struct Adapter<B: Backend> {
    model: Qwen2ForCausalLm<B>,
    path: PathBuf,
}

/// Reads the PEFT adapter in `path` onto `base`; a panic while loading becomes an error.
fn read_adapter<B: Backend>(
    base: &Qwen2ForCausalLm<B>,
    path: &std::path::Path,
) -> Result<Qwen2ForCausalLm<B>, String> {
    match std::panic::catch_unwind(AssertUnwindSafe(|| load_adapter(base.clone(), path))) {
        Ok(Ok((adapted, _))) => Ok(adapted),
        Ok(Err(err)) => Err(format!("{}: {err}", path.display())),
        Err(_) => Err(format!("{}: loading the adapter panicked", path.display())),
    }
}

/// Reads the checkpoint in `path` and checks it has `model`'s architecture; a panic while
/// loading becomes an error.
fn read_weights<B: Backend>(
    model: &Qwen2ForCausalLm<B>,
    path: &std::path::Path,
) -> Result<Qwen2ForCausalLm<B>, String> {
    let device = model.device();
    let loaded = std::panic::catch_unwind(AssertUnwindSafe(|| {
        load_pretrained::<B>(path, LoadOptions::default(), &device)
    }));
    let fresh = match loaded {
        Ok(Ok((fresh, _))) => fresh,
        Ok(Err(err)) => return Err(format!("{}: {err}", path.display())),
        Err(_) => return Err(format!("{}: loading the weights panicked", path.display())),
    };
    if !same_architecture(fresh.config(), model.config()) {
        return Err(format!(
            "{}: config.json describes another architecture than the served model's \
             (weights can be replaced, not the model's shape)",
            path.display()
        ));
    }
    Ok(fresh)
}

/// Whether two configs describe the same network and tokens (storage dtype and other
/// informative fields may differ).
fn same_architecture(a: &agent_rl_core::Qwen2Config, b: &agent_rl_core::Qwen2Config) -> bool {
    let shape = |c: &agent_rl_core::Qwen2Config| {
        (
            c.vocab_size,
            c.hidden_size,
            c.intermediate_size,
            c.num_hidden_layers,
            c.num_attention_heads,
            c.kv_heads(),
            c.head_size(),
            c.max_position_embeddings,
            c.tie_word_embeddings,
            c.hidden_act.clone(),
            (c.rope_base().to_bits(), c.rms_norm_eps.to_bits()),
            // Which projections carry a bias, and Llama's RoPE scaling.
            (
                (c.qkv_bias(), c.o_bias(), c.mlp_has_bias()),
                format!("{:?}", c.rope_scaling_kind().ok()),
            ),
        )
    };
    shape(a) == shape(b)
}

/// Queues a job, loads / unloads an adapter or replaces the weights (answering the reply
/// channel).
fn handle<B: Backend>(
    command: Command,
    pending: &mut VecDeque<Job>,
    adapters: &mut HashMap<String, Adapter<B>>,
    model: &mut Qwen2ForCausalLm<B>,
) {
    match command {
        Command::Generate(job) => pending.push_back(job),
        Command::LoadAdapter { name, path, reply } => {
            let result = read_adapter(model, &path).map(|adapted| {
                adapters.insert(
                    name,
                    Adapter {
                        model: adapted,
                        path,
                    },
                );
            });
            let _ = reply.send(result);
        }
        Command::LoadWeights { path, reply } => {
            let result = read_weights(model, &path).map(|fresh| {
                *model = fresh;
                let mut dropped = Vec::new();
                adapters.retain(|name, adapter| match read_adapter(model, &adapter.path) {
                    Ok(adapted) => {
                        adapter.model = adapted;
                        true
                    }
                    Err(err) => {
                        dropped.push(format!("{name} ({err})"));
                        false
                    }
                });
                let mut message = format!("Succeeded to update model weights from {}.", path.display());
                if !dropped.is_empty() {
                    message.push_str(&format!(
                        " Adapters that could not be re-read onto the new weights were unloaded: {}.",
                        dropped.join(", ")
                    ));
                }
                message
            });
            let _ = reply.send(result);
        }
        Command::UnloadAdapter { name, reply } => {
            let _ = reply.send(adapters.remove(&name).is_some());
        }
    }
}

/// Takes the front job and, in queue order, the others for the same model or adapter while
/// their rows fit `max_batch` and the context; the rest stay queued in order.
fn take_batch(pending: &mut VecDeque<Job>, limits: BatchLimits) -> Vec<Job> {
    let mut batch: Vec<Job> = Vec::new();
    let mut rest: VecDeque<Job> = VecDeque::new();
    let (mut rows, mut width, mut budget) = (0, 0, 0);
    while let Some(job) = pending.pop_front() {
        let job_width = job.rows.iter().map(|r| r.prompt.len()).max().unwrap_or(0);
        let job_budget = job
            .rows
            .iter()
            .map(|r| r.sampling.max_new_tokens)
            .max()
            .unwrap_or(0);
        let fits = batch
            .first()
            .is_none_or(|first| first.adapter == job.adapter)
            && rows + job.rows.len() <= limits.max_batch
            && width.max(job_width) + budget.max(job_budget) <= limits.max_positions;
        if !batch.is_empty() && !fits {
            rest.push_back(job);
            continue;
        }
        rows += job.rows.len();
        width = width.max(job_width);
        budget = budget.max(job_budget);
        batch.push(job);
    }
    *pending = rest;
    batch
}

/// Decodes the jobs' rows together and sends each job its generations; on failure retries
/// each job alone so that one bad request fails only itself.
fn run_batch<B: Backend>(
    model: &Qwen2ForCausalLm<B>,
    tokenizer: &ChatTokenizer,
    jobs: Vec<Job>,
    metrics: &ServeMetrics,
) {
    let rows: Vec<GenerationRow> = jobs.iter().flat_map(|j| j.rows.iter().cloned()).collect();
    let owners: Vec<(usize, usize)> = jobs
        .iter()
        .enumerate()
        .flat_map(|(j, job)| (0..job.rows.len()).map(move |r| (j, r)))
        .collect();
    // An abandoned job's rows end here, as if they had met a stop string.
    let stop_check = |row: usize, ids: &[u32]| {
        let job = &jobs[owners[row].0];
        job.is_abandoned()
            || (!job.stops.is_empty()
                && tokenizer
                    .decode(ids, true)
                    .is_ok_and(|text| job.stops.iter().any(|s| text.contains(s.as_str()))))
    };
    let on_token = |row: usize, token: u32, _logprob: f32| {
        let (job, local) = owners[row];
        if jobs[job].stream_tokens {
            let _ = jobs[job].events.send(JobEvent::Token { row: local, token });
        }
    };
    let hooks = RowHooks {
        stop_check: Some(&stop_check),
        on_token: Some(&on_token),
    };
    let result = std::panic::catch_unwind(AssertUnwindSafe(|| {
        generate_rows(model, &rows, &tokenizer.eos_ids, hooks)
    }));
    let generations = match result {
        Ok(Ok(generations)) => generations,
        failed => {
            if jobs.len() > 1 {
                for job in jobs {
                    run_batch(model, tokenizer, vec![job], metrics);
                }
                return;
            }
            let message = match failed {
                Ok(Err(err)) => err.to_string(),
                _ => "generation panicked (the server keeps running)".to_owned(),
            };
            for job in &jobs {
                let _ = job.events.send(JobEvent::Done(Err(message.clone())));
            }
            return;
        }
    };
    metrics.batches.fetch_add(1, Ordering::Relaxed);
    metrics.rows.fetch_add(rows.len() as u64, Ordering::Relaxed);
    let abandoned = jobs.iter().filter(|job| job.is_abandoned()).count();
    metrics
        .abandoned
        .fetch_add(abandoned as u64, Ordering::Relaxed);
    metrics
        .largest_batch
        .fetch_max(rows.len() as u64, Ordering::Relaxed);
    let tokens: usize = generations.iter().map(|g| g.token_ids.len()).sum();
    metrics
        .generated_tokens
        .fetch_add(tokens as u64, Ordering::Relaxed);
    let mut generations = generations.into_iter();
    for job in jobs {
        let mine: Vec<Generation> = generations.by_ref().take(job.rows.len()).collect();
        let _ = job.events.send(JobEvent::Done(Ok(mine)));
    }
}
