//! The BFCL multi-turn training environment: on the hand-written entries of
//! `fixtures/bfcl/multi_turn_env/` (`scripts/bfcl_multi_turn_env_fixture.py`), the ground truth
//! as a policy earns reward 1 on every entry and a silent policy 0, partial play earns the share
//! of turns passed, and every verdict equals `score_output`'s on the same calls; on the v4 data
//! (ignored without it), the environment's tasks are exactly the entries whose ground truth the
//! checker judges valid, and its rewards agree with the checker's verdicts; a couple of GRPO
//! steps run on its tasks with a tiny random model.

use std::path::PathBuf;
use std::sync::Arc;

use agent_rl_core::{
    Action, ChatRequest, Environment, Message, Policy, SamplingConfig, Task, Trajectory,
};
use agent_rl_eval::bfcl::multi_turn::{
    ADDED_FUNCTIONS_PROMPT, MultiTurnDocs, MultiTurnEnvConfig, MultiTurnEnvironmentFactory,
    MultiTurnEpisodeReport, MultiTurnRewardMode, MultiTurnVerdict, UNSUPPORTED_PREFIX,
    multi_turn_reward,
};
use agent_rl_eval::bfcl::{BfclDataset, BfclEntry, Category, score_output};
use agent_rl_rewards::{Reward, Sample, Target};
use serde_json::{Value, json};

use super::multi_turn::{
    GroundTruthPolicy, known_gap, multi_turn_dataset, multi_turn_docs, truth_of,
};

const MULTI_TURN: [Category; 4] = [
    Category::MultiTurnBase,
    Category::MultiTurnMissFunc,
    Category::MultiTurnMissParam,
    Category::MultiTurnLongContext,
];

fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bfcl/multi_turn_env")
}

fn fixture() -> (BfclDataset, MultiTurnDocs) {
    let dir = fixture_dir();
    let dataset = BfclDataset::load_categories(&dir, &MULTI_TURN).unwrap();
    (dataset, MultiTurnDocs::load(&dir).unwrap())
}

/// The factory's task `id`.
fn task_of<'a>(factory: &'a MultiTurnEnvironmentFactory, id: &str) -> &'a Task {
    factory
        .tasks()
        .iter()
        .find(|task| task.id == id)
        .unwrap_or_else(|| panic!("no task {id}"))
}

/// Plays `task` with `policy`: a reply's calls go to the environment together, a reply without
/// calls as `Respond`; the conversation grows as the agent loop's does.
fn play(
    env: &mut dyn Environment,
    task: &Task,
    policy: &mut dyn Policy,
) -> (Vec<Message>, Vec<Option<f32>>) {
    let mut messages = env.reset(task).unwrap();
    let mut rewards = Vec::new();
    for _ in 0..200 {
        let request = ChatRequest {
            messages: messages.clone(),
            tools: task.tools.clone(),
        };
        let completion = policy
            .generate(&[request], &SamplingConfig::default())
            .unwrap()
            .remove(0);
        let parsed = completion.parsed;
        let (assistant, actions) = if parsed.tool_calls.is_empty() {
            (
                Message::assistant(parsed.content.clone()),
                vec![Action::Respond(parsed.content.clone())],
            )
        } else {
            (
                Message::assistant_tool_calls(None, parsed.tool_calls.clone()),
                parsed
                    .tool_calls
                    .into_iter()
                    .map(Action::ToolCall)
                    .collect(),
            )
        };
        messages.push(assistant);
        let outcomes = env.step_message(&actions).unwrap();
        let done = outcomes.iter().any(|outcome| outcome.done);
        for outcome in outcomes {
            rewards.extend(outcome.reward.map(Some));
            messages.push(outcome.observation);
        }
        if done {
            return (messages, rewards);
        }
    }
    panic!("{}: the episode did not end", task.id);
}

/// Plays `task` and returns the environment's report.
fn report_of(
    factory: &MultiTurnEnvironmentFactory,
    task: &Task,
    policy: &mut dyn Policy,
) -> MultiTurnEpisodeReport {
    let mut env = factory.environment();
    play(&mut env, task, policy);
    let report = env.report().unwrap();
    assert!(report.is_done());
    report
}

