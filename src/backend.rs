//! Backend choices of the facade: the CPU backend (default feature) and CUDA (`cuda` feature).

use agent_rl_core::CoreError;

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
