//! Activation checkpointing per decoder layer: the training forward keeps only each layer's
//! input, and the backward pass re-runs one layer at a time under autodiff.
//!
//! # How
//! burn 0.21's `Autodiff<B, BalancedCheckpointing>` recomputes only the ops it marks
//! memory-bound and keeps every matrix product's inputs, which on a transformer saves little. A
//! custom autodiff node that re-runs a layer inside its own backward step is not possible either:
//! the graph being differentiated stays locked while its steps run, and the nested `backward()`
//! of the recomputed layer waits on that lock when it cleans up (it locks every graph).
//!
//! So the pass is cut into segments with only burn's public API, on every
//! [`AutodiffBackend`]:
//! 1. the layers run on the inner backend (no graph is recorded), and each layer's input is kept;
//! 2. the last layer's output becomes a fresh leaf that requires a gradient, and the caller builds
//!    the rest of the model (final norm, head, loss) on it as usual;
//! 3. [`CheckpointedLayers::backward`] differentiates the loss, then walks the layers backwards:
//!    re-run layer `i` on its kept input (a leaf), differentiate `sum(output * upstream)`, which
//!    gives the layer's parameter gradients and the gradient of its input, the next upstream;
//!    last, `sum(entry * upstream)` reaches whatever produced the first layer's input (the
//!    embedding). Each segment's parameter gradients are moved into the loss's gradients, so
//!    `GradientsParams::from_grads(grads, &model)` sees one set, as without checkpointing.
//!
//! Peak memory holds the layers' inputs plus one layer's activations instead of every layer's,
//! for the price of a second forward pass of the layers. The gradients are those of the plain
//! pass: the same operations run on the same values.

use burn::module::{AutodiffModule, Module, ModuleVisitor, Param};
use burn::prelude::*;
use burn::tensor::backend::AutodiffBackend;

use super::decoder_layer::DecoderLayer;
use super::mask::{AttentionInputs, positions_from_mask};
use super::qwen2::Qwen2ForCausalLm;

/// The decoder layers of one forward pass, run with activation checkpointing.
///
/// Build it with [`CheckpointedLayers::forward`] (or
/// [`Qwen2ForCausalLm::forward_hidden_checkpointed`]), compute the loss from
/// [`output`](Self::output), then call [`backward`](Self::backward) with that loss instead of
/// `loss.backward()`.
#[derive(Debug)]
pub struct CheckpointedLayers<B: AutodiffBackend> {
    layers: Vec<DecoderLayer<B>>,
    attention: AttentionInputs<B>,
    /// The first layer's input, still attached to the graph that produced it.
    entry: Tensor<B, 3>,
    /// Each layer's input value (`inputs[0]` is `entry`'s).
    inputs: Vec<Tensor<B::InnerBackend, 3>>,
    /// A leaf holding the last layer's output.
    exit: Tensor<B, 3>,
}

impl<B: AutodiffBackend> CheckpointedLayers<B> {
    /// Runs `layers` over `x` without recording their activations.
    ///
    /// # Shapes
    /// - `x`: `[batch, seq, hidden]`; `attention` built for that batch (no KV cache)
    pub fn forward(
        layers: &[DecoderLayer<B>],
        x: Tensor<B, 3>,
        attention: &AttentionInputs<B>,
    ) -> Self {
        let inner_attention = attention.inner();
        let mut inputs = Vec::with_capacity(layers.len());
        let mut hidden = x.clone().inner();
        for layer in layers {
            inputs.push(hidden.clone());
            hidden = layer.valid().forward(hidden, &inner_attention, None);
        }
        Self {
            layers: layers.to_vec(),
            attention: attention.clone(),
            entry: x,
            inputs,
            exit: Tensor::from_inner(hidden).require_grad(),
        }
    }

    /// The last layer's output: build the rest of the model on it.
    ///
    /// # Shapes
    /// - returns `[batch, seq, hidden]`
    pub fn output(&self) -> Tensor<B, 3> {
        self.exit.clone()
    }