/// The checker's verdict on the steps the environment recorded (turns never reached are empty),
/// as `score_output` gives it: `Ok(())` valid, `Err(error_type)` otherwise.
fn score_of(entry: &BfclEntry, report: &MultiTurnEpisodeReport, pad: bool) -> Result<(), String> {
    let mut steps = report.steps.clone();
    if pad {
        steps.resize(entry.turns.len(), Vec::new());
    }
    let verdict = score_output(entry, &json!(steps), Default::default());
    assert!(verdict.supported, "{}: {:?}", entry.id, verdict.error);
    if verdict.valid {
        Ok(())
    } else {
        Err(verdict.error_type.unwrap_or_default())
    }
}

/// Every checked turn passed: reward 1, and `score_output` judges the same calls valid.
fn assert_full_reward(entry: &BfclEntry, report: &MultiTurnEpisodeReport) {
    assert_eq!(
        report.reward,
        Some(1.0),
        "{}: {:?}",
        entry.id,
        report.verdict
    );
    assert_eq!(report.passed_turns, report.checked_turns);
    assert_eq!(verdict_of(report), Ok(()));
    assert_eq!(score_of(entry, report, false), Ok(()), "{}", entry.id);
}

fn verdict_of(report: &MultiTurnEpisodeReport) -> Result<(), String> {
    match &report.verdict {
        Some(MultiTurnVerdict::Valid) => Ok(()),
        Some(MultiTurnVerdict::Invalid(failure)) => Err(failure.error_type.clone()),
        Some(MultiTurnVerdict::Unsupported(reason)) => panic!("unsupported: {reason}"),
        None => panic!("{}: the episode has not ended", report.id),
    }
}

#[test]
fn fixture_ground_truth_earns_one_and_silence_zero_as_the_checker_says() {
    let (dataset, docs) = fixture();
    let factory = MultiTurnEnvironmentFactory::new(&dataset, &docs, MultiTurnEnvConfig::default());
    assert!(factory.skipped().is_empty(), "{:?}", factory.skipped());
    assert_eq!(factory.tasks().len(), 5);
    let index = dataset.index();
    for task in factory.tasks() {
        let entry = index[task.id.as_str()];
        let mut truth = GroundTruthPolicy::of(entry).expect("keyword-only ground truth");
        assert_full_reward(entry, &report_of(&factory, task, &mut truth));

        let report = report_of(&factory, task, &mut GroundTruthPolicy::silent());
        assert_eq!(report.reward, Some(0.0), "{}", task.id);
        let verdict = verdict_of(&report);
        assert_eq!(verdict, Err("multi_turn:empty_turn_model_response".into()));
        assert_eq!(score_of(entry, &report, true), verdict, "{}", task.id);
    }
}

#[test]
fn partial_play_earns_the_share_of_turns_passed_or_nothing_per_entry() {
    let (dataset, docs) = fixture();
    let index = dataset.index();
    for (mode, expected) in [
        (MultiTurnRewardMode::TurnShare, 1.0 / 3.0),
        (MultiTurnRewardMode::Entry, 0.0),
    ] {
        let config = MultiTurnEnvConfig {
            reward: mode,
            ..MultiTurnEnvConfig::default()
        };
        let factory = MultiTurnEnvironmentFactory::new(&dataset, &docs, config);
        let task = &factory.tasks()[0];
        assert_eq!(task.id, "multi_turn_base_0");
        let entry = index[task.id.as_str()];
        // Right in the first turn, silent in the second: the checker stops there.
        let mut policy = GroundTruthPolicy::of(entry).unwrap();
        policy.turns[1].clear();
        let mut env = factory.environment();
        let (messages, rewards) = play(&mut env, task, &mut policy);
        let report = env.report().unwrap();
        assert_eq!((report.passed_turns, report.checked_turns), (1, 3));
        assert_eq!(report.reward, Some(expected));
        // The reward so far is reported at the end of each checked turn.
        let first = if mode == MultiTurnRewardMode::TurnShare {
            1.0 / 3.0
        } else {
            0.0
        };
        assert_eq!(rewards, vec![Some(first), Some(expected)]);
        let verdict = verdict_of(&report);
        assert_eq!(verdict, Err("multi_turn:empty_turn_model_response".into()));
        assert_eq!(score_of(entry, &report, true), verdict);
        // The second turn's user message came after the first turn's answer.
        assert!(messages.iter().any(|m| m.text().contains("todo.txt")));
    }
}

