//! AdamW configured like PyTorch's `torch.optim.AdamW` rather than burn's defaults.

use burn::module::AutodiffModule;
use burn::optim::adaptor::OptimizerAdaptor;
use burn::optim::{AdamW, AdamWConfig};
use burn::tensor::backend::AutodiffBackend;

use crate::config::OptimizerConfig;

/// burn's [`AdamWConfig`] with every setting taken from `config`.
///
/// burn's defaults differ from PyTorch's (ε 1e-5 vs 1e-8, weight decay 1e-4 vs the configured
/// value), so all of them are set explicitly. No per-tensor clipping is attached: clip by the global
/// norm with [`clip_grad_norm`](crate::clip_grad_norm) before stepping, as PyTorch/TRL do.
pub fn adamw_config(config: &OptimizerConfig) -> AdamWConfig {
    AdamWConfig::new()
        .with_beta_1(config.adam_beta1)
        .with_beta_2(config.adam_beta2)
        .with_epsilon(config.adam_epsilon)
        .with_weight_decay(config.weight_decay)
        .with_amsgrad(false)
        .with_cautious_weight_decay(false)
        .with_grad_clipping(None)
}

/// An AdamW optimiser for module `M` configured by [`adamw_config`].
pub fn init_adamw<B: AutodiffBackend, M: AutodiffModule<B>>(
    config: &OptimizerConfig,
) -> OptimizerAdaptor<AdamW, M, B> {
    adamw_config(config).init()
}
