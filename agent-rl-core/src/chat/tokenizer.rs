//! [`ChatTokenizer`]: `tokenizer.json` + `tokenizer_config.json` + chat template.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use tokenizers::Tokenizer;

use super::template::ChatTemplate;
use crate::conversation::{Message, ToolSpec};
use crate::error::CoreError;

/// A Hugging Face tokenizer with its special tokens and chat template.
#[derive(Debug)]
pub struct ChatTokenizer {
    tokenizer: Tokenizer,
    template: Option<ChatTemplate>,
    /// Ids that end generation: the config's `eos_token`, plus `generation_config.json`'s
    /// `eos_token_id` when present.
    pub eos_ids: Vec<u32>,
    /// Padding id (`pad_token`, else the first eos id).
    pub pad_id: Option<u32>,
    /// Special-token strings passed to the template (`bos_token`, `eos_token`, `pad_token`, …).
    pub special_tokens: Map<String, Value>,
    path: PathBuf,
}

fn read_json(path: &Path) -> Result<Value, CoreError> {
    let text = std::fs::read_to_string(path).map_err(|source| CoreError::Io {
        path: path.to_owned(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|source| CoreError::Json {
        path: path.to_owned(),
        source,
    })
}

/// A special token entry: a string or `{"content": …}`.
fn token_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Object(map) => map
            .get("content")
            .and_then(Value::as_str)
            .map(str::to_owned),
        _ => None,
    }
}

/// Runs a call into the `tokenizers` library, turning a panic inside it (some malformed
/// `tokenizer.json` settings reach `unwrap`s there) into [`CoreError::Tokenizer`] naming the
/// file: a bad tokenizer file is an error for the caller, never an abort.
fn contained<T>(path: &Path, call: impl FnOnce() -> T) -> Result<T, CoreError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(call)).map_err(|payload| {
        let message = payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_else(|| "unknown panic".into());
        CoreError::Tokenizer {
            path: path.to_owned(),
            reason: format!("the tokenizers library failed on this file: {message}"),
        }
    })
}

impl ChatTokenizer {
    /// Loads `dir/tokenizer.json`, `dir/tokenizer_config.json` (optional), the chat template
    /// (`dir/chat_template.jinja`, else `chat_template` in the config), and
    /// `dir/generation_config.json` eos ids (optional).
    ///
    /// # Errors
    /// Missing or invalid `tokenizer.json`, invalid JSON configs, a template that does not
    /// compile — each naming the file.
    pub fn from_dir(dir: &Path) -> Result<Self, CoreError> {
        let path = dir.join("tokenizer.json");
        let tokenizer = contained(&path, || Tokenizer::from_file(&path))?.map_err(|err| {
            CoreError::Tokenizer {
                path: path.clone(),
                reason: err.to_string(),
            }
        })?;
        let config_path = dir.join("tokenizer_config.json");
        let config = if config_path.exists() {
            read_json(&config_path)?
        } else {
            Value::Null
        };
        let jinja_path = dir.join("chat_template.jinja");
        let template = if jinja_path.exists() {
            let source = std::fs::read_to_string(&jinja_path).map_err(|source| CoreError::Io {
                path: jinja_path.clone(),
                source,
            })?;
            Some(ChatTemplate::new(
                &source,
                jinja_path.display().to_string(),
            )?)
        } else {
            match config.get("chat_template") {
                Some(Value::String(source)) => Some(ChatTemplate::new(
                    source,
                    format!("{}:chat_template", config_path.display()),
                )?),
                Some(Value::Array(named)) => named
                    .iter()
                    .find(|t| t.get("name").and_then(Value::as_str) == Some("default"))
                    .and_then(|t| t.get("template"))
                    .and_then(Value::as_str)
                    .map(|source| {
                        ChatTemplate::new(
                            source,
                            format!("{}:chat_template[default]", config_path.display()),
                        )
                    })
                    .transpose()?,
                _ => None,
            }
        };
        let mut special_tokens = Map::new();
        for key in ["bos_token", "eos_token", "pad_token", "unk_token"] {
            if let Some(text) = config.get(key).and_then(token_text) {
                special_tokens.insert(key.into(), Value::String(text));
            }
        }
        let id_of = |key: &str| {
            special_tokens
                .get(key)
                .and_then(Value::as_str)
                .and_then(|text| tokenizer.token_to_id(text))
        };
        let mut eos_ids: Vec<u32> = id_of("eos_token").into_iter().collect();
        let generation_path = dir.join("generation_config.json");
        if generation_path.exists() {
            let generation = read_json(&generation_path)?;
            let ids = match generation.get("eos_token_id") {
                Some(Value::Array(ids)) => ids.iter().filter_map(Value::as_u64).collect(),
                Some(Value::Number(n)) => n.as_u64().into_iter().collect(),
                _ => Vec::new(),
            };
            for id in ids {
                if !eos_ids.contains(&(id as u32)) {
                    eos_ids.push(id as u32);
                }
            }
        }
        let pad_id = id_of("pad_token").or_else(|| eos_ids.first().copied());
        Ok(Self {
            tokenizer,
            template,
            eos_ids,
            pad_id,
            special_tokens,
            path,
        })
    }