#[test]
fn acting_in_a_turn_that_should_ask_fails_the_next_checked_turn() {
    let (dataset, docs) = fixture();
    let factory = MultiTurnEnvironmentFactory::new(&dataset, &docs, MultiTurnEnvConfig::default());
    let index = dataset.index();
    let task = task_of(&factory, "multi_turn_miss_param_0");
    assert_eq!(task.data["checked_turns"], 2);
    let entry = index[task.id.as_str()];
    // Funding the account while the amount is unknown (and again when it is given).
    let mut policy = GroundTruthPolicy::of(entry).unwrap();
    policy.turns[1] = policy.turns[2].clone();
    let report = report_of(&factory, task, &mut policy);
    assert_eq!(report.reward, Some(0.5));
    let verdict = verdict_of(&report);
    assert_eq!(verdict, Err("multi_turn:instance_state_mismatch".into()));
    assert_eq!(score_of(entry, &report, true), verdict);
}

#[test]
fn held_back_functions_are_listed_at_their_turn() {
    let (dataset, docs) = fixture();
    let factory = MultiTurnEnvironmentFactory::new(&dataset, &docs, MultiTurnEnvConfig::default());
    let index = dataset.index();
    let task = task_of(&factory, "multi_turn_miss_func_0");
    let names: Vec<&str> = task.tools.iter().map(|tool| tool.name()).collect();
    assert!(
        names.contains(&"mkdir") && !names.contains(&"touch"),
        "{names:?}"
    );
    let mut env = factory.environment();
    let mut policy = GroundTruthPolicy::of(index[task.id.as_str()]).unwrap();
    let (messages, _) = play(&mut env, task, &mut policy);
    let added = messages
        .iter()
        .find(|m| m.text().ends_with(ADDED_FUNCTIONS_PROMPT))
        .expect("the held-back turn's message");
    let listed: Value = serde_json::from_str(added.text().lines().next().unwrap()).unwrap();
    assert_eq!(listed["function"]["name"], "touch");
    assert_eq!(env.report().unwrap().reward, Some(1.0));
}

