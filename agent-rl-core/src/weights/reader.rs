//! Memory-mapped reading of `model.safetensors` or a sharded `model.safetensors.index.json`.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use memmap2::Mmap;
use safetensors::tensor::{Dtype, Metadata, SafeTensors};
use serde::{Deserialize, Serialize};

use crate::error::CoreError;

/// Storage dtypes this crate reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StorageDtype {
    /// 32-bit float.
    F32,
    /// bfloat16.
    Bf16,
    /// IEEE half.
    F16,
}

impl StorageDtype {
    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            StorageDtype::F32 => 4,
            StorageDtype::Bf16 | StorageDtype::F16 => 2,
        }
    }

    /// HF's `torch_dtype` name.
    pub fn torch_name(self) -> &'static str {
        match self {
            StorageDtype::F32 => "float32",
            StorageDtype::Bf16 => "bfloat16",
            StorageDtype::F16 => "float16",
        }
    }
}

struct Shard {
    path: PathBuf,
    mmap: Mmap,
    data_start: usize,
    metadata: Metadata,
}

/// Read access to every tensor of a checkpoint directory, one memory map per shard.
///
/// Tensors are converted to f32 one at a time on request, so loading never holds two full
/// copies of the weights.
pub struct CheckpointReader {
    /// The file named in errors about the checkpoint as a whole (the single file or the index).
    pub origin: PathBuf,
    shards: Vec<Shard>,
    /// Key → index into `shards`.
    locations: BTreeMap<String, usize>,
}

impl std::fmt::Debug for CheckpointReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckpointReader")
            .field("origin", &self.origin)
            .field("tensors", &self.locations.len())
            .finish()
    }
}

#[derive(Deserialize)]
struct IndexFile {
    weight_map: BTreeMap<String, String>,
}

fn open_shard(path: &Path) -> Result<Shard, CoreError> {
    let file = File::open(path).map_err(|source| CoreError::Io {
        path: path.to_owned(),
        source,
    })?;
    // SAFETY: the file is opened read-only and not modified by this process while mapped; a
    // concurrent writer would be a misuse this crate cannot prevent (as with every mmap loader).
    #[allow(unsafe_code)]
    let mmap = unsafe { Mmap::map(&file) }.map_err(|source| CoreError::Io {
        path: path.to_owned(),
        source,
    })?;
    let (header, metadata) =
        SafeTensors::read_metadata(&mmap).map_err(|err| CoreError::Safetensors {
            file: path.to_owned(),
            reason: err.to_string(),
        })?;
    Ok(Shard {
        path: path.to_owned(),
        data_start: 8 + header,
        metadata,
        mmap,
    })
}

/// True for a relative path made of plain names only (`a/b.safetensors`, not `../x`, `/x`,
/// `C:\\x` or an empty name): such a path stays inside the directory it is joined to.
fn is_plain_relative(name: &str) -> bool {
    let path = Path::new(name);
    !name.is_empty()
        && path.components().all(|part| {
            matches!(
                part,
                std::path::Component::Normal(_) | std::path::Component::CurDir
            )
        })
}

impl CheckpointReader {
    /// Opens `dir/model.safetensors.index.json` if present, else `dir/model.safetensors`.
    ///
    /// # Errors
    /// Missing or unreadable files, a corrupt header or index, an index naming a missing shard
    /// or a shard outside `dir` ([`CoreError::ShardOutsideDirectory`]).
    pub fn open(dir: &Path) -> Result<Self, CoreError> {
        let index_path = dir.join("model.safetensors.index.json");
        if index_path.exists() {
            let text = std::fs::read_to_string(&index_path).map_err(|source| CoreError::Io {
                path: index_path.clone(),
                source,
            })?;
            let index: IndexFile =
                serde_json::from_str(&text).map_err(|source| CoreError::Json {
                    path: index_path.clone(),
                    source,
                })?;
            let mut files: Vec<&String> = index.weight_map.values().collect();
            files.sort();
            files.dedup();
            if let Some(outside) = files.iter().find(|name| !is_plain_relative(name)) {
                return Err(CoreError::ShardOutsideDirectory {
                    index: index_path,
                    shard: (*outside).clone(),
                });
            }
            let shards = files
                .iter()
                .map(|name| open_shard(&dir.join(name)))
                .collect::<Result<Vec<_>, _>>()?;
            let mut locations = BTreeMap::new();
            for (key, file) in &index.weight_map {
                let shard = files
                    .iter()
                    .position(|name| *name == file)
                    .unwrap_or_default();
                if shards[shard].metadata.info(key).is_none() {
                    return Err(CoreError::MissingTensor {
                        file: shards[shard].path.clone(),
                        key: key.clone(),
                    });
                }
                locations.insert(key.clone(), shard);
            }
            Ok(Self {
                origin: index_path,
                shards,
                locations,
            })
        } else {
            Self::open_file(&dir.join("model.safetensors"))
        }
    }

