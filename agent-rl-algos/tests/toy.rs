//! The toy tool-use family: targets parse, demonstrations succeed, the template is compact and
//! trainable, and evaluation scores a policy's episodes.

use agent_rl_algos::sft::{SftExample, tokenize_example};
use agent_rl_algos::toy::{
    ToyEnvironment, ToySplit, ToyTier, demonstration, toy_environments, toy_sft_dataset,
    toy_split_tasks, toy_tasks, toy_tier_tasks, with_toy_template,
};
use agent_rl_algos::{SftConfig, evaluate_tool_use};
use agent_rl_core::{
    Action, AgentLoopConfig, AssistantTurn, Environment, FinishReason, HermesToolCallParser,
    SamplingConfig, ToolCallParser, Trajectory,
};
use agent_rl_rewards::{Outcome, Reward, Sample, Target, ToolUseReward};
use agent_rl_test_support::{tiny_qwen2, tiny_tokenizer};
use burn::module::AutodiffModule;

/// The trajectory a perfect agent produces on `task`, built from the demonstration through the
/// real parser and environment.
fn perfect_trajectory(task: &agent_rl_core::Task) -> Trajectory {
    let demo = demonstration(task).expect("toy task");
    let parser = HermesToolCallParser::default();
    let tokenizer = with_toy_template(&tiny_tokenizer().expect("tokenizer")).expect("template");
    let rendered_call = tokenizer
        .apply_chat_template(&demo[..2], &task.tools, false)
        .expect("render");
    let prompt = tokenizer
        .apply_chat_template(&demo[..1], &task.tools, true)
        .expect("render");
    let call_text = rendered_call[prompt.len()..]
        .trim_end_matches("<|im_end|>\n")
        .to_owned();
    let parsed = parser.parse(&call_text);
    assert_eq!(parsed.tool_calls.len(), 1, "{call_text:?}");
    let mut env = ToyEnvironment::default();
    env.reset(task).expect("reset");
    let observation = env
        .step(&Action::ToolCall(parsed.tool_calls[0].clone()))
        .expect("step")
        .observation;
    let answer = demo[3].text().to_owned();
    Trajectory {
        task_id: task.id.clone(),
        tools: task.tools.clone(),
        prompt: task.messages.clone(),
        turns: vec![
            AssistantTurn {
                text: call_text,
                parsed,
                finish_reason: FinishReason::Stop,
                num_tokens: 30,
                observations: vec![observation],
            },
            AssistantTurn {
                text: answer.clone(),
                parsed: HermesToolCallParser::default().parse(&answer),
                finish_reason: FinishReason::Stop,
                num_tokens: 3,
                observations: Vec::new(),
            },
        ],
        max_new_tokens: 96,
        environment_reward: None,
    }
}

#[test]
fn demonstrations_earn_the_full_reward_and_guessing_does_not() {
    let tasks = toy_tasks(9, 3);
    let reward = ToolUseReward::default();
    for task in &tasks {
        let target = Target::from_task(task).expect("target parses");
        let good = perfect_trajectory(task);
        let sample = Sample::new(&good, &target);
        assert_eq!(
            Outcome::default().succeeded(sample).expect("outcome"),
            Some(true),
            "{}",
            task.id
        );
        // Answering without the tool: the result depends on a salt the model never sees, so a
        // silent episode can only guess; a wrong guess earns less than one format point.
        let mut silent = good.clone();
        silent.turns.remove(0);
        silent.turns[0].text = "unknown".into();
        silent.turns[0].parsed = HermesToolCallParser::default().parse("unknown");
        let scores = reward
            .score_batch(&[Sample::new(&good, &target), Sample::new(&silent, &target)])
            .expect("scores");
        let (best, lazy) = (
            scores[0].score.expect("score"),
            scores[1].score.expect("score"),
        );
        assert!(
            (best - 4.0).abs() < 1e-6,
            "perfect episode scores 4, got {best}"
        );
        assert!(lazy < 1.0, "answering without calling must not pay: {lazy}");
    }
}