    /// A tokenizer from the text of a `tokenizer.json` (embedded assets), with `eos_token` as
    /// its end-of-sequence token, `pad_token` (if any) for padding, and no chat template.
    ///
    /// # Errors
    /// [`CoreError::Tokenizer`] naming `source_name` when the JSON is not a tokenizer or lacks
    /// one of the named tokens.
    pub fn from_json_str(
        json: &str,
        source_name: &str,
        eos_token: &str,
        pad_token: Option<&str>,
    ) -> Result<Self, CoreError> {
        let failed = |reason: String| CoreError::Tokenizer {
            path: PathBuf::from(source_name),
            reason,
        };
        let tokenizer: Tokenizer = json.parse().map_err(|err| failed(format!("{err}")))?;
        let id = |token: &str| {
            tokenizer
                .token_to_id(token)
                .ok_or_else(|| failed(format!("no token `{token}` in the vocabulary")))
        };
        let eos = id(eos_token)?;
        let pad = pad_token.map(id).transpose()?;
        let mut out = Self::new(tokenizer, None, vec![eos], pad);
        out.path = PathBuf::from(source_name);
        Ok(out)
    }

    /// Wraps an in-memory tokenizer and template (tests, embedded demos).
    pub fn new(
        tokenizer: Tokenizer,
        template: Option<ChatTemplate>,
        eos_ids: Vec<u32>,
        pad_id: Option<u32>,
    ) -> Self {
        Self {
            tokenizer,
            template,
            eos_ids,
            pad_id,
            special_tokens: Map::new(),
            path: PathBuf::from("<memory>"),
        }
    }

    /// Writes `dir/tokenizer.json`, `dir/chat_template.jinja` (when there is a template) and
    /// `dir/tokenizer_config.json` (`eos_token`, `pad_token`) and, when there are eos ids,
    /// `dir/generation_config.json` (every eos id, the pad id), so that
    /// [`ChatTokenizer::from_dir`] and transformers' `AutoTokenizer` / `generate` load it back
    /// with the same ids, template and eos.
    ///
    /// # Errors
    /// [`CoreError::Write`] / [`CoreError::Tokenizer`] naming the file that could not be written.
    pub fn save_to_dir(&self, dir: &Path) -> Result<(), CoreError> {
        let io = |path: &Path| {
            let path = path.to_owned();
            move |source| CoreError::Write { path, source }
        };
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let path = dir.join("tokenizer.json");
        self.tokenizer
            .save(&path, false)
            .map_err(|err| CoreError::Tokenizer {
                path: path.clone(),
                reason: err.to_string(),
            })?;
        if let Some(template) = &self.template {
            let path = dir.join("chat_template.jinja");
            std::fs::write(&path, template.source()).map_err(io(&path))?;
        }
        let token = |id: Option<u32>| id.and_then(|id| self.tokenizer.id_to_token(id));
        let mut config = self.special_tokens.clone();
        if let Some(eos) = token(self.eos_ids.first().copied()) {
            config.insert("eos_token".into(), Value::String(eos));
        }
        if let Some(pad) = token(self.pad_id) {
            config.insert("pad_token".into(), Value::String(pad));
        }
        let path = dir.join("tokenizer_config.json");
        let text = serde_json::to_string_pretty(&Value::Object(config)).unwrap_or_default();
        std::fs::write(&path, text).map_err(io(&path))?;
        if self.eos_ids.is_empty() {
            return Ok(());
        }
        let mut generation = Map::new();
        generation.insert("eos_token_id".into(), Value::from(self.eos_ids.clone()));
        if let Some(pad) = self.pad_id {
            generation.insert("pad_token_id".into(), Value::from(pad));
        }
        let path = dir.join("generation_config.json");
        let text = serde_json::to_string_pretty(&Value::Object(generation)).unwrap_or_default();
        std::fs::write(&path, text).map_err(io(&path))
    }

