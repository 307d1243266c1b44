//! [`LoraConfig`]: which projections get low-rank adapters, their rank, scale, dropout and
//! initialisation (PEFT's `LoraConfig` fields, same meanings).

use serde::{Deserialize, Serialize};

use super::base_dtype::BaseDtype;
use crate::error::CoreError;

/// One linear projection of a Qwen2 decoder layer, by its Hugging Face module name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoraTarget {
    /// `self_attn.q_proj` (a slice of the fused `qkv_proj`).
    QProj,
    /// `self_attn.k_proj` (a slice of the fused `qkv_proj`).
    KProj,
    /// `self_attn.v_proj` (a slice of the fused `qkv_proj`).
    VProj,
    /// `self_attn.o_proj`.
    OProj,
    /// `mlp.gate_proj` (a slice of the fused `gate_up_proj`).
    GateProj,
    /// `mlp.up_proj` (a slice of the fused `gate_up_proj`).
    UpProj,
    /// `mlp.down_proj`.
    DownProj,
}

impl LoraTarget {
    /// Every projection, in layer order (what `"all-linear"` means: PEFT leaves the output
    /// layer `lm_head` out).
    pub const ALL: [LoraTarget; 7] = [
        Self::QProj,
        Self::KProj,
        Self::VProj,
        Self::OProj,
        Self::GateProj,
        Self::UpProj,
        Self::DownProj,
    ];

    /// The HF module name, e.g. `q_proj`.
    pub fn name(self) -> &'static str {
        match self {
            Self::QProj => "q_proj",
            Self::KProj => "k_proj",
            Self::VProj => "v_proj",
            Self::OProj => "o_proj",
            Self::GateProj => "gate_proj",
            Self::UpProj => "up_proj",
            Self::DownProj => "down_proj",
        }
    }

    /// The HF module path inside a decoder layer, e.g. `self_attn.q_proj`.
    pub fn module_path(self) -> &'static str {
        match self {
            Self::QProj => "self_attn.q_proj",
            Self::KProj => "self_attn.k_proj",
            Self::VProj => "self_attn.v_proj",
            Self::OProj => "self_attn.o_proj",
            Self::GateProj => "mlp.gate_proj",
            Self::UpProj => "mlp.up_proj",
            Self::DownProj => "mlp.down_proj",
        }
    }

    /// The target named `name` (`q_proj`, …, `down_proj`).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.name() == name)
    }
}

/// How the adapter matrices start (PEFT's `init_lora_weights`). `B` is always zero, so a fresh
/// adapter leaves the model's outputs unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoraInit {
    /// `A ~ U(-1/sqrt(in), 1/sqrt(in))`: PyTorch's `kaiming_uniform_(a = sqrt(5))`, PEFT's
    /// default (`init_lora_weights = true`).
    #[default]
    Kaiming,
    /// `A ~ N(0, 1/r)` (PEFT's `init_lora_weights = "gaussian"`).
    Gaussian,
}

/// Low-rank adapters (LoRA, [Hu et al. 2021](https://arxiv.org/abs/2106.09685)) on a Qwen2
/// model: each targeted projection computes `W x + scale · B A x` with the base weight `W`
/// frozen, `A` `[r, in]`, `B` `[out, r]` and `scale = alpha / r` (`alpha / sqrt(r)` with
/// rsLoRA). The fields mean what PEFT's `LoraConfig` fields of the same names mean.
///
/// ```
/// use agent_rl_core::lora::LoraConfig;
/// let config = LoraConfig { r: 16, alpha: 32.0, ..LoraConfig::default() };
/// config.validate()?;
/// assert_eq!(config.scale(), 2.0);
/// assert!(LoraConfig { r: 0, ..LoraConfig::default() }.validate().is_err());
/// # Ok::<(), agent_rl_core::CoreError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LoraConfig {
    /// Rank of the adapters (PEFT `r`). Default 8; at least 1.
    pub r: usize,
    /// Scale numerator (PEFT `lora_alpha`). Default 16; must be > 0.
    pub alpha: f64,
    /// Dropout on the adapter's input during training (PEFT `lora_dropout`). Default 0; in
    /// `[0, 1)`.
    pub dropout: f64,
    /// HF projection names (`q_proj`, `k_proj`, `v_proj`, `o_proj`, `gate_proj`, `up_proj`,
    /// `down_proj`) or the single entry `all-linear`. Default `all-linear`.
    pub target_modules: Vec<String>,
    /// rsLoRA scaling `alpha / sqrt(r)` instead of `alpha / r`
    /// ([Kalajdzievski 2023](https://arxiv.org/abs/2312.03732)). Default false.
    pub use_rslora: bool,
    /// Initialisation of `A` (`B` starts at zero). Default [`LoraInit::Kaiming`].
    pub init: LoraInit,
    /// Storage type of the frozen base weights (`"f32"`, `"bf16"`, `"f16"`): see
    /// [`BaseDtype`]. Default `f32`. Not part of PEFT's adapter files (it is how this run holds
    /// the base, not a property of the adapter).
    pub base_dtype: BaseDtype,
}

impl Default for LoraConfig {
    fn default() -> Self {
        Self {
            r: 8,
            alpha: 16.0,
            dropout: 0.0,
            target_modules: vec!["all-linear".to_owned()],
            use_rslora: false,
            init: LoraInit::Kaiming,
            base_dtype: BaseDtype::F32,
        }
    }
}