#[test]
fn toy_template_is_short_and_sft_masks_only_assistant_turns() {
    let tokenizer = with_toy_template(&tiny_tokenizer().expect("tokenizer")).expect("template");
    let tasks = toy_tasks(3, 1);
    let prompt = tokenizer
        .encode_chat(&tasks[0].messages, &tasks[0].tools, true)
        .expect("encode");
    assert!(prompt.len() < 100, "prompt of {} tokens", prompt.len());
    let data = toy_sft_dataset(&tasks);
    assert_eq!(data.len(), 3);
    let example: &SftExample = &data.examples()[0];
    let tokenized = tokenize_example(&tokenizer, example, &SftConfig::default()).expect("tokenize");
    let masked: Vec<u32> = tokenized
        .input_ids
        .iter()
        .zip(&tokenized.loss_mask)
        .filter(|&(_, &m)| m)
        .map(|(&id, _)| id)
        .collect();
    let text = tokenizer.decode(&masked, false).expect("decode");
    assert!(
        text.contains("<tool_call>") && !text.contains("<tool_response>"),
        "{text:?}"
    );
}

#[test]
fn evaluation_of_an_untrained_model_is_zero_and_bounded() {
    let tokenizer = with_toy_template(&tiny_tokenizer().expect("tokenizer")).expect("template");
    let model = tiny_qwen2::<crate::B>(0, &Default::default()).valid();
    let config = AgentLoopConfig {
        sampling: SamplingConfig::greedy(24),
        max_tool_iterations: 2,
        max_prompt_length: None,
        max_tool_calls_per_turn: None,
    };
    let env = toy_environments();
    let scores = evaluate_tool_use(
        &model,
        &tokenizer,
        &HermesToolCallParser::default(),
        &toy_tasks(4, 2),
        Some(&env),
        config,
    )
    .expect("evaluates");
    assert_eq!(scores.episodes, 4);
    assert_eq!(scores.success_rate, 0.0);
    assert_eq!(scores.argument_match, 0.0);
}

/// The values of a toy request: the cities its calls name, the numbers in its text, and its
/// phrasing (the text with each city and number replaced by a placeholder).
fn request_values(task: &agent_rl_core::Task) -> (Vec<String>, Vec<i64>, String) {
    let text = task.messages[0].text();
    let mut cities: Vec<String> = task.data["target"]["expected_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|call| call["arguments"]["city"][0].as_str().map(str::to_owned))
        .collect();
    cities.dedup();
    let mut phrasing = text.to_owned();
    for city in &cities {
        phrasing = phrasing.replace(city.as_str(), "{city}");
    }
    let numbers: Vec<i64> = text
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|digits| digits.parse().ok())
        .collect();
    let mut template = String::new();
    let mut in_number = false;
    for c in phrasing.chars() {
        if c.is_ascii_digit() {
            if !in_number {
                template.push_str("{n}");
            }
            in_number = true;
        } else {
            template.push(c);
            in_number = false;
        }
    }
    (cities, numbers, template)
}

#[test]
fn held_out_requests_share_no_request_operand_or_phrasing_with_training() {
    let mut train = toy_split_tasks(ToySplit::Train, 3000, 1);
    train.extend(toy_tasks(3000, 1));
    for tier in [ToyTier::TwoCalls, ToyTier::Chained] {
        train.extend(toy_tier_tasks(tier, ToySplit::Train, 500, 2));
    }
    let mut held_out = toy_split_tasks(ToySplit::HeldOut, 600, 1001);
    for tier in [ToyTier::TwoCalls, ToyTier::Chained] {
        held_out.extend(toy_tier_tasks(tier, ToySplit::HeldOut, 100, 1002));
    }
    let seen: Vec<_> = train.iter().map(request_values).collect();
    let texts: std::collections::HashSet<&str> =
        train.iter().map(|t| t.messages[0].text()).collect();
    let phrasings: std::collections::HashSet<&str> = seen.iter().map(|v| v.2.as_str()).collect();
    let cities: std::collections::HashSet<&str> = seen
        .iter()
        .flat_map(|v| v.0.iter().map(String::as_str))
        .collect();
    let numbers: std::collections::HashSet<i64> = seen.iter().flat_map(|v| v.1.clone()).collect();
    assert!(phrasings.len() >= 9 && cities.len() == 12, "{phrasings:?}");
    for task in &held_out {
        let (held_cities, held_numbers, phrasing) = request_values(task);
        let text = task.messages[0].text();
        assert!(!texts.contains(text), "{text:?} is a training request");
        assert!(
            !phrasings.contains(phrasing.as_str()),
            "{phrasing:?} trains"
        );
        // The cities are shared on purpose (see `ToySplit`); every other value is new.
        assert!(
            held_cities
                .iter()
                .all(|city| cities.contains(city.as_str()))
        );
        for number in &held_numbers {
            assert!(!numbers.contains(number), "{number} trains ({text:?})");
        }
    }
}
