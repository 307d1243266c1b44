//! Backend choices of the facade: the CPU backend (default feature) and CUDA (`cuda` feature).

use std::path::Path;
use std::sync::Arc;

use agent_rl_core::weights::{LoadOptions, load_pretrained};
use agent_rl_core::{BurnPolicy, ChatTokenizer, CoreError};
use anyhow::Context;
use burn::prelude::Backend;

/// The CPU backend the tests and the demo run on (burn's `Flex` by default; `ndarray` when only
/// that feature is on). Measured fastest correct CPU backend on our 2-core machines (README).
#[cfg(feature = "flex")]
pub type CpuBackend = burn::backend::Flex;
/// The CPU backend the tests and the demo run on.
#[cfg(all(not(feature = "flex"), feature = "ndarray"))]
pub type CpuBackend = burn::backend::NdArray<f32>;

/// Training backend on the CPU.
#[cfg(any(feature = "flex", feature = "ndarray"))]
pub type CpuTrainBackend = burn::backend::Autodiff<CpuBackend>;

/// burn's CUDA backend in f32 (kernels compiled with NVRTC at run time).
#[cfg(feature = "cuda")]
pub type CudaBackend = burn::backend::Cuda<f32, i32>;

/// Where to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceKind {
    /// The CPU backend.
    Cpu,
    /// The first CUDA GPU.
    Cuda,
}

impl std::str::FromStr for DeviceKind {
    type Err = CoreError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "cpu" => Ok(Self::Cpu),
            "cuda" => Ok(Self::Cuda),
            other => Err(CoreError::InvalidArgument {
                field: "device".into(),
                reason: format!("`{other}`: expected `cpu` or `cuda`"),
            }),
        }
    }
}

/// Checks that a CUDA device can be created here, without panicking when the driver is absent.
///
/// # Errors
/// [`CoreError::DeviceUnavailable`] when the binary lacks the `cuda` feature or no driver/GPU
/// is found.
pub fn probe_cuda() -> Result<(), CoreError> {
    #[cfg(feature = "cuda")]
    {
        let has_driver = [
            "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
            "/usr/lib64/libcuda.so.1",
            "/usr/lib/wsl/lib/libcuda.so.1",
        ]
        .iter()
        .any(|p| std::path::Path::new(p).exists())
            || std::env::var("LD_LIBRARY_PATH")
                .unwrap_or_default()
                .split(':')
                .any(|dir| std::path::Path::new(dir).join("libcuda.so.1").exists());
        if !has_driver {
            return Err(CoreError::DeviceUnavailable {
                device: "cuda".into(),
                reason: "libcuda.so.1 not found".into(),
            });
        }
        let probe = std::panic::catch_unwind(|| {
            use burn::prelude::*;
            let device = burn::backend::cuda::CudaDevice::default();
            Tensor::<CudaBackend, 1>::ones([4], &device)
                .sum()
                .into_scalar()
        });
        match probe {
            Ok(_) => Ok(()),
            Err(_) => Err(CoreError::DeviceUnavailable {
                device: "cuda".into(),
                reason: "creating the CUDA device failed".into(),
            }),
        }
    }
    #[cfg(not(feature = "cuda"))]
    Err(CoreError::DeviceUnavailable {
        device: "cuda".into(),
        reason: "this binary was built without the `cuda` feature (cargo build --features cuda)"
            .into(),
    })
}

/// The error of a binary built without a CPU backend (`--no-default-features --features cuda`)
/// asked to run on the CPU.
pub fn cpu_unavailable() -> CoreError {
    CoreError::DeviceUnavailable {
        device: "cpu".into(),
        reason: "this binary was built without a CPU backend (features `flex` or `ndarray`); \
                 pass --device cuda"
            .into(),
    }
}

/// Loads a Hugging Face snapshot directory (`config.json`, safetensors, tokenizer files) as a
/// [`BurnPolicy`] on `device`.
///
/// # Errors
/// Unreadable tokenizer files, weights that do not load (the directory named), or a tokenizer
/// whose ids exceed the model's vocabulary.
pub fn load_policy<B: Backend>(dir: &Path, device: &B::Device) -> anyhow::Result<BurnPolicy<B>> {
    let tokenizer = Arc::new(ChatTokenizer::from_dir(dir)?);
    let (model, _) = load_pretrained::<B>(dir, LoadOptions::default(), device)
        .with_context(|| format!("loading {}", dir.display()))?;
    tokenizer.check_model_vocab(model.config().vocab_size)?;
    Ok(BurnPolicy::new(model, tokenizer))
}

/// Work generic over the backend, given a loaded policy by [`with_policy`].
pub trait PolicyJob {
    /// What the job returns.
    type Output;

    /// Runs the job with the policy, on backend `B`.
    ///
    /// # Errors
    /// Whatever the job fails with.
    fn run<B: Backend>(self, policy: BurnPolicy<B>) -> anyhow::Result<Self::Output>;
}

/// Work generic over the backend, given the device to run on by [`with_backend`].
pub trait BackendJob {
    /// What the job returns.
    type Output;

    /// Runs the job on backend `B`'s `device`.
    ///
    /// # Errors
    /// Whatever the job fails with.
    fn run<B: Backend>(self, device: B::Device) -> anyhow::Result<Self::Output>;
}

/// Runs `job` on the backend `device` names, on its default device (CUDA is probed first with
/// [`probe_cuda`]).
///
/// # Errors
/// CUDA unavailable, no CPU backend compiled in, or the job fails.
pub fn with_backend<J: BackendJob>(device: DeviceKind, job: J) -> anyhow::Result<J::Output> {
    match device {
        DeviceKind::Cpu => {
            #[cfg(any(feature = "flex", feature = "ndarray"))]
            {
                job.run::<CpuBackend>(Default::default())
            }
            #[cfg(not(any(feature = "flex", feature = "ndarray")))]
            Err(cpu_unavailable().into())
        }
        DeviceKind::Cuda => {
            probe_cuda()?;
            #[cfg(feature = "cuda")]
            {
                job.run::<CudaBackend>(Default::default())
            }
            #[cfg(not(feature = "cuda"))]
            unreachable!("probe_cuda fails without the cuda feature")
        }
    }
}

/// Loads the snapshot in `model_dir` ([`load_policy`]) on the backend `device` names (its default
/// device; CUDA is probed first with [`probe_cuda`]) and runs `job` with it.
///
/// # Errors
/// CUDA unavailable, the snapshot does not load, or the job fails.
pub fn with_policy<J: PolicyJob>(
    model_dir: &Path,
    device: DeviceKind,
    job: J,
) -> anyhow::Result<J::Output> {
    /// [`load_policy`], then the job.
    struct Loaded<'a, J> {
        model_dir: &'a Path,
        job: J,
    }
    impl<J: PolicyJob> BackendJob for Loaded<'_, J> {
        type Output = J::Output;
        fn run<B: Backend>(self, device: B::Device) -> anyhow::Result<J::Output> {
            self.job.run(load_policy::<B>(self.model_dir, &device)?)
        }
    }
    with_backend(device, Loaded { model_dir, job })
}