impl LoraConfig {
    /// Checks every field.
    ///
    /// # Errors
    /// [`CoreError::InvalidArgument`] naming the field (`lora.r`, `lora.alpha`, `lora.dropout`,
    /// `lora.target_modules`) and the valid range.
    pub fn validate(&self) -> Result<(), CoreError> {
        let invalid = |field: &str, reason: String| CoreError::InvalidArgument {
            field: format!("lora.{field}"),
            reason,
        };
        if self.r == 0 {
            return Err(invalid("r", "is 0; the rank must be at least 1".into()));
        }
        if !(self.alpha > 0.0 && self.alpha.is_finite()) {
            return Err(invalid(
                "alpha",
                format!("is {}; must be a finite number > 0", self.alpha),
            ));
        }
        if !(0.0..1.0).contains(&self.dropout) {
            return Err(invalid(
                "dropout",
                format!("is {}; must be in [0, 1)", self.dropout),
            ));
        }
        self.targets().map(|_| ())
    }

    /// The targeted projections, in layer order, without repeats.
    ///
    /// # Errors
    /// [`CoreError::InvalidArgument`] (`lora.target_modules`) for an empty list or a name that
    /// is not a projection of the model.
    pub fn targets(&self) -> Result<Vec<LoraTarget>, CoreError> {
        let invalid = |reason: String| CoreError::InvalidArgument {
            field: "lora.target_modules".into(),
            reason,
        };
        if self.target_modules.is_empty() {
            return Err(invalid(
                "is empty; name projections (q_proj, ..., down_proj) or use `all-linear`".into(),
            ));
        }
        let mut targets = Vec::new();
        for name in &self.target_modules {
            if name == "all-linear" {
                targets.extend(LoraTarget::ALL);
                continue;
            }
            let target = LoraTarget::from_name(name).ok_or_else(|| {
                invalid(format!(
                    "unknown module `{name}`; expected one of q_proj, k_proj, v_proj, o_proj, \
                     gate_proj, up_proj, down_proj, or `all-linear`"
                ))
            })?;
            targets.push(target);
        }
        targets.sort();
        targets.dedup();
        Ok(targets)
    }

    /// This config with `target_modules` spelled out in layer order (`all-linear` resolved, as
    /// PEFT writes it to `adapter_config.json`) and `base_dtype` `f32` (adapter files do not
    /// record it), for comparing the adapters two configs describe; unchanged otherwise when the
    /// list is invalid.
    pub fn resolved(&self) -> LoraConfig {
        let mut out = self.clone();
        out.base_dtype = BaseDtype::F32;
        if let Ok(targets) = self.targets() {
            out.target_modules = targets.iter().map(|t| t.name().to_owned()).collect();
        }
        out
    }

    /// The factor on `B A x`: `alpha / r`, or `alpha / sqrt(r)` with rsLoRA.
    pub fn scale(&self) -> f64 {
        let rank = self.r.max(1) as f64;
        if self.use_rslora {
            self.alpha / rank.sqrt()
        } else {
            self.alpha / rank
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field_of(config: LoraConfig) -> String {
        match config.validate() {
            Err(CoreError::InvalidArgument { field, .. }) => field,
            other => panic!("expected a field error, got {other:?}"),
        }
    }

    #[test]
    fn bad_settings_name_their_field() {
        let base = LoraConfig::default();
        assert!(base.validate().is_ok());
        assert_eq!(
            field_of(LoraConfig {
                r: 0,
                ..base.clone()
            }),
            "lora.r"
        );
        for alpha in [0.0, -1.0, f64::NAN] {
            assert_eq!(
                field_of(LoraConfig {
                    alpha,
                    ..base.clone()
                }),
                "lora.alpha"
            );
        }
        for dropout in [-0.1, 1.0] {
            let config = LoraConfig {
                dropout,
                ..base.clone()
            };
            assert_eq!(field_of(config), "lora.dropout");
        }
        let unknown = LoraConfig {
            target_modules: vec!["q_proj".into(), "lm_head".into()],
            ..base.clone()
        };
        assert_eq!(field_of(unknown), "lora.target_modules");
        let empty = LoraConfig {
            target_modules: Vec::new(),
            ..base
        };
        assert_eq!(field_of(empty), "lora.target_modules");
    }

    #[test]
    fn targets_and_scale() {
        let config = LoraConfig {
            r: 4,
            alpha: 8.0,
            target_modules: vec!["v_proj".into(), "q_proj".into(), "q_proj".into()],
            ..LoraConfig::default()
        };
        assert_eq!(
            config.targets().expect("valid targets"),
            [LoraTarget::QProj, LoraTarget::VProj]
        );
        assert_eq!(config.scale(), 2.0);
        let rs = LoraConfig {
            use_rslora: true,
            ..config
        };
        assert_eq!(rs.scale(), 4.0);
        assert_eq!(
            LoraConfig::default().targets().expect("valid targets"),
            LoraTarget::ALL
        );
    }

    #[test]
    fn toml_like_round_trip() {
        let text = r#"{"r": 4, "alpha": 8, "target_modules": ["q_proj"], "init": "gaussian"}"#;
        let config: LoraConfig = serde_json::from_str(text).expect("a valid config");
        assert_eq!(config.init, LoraInit::Gaussian);
        assert_eq!(config.base_dtype, BaseDtype::F32);
        let half: LoraConfig = serde_json::from_str(r#"{"base_dtype": "bf16"}"#).expect("valid");
        assert_eq!(half.base_dtype, BaseDtype::Bf16);
        assert_eq!(half.resolved(), LoraConfig::default().resolved());
        assert!(serde_json::from_str::<LoraConfig>(r#"{"base_dtype": "f8"}"#).is_err());
        assert_eq!(config.dropout, 0.0);
        assert!(serde_json::from_str::<LoraConfig>(r#"{"rank": 4}"#).is_err());
    }
}
