//! `agent-rl chat-template`: render a conversation exactly as the model will see it.

use std::io::Write;
use std::path::PathBuf;

use agent_rl::core::ChatTokenizer;

use crate::conversation_args::ConversationArgs;

/// Render messages (and tools) with the model's chat template; needs only the tokenizer files.
#[derive(Debug, clap::Args)]
pub struct ChatTemplateArgs {
    /// Directory with tokenizer.json, tokenizer_config.json and/or chat_template.jinja.
    #[arg(long)]
    model: PathBuf,
    #[command(flatten)]
    conversation: ConversationArgs,
    /// Append the assistant generation prompt.
    #[arg(long)]
    add_generation_prompt: bool,
    /// Print the token ids (comma-separated) instead of the text.
    #[arg(long)]
    ids: bool,
}

/// Prints the rendered prompt exactly (no newline added), or its ids.
pub fn run(args: ChatTemplateArgs) -> anyhow::Result<()> {
    let tokenizer = ChatTokenizer::from_dir(&args.model)?;
    let (messages, tools) = args.conversation.load()?;
    let text = tokenizer.apply_chat_template(&messages, &tools, args.add_generation_prompt)?;
    let mut stdout = std::io::stdout().lock();
    if args.ids {
        let ids: Vec<String> = tokenizer
            .encode(&text)?
            .iter()
            .map(u32::to_string)
            .collect();
        writeln!(stdout, "{}", ids.join(","))?;
    } else {
        stdout.write_all(text.as_bytes())?;
    }
    stdout.flush()?;
    Ok(())
}
