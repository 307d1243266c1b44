//! Cached virtual environments, one per [`EnvSpec`] (and interpreter): built once from the
//! first checkout of that version (`pip install '<tree>[extras]'` under the spec's
//! constraints), reused after; the tree under test is put first on `PYTHONPATH`, so the
//! installed copy only supplies the dependencies and package metadata.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use sha2::{Digest, Sha256};

use super::command::{cap_text, run_limited};
use super::env_spec::EnvSpec;
use crate::{EvalError, Result};

const COMPLETE: &str = ".agent-rl-complete";

/// The interpreter to run a spec's tests with, for the tree at `tree`.
///
/// Without a venv (nothing to install) this is the spec's interpreter itself. Otherwise the
/// venv `<cache_dir>/<repo>-<version>-<hash>` is built if it is not complete yet; its install
/// log is kept beside it (`install.log`).
///
/// # Errors
/// [`EvalError::MissingTool`] when no interpreter of the spec is found;
/// [`EvalError::Command`] when creating the venv or installing fails (the reason holds the
/// tail of pip's output), or `install_timeout` passes.
pub fn prepare_python(
    spec: &EnvSpec,
    cache_dir: &Path,
    tree: &Path,
    install_timeout: Duration,
) -> Result<PathBuf> {
    let interpreter = spec.interpreter()?;
    if !spec.needs_venv() {
        return Ok(interpreter);
    }
    // pip runs in the venv's folder: a relative cache path would point elsewhere from there.
    let cache_dir = std::path::absolute(cache_dir).map_err(|source| EvalError::Io {
        path: cache_dir.to_path_buf(),
        source,
    })?;
    let dir = cache_dir.join(venv_name(spec, &interpreter));
    let python = dir.join("bin").join("python");
    if dir.join(COMPLETE).exists() {
        return Ok(python);
    }
    let io = |source| EvalError::Io {
        path: dir.clone(),
        source,
    };
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(io)?;
    }
    std::fs::create_dir_all(&dir).map_err(io)?;
    let mut log = String::new();
    let mut step = |argv: Vec<String>| -> Result<()> {
        let mut command = Command::new(&argv[0]);
        command
            .args(&argv[1..])
            .current_dir(&dir)
            .env("PIP_DISABLE_PIP_VERSION_CHECK", "1");
        let out = run_limited(command, install_timeout, 4 << 20)?;
        log.push_str(&format!("$ {}\n{}\n", argv.join(" "), out.output));
        if out.success() {
            Ok(())
        } else {
            Err(EvalError::Command {
                command: argv.join(" "),
                reason: if out.timed_out {
                    format!("timed out after {install_timeout:?}")
                } else {
                    cap_text(&out.output, 3000)
                },
            })
        }
    };
    let venv = dir.display().to_string();
    let pip = |args: &[String]| {
        let mut argv = vec![python.display().to_string(), "-m".into(), "pip".into()];
        argv.extend(["install".into(), "-q".into()]);
        argv.extend(args.iter().cloned());
        argv
    };
    let constraints = dir.join("constraints.txt");
    let mut result = step(vec![
        interpreter.display().to_string(),
        "-m".into(),
        "venv".into(),
        venv,
    ]);
    if result.is_ok() && !spec.pip_packages.is_empty() {
        result = step(pip(&spec.pip_packages));
    }
    if result.is_ok()
        && let Some(extras) = &spec.install_extras
    {
        std::fs::write(&constraints, spec.constraints.join("\n")).map_err(io)?;
        result = step(pip(&[
            "-c".into(),
            constraints.display().to_string(),
            format!("{}[{extras}]", tree.display()),
        ]));
    }
    std::fs::write(dir.join("install.log"), &log).map_err(io)?;
    result?;
    std::fs::write(dir.join(COMPLETE), "").map_err(io)?;
    Ok(python)
}

/// `<repo, '/' → '__'>-<first version>-<12 hex of sha256(spec JSON + interpreter)>`.
fn venv_name(spec: &EnvSpec, interpreter: &Path) -> String {
    let mut hasher = Sha256::new();
    hasher.update(serde_json::to_string(spec).unwrap_or_default());
    hasher.update(interpreter.display().to_string());
    let digest = hasher.finalize();
    let hex: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    let version = spec.versions.first().map_or("any", String::as_str);
    format!("{}-{version}-{hex}", spec.repo.replace('/', "__"))
}