    /// The gradients of `loss` (a scalar built from [`output`](Self::output)) with respect to
    /// every parameter of `module`, as `loss.backward()` would give them without checkpointing.
    ///
    /// `module` is the model whose parameters the caller reads the gradients of (the whole
    /// model: the layers and whatever produced their input). Re-runs each layer once.
    pub fn backward<M: Module<B>>(mut self, loss: Tensor<B, 1>, module: &M) -> B::Gradients {
        let mut grads = loss.backward();
        let Some(mut upstream) = self.exit.grad_remove(&mut grads) else {
            return grads;
        };
        while let (Some(layer), Some(input)) = (self.layers.pop(), self.inputs.pop()) {
            let x = Tensor::<B, 3>::from_inner(input).require_grad();
            let out = layer.forward(x.clone(), &self.attention, None);
            let mut segment = seeded(out, upstream).backward();
            upstream = match x.grad_remove(&mut segment) {
                Some(grad) => grad,
                None => x.inner().zeros_like(),
            };
            module.visit(&mut MoveGrads {
                from: &mut segment,
                to: &mut grads,
            });
        }
        // Whatever produced the entry (the embedding) gets its gradient; on an untracked entry
        // (a frozen embedding) this records nothing and finds no gradient.
        let mut segment = seeded(self.entry, upstream).backward();
        module.visit(&mut MoveGrads {
            from: &mut segment,
            to: &mut grads,
        });
        grads
    }
}

/// `sum(out * upstream)`: its gradient with respect to `out` is `upstream`.
fn seeded<B: AutodiffBackend>(
    out: Tensor<B, 3>,
    upstream: Tensor<B::InnerBackend, 3>,
) -> Tensor<B, 1> {
    (out * Tensor::from_inner(upstream)).sum()
}

/// Moves each parameter's gradient from one gradient set into another (adding to what is there:
/// a tied embedding gets gradients from the head and from the input).
struct MoveGrads<'a, B: AutodiffBackend> {
    from: &'a mut B::Gradients,
    to: &'a mut B::Gradients,
}

impl<B: AutodiffBackend> ModuleVisitor<B> for MoveGrads<'_, B> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
        let tensor = param.val();
        if let Some(grad) = tensor.grad_remove(self.from) {
            let total = match tensor.grad_remove(self.to) {
                Some(earlier) => earlier + grad,
                None => grad,
            };
            tensor.grad_replace(self.to, total);
        }
    }
}

impl<B: AutodiffBackend> Qwen2ForCausalLm<B> {
    /// [`forward_hidden`](Self::forward_hidden) (without a cache) with activation checkpointing:
    /// the final hidden states and the layers to pass the loss to
    /// ([`CheckpointedLayers::backward`]).
    ///
    /// # Shapes
    /// - `input_ids`: `[batch, seq]` → `[batch, seq, hidden]`
    pub fn forward_hidden_checkpointed(
        &self,
        input_ids: Tensor<B, 2, Int>,
        mask: &[Vec<bool>],
    ) -> (Tensor<B, 3>, CheckpointedLayers<B>) {
        let device = input_ids.device();
        let positions: Vec<Vec<usize>> = mask.iter().map(|row| positions_from_mask(row)).collect();
        let inputs = AttentionInputs::new(mask, &positions, 0, self.config(), &device);
        let layers = CheckpointedLayers::forward(&self.layers, self.embed(input_ids), &inputs);
        (self.norm.forward(layers.output()), layers)
    }
}

/// The gradients of `loss` for `module`'s parameters: `loss.backward()`, or
/// [`CheckpointedLayers::backward`] when the forward that built `loss` was checkpointed.
pub fn backward_through<B: AutodiffBackend, M: Module<B>>(
    loss: Tensor<B, 1>,
    layers: Option<CheckpointedLayers<B>>,
    module: &M,
) -> B::Gradients {
    match layers {
        Some(layers) => layers.backward(loss, module),
        None => loss.backward(),
    }
}
