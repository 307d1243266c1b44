//! Assistant-only and completion-only masks on the fixture chat template.

use agent_rl_algos::sft::{
    SftDataset, SftExample, SftTrainer, TextOrMessages, TokenizedExample, tokenize_example,
};
use agent_rl_algos::{AlgoError, SftConfig};
use agent_rl_core::{ChatTemplate, ChatTokenizer, Message, ToolCall};
use agent_rl_test_support::{tiny_qwen2, tiny_tokenizer};
use serde_json::json;

use super::common::{conversation, tools};

fn tokenizer() -> ChatTokenizer {
    tiny_tokenizer().expect("fixture tokenizer")
}

/// The decoded runs of consecutive masked tokens.
fn masked_runs(tokenizer: &ChatTokenizer, example: &TokenizedExample) -> Vec<String> {
    let mut runs = Vec::new();
    let mut current: Vec<u32> = Vec::new();
    for (&id, &masked) in example.input_ids.iter().zip(&example.loss_mask) {
        if masked {
            current.push(id);
        } else if !current.is_empty() {
            runs.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        runs.push(current);
    }
    runs.iter()
        .map(|ids| tokenizer.decode(ids, false).expect("decodes"))
        .collect()
}

fn masks_of(example: &SftExample, config: &SftConfig) -> Vec<String> {
    let tokenizer = tokenizer();
    let tokenized = tokenize_example(&tokenizer, example, config).expect("tokenises");
    assert_eq!(tokenized.input_ids.len(), tokenized.loss_mask.len());
    // The tokens are exactly the template's rendering, encoded once.
    if let SftExample::Conversation { messages, tools } = example {
        let full = tokenizer
            .encode_chat(messages, tools, false)
            .expect("encodes");
        assert_eq!(tokenized.input_ids, full);
    }
    masked_runs(&tokenizer, &tokenized)
}

fn conv(messages: Vec<Message>, with_tools: bool) -> SftExample {
    SftExample::Conversation {
        messages,
        tools: if with_tools { tools() } else { Vec::new() },
    }
}

#[test]
fn assistant_only_mask_covers_exactly_assistant_turns() {
    let weather = ToolCall::new("get_weather", json!({"city": "Paris"}));
    let time = ToolCall::new("get_time", json!({"city": "Oslo"}));
    let call_text = |name: &str, city: &str| {
        format!(
            "<tool_call>\n{{\"name\": \"{name}\", \"arguments\": {{\"city\": \"{city}\"}}}}\n</tool_call>"
        )
    };
    let config = SftConfig::default();
    let cases: Vec<(&str, SftExample, Vec<String>)> = vec![
        (
            "system, user, tool call, tool result, answer",
            conv(
                vec![
                    Message::system("Be brief."),
                    Message::user("Weather in Paris?"),
                    Message::assistant_tool_calls(None, vec![weather.clone()]),
                    Message::tool("get_weather", "sunny"),
                    Message::assistant("It is sunny."),
                ],
                true,
            ),
            vec![
                format!("{}<|im_end|>", call_text("get_weather", "Paris")),
                "It is sunny.<|im_end|>".into(),
            ],
        ),
        (
            "text before two parallel calls, two tool results",
            conv(
                vec![
                    Message::user("Paris weather and Oslo time?"),
                    Message::assistant_tool_calls(
                        Some("Checking.".into()),
                        vec![weather.clone(), time.clone()],
                    ),
                    Message::tool("get_weather", "sunny"),
                    Message::tool("get_time", "9am"),
                    Message::assistant("Sunny; 9am."),
                ],
                true,
            ),
            vec![
                format!(
                    "Checking.\n{}\n{}<|im_end|>",
                    call_text("get_weather", "Paris"),
                    call_text("get_time", "Oslo")
                ),
                "Sunny; 9am.<|im_end|>".into(),
            ],
        ),
        (
            "plain multi-turn chat without tools",
            conv(
                vec![
                    Message::system("s"),
                    Message::user("hi"),
                    Message::assistant("hello"),
                    Message::user("bye"),
                    Message::assistant("see you"),
                ],
                false,
            ),
            vec!["hello<|im_end|>".into(), "see you<|im_end|>".into()],
        ),
        (
            "no assistant turn: nothing trained",
            conv(vec![Message::user("hi")], false),
            vec![],
        ),
    ];
    for (name, example, expected) in cases {
        assert_eq!(masks_of(&example, &config), expected, "{name}");
    }
}

#[test]
fn full_loss_when_assistant_only_is_off() {
    let config = SftConfig {
        assistant_only_loss: false,
        ..SftConfig::default()
    };
    let tokenizer = tokenizer();
    let example = conversation("get_weather", "Rome", "rain");
    let tokenized = tokenize_example(&tokenizer, &example, &config).expect("tokenises");
    assert!(tokenized.loss_mask.iter().all(|&m| m));
}

#[test]
fn completion_only_mask_for_prompt_completion_rows() {
    let text = SftExample::PromptCompletion {
        prompt: TextOrMessages::Text("2+2=".into()),
        completion: TextOrMessages::Text("4".into()),
        tools: Vec::new(),
    };
    assert_eq!(masks_of(&text, &SftConfig::default()), ["4<|im_end|>"]);
    let all = SftConfig {
        completion_only_loss: false,
        ..SftConfig::default()
    };
    assert_eq!(masks_of(&text, &all), ["2+2=4<|im_end|>"]);

    let chat = SftExample::PromptCompletion {
        prompt: TextOrMessages::Messages(vec![
            Message::user("Weather in Paris?"),
            Message::assistant_tool_calls(
                None,
                vec![ToolCall::new("get_weather", json!({"city": "Paris"}))],
            ),
            Message::tool("get_weather", "sunny"),
        ]),
        completion: TextOrMessages::Messages(vec![Message::assistant("Sunny.")]),
        tools: tools(),
    };
    // Only the completion's assistant turn, not the demonstrated call in the prompt.
    assert_eq!(masks_of(&chat, &SftConfig::default()), ["Sunny.<|im_end|>"]);
    let completion_only = SftConfig {
        assistant_only_loss: false,
        ..SftConfig::default()
    };
    assert_eq!(masks_of(&chat, &completion_only), ["Sunny.<|im_end|>"]);
}

#[test]
fn truncation_keeps_the_start() {
    let tokenizer = tokenizer();
    let mut example = tokenize_example(
        &tokenizer,
        &conversation("get_time", "Lima", "noon"),
        &SftConfig::default(),
    )
    .expect("tokenises");
    let full = example.clone();
    assert!(example.truncate(20));
    assert_eq!(example.input_ids, full.input_ids[..20]);
    assert_eq!(example.loss_mask, full.loss_mask[..20]);
    assert!(!example.truncate(20));
}

#[test]
fn template_that_rewrites_earlier_turns_is_rejected_with_file_and_line() {
    let base = tokenizer();
    // Announces the number of messages up front: every prefix renders differently.
    let template = ChatTemplate::new(
        "{{ messages | length }}\n{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}",
        "counting.jinja",
    )
    .expect("template compiles");
    let unstable = ChatTokenizer::new(
        base.inner().clone(),
        Some(template),
        base.eos_ids.clone(),
        base.pad_id,
    );
    let example = conv(
        vec![Message::user("hi"), Message::assistant("hello")],
        false,
    );
    let err = tokenize_example(&unstable, &example, &SftConfig::default()).expect_err("unstable");
    assert!(
        matches!(err, AlgoError::TemplateNotPrefixStable { message: 1, .. }),
        "{err}"
    );

    let data = SftDataset::from_jsonl_str(
        "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}, {\"role\": \"assistant\", \"content\": \"hello\"}]}",
        "chats.jsonl",
    )
    .expect("valid row");
    let model = tiny_qwen2::<crate::B>(0, &Default::default());
    let mut trainer = SftTrainer::builder(model, unstable)
        .with_config(SftConfig {
            max_steps: Some(1),
            ..SftConfig::default()
        })
        .build()
        .expect("valid config");
    let err = trainer.train(&data).expect_err("unstable template");
    let message = err.to_string();
    assert!(
        message.starts_with("chats.jsonl:1: chat template is not prefix-stable"),
        "{message}"
    );
}
