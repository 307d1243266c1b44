//! A compact ChatML chat template for the toy tasks' tiny models.

use agent_rl_core::{ChatTemplate, ChatTokenizer, CoreError};

/// ChatML with Hermes-style tool calls, listing the tools as one-line signatures
/// (`get_weather(city)`) instead of full JSON schemas, so a tiny model's prompts stay short
/// (about 80 byte-level tokens instead of about 500).
pub const TOY_CHAT_TEMPLATE: &str = r#"
{%- if tools %}
    {{- '<|im_start|>system\nTools:' }}
    {%- for tool in tools %}
        {{- ' ' + tool.function.name + '(' + (tool.function.parameters.properties | list | join(',')) + ')' }}
    {%- endfor %}
    {{- '<|im_end|>\n' }}
{%- endif %}
{%- for message in messages %}
    {%- if message.role == 'assistant' and message.tool_calls %}
        {{- '<|im_start|>assistant' }}
        {%- if message.content %}
            {{- '\n' + message.content }}
        {%- endif %}
        {%- for call in message.tool_calls %}
            {%- if call.function is defined %}
                {%- set call = call.function %}
            {%- endif %}
            {{- '\n<tool_call>\n{"name": "' + call.name + '", "arguments": ' + (call.arguments | tojson) + '}\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>\n' }}
    {%- elif message.role == 'tool' %}
        {%- if loop.first or messages[loop.index0 - 1].role != 'tool' %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\n<tool_response>\n' + message.content + '\n</tool_response>' }}
        {%- if loop.last or messages[loop.index0 + 1].role != 'tool' %}
            {{- '<|im_end|>\n' }}
        {%- endif %}
    {%- else %}
        {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
{%- endif %}"#;

/// `tokenizer` with [`TOY_CHAT_TEMPLATE`] as its chat template (same vocabulary and eos).
///
/// # Errors
/// Only if the template fails to compile (it is tested).
pub fn with_toy_template(tokenizer: &ChatTokenizer) -> Result<ChatTokenizer, CoreError> {
    let template = ChatTemplate::new(TOY_CHAT_TEMPLATE, "toy_chat_template")?;
    Ok(ChatTokenizer::new(
        tokenizer.inner().clone(),
        Some(template),
        tokenizer.eos_ids.clone(),
        tokenizer.pad_id,
    ))
}

/// The demo's tokenizer, embedded in the crate: a byte-level BPE (384 ids, `<|im_end|>` = eos,
/// `<|endoftext|>` = pad) trained by agent-rl-core's fixture script on our own text, with
/// [`TOY_CHAT_TEMPLATE`]. Needs no files at run time.
///
/// ```
/// let tokenizer = agent_rl_algos::toy::toy_tokenizer()?;
/// assert_eq!(tokenizer.vocab_size(), 384);
/// # Ok::<(), agent_rl_core::CoreError>(())
/// ```
///
/// # Errors
/// Only if the embedded asset were broken (a test checks it).
pub fn toy_tokenizer() -> Result<ChatTokenizer, CoreError> {
    const TOKENIZER_JSON: &str = include_str!("tokenizer.json");
    let plain = ChatTokenizer::from_json_str(
        TOKENIZER_JSON,
        "agent-rl-algos/src/toy/tokenizer.json",
        "<|im_end|>",
        Some("<|endoftext|>"),
    )?;
    with_toy_template(&plain)
}
