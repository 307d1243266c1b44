//! The agent's file tools over a workspace tree: view a window of a file with line numbers (or
//! list a directory), search with a regular expression, edit by replacing one exact string,
//! insert lines, create a file. Each returns the text the model sees, or a message saying what
//! was wrong (never a panic, never a write outside the tree: paths go through
//! [`resolve_in`]).

use std::fmt::Write as _;
use std::path::Path;

use super::confine::resolve_in;

/// Files larger than this are not read by the tools (bytes).
const MAX_FILE_BYTES: u64 = 4 << 20;

/// Lines `start..=end` (1-based, clamped) of `path` with numbers, or a directory's entries.
///
/// # Errors
/// A message for the model (bad path, unreadable file, empty range).
pub fn view(
    root: &Path,
    path: &str,
    start: Option<usize>,
    end: Option<usize>,
    window: usize,
) -> Result<String, String> {
    let file = resolve_in(root, path)?;
    if file.is_dir() {
        let mut entries: Vec<String> = std::fs::read_dir(&file)
            .map_err(|error| format!("cannot list `{path}`: {error}"))?
            .filter_map(|entry| entry.ok())
            .filter(|entry| entry.file_name() != ".git")
            .map(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                if entry.path().is_dir() {
                    format!("{name}/")
                } else {
                    name
                }
            })
            .collect();
        entries.sort();
        return Ok(entries.join("\n"));
    }
    let text = read(&file, path)?;
    let lines: Vec<&str> = text.lines().collect();
    let start = start.unwrap_or(1).max(1);
    let end = end.unwrap_or(start + window.max(1) - 1).min(lines.len());
    if lines.is_empty() {
        return Ok(format!("[{path} is empty]"));
    }
    if start > end {
        return Err(format!(
            "no lines in {start}..={end}: `{path}` has {} lines",
            lines.len()
        ));
    }
    let mut out = format!("[{path}: lines {start}-{end} of {}]\n", lines.len());
    for (number, line) in lines.iter().enumerate().take(end).skip(start - 1) {
        let _ = writeln!(out, "{:>6}\t{line}", number + 1);
    }
    Ok(out)
}

/// Lines matching the regular expression `pattern` under `path` (a file or a directory,
/// `.git` skipped), as `file:line: text`, at most `max_results`.
///
/// # Errors
/// A message for the model (bad pattern, bad path).
pub fn search(
    root: &Path,
    pattern: &str,
    path: Option<&str>,
    max_results: usize,
) -> Result<String, String> {
    let regex = regex::Regex::new(pattern).map_err(|error| format!("bad pattern: {error}"))?;
    let start = resolve_in(root, path.unwrap_or("."))?;
    let mut files = Vec::new();
    collect_files(&start, &mut files);
    files.sort();
    let mut hits = Vec::new();
    let mut total = 0usize;
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue; // binary or unreadable
        };
        let name = file
            .strip_prefix(root)
            .unwrap_or(&file)
            .display()
            .to_string();
        for (number, line) in text.lines().enumerate() {
            if regex.is_match(line) {
                total += 1;
                if hits.len() < max_results {
                    let line: String = line.chars().take(200).collect();
                    hits.push(format!("{name}:{}: {line}", number + 1));
                }
            }
        }
    }
    if hits.is_empty() {
        return Ok(format!("no match for `{pattern}`"));
    }
    let mut out = hits.join("\n");
    if total > hits.len() {
        let _ = write!(out, "\n[{} more matches not shown]", total - hits.len());
    }
    Ok(out)
}

fn collect_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    if dir.is_file() {
        out.push(dir.to_path_buf());
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(|entry| entry.ok()) {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if entry.file_name() == ".git" || kind.is_symlink() {
            continue;
        }
        if kind.is_dir() {
            collect_files(&entry.path(), out);
        } else if entry
            .metadata()
            .is_ok_and(|meta| meta.len() <= MAX_FILE_BYTES)
        {
            out.push(entry.path());
        }
    }
}

/// Replaces the one occurrence of `old` in `path` by `new`.
///
/// # Errors
/// A message for the model when `old` is absent or occurs more than once, or the path is bad.
pub fn replace(root: &Path, path: &str, old: &str, new: &str) -> Result<String, String> {
    let file = resolve_in(root, path)?;
    let text = read(&file, path)?;
    if old.is_empty() {
        return Err("old_str is empty; give the exact text to replace".into());
    }
    let count = text.matches(old).count();
    match count {
        0 => Err(format!(
            "old_str does not occur in `{path}`; nothing changed"
        )),
        1 => {
            let at = text.find(old).unwrap_or(0);
            let updated = format!("{}{new}{}", &text[..at], &text[at + old.len()..]);
            write(&file, path, &updated)?;
            let line = text[..at].lines().count().max(1);
            Ok(format!(
                "replaced 1 occurrence in `{path}` (from line {line})\n{}",
                view(
                    root,
                    path,
                    Some(line.saturating_sub(3).max(1)),
                    Some(line + new.lines().count() + 3),
                    0
                )?
            ))
        }
        n => Err(format!(
            "old_str occurs {n} times in `{path}`; add context so that it is unique"
        )),
    }
}

