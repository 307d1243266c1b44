//! Keeping the agent inside its workspace: paths given to the file tools are refused when
//! they visibly leave the tree (by `..` or an absolute path) or enter `.git`, and are then opened
//! by [`super::beneath`], where the kernel resolves every component (symbolic links included)
//! beneath the tree; shell commands are refused before they run when a word of theirs visibly
//! writes outside the tree (a redirection target, a `cd` target, or a path argument of a
//! command that writes: `cp`, `mv`, `rm`, `touch`, `mkdir`, `tee`, …). The static check cannot
//! see writes made by programs (`python -c "open('/x', 'w')"`); the namespace sandbox
//! ([`super::sandbox`]) stops those where the machine allows it.

use std::path::{Component, Path, PathBuf};

/// Commands whose path arguments may be written.
const WRITERS: [&str; 15] = [
    "cp", "mv", "rm", "rmdir", "touch", "mkdir", "tee", "ln", "chmod", "chown", "truncate",
    "install", "rsync", "unlink", "shred",
];

/// Paths outside the tree that anything may write.
const HARMLESS: [&str; 4] = ["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"];

/// `path` (relative to `root`, or absolute inside it) as a path relative to `root`, with `.`
/// and `..` removed (empty for the root itself). Links are not looked at: open the result with
/// [`super::beneath::Tree`].
///
/// # Errors
/// A message for the model when the path is empty, leaves the tree or enters `.git`.
pub fn relative_in(root: &Path, path: &str) -> Result<PathBuf, String> {
    let trimmed = path.trim();
    if trimmed.is_empty() {
        return Err("the path is empty".into());
    }
    let joined = root.join(trimmed);
    let relative = normalize(&joined)
        .and_then(|normal| normal.strip_prefix(root).ok().map(Path::to_path_buf))
        .ok_or_else(|| format!("refused: `{trimmed}` is outside the workspace"))?;
    if relative.components().next() == Some(Component::Normal(".git".as_ref())) {
        return Err(format!("refused: `{trimmed}` is inside .git"));
    }
    Ok(relative)
}

/// `path` with `.` and `..` removed lexically; `None` when `..` climbs above the root.
fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                if !out.pop() || out.as_os_str().is_empty() {
                    return None;
                }
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    Some(out)
}

/// Marks "the next word is a redirection target" in [`segments`]' output.
const WRITE_TO: &str = "\u{0}>";
/// Marks "the next word is read from" in [`segments`]' output.
const READ_FROM: &str = "\u{0}<";

/// Why `command` visibly writes outside `root`, if it does (see the module docs).
pub fn command_escape(command: &str, root: &Path) -> Option<String> {
    for words in segments(command) {
        let Some(first) = words
            .iter()
            .position(|word| !word.contains('=') && word != WRITE_TO && word != READ_FROM)
        else {
            continue;
        };
        let program = words[first].rsplit('/').next().unwrap_or("");
        let mut arguments = 0;
        let mut index = 0;
        while index < words.len() {
            let word = words[index].as_str();
            let target = if word == WRITE_TO {
                index += 1;
                words.get(index).map(String::as_str)
            } else if word == READ_FROM {
                index += 1;
                None
            } else if index <= first {
                None
            } else {
                arguments += 1;
                if program == "cd" || (WRITERS.contains(&program) && !word.starts_with('-')) {
                    Some(word)
                } else if program == "dd" {
                    word.strip_prefix("of=")
                } else {
                    None
                }
            };
            if let Some(target) = target
                && leaves(root, target)
            {
                return Some(format!(
                    "refused: `{program}` would write or move outside the workspace ({target})"
                ));
            }
            index += 1;
        }
        if program == "cd" && arguments == 0 {
            return Some(
                "refused: `cd` alone goes to the home directory, outside the workspace".into(),
            );
        }
    }
    None
}

fn leaves(root: &Path, target: &str) -> bool {
    if HARMLESS.contains(&target) {
        return false;
    }
    if target.starts_with('~') || target.starts_with('$') {
        return true;
    }
    normalize(&root.join(target)).is_none_or(|normal| !normal.starts_with(root))
}

