//! Global-norm gradient clipping and AdamW with PyTorch's settings.

use agent_rl_algos::{OptimizerConfig, clip_grad_norm, init_adamw};
use burn::module::{AutodiffModule, Module, Param};
use burn::optim::{GradientsParams, Optimizer};
use burn::tensor::{Tensor, backend::Backend};

type AD = crate::B;

#[derive(Module, Debug)]
struct TwoParams<B: Backend> {
    a: Param<Tensor<B, 1>>,
    b: Param<Tensor<B, 2>>,
}

fn module() -> TwoParams<AD> {
    let device = Default::default();
    TwoParams {
        a: Param::from_tensor(Tensor::from_floats([1.0, 2.0], &device)),
        b: Param::from_tensor(Tensor::from_floats([[0.5, -1.0], [3.0, 0.0]], &device)),
    }
}

/// Gradients of `sum(a * ga) + sum(b * gb)`: exactly `ga` and `gb`.
fn grads(m: &TwoParams<AD>) -> GradientsParams {
    let device = Default::default();
    let ga = Tensor::<AD, 1>::from_floats([3.0, 0.0], &device);
    let gb = Tensor::<AD, 2>::from_floats([[0.0, 4.0], [0.0, 12.0]], &device);
    let loss = (m.a.val() * ga).sum() + (m.b.val() * gb).sum();
    GradientsParams::from_grads::<AD, _>(loss.backward(), m)
}

fn values<const D: usize>(grads: &GradientsParams, p: &Param<Tensor<AD, D>>) -> Vec<f32> {
    grads
        .get::<burn::backend::Flex, D>(p.id)
        .expect("gradient present")
        .into_data()
        .iter::<f32>()
        .collect()
}

#[test]
fn clips_by_the_global_norm_like_pytorch() {
    let m = module();
    // global norm = sqrt(9 + 16 + 144) = 13, per-tensor norms 3 and 12.65
    let (clipped, norm) = clip_grad_norm::<AD, _>(&m, grads(&m), 1.3);
    assert!((norm - 13.0).abs() < 1e-5);
    let coef = 1.3 / (13.0 + 1e-6);
    let a = values(&clipped, &m.a);
    let b = values(&clipped, &m.b);
    assert!((a[0] - 3.0 * coef).abs() < 1e-6, "{a:?}");
    assert!((b[3] - 12.0 * coef).abs() < 1e-6, "{b:?}");
    let new_norm = a.iter().chain(&b).map(|x| x * x).sum::<f32>().sqrt();
    assert!((new_norm - 1.3).abs() < 1e-4);

    let (unclipped, norm) = clip_grad_norm::<AD, _>(&m, grads(&m), 100.0);
    assert!((norm - 13.0).abs() < 1e-5);
    assert_eq!(values(&unclipped, &m.a), vec![3.0, 0.0]);
}

#[test]
fn adamw_uses_pytorch_epsilon_and_configured_decay() {
    // One step: m̂ = g, v̂ = g², so the update is lr·g/(|g| + eps) plus decoupled decay.
    // With g = 1e-6 the PyTorch eps (1e-8) gives ~0.99·lr; burn's default (1e-5) would give ~0.09·lr.
    let config = OptimizerConfig {
        weight_decay: 0.1,
        ..OptimizerConfig::default()
    };
    let lr = 0.01;
    let device = Default::default();
    let m = TwoParams::<AD> {
        a: Param::from_tensor(Tensor::from_floats([1.0, -2.0], &device)),
        b: Param::from_tensor(Tensor::zeros([1, 1], &device)),
    };
    let g = Tensor::<AD, 1>::from_floats([1e-6, -1e-6], &device);
    let loss = (m.a.val() * g).sum() + m.b.val().sum() * 0.0;
    let grads = GradientsParams::from_grads::<AD, _>(loss.backward(), &m);
    let mut optim = init_adamw::<AD, TwoParams<AD>>(&config);
    let m = optim.step(lr, m, grads);
    let a: Vec<f32> = m.a.val().into_data().iter::<f32>().collect();
    let step = lr * 1e-6 / (1e-6 + 1e-8);
    let expected = [
        1.0 * (1.0 - lr * 0.1) - step,
        -2.0 * (1.0 - lr * 0.1) + step,
    ];
    for (x, e) in a.iter().zip(expected) {
        assert!((f64::from(*x) - e).abs() < 1e-6, "{a:?} vs {expected:?}");
    }
}

#[test]
fn reference_sync_mixes_parameters_in_order() {
    use agent_rl_algos::sync_reference_model;
    type Inner = burn::backend::Flex;
    let device = Default::default();
    let policy = module().valid();
    let reference = TwoParams::<Inner> {
        a: Param::from_tensor(Tensor::from_floats([0.0, 0.0], &device)),
        b: Param::from_tensor(Tensor::from_floats([[1.0, 1.0], [1.0, 1.0]], &device)),
    };
    let synced = sync_reference_model(reference, &policy, 0.6).expect("same architecture");
    let a: Vec<f32> = synced.a.val().into_data().iter::<f32>().collect();
    let b: Vec<f32> = synced.b.val().into_data().iter::<f32>().collect();
    assert!((a[1] - 1.2).abs() < 1e-6, "{a:?}");
    assert!((b[2] - (0.6 * 3.0 + 0.4)).abs() < 1e-6, "{b:?}");

    let wrong = TwoParams::<Inner> {
        a: Param::from_tensor(Tensor::from_floats([0.0, 0.0, 0.0], &device)),
        b: Param::from_tensor(Tensor::zeros([2, 2], &device)),
    };
    assert!(sync_reference_model(wrong, &policy, 0.6).is_err());
}