/// A policy that calls `name(arguments)` at every step.
struct Repeat(&'static str, Value);

impl Policy for Repeat {
    fn generate(
        &mut self,
        requests: &[ChatRequest],
        _: &SamplingConfig,
    ) -> Result<Vec<agent_rl_core::Completion>, agent_rl_core::CoreError> {
        use agent_rl_core::{HermesToolCallParser, ToolCallParser};
        let text = format!(
            "<tool_call>\n{}\n</tool_call>",
            json!({"name": self.0, "arguments": self.1})
        );
        Ok(requests
            .iter()
            .map(|_| agent_rl_core::Completion {
                token_ids: Vec::new(),
                logprobs: Vec::new(),
                parsed: HermesToolCallParser::default().parse(&text),
                text: text.clone(),
                finish_reason: agent_rl_core::FinishReason::Stop,
            })
            .collect())
    }
}

#[test]
fn the_step_limit_force_quits_as_the_inference_loop_does() {
    let (dataset, docs) = fixture();
    let config = MultiTurnEnvConfig {
        max_steps: 2,
        ..MultiTurnEnvConfig::default()
    };
    let factory = MultiTurnEnvironmentFactory::new(&dataset, &docs, config);
    let index = dataset.index();
    let task = task_of(&factory, "multi_turn_base_1");
    let report = report_of(
        &factory,
        task,
        &mut Repeat("add", json!({"a": 3, "b": 4.5})),
    );
    assert_eq!(
        report.steps.len(),
        1,
        "the first turn is kept, the rest never run"
    );
    assert_eq!(report.steps[0].len(), 3);
    assert_eq!(report.reward, Some(0.0));
    let verdict = verdict_of(&report);
    assert_eq!(verdict, Err("multi_turn:force_terminated".into()));
    assert_eq!(score_of(index[task.id.as_str()], &report, false), verdict);
}

#[test]
fn an_unsupported_call_ends_the_episode_unscored() {
    let (dataset, docs) = fixture();
    let factory = MultiTurnEnvironmentFactory::new(&dataset, &docs, MultiTurnEnvConfig::default());
    let task = task_of(&factory, "multi_turn_base_1");
    // `logarithm`'s error paths are a pinned gap.
    let mut policy = Repeat("logarithm", json!({"value": 5, "base": 1, "precision": 10}));
    let mut env = factory.environment();
    let (messages, _) = play(&mut env, task, &mut policy);
    let report = env.report().unwrap();
    assert!(
        matches!(report.verdict, Some(MultiTurnVerdict::Unsupported(ref reason)) if known_gap(reason)),
        "{:?}",
        report.verdict
    );
    assert_eq!(report.reward, None);
    let last = messages.last().unwrap().clone();
    assert!(last.text().starts_with(UNSUPPORTED_PREFIX));

    // The reward leaves such an episode out, and scores a cut one by the turns it finished.
    let reward = multi_turn_reward();
    let target = Target::new();
    let mut trajectory = Trajectory {
        environment_reward: Some(0.5),
        turns: vec![agent_rl_core::AssistantTurn {
            text: String::new(),
            parsed: Default::default(),
            finish_reason: agent_rl_core::FinishReason::Stop,
            num_tokens: 0,
            observations: vec![last],
        }],
        ..Trajectory::default()
    };
    let score = |t: &Trajectory| reward.score(Sample::new(t, &target)).unwrap().score;
    assert_eq!(score(&trajectory), None);
    trajectory.turns[0].observations = vec![Message::user("next turn")];
    assert_eq!(score(&trajectory), Some(0.5));
    trajectory.environment_reward = None;
    assert_eq!(score(&trajectory), Some(0.0));
}

/// The v4 data: the environment's tasks are the entries whose ground truth the checker judges
/// valid, the others are left out with the checker's reason (a pinned gap, or a ground truth
/// it rejects); the ground truth as a policy earns reward 1 on every task it can play (keyword
/// arguments only), a silent policy 0, each with `score_output`'s verdict.
#[test]
#[ignore = "needs AGENT_RL_DATA (the BFCL v4 multi-turn data); run with --include-ignored"]
fn environment_rewards_agree_with_the_checker_on_the_v4_entries() {
    let dataset = multi_turn_dataset();
    let docs = multi_turn_docs();
    let factory = MultiTurnEnvironmentFactory::new(&dataset, &docs, MultiTurnEnvConfig::default());
    let index = dataset.index();
    let tasks: std::collections::HashSet<&str> = factory
        .tasks()
        .iter()
        .map(|task| task.id.as_str())
        .collect();
    for entry in dataset.entries() {
        let steps: Vec<Vec<Vec<String>>> = truth_of(entry)
            .into_iter()
            .map(|calls| vec![calls])
            .collect();
        let verdict = score_output(entry, &json!(steps), Default::default());
        assert_eq!(
            tasks.contains(entry.id.as_str()),
            verdict.supported && verdict.valid,
            "{}: {:?}",
            entry.id,
            verdict.error
        );
    }
    for skipped in factory.skipped() {
        assert!(
            known_gap(&skipped.reason) || skipped.reason.contains("fails the checker"),
            "{}: {}",
            skipped.id,
            skipped.reason
        );
    }
    let (mut played, mut keyword_less) = (0, 0);
    for task in factory.tasks() {
        let entry = index[task.id.as_str()];
        let report = report_of(&factory, task, &mut GroundTruthPolicy::silent());
        assert_eq!(report.reward, Some(0.0), "{}", task.id);
        assert_eq!(
            score_of(entry, &report, true),
            verdict_of(&report),
            "{}",
            task.id
        );
        let Some(mut truth) = GroundTruthPolicy::of(entry) else {
            keyword_less += 1;
            continue;
        };
        assert_full_reward(entry, &report_of(&factory, task, &mut truth));
        played += 1;
    }
    eprintln!(
        "multi-turn environment: {} tasks of {} entries ({} left out: pinned gaps or rejected \
         ground truths); the ground truth as policy earns 1 on {played} ({keyword_less} have \
         positional ground-truth calls a tool call cannot make), a silent policy 0 on all",
        factory.tasks().len(),
        dataset.len(),
        factory.skipped().len()
    );
    assert!(played >= 500, "only {played} tasks played");
}

/// Replays each fixture entry's ground truth at the token level: it reads the rendered
/// conversation, finds the latest turn's user message, and writes that turn's calls as Hermes
/// tool calls unless it already has (then a plain answer).
struct ScriptedGenerator {
    tokenizer: Arc<agent_rl_core::ChatTokenizer>,
    /// Per entry, per turn: the user message's text and the calls' text.
    turns: Vec<Vec<(String, String)>>,
}

impl agent_rl_core::generation::TokenGenerator for ScriptedGenerator {
    fn generate_ids(
        &self,
        contexts: &[Vec<u32>],
        _: &SamplingConfig,
    ) -> Result<Vec<agent_rl_core::generation::Generation>, agent_rl_core::CoreError> {
        contexts
            .iter()
            .map(|context| {
                let text = self.tokenizer.decode(context, false)?;
                let entry = self
                    .turns
                    .iter()
                    .find(|turns| text.contains(turns[0].0.as_str()))
                    .expect("a fixture entry");
                let (at, calls) = entry
                    .iter()
                    .filter_map(|(question, calls)| {
                        text.rfind(question.as_str()).map(|at| (at, calls))
                    })
                    .max_by_key(|(at, _)| *at)
                    .unwrap();
                let reply = if calls.is_empty() || text[at..].contains("<tool_call>") {
                    "Done.".to_owned()
                } else {
                    calls.clone()
                };
                let mut token_ids = self.tokenizer.encode(&reply)?;
                token_ids.push(self.tokenizer.eos_ids[0]);
                Ok(agent_rl_core::generation::Generation {
                    logprobs: vec![0.0; token_ids.len()],
                    token_ids,
                    finish_reason: agent_rl_core::FinishReason::Stop,
                    top_logprobs: Vec::new(),
                })
            })
            .collect()
    }
}

/// The environment under the agent loop (token-level rollouts, a message's calls sent together):
/// the ground truth earns reward 1 on every fixture entry.
#[test]
fn the_agent_loop_earns_full_reward_with_the_ground_truth() {
    use agent_rl_algos::toy::with_toy_template;
    use agent_rl_core::weights::random_model;
    use agent_rl_core::{AgentLoop, AgentLoopConfig, HermesToolCallParser, Qwen2Config};
    use agent_rl_test_support::{tiny_config, tiny_tokenizer};
    use burn::backend::Flex;

    let (dataset, docs) = fixture();
    let factory = MultiTurnEnvironmentFactory::new(&dataset, &docs, MultiTurnEnvConfig::default());
    let index = dataset.index();
    let tokenizer = Arc::new(with_toy_template(&tiny_tokenizer().unwrap()).unwrap());
    let turns = factory
        .tasks()
        .iter()
        .map(|task| {
            let entry = index[task.id.as_str()];
            let policy = GroundTruthPolicy::of(entry).unwrap();
            entry
                .turns
                .iter()
                .enumerate()
                .map(|(turn, messages)| {
                    let question = messages
                        .first()
                        .map_or(ADDED_FUNCTIONS_PROMPT.to_owned(), |m| m.content.clone());
                    (question, policy.calls_text(turn))
                })
                .collect()
        })
        .collect();
    let generator = ScriptedGenerator {
        tokenizer: Arc::clone(&tokenizer),
        turns,
    };
    let config = Qwen2Config {
        max_position_embeddings: 8192,
        ..tiny_config()
    };
    let model = random_model::<Flex>(&config, 5, 0.3, &Default::default()).unwrap();
    let loop_config = AgentLoopConfig {
        sampling: SamplingConfig::greedy(4096),
        max_tool_iterations: 10,
        ..AgentLoopConfig::default()
    };
    let parser = HermesToolCallParser::default();
    let episodes = AgentLoop::new(&model, &tokenizer, &parser, loop_config)
        .with_generator(&generator)
        .run(factory.tasks(), 1, Some(&factory))
        .unwrap();
    assert_eq!(episodes.len(), factory.tasks().len());
    for episode in &episodes {
        let trajectory = &episode.trajectory;
        assert!(!episode.truncated, "{}", trajectory.task_id);
        assert_eq!(
            trajectory.environment_reward,
            Some(1.0),
            "{}: {:?}",
            trajectory.task_id,
            trajectory.turns.last().map(|turn| &turn.observations)
        );
    }
}

/// Two GRPO steps on the fixture's tasks with a tiny random model and the environment's reward.
#[test]
fn grpo_runs_on_multi_turn_tasks() {
    use agent_rl_algos::toy::with_toy_template;
    use agent_rl_algos::{GrpoConfig, GrpoTrainer};
    use agent_rl_core::Qwen2Config;
    use agent_rl_core::weights::random_model;
    use agent_rl_test_support::{tiny_config, tiny_tokenizer};
    use burn::backend::{Autodiff, Flex};

    let (dataset, docs) = fixture();
    let factory = MultiTurnEnvironmentFactory::new(&dataset, &docs, MultiTurnEnvConfig::default());
    let tasks: Vec<Task> = factory.tasks().to_vec();
    let config = Qwen2Config {
        max_position_embeddings: 4096,
        ..tiny_config()
    };
    let model =
        random_model::<Autodiff<Flex>>(&config, 5, 0.3, &Default::default()).expect("model");
    let tokenizer = Arc::new(with_toy_template(&tiny_tokenizer().unwrap()).unwrap());
    let grpo = GrpoConfig {
        num_generations: 2,
        prompts_per_step: 2,
        max_steps: 2,
        max_tool_iterations: 4,
        ..GrpoConfig::default()
    }
    .with_max_completion_length(8);
    let mut trainer = GrpoTrainer::builder(model, tokenizer)
        .with_config(grpo)
        .add_reward(multi_turn_reward())
        .with_environment(factory)
        .build()
        .expect("trainer");
    let report = trainer.train(&tasks).expect("GRPO steps");
    assert_eq!(report.steps.len(), 2);
    for step in &report.steps {
        assert!(step.loss.is_finite(), "{step:?}");
        assert!((0.0..=1.0).contains(&step.reward), "{step:?}");
    }
}

/// A tool call with id `c1`.
fn call(name: &str, arguments: Value) -> Action {
    Action::ToolCall(agent_rl_core::ToolCall {
        id: Some("c1".into()),
        name: name.into(),
        arguments,
    })
}

/// Arguments given as a string holding a JSON object are decoded, as bfcl-eval decodes them;
/// arguments that are no object (which bfcl-eval fails to decode) run nothing and end the turn,
/// where they used to run as a call without arguments. The report has no verdict until the end.
#[test]
fn calls_whose_arguments_do_not_decode_end_the_turn() {
    let (dataset, docs) = fixture();
    let factory = MultiTurnEnvironmentFactory::new(&dataset, &docs, MultiTurnEnvConfig::default());
    let task = task_of(&factory, "multi_turn_base_1");
    let mut env = factory.environment();
    env.reset(task).unwrap();
    let outcomes = env
        .step_message(&[call("add", json!("{\"a\": 3, \"b\": 4.5}"))])
        .unwrap();
    assert_eq!(outcomes.len(), 1);
    assert_eq!(outcomes[0].observation.text(), "{\"result\": 7.5}");
    assert_eq!(outcomes[0].observation.tool_call_id.as_deref(), Some("c1"));
    assert!(!outcomes[0].done);
    let report = env.report().unwrap();
    assert_eq!(report.verdict, None);
    assert!(!report.is_done());

    // The first turn's call was right: it passes, and the next turn's question follows.
    let outcomes = env
        .step_message(&[
            call("multiply", json!([2, 8])),
            call("add", json!({"a": 1, "b": 1})),
        ])
        .unwrap();
    assert_eq!(outcomes.len(), 1, "{outcomes:?}");
    assert_eq!(outcomes[0].observation.role, agent_rl_core::Role::User);
    assert!(!outcomes[0].done);
    assert_eq!(outcomes[0].reward, Some(0.5));
    let report = env.report().unwrap();
    assert_eq!(report.steps, vec![vec![vec!["add(a=3,b=4.5)".to_owned()]]]);
    assert_eq!(report.verdict, None);

    // In the second turn nothing else runs: it ends empty, and fails.
    let outcomes = env.step_message(&[call("multiply", json!(7))]).unwrap();
    assert_eq!(outcomes.len(), 1);
    assert!(outcomes[0].done);
    let report = env.report().unwrap();
    assert!(report.is_done());
    assert_eq!(
        verdict_of(&report),
        Err("multi_turn:empty_turn_model_response".into())
    );
    assert_eq!(report.reward, Some(0.5));
}

/// A policy whose every step makes one call with arguments that are no JSON object.
struct UndecodableArguments;

impl Policy for UndecodableArguments {
    fn generate(
        &mut self,
        requests: &[ChatRequest],
        _: &SamplingConfig,
    ) -> Result<Vec<agent_rl_core::Completion>, agent_rl_core::CoreError> {
        let parsed = agent_rl_core::ParsedOutput {
            tool_calls: vec![agent_rl_core::ToolCall {
                id: None,
                name: "add".into(),
                arguments: json!([3, 4.5]),
            }],
            ..Default::default()
        };
        Ok(requests
            .iter()
            .map(|_| agent_rl_core::Completion {
                token_ids: Vec::new(),
                logprobs: Vec::new(),
                parsed: parsed.clone(),
                text: String::new(),
                finish_reason: agent_rl_core::FinishReason::Stop,
            })
            .collect())
    }
}

/// The inference loop ends a turn at such a step too (it used to run `add()` step after step
/// until the step limit force-quit the entry).
#[test]
fn the_inference_loop_ends_the_turn_at_arguments_that_do_not_decode() {
    use agent_rl_eval::bfcl::multi_turn::{MultiTurnOutcome, infer_multi_turn};
    let (dataset, docs) = fixture();
    let entry = dataset.index()["multi_turn_base_1"];
    let outcome = infer_multi_turn(
        entry,
        &docs,
        &mut UndecodableArguments,
        &SamplingConfig::default(),
        Default::default(),
    )
    .unwrap();
    assert_eq!(
        outcome,
        MultiTurnOutcome::Steps(vec![Vec::new(), Vec::new()])
    );
}

/// An episode's turn is the count of its ended turns; a turn whose ground truth is unsupported
/// still ends with its steps kept; a stopped episode stays in the stopped turn.
#[test]
fn an_episode_keeps_the_steps_of_a_turn_whose_truth_is_unsupported() {
    use agent_rl_eval::bfcl::multi_turn::{MultiTurnEpisode, MultiTurnPlan};
    let (dataset, docs) = fixture();
    let entry = dataset.index()["multi_turn_base_1"];
    let plan = Arc::new(MultiTurnPlan::new(entry, &docs, Default::default()).unwrap());
    // `logarithm`'s error paths are a pinned gap.
    let truth = vec![
        vec!["logarithm(value=5, base=1, precision=10)".to_owned()],
        Vec::new(),
    ];
    let mut episode = MultiTurnEpisode::scored(plan, Arc::new(truth)).unwrap();
    let step = vec!["add(a=1, b=2)".to_owned()];
    episode.run_call_strings(step.clone()).unwrap();
    assert_eq!((episode.turn(), episode.steps_this_turn()), (0, 1));
    let reason = episode.end_turn().unwrap_err();
    assert!(known_gap(&reason), "{reason}");
    assert_eq!(episode.turn(), 1);
    assert_eq!(episode.steps(), &vec![vec![step.clone()]]);
    assert!(episode.is_last_turn() && !episode.is_over());

    episode.run_call_strings(step.clone()).unwrap();
    episode.stop();
    assert!(episode.is_over());
    assert_eq!(episode.turn(), 1);
    assert_eq!(episode.into_steps(), vec![vec![step.clone()], vec![step]]);
}
