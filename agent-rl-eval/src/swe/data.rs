//! The SWE data folder: `<data>/swebench/` (or `<data>` itself when it holds the files) with
//! `verified_mini50.jsonl` and the trees under `repos/`: the sphinx bundle (one branch per
//! instance id), or per repository `repos/<owner>__<name>` (a git directory or `.bundle`) at
//! the instance's base commit.

use std::path::{Path, PathBuf};

use super::env::SweTask;
use super::grader::{InstanceGrade, LocalGrader};
use super::instance::{SweInstance, load_instances};
use super::prediction::Prediction;
use super::workspace::RepoSource;
use crate::{EvalError, Result};

/// The instances file of a run.
pub const INSTANCES_FILE: &str = "verified_mini50.jsonl";

/// `<data>/swebench` when it exists, else `<data>`.
pub fn swe_dir(data_dir: &Path) -> PathBuf {
    let nested = data_dir.join("swebench");
    if nested.is_dir() {
        nested
    } else {
        data_dir.to_path_buf()
    }
}

/// Reads `verified_mini50.jsonl` of the data folder.
///
/// # Errors
/// [`EvalError::Layout`] when the file is missing; the errors of [`load_instances`].
pub fn load_data_instances(data_dir: &Path) -> Result<Vec<SweInstance>> {
    let path = swe_dir(data_dir).join(INSTANCES_FILE);
    if !path.is_file() {
        return Err(EvalError::Layout {
            path,
            reason: format!("no {INSTANCES_FILE} (pass the folder holding swebench/)"),
        });
    }
    load_instances(&path)
}

/// Where `instance`'s tree is (see the module docs).
///
/// # Errors
/// [`EvalError::Layout`] naming the paths looked at when none exists.
pub fn source_for(data_dir: &Path, instance: &SweInstance) -> Result<RepoSource> {
    let repos = swe_dir(data_dir).join("repos");
    if instance.repo == "sphinx-doc/sphinx" {
        let bundle = repos.join("sphinx-verified-mini.bundle");
        if bundle.is_file() {
            return Ok(RepoSource {
                repository: bundle,
                revision: instance.instance_id.clone(),
            });
        }
    }
    let name = instance.repo.replace('/', "__");
    let candidates = [repos.join(&name), repos.join(format!("{name}.bundle"))];
    candidates
        .iter()
        .find(|path| path.exists())
        .map(|path| RepoSource {
            repository: path.clone(),
            revision: instance.base_commit.clone(),
        })
        .ok_or_else(|| EvalError::Layout {
            path: candidates[0].clone(),
            reason: format!(
                "no source tree for {} ({}): put a clone or bundle there",
                instance.instance_id, instance.repo
            ),
        })
}

/// The tasks for `ids` (all instances when empty), with their sources.
///
/// # Errors
/// An unknown id ([`EvalError::InvalidConfig`], field `instances`) or a missing tree.
pub fn tasks_for(data_dir: &Path, ids: &[String]) -> Result<Vec<SweTask>> {
    let instances = load_data_instances(data_dir)?;
    let chosen = if ids.is_empty() {
        instances
    } else {
        super::instance::select_instances(&instances, ids)?
    };
    chosen
        .into_iter()
        .map(|instance| {
            let source = source_for(data_dir, &instance)?;
            Ok(SweTask { instance, source })
        })
        .collect()
}

/// Grades every prediction against its instance of `instances`, its tree from `data_dir`;
/// `progress(done, total)` after each.
///
/// # Errors
/// [`EvalError::Record`]-free: an unknown instance id is [`EvalError::InvalidConfig`] (field
/// `predictions`); a missing tree is [`EvalError::Layout`]. Grading itself never fails (see
/// [`LocalGrader::grade`]).
pub fn grade_predictions(
    grader: &LocalGrader,
    instances: &[SweInstance],
    predictions: &[Prediction],
    data_dir: &Path,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<InstanceGrade>> {
    let mut grades = Vec::with_capacity(predictions.len());
    for prediction in predictions {
        let instance = instances
            .iter()
            .find(|instance| instance.instance_id == prediction.instance_id)
            .ok_or_else(|| EvalError::InvalidConfig {
                field: "predictions".into(),
                reason: format!("unknown instance id `{}`", prediction.instance_id),
            })?;
        let source = source_for(data_dir, instance)?;
        grades.push(grader.grade(instance, &source, &prediction.model_patch));
        progress(grades.len(), predictions.len());
    }
    Ok(grades)
}
