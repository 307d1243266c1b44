//! The agent's file tools over a workspace tree: view a window of a file with line numbers (or
//! list a directory), search with a regular expression, edit by replacing one exact string,
//! insert lines, create a file. Each returns the text the model sees, or a message saying what
//! was wrong (never a panic, never a hang, never a read or write outside the tree: paths are
//! checked by [`relative_in`] and opened by [`Tree`], which resolves every component beneath
//! the tree and refuses FIFOs, sockets and devices without blocking; a search stops at its
//! deadline).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use rustix::fs::{FileType, OFlags};

use super::beneath::{Entry, Tree, list, read_file};
use super::confine::relative_in;

/// Files larger than this are not read by the tools (bytes).
const MAX_FILE_BYTES: u64 = 4 << 20;

/// Most directories a search walks.
const MAX_SEARCH_DIRECTORIES: usize = 20_000;

/// Lines `start..=end` (1-based, clamped) of `path` with numbers, or a directory's entries
/// (directories end in `/`, symbolic links in `@`).
///
/// # Errors
/// A message for the model (bad path, unreadable or non-regular file, empty range).
pub fn view(
    root: &Path,
    path: &str,
    start: Option<usize>,
    end: Option<usize>,
    window: usize,
) -> Result<String, String> {
    let relative = relative_in(root, path)?;
    let text = match Tree::open(root)?.entry(&relative, path)? {
        Entry::Directory(dir) => {
            let entries: Vec<String> = list(&dir)
                .into_iter()
                .map(|(name, kind)| match kind {
                    FileType::Directory => format!("{name}/"),
                    FileType::Symlink => format!("{name}@"),
                    _ => name,
                })
                .collect();
            return Ok(entries.join("\n"));
        }
        Entry::File(file) => read_file(file, path, MAX_FILE_BYTES)?,
    };
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
/// `.git` and symbolic links skipped), as `file:line: text`, at most `max_results`; the search
/// stops at `deadline` and says so.
///
/// # Errors
/// A message for the model (bad pattern, bad path).
pub fn search(
    root: &Path,
    pattern: &str,
    path: Option<&str>,
    max_results: usize,
    deadline: Instant,
) -> Result<String, String> {
    let regex = regex::Regex::new(pattern).map_err(|error| format!("bad pattern: {error}"))?;
    let name = path.unwrap_or(".");
    let start = relative_in(root, name)?;
    let tree = Tree::open(root)?;
    let mut files = Vec::new();
    let mut complete = match tree.entry(&start, name)? {
        Entry::File(_) => {
            files.push(start);
            true
        }
        Entry::Directory(_) => collect_files(&tree, start, &mut files, deadline),
    };
    files.sort();
    let mut hits = Vec::new();
    let mut total = 0usize;
    for file in files {
        if Instant::now() >= deadline {
            complete = false;
            break;
        }
        let shown = file.display().to_string();
        let Ok(text) = tree.read_text(&file, &shown, MAX_FILE_BYTES) else {
            continue; // binary, too large or unreadable
        };
        for (number, line) in text.lines().enumerate() {
            if regex.is_match(line) {
                total += 1;
                if hits.len() < max_results {
                    let line: String = line.chars().take(200).collect();
                    hits.push(format!("{shown}:{}: {line}", number + 1));
                }
            }
        }
    }
    let mut out = if hits.is_empty() {
        format!("no match for `{pattern}`")
    } else {
        hits.join("\n")
    };
    if total > hits.len() {
        let _ = write!(out, "\n[{} more matches not shown]", total - hits.len());
    }
    if !complete {
        out.push_str("\n[the search stopped at its time or size limit; results are partial]");
    }
    Ok(out)
}

/// The regular files under the directory `start` (relative to the tree); false when the walk
/// stopped early (deadline or [`MAX_SEARCH_DIRECTORIES`]).
fn collect_files(tree: &Tree, start: PathBuf, out: &mut Vec<PathBuf>, deadline: Instant) -> bool {
    let mut pending = vec![start];
    let mut walked = 0usize;
    while let Some(dir) = pending.pop() {
        if walked >= MAX_SEARCH_DIRECTORIES || Instant::now() >= deadline {
            return false;
        }
        walked += 1;
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW;
        let Ok(fd) = tree.open_at(&dir, flags, "") else {
            continue;
        };
        for (name, kind) in list(&fd) {
            match kind {
                FileType::Directory => pending.push(dir.join(name)),
                FileType::RegularFile => out.push(dir.join(name)),
                _ => {}
            }
        }
    }
    true
}

/// Replaces the one occurrence of `old` in `path` by `new`.
///
/// # Errors
/// A message for the model when `old` is absent or occurs more than once, or the path is bad.
pub fn replace(root: &Path, path: &str, old: &str, new: &str) -> Result<String, String> {
    let relative = relative_in(root, path)?;
    let tree = Tree::open(root)?;
    let text = tree.read_text(&relative, path, MAX_FILE_BYTES)?;
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
            tree.overwrite(&relative, path, &updated)?;
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
    let relative = relative_in(root, path)?;
    let tree = Tree::open(root)?;
    let content = tree.read_text(&relative, path, MAX_FILE_BYTES)?;
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
    tree.overwrite(&relative, path, &updated)?;
    Ok(format!(
        "inserted {count} lines after line {after} of `{path}`"
    ))
}

/// Creates `path` with `content` (parent directories too).
///
/// # Errors
/// A message for the model when the file exists already or the path is bad.
pub fn create(root: &Path, path: &str, content: &str) -> Result<String, String> {
    let relative = relative_in(root, path)?;
    Tree::open(root)?.create(&relative, path, content)?;
    Ok(format!(
        "created `{path}` ({} lines)",
        content.lines().count()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn far() -> Instant {
        Instant::now() + std::time::Duration::from_secs(60)
    }

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
        let hits = search(&root, "^t", None, 2, far()).expect("search");
        assert!(hits.starts_with("a.py:3: two\na.py:4: three"), "{hits}");
        assert!(hits.contains("1 more"), "{hits}");
        assert!(search(&root, "(", None, 5, far()).is_err());
    }
}