/// Inserts `text` after line `after` of `path` (0 = at the top).
///
/// # Errors
/// A message for the model when the line is past the end or the path is bad.
pub fn insert(root: &Path, path: &str, after: usize, text: &str) -> Result<String, String> {
    let file = resolve_in(root, path)?;
    let content = read(&file, path)?;
    let mut lines: Vec<&str> = content.lines().collect();
    if after > lines.len() {
        return Err(format!(
            "line {after} is past the end of `{path}` ({} lines)",
            lines.len()
        ));
    }
    let new: Vec<&str> = text.lines().collect();
    let count = new.len();
    lines.splice(after..after, new);
    let mut updated = lines.join("\n");
    updated.push('\n');
    write(&file, path, &updated)?;
    Ok(format!(
        "inserted {count} lines after line {after} of `{path}`"
    ))
}

/// Creates `path` with `content` (parent directories too).
///
/// # Errors
/// A message for the model when the file exists already or the path is bad.
pub fn create(root: &Path, path: &str, content: &str) -> Result<String, String> {
    let file = resolve_in(root, path)?;
    if file.exists() {
        return Err(format!(
            "`{path}` exists already; edit it with str_replace or insert"
        ));
    }
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|error| format!("cannot create the folder of `{path}`: {error}"))?;
    }
    write(&file, path, content)?;
    Ok(format!(
        "created `{path}` ({} lines)",
        content.lines().count()
    ))
}

fn read(file: &Path, name: &str) -> Result<String, String> {
    let meta = std::fs::metadata(file).map_err(|error| format!("cannot read `{name}`: {error}"))?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!("`{name}` is larger than {MAX_FILE_BYTES} bytes"));
    }
    std::fs::read_to_string(file).map_err(|error| format!("cannot read `{name}`: {error}"))
}

fn write(file: &Path, name: &str, text: &str) -> Result<(), String> {
    std::fs::write(file, text).map_err(|error| format!("cannot write `{name}`: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().canonicalize().expect("canonical");
        std::fs::write(root.join("a.py"), "one\ntwo\nthree\ntwo\n").expect("write");
        (dir, root)
    }

    #[test]
    fn view_numbers_lines_and_lists_directories() {
        let (_dir, root) = tree();
        let out = view(&root, "a.py", Some(2), Some(3), 100).expect("view");
        assert!(out.contains("     2\ttwo\n     3\tthree"), "{out}");
        assert!(!out.contains("one"));
        assert_eq!(view(&root, ".", None, None, 100).expect("list"), "a.py");
        assert!(view(&root, "a.py", Some(9), None, 100).is_err());
        assert!(view(&root, "../x", None, None, 100).is_err());
    }

    #[test]
    fn replace_needs_exactly_one_occurrence() {
        let (_dir, root) = tree();
        assert!(
            replace(&root, "a.py", "two", "2")
                .expect_err("twice")
                .contains("2 times")
        );
        assert!(replace(&root, "a.py", "four", "4").is_err());
        replace(&root, "a.py", "three\ntwo", "3\n2").expect("unique");
        let text = std::fs::read_to_string(root.join("a.py")).expect("read");
        assert_eq!(text, "one\ntwo\n3\n2\n");
    }

    #[test]
    fn insert_create_and_search() {
        let (_dir, root) = tree();
        insert(&root, "a.py", 0, "zero").expect("top");
        insert(&root, "a.py", 5, "end").expect("bottom");
        assert!(insert(&root, "a.py", 9, "x").is_err());
        let text = std::fs::read_to_string(root.join("a.py")).expect("read");
        assert_eq!(text, "zero\none\ntwo\nthree\ntwo\nend\n");
        create(&root, "pkg/new.py", "x = 1\n").expect("create");
        assert!(create(&root, "a.py", "").is_err());
        assert!(create(&root, "/tmp/evil.py", "").is_err());
        let hits = search(&root, "^t", None, 2).expect("search");
        assert!(hits.starts_with("a.py:3: two\na.py:4: three"), "{hits}");
        assert!(hits.contains("1 more"), "{hits}");
        assert!(search(&root, "(", None, 5).is_err());
    }
}
