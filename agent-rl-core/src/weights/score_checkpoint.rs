//! Hugging Face `Qwen2ForSequenceClassification` checkpoints: load and save a
//! [`Qwen2ForSequenceClassification`] (the backbone's keys as in [`super::names`], plus
//! `score.weight` `[num_labels = 1, hidden]`).

use std::collections::BTreeMap;
use std::path::Path;

use burn::prelude::*;
use serde::Deserialize;
use serde_json::json;

use super::build::{TensorSource, build_model};
use super::load::{LoadOptions, LoadReport, ReaderSource};
use super::names::{HfTensor, checkpoint_tensors};
use super::reader::CheckpointReader;
use super::save::{SaveOptions, config_json, export_tensors, write_snapshot};
use crate::config::Qwen2Config;
use crate::error::CoreError;
use crate::model::Qwen2ForSequenceClassification;

/// The HF key of the score head.
pub const SCORE_KEY: &str = "score.weight";

/// The head fields of a sequence-classification `config.json` (the rest is [`Qwen2Config`]).
#[derive(Deserialize)]
struct HeadFields {
    #[serde(default)]
    num_labels: Option<usize>,
    #[serde(default)]
    id2label: Option<serde_json::Map<String, serde_json::Value>>,
    #[serde(default)]
    pad_token_id: Option<u32>,
}

fn read_head_fields(path: &Path) -> Result<HeadFields, CoreError> {
    let text = std::fs::read_to_string(path).map_err(|source| CoreError::Io {
        path: path.to_owned(),
        source,
    })?;
    let fields: HeadFields = serde_json::from_str(&text).map_err(|source| CoreError::Json {
        path: path.to_owned(),
        source,
    })?;
    // transformers' rule: `num_labels` if given, else the size of `id2label`, else 2; a config
    // with neither is almost always a causal LM's.
    let Some(labels) = fields
        .num_labels
        .or(fields.id2label.as_ref().map(serde_json::Map::len))
    else {
        return Err(CoreError::UnsupportedConfig {
            field: "num_labels".into(),
            reason: format!(
                "{} has neither `num_labels` nor `id2label`: not a sequence-classification \
                 checkpoint (a causal LM?); build a reward model from a policy with \
                 `Qwen2ForSequenceClassification::from_policy`",
                path.display()
            ),
        });
    };
    if labels != 1 {
        return Err(CoreError::UnsupportedConfig {
            field: "num_labels".into(),
            reason: format!(
                "{} has {labels} labels (`num_labels` or the size of `id2label`); only scalar heads (num_labels = 1, a reward or value model) are supported",
                path.display()
            ),
        });
    }
    Ok(fields)
}

/// The tensors of a sequence classifier with backbone `config`: the backbone's without
/// `lm_head`, then the score head.
fn layout(config: &Qwen2Config) -> Vec<HfTensor> {
    let mut tensors: Vec<HfTensor> = checkpoint_tensors(config)
        .into_iter()
        .filter(|tensor| tensor.key != "lm_head.weight")
        .collect();
    tensors.push(HfTensor {
        key: SCORE_KEY.into(),
        shape: vec![1, config.hidden_size],
    });
    tensors
}

impl<B: Backend> Qwen2ForSequenceClassification<B> {
    /// Loads a Hugging Face `Qwen2ForSequenceClassification` snapshot (`config.json` with
    /// `num_labels = 1`, safetensors single or sharded, f32/bf16/f16) onto `device`, checking
    /// every key and shape as [`load_pretrained`](super::load_pretrained) does.
    ///
    /// # Errors
    /// The errors of [`load_pretrained`](super::load_pretrained);
    /// [`CoreError::MissingTensor`] naming `score.weight` for a causal-LM checkpoint (build a
    /// reward model from one with
    /// [`from_policy`](Qwen2ForSequenceClassification::from_policy));
    /// [`CoreError::UnsupportedConfig`] (field `num_labels`) for a head with other than one
    /// label.
    pub fn from_pretrained(
        dir: &Path,
        options: LoadOptions,
        device: &B::Device,
    ) -> Result<(Self, LoadReport), CoreError> {
        let config_path = dir.join("config.json");
        let config = Qwen2Config::from_file(&config_path)?;
        let head = read_head_fields(&config_path)?;
        let reader = CheckpointReader::open(dir)?;
        let mut source = ReaderSource::new(&reader);
        // The backbone is built without an `lm_head` (sequence classifiers have none).
        let backbone_config = Qwen2Config {
            tie_word_embeddings: true,
            ..config.clone()
        };
        let mut model = build_model::<B>(&backbone_config, &mut source, device)?;
        model.config = config;
        let hidden = model.config.hidden_size;
        // `[1, hidden]` row-major is `[hidden, 1]` row-major: no transpose needed.
        let data = source.take(SCORE_KEY, &[1, hidden])?;
        let weight = Tensor::from_data(TensorData::new(data, [hidden, 1]), device);
        let report = source.finish(options, |key| key.ends_with("rotary_emb.inv_freq"))?;
        Ok((Self::new(model, weight, head.pad_token_id), report))
    }

    /// Writes `dir/config.json` (`architectures: ["Qwen2ForSequenceClassification"]`,
    /// `num_labels: 1`, `pad_token_id`) and the safetensors weights in Hugging Face's layout,
    /// each file replaced atomically; LoRA adapters are merged into the saved weights.
    ///
    /// # Errors
    /// [`CoreError::Io`] / [`CoreError::Safetensors`] naming the file that could not be written.
    pub fn save_pretrained(&self, dir: &Path, options: SaveOptions) -> Result<(), CoreError> {
        let config = self.config();
        let architecture = config.architecture("ForSequenceClassification");
        let mut json = config_json(config, &architecture, options, dir)?;
        json.insert("num_labels".into(), json!(1));
        json.insert("id2label".into(), json!({"0": "LABEL_0"}));
        json.insert("label2id".into(), json!({"LABEL_0": 0}));
        if let Some(pad) = self.pad_token_id {
            json.insert("pad_token_id".into(), json!(pad));
        }
        let mut tensors: BTreeMap<String, Vec<f32>> = export_tensors(&self.model);
        let score = self
            .score
            .weight
            .val()
            .into_data()
            .convert::<f32>()
            .into_vec::<f32>()
            .unwrap_or_default();
        tensors.insert(SCORE_KEY.into(), score);
        write_snapshot(dir, &json, &layout(config), &tensors, options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_drops_lm_head_and_adds_score() {
        let config = Qwen2Config {
            tie_word_embeddings: false,
            ..Qwen2Config::tiny()
        };
        let keys: Vec<String> = layout(&config).into_iter().map(|t| t.key).collect();
        assert!(!keys.iter().any(|k| k == "lm_head.weight"));
        assert_eq!(keys.last().map(String::as_str), Some(SCORE_KEY));
    }
}