/// Shell words, split into simple commands at `;`, `&&`, `||`, `|`, `&`, parentheses and
/// newlines; quotes are honoured (their content stays one word, never an operator);
/// redirections become [`WRITE_TO`] / [`READ_FROM`] before their target (descriptor
/// duplications such as `2>&1` vanish); `$(...)` is not parsed.
fn segments(command: &str) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = vec![Vec::new()];
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut in_word = false;
    let mut chars = command.chars().peekable();
    let end_word = |word: &mut String, in_word: &mut bool, out: &mut Vec<Vec<String>>| {
        if *in_word {
            if let Some(segment) = out.last_mut() {
                segment.push(std::mem::take(word));
            }
            *in_word = false;
        }
        word.clear();
    };
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '\\') => {
                if let Some(next) = chars.next() {
                    word.push(next);
                    in_word = true;
                }
            }
            (None, '>') => {
                // A descriptor number just before `>` belongs to the operator.
                if in_word && word.chars().all(|c| c.is_ascii_digit()) {
                    word.clear();
                    in_word = false;
                }
                end_word(&mut word, &mut in_word, &mut out);
                while chars.peek().is_some_and(|&c| c == '>' || c == '|') {
                    chars.next();
                }
                if chars.peek() == Some(&'&') {
                    chars.next();
                    while chars
                        .peek()
                        .is_some_and(|&c| c.is_ascii_digit() || c == '-')
                    {
                        chars.next();
                    }
                    continue;
                }
                if let Some(segment) = out.last_mut() {
                    segment.push(WRITE_TO.into());
                }
            }
            (None, '<') => {
                end_word(&mut word, &mut in_word, &mut out);
                if let Some(segment) = out.last_mut() {
                    segment.push(READ_FROM.into());
                }
            }
            (None, '&') if chars.peek() == Some(&'>') => {
                end_word(&mut word, &mut in_word, &mut out);
            }
            (None, ';' | '|' | '&' | '\n' | '(' | ')') => {
                end_word(&mut word, &mut in_word, &mut out);
                out.push(Vec::new());
            }
            (None, c) if c.is_whitespace() => end_word(&mut word, &mut in_word, &mut out),
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    end_word(&mut word, &mut in_word, &mut out);
    out.retain(|segment| !segment.is_empty());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().join("repo");
        std::fs::create_dir_all(root.join("pkg")).expect("tree");
        let root = root.canonicalize().expect("canonical");
        (dir, root)
    }

    #[test]
    fn paths_stay_in_the_tree() {
        let (_dir, root) = tree();
        assert_eq!(
            relative_in(&root, "pkg/a.py"),
            Ok(PathBuf::from("pkg/a.py"))
        );
        assert_eq!(
            relative_in(&root, "./pkg/../b.py"),
            Ok(PathBuf::from("b.py"))
        );
        assert_eq!(relative_in(&root, "."), Ok(PathBuf::new()));
        let inside = root.join("pkg/x.py").display().to_string();
        assert_eq!(relative_in(&root, &inside), Ok(PathBuf::from("pkg/x.py")));
        for bad in ["../x", "/etc/passwd", "pkg/../../x", ".git/config", ""] {
            assert!(relative_in(&root, bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn commands_that_write_outside_are_refused() {
        let (_dir, root) = tree();
        for bad in [
            "echo x > /tmp/evil",
            "echo x>>../evil",
            "cat a 2>/tmp/log",
            "cp pkg/a.py /tmp/",
            "ls && mv a ../b",
            "cd /tmp && touch x",
            "cd",
            "tee ~/x < a",
            "dd if=a of=/tmp/x",
            "echo 'ok' ; rm -rf /",
        ] {
            assert!(command_escape(bad, &root).is_some(), "{bad}");
        }
        for good in [
            "ls /usr/lib | head",
            "python -m unittest -v 2>&1 | tail",
            "grep -rn 'a > /tmp/x' .",
            "cat /etc/hostname > pkg/host.txt",
            "cd pkg && touch new.py",
            "echo x > /dev/null",
            "FOO=1 python3 -c 'print(1)'",
            "sed -n 1,5p pkg/a.py &> out.txt",
        ] {
            assert_eq!(command_escape(good, &root), None, "{good}");
        }
    }
}
