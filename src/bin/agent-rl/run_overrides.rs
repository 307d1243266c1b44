//! Edits of a run file's TOML before it is parsed: `--set key=value` overrides (dotted paths,
//! values read as TOML) and the completion budget filled in from whichever of
//! `max_completion_length` and `sampling.max_new_tokens` the file sets.

use anyhow::bail;
use toml::{Table, Value};

/// Applies one `--set KEY=VALUE`: `KEY` is a dotted path (`grpo.max_steps`,
/// `grpo.sampling.temperature`), `VALUE` a TOML value (`3`, `1e-5`, `true`, `"text"`,
/// `[1, 2]`), or, when it does not parse as one, a string (`model.path=/models/qwen`).
/// Missing tables on the path are created; whether the key exists is checked when the run
/// file is parsed.
///
/// # Errors
/// No `=`, an empty key or path segment, or a path through a value that is not a table.
pub fn apply_override(table: &mut Table, assignment: &str) -> anyhow::Result<()> {
    let Some((key, raw)) = assignment.split_once('=') else {
        bail!("--set {assignment}: expected KEY=VALUE (e.g. --set grpo.max_steps=3)");
    };
    let key = key.trim();
    let path: Vec<&str> = key.split('.').map(str::trim).collect();
    if path.iter().any(|segment| segment.is_empty()) {
        bail!("--set {assignment}: `{key}` is not a dotted key (e.g. grpo.max_steps)");
    }
    let value = parse_value(raw.trim());
    let (last, parents) = path
        .split_last()
        .expect("split yields at least one segment");
    let mut current = table;
    for (depth, segment) in parents.iter().enumerate() {
        let entry = current
            .entry((*segment).to_owned())
            .or_insert_with(|| Value::Table(Table::new()));
        let Value::Table(next) = entry else {
            bail!(
                "--set {assignment}: `{}` is a value, not a section",
                path[..=depth].join(".")
            );
        };
        current = next;
    }
    current.insert((*last).to_owned(), value);
    Ok(())
}

/// `raw` as a TOML value, or as a string when it is not one.
fn parse_value(raw: &str) -> Value {
    format!("value = {raw}")
        .parse::<Table>()
        .ok()
        .and_then(|mut table| table.remove("value"))
        .unwrap_or_else(|| Value::String(raw.to_owned()))
}

/// In each of the `sections` (`grpo`, `ppo`) that sets only one of `max_completion_length` and
/// `sampling.max_new_tokens`, sets the other to the same budget (they must agree).
pub fn fill_completion_budget(table: &mut Table, sections: &[&str]) {
    for name in sections {
        let Some(Value::Table(section)) = table.get_mut(*name) else {
            continue;
        };
        let length = section.get("max_completion_length").cloned();
        let sampling = section
            .entry("sampling")
            .or_insert_with(|| Value::Table(Table::new()));
        let Value::Table(sampling) = sampling else {
            continue;
        };
        match (length, sampling.get("max_new_tokens").cloned()) {
            (Some(length), None) => {
                sampling.insert("max_new_tokens".into(), length);
            }
            (None, Some(tokens)) => {
                section.insert("max_completion_length".into(), tokens);
            }
            _ => {}
        }
        if matches!(section.get("sampling"), Some(Value::Table(s)) if s.is_empty()) {
            section.remove("sampling");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> Table {
        text.parse().unwrap()
    }

    #[test]
    fn overrides_set_nested_keys_as_toml_values() {
        let mut run = table("[grpo]\nmax_steps = 10\n");
        for assignment in [
            "grpo.max_steps=3",
            "grpo.sampling.temperature = 0.7",
            "model.path=/models/qwen",
            "run.report_to=[\"jsonl\"]",
            "grpo.scale_rewards=\"batch\"",
        ] {
            apply_override(&mut run, assignment).unwrap();
        }
        assert_eq!(
            run,
            table(
                "[grpo]\nmax_steps = 3\nscale_rewards = \"batch\"\n[grpo.sampling]\n\
                 temperature = 0.7\n[model]\npath = \"/models/qwen\"\n[run]\n\
                 report_to = [\"jsonl\"]\n"
            )
        );
    }

    #[test]
    fn malformed_overrides_are_refused_naming_them() {
        let mut run = table("[grpo]\nmax_steps = 10\n");
        for (assignment, wanted) in [
            ("grpo.max_steps", "expected KEY=VALUE"),
            ("grpo..max_steps=1", "not a dotted key"),
            ("grpo.max_steps.x=1", "`grpo.max_steps` is a value"),
        ] {
            let message = apply_override(&mut run, assignment)
                .err()
                .map(|error| error.to_string())
                .unwrap_or_default();
            assert!(message.contains(wanted), "{assignment}: {message}");
        }
    }

    #[test]
    fn the_completion_budget_is_filled_from_either_key() {
        let mut run =
            table("[grpo]\nmax_completion_length = 64\n[ppo.sampling]\nmax_new_tokens = 32\n");
        fill_completion_budget(&mut run, &["grpo", "ppo"]);
        assert_eq!(
            run,
            table(
                "[grpo]\nmax_completion_length = 64\n[grpo.sampling]\nmax_new_tokens = 64\n\
                 [ppo]\nmax_completion_length = 32\n[ppo.sampling]\nmax_new_tokens = 32\n"
            )
        );
        let mut neither = table("[grpo]\nmax_steps = 2\n");
        fill_completion_budget(&mut neither, &["grpo", "ppo"]);
        assert_eq!(neither, table("[grpo]\nmax_steps = 2\n"));
    }
}