    /// Opens one safetensors file (e.g. a PEFT `adapter_model.safetensors`).
    ///
    /// # Errors
    /// A missing or unreadable file, a corrupt header.
    pub fn open_file(path: &Path) -> Result<Self, CoreError> {
        let shard = open_shard(path)?;
        let locations = shard
            .metadata
            .tensors()
            .into_keys()
            .map(|key| (key, 0))
            .collect();
        Ok(Self {
            origin: path.to_owned(),
            shards: vec![shard],
            locations,
        })
    }

    /// All tensor keys, sorted.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.locations.keys().map(String::as_str)
    }

    /// The file that holds `key`, or the checkpoint origin when absent.
    pub fn file_of(&self, key: &str) -> &Path {
        self.locations
            .get(key)
            .map_or(&self.origin, |&shard| &self.shards[shard].path)
    }

    /// Shape of `key` as stored.
    pub fn shape(&self, key: &str) -> Option<Vec<usize>> {
        let shard = &self.shards[*self.locations.get(key)?];
        shard.metadata.info(key).map(|info| info.shape.clone())
    }

    /// The data of `key` converted to f32, after checking its shape against `expected`.
    ///
    /// # Errors
    /// [`CoreError::MissingTensor`], [`CoreError::ShapeMismatch`],
    /// [`CoreError::UnsupportedDtype`], [`CoreError::Safetensors`] for out-of-file offsets,
    /// [`CoreError::NonFiniteTensor`] for NaN or infinite values.
    pub fn read_f32(&self, key: &str, expected: &[usize]) -> Result<Vec<f32>, CoreError> {
        let &index = self
            .locations
            .get(key)
            .ok_or_else(|| CoreError::MissingTensor {
                file: self.origin.clone(),
                key: key.into(),
            })?;
        let shard = &self.shards[index];
        let info = shard
            .metadata
            .info(key)
            .ok_or_else(|| CoreError::MissingTensor {
                file: shard.path.clone(),
                key: key.into(),
            })?;
        if info.shape != expected {
            return Err(CoreError::ShapeMismatch {
                file: shard.path.clone(),
                key: key.into(),
                expected: expected.to_vec(),
                found: info.shape.clone(),
            });
        }
        let (start, end) = info.data_offsets;
        let bytes = shard
            .mmap
            .get(shard.data_start + start..shard.data_start + end)
            .ok_or_else(|| CoreError::Safetensors {
                file: shard.path.clone(),
                reason: format!("tensor `{key}` lies outside the file"),
            })?;
        let count: usize = info.shape.iter().product();
        let unsupported = || CoreError::UnsupportedDtype {
            file: shard.path.clone(),
            key: key.into(),
            dtype: format!("{:?}", info.dtype),
        };
        let width = match info.dtype {
            Dtype::F32 => 4,
            Dtype::BF16 | Dtype::F16 => 2,
            _ => return Err(unsupported()),
        };
        if bytes.len() != count * width {
            return Err(CoreError::Safetensors {
                file: shard.path.clone(),
                reason: format!(
                    "tensor `{key}` has {} bytes, expected {}",
                    bytes.len(),
                    count * width
                ),
            });
        }
        let values: Vec<f32> = match info.dtype {
            Dtype::F32 => bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
            Dtype::BF16 => bytes
                .chunks_exact(2)
                .map(|b| half::bf16::from_le_bytes([b[0], b[1]]).to_f32())
                .collect(),
            _ => bytes
                .chunks_exact(2)
                .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
                .collect(),
        };
        if let Some((index, &value)) = values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(CoreError::NonFiniteTensor {
                file: shard.path.clone(),
                key: key.into(),
                index,
                value,
            });
        }
        Ok(values)
    }
}