    /// The underlying `tokenizers` tokenizer.
    pub fn inner(&self) -> &Tokenizer {
        &self.tokenizer
    }

    /// The chat template, if the tokenizer has one.
    pub fn template(&self) -> Option<&ChatTemplate> {
        self.template.as_ref()
    }

    /// Number of tokens in the vocabulary, added tokens included.
    pub fn vocab_size(&self) -> usize {
        self.tokenizer.get_vocab_size(true)
    }

    /// One past the largest id the tokenizer can produce (added tokens included): the number of
    /// embedding rows a model needs to accept every id it encodes.
    pub fn id_bound(&self) -> usize {
        self.tokenizer
            .get_vocab(true)
            .values()
            .max()
            .map_or(0, |&id| id as usize + 1)
    }

    /// Refuses a model whose embedding (`vocab_size` rows) is smaller than the ids this
    /// tokenizer produces, which would otherwise fail at the first out-of-range id. A larger
    /// embedding is fine (Qwen2.5 pads its embedding past the tokenizer's vocabulary).
    ///
    /// # Errors
    /// [`CoreError::VocabularyMismatch`] naming the tokenizer file and both sizes.
    pub fn check_model_vocab(&self, vocab_size: usize) -> Result<(), CoreError> {
        let tokenizer_ids = self.id_bound();
        if tokenizer_ids > vocab_size {
            return Err(CoreError::VocabularyMismatch {
                path: self.path.clone(),
                tokenizer_ids,
                model_vocab_size: vocab_size,
            });
        }
        Ok(())
    }

    /// Id of a token string (special or added tokens included).
    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        self.tokenizer.token_to_id(token)
    }

    /// Encodes text without adding special tokens (as chat templates are tokenized).
    ///
    /// # Errors
    /// [`CoreError::Tokenizer`] when the tokenizer fails.
    pub fn encode(&self, text: &str) -> Result<Vec<u32>, CoreError> {
        contained(&self.path, || self.tokenizer.encode(text, false))?
            .map(|encoding| encoding.get_ids().to_vec())
            .map_err(|err| CoreError::Tokenizer {
                path: self.path.clone(),
                reason: err.to_string(),
            })
    }

    /// Decodes ids; `skip_special` drops special tokens (eos, `<|im_start|>`, …).
    ///
    /// # Errors
    /// [`CoreError::Tokenizer`] when the tokenizer fails.
    pub fn decode(&self, ids: &[u32], skip_special: bool) -> Result<String, CoreError> {
        contained(&self.path, || self.tokenizer.decode(ids, skip_special))?.map_err(|err| {
            CoreError::Tokenizer {
                path: self.path.clone(),
                reason: err.to_string(),
            }
        })
    }

    /// Renders a conversation with the chat template (special-token variables supplied).
    ///
    /// # Errors
    /// [`CoreError::ChatTemplate`] when there is no template or rendering fails.
    pub fn apply_chat_template(
        &self,
        messages: &[Message],
        tools: &[ToolSpec],
        add_generation_prompt: bool,
    ) -> Result<String, CoreError> {
        let template = self.template.as_ref().ok_or_else(|| CoreError::ChatTemplate {
            source_name: self.path.display().to_string(),
            reason: "the tokenizer has no chat template (no chat_template.jinja, no `chat_template` key)".into(),
        })?;
        template.render(messages, tools, add_generation_prompt, &self.special_tokens)
    }

    /// Renders and encodes a conversation.
    ///
    /// # Errors
    /// As [`Self::apply_chat_template`] and [`Self::encode`].
    pub fn encode_chat(
        &self,
        messages: &[Message],
        tools: &[ToolSpec],
        add_generation_prompt: bool,
    ) -> Result<Vec<u32>, CoreError> {
        self.encode(&self.apply_chat_template(messages, tools, add_generation_prompt)?)
    }
}
