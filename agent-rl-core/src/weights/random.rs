//! Seeded random weights (tests, demos, benchmarks).

use burn::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::build::{TensorSource, build_model};
use crate::config::Qwen2Config;
use crate::error::CoreError;
use crate::model::Qwen2ForCausalLm;

/// Normal(0, std) weights and biases, norms 1 + Normal(0, std), from a ChaCha8 stream: the same
/// seed gives the same model on every backend and platform.
#[derive(Debug, Clone)]
pub struct RandomSource {
    rng: ChaCha8Rng,
    std: f32,
}

impl RandomSource {
    /// A source with the given seed and standard deviation.
    pub fn new(seed: u64, std: f32) -> Self {
        Self {
            rng: ChaCha8Rng::seed_from_u64(seed),
            std,
        }
    }

    /// `count` draws of Normal(0, std).
    pub(crate) fn normals(&mut self, count: usize) -> Vec<f32> {
        (0..count).map(|_| self.std * self.normal()).collect()
    }

    fn normal(&mut self) -> f32 {
        // Box–Muller; two uniforms per sample keeps the stream simple and portable.
        let u1: f32 = self.rng.random::<f32>().max(f32::MIN_POSITIVE);
        let u2: f32 = self.rng.random();
        (-2.0 * u1.ln()).sqrt() * (std::f32::consts::TAU * u2).cos()
    }
}

impl TensorSource for RandomSource {
    fn take(&mut self, key: &str, shape: &[usize]) -> Result<Vec<f32>, CoreError> {
        let count = shape.iter().product();
        let offset = if key.ends_with("norm.weight") {
            1.0
        } else {
            0.0
        };
        Ok((0..count)
            .map(|_| offset + self.std * self.normal())
            .collect())
    }
}

/// A model of `config` with seeded random weights (std 0.02, Qwen2's `initializer_range`, unless
/// a larger `std` is wanted to make tiny test models less uniform).
///
/// # Errors
/// [`CoreError::UnsupportedConfig`] for an invalid config.
pub fn random_model<B: Backend>(
    config: &Qwen2Config,
    seed: u64,
    std: f32,
    device: &B::Device,
) -> Result<Qwen2ForCausalLm<B>, CoreError> {
    build_model(config, &mut RandomSource::new(seed, std), device)
}
