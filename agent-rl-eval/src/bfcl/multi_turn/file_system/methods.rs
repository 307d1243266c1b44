//! The public methods of `GorillaFileSystem` and its [`Backend`] implementation.

use super::*;

impl GorillaFileSystem {
    fn pwd(&self) -> PyValue {
        let mut path = Vec::new();
        let mut dir = Some(self.current);
        while let Some(node) = dir {
            path.push(self.name(node).to_owned());
            dir = match self.nodes[node] {
                Node::Dir { parent, .. } => parent,
                Node::File { .. } => None,
            };
        }
        path.reverse();
        one(
            "current_working_directory",
            PyValue::Str(format!("/{}", path.join("/"))),
        )
    }

    fn ls(&self, all: &PyValue) -> PyValue {
        let names = self.dicts[self.dict_of(self.current)]
            .iter()
            .map(|(name, _)| name.clone())
            .filter(|name| truthy(all) || !name.starts_with('.'))
            .collect();
        one("current_directory_content", strings(names))
    }

    fn cd(&mut self, folder: &str) -> Result<PyValue, CallError> {
        let mut folder = folder.trim_end_matches('/');
        if folder.is_empty() {
            folder = "/";
        }
        if !matches!(folder, "." | ".." | "/") && folder.contains('/') {
            return Ok(error(format!(
                "cd: {folder}: Unsupported path. Only one folder level at a time is supported."
            )));
        }
        if folder == ".." {
            let parent = match self.nodes[self.current] {
                Node::Dir { parent, .. } => parent,
                Node::File { .. } => None,
            };
            if let Some(parent) = parent {
                self.current = parent;
            } else if self.equal(self.root, self, self.current, 0)? {
                return Ok(error(
                    "Current directory is already the root. Cannot go back.".into(),
                ));
            } else {
                return Ok(error("cd: ..: No such directory".into()));
            }
            return Ok(PyValue::Dict(Vec::new()));
        }
        match self.navigate(Some(folder)) {
            Ok(target) => {
                self.current = target;
                Ok(one(
                    "current_working_directory",
                    PyValue::str(self.name(target)),
                ))
            }
            Err(error) => Ok(error),
        }
    }

    fn mkdir(&mut self, name: &str) -> Result<PyValue, CallError> {
        if !valid_name(name) {
            return Ok(error(format!(
                "mkdir: cannot create directory '{name}': Invalid character"
            )));
        }
        if self.contains(self.current, name) {
            return Ok(error(format!(
                "mkdir: cannot create directory '{name}': File exists"
            )));
        }
        self.add_dir(self.current, name)?;
        Ok(PyValue::None)
    }

    fn touch(&mut self, name: &str) -> Result<PyValue, CallError> {
        if !valid_name(name) {
            return Ok(error(format!(
                "touch: cannot touch '{name}': Invalid character"
            )));
        }
        if self.contains(self.current, name) {
            return Ok(error(format!("touch: cannot touch '{name}': File exists")));
        }
        self.add_file(self.current, name, "")?;
        Ok(PyValue::None)
    }

    fn echo(&mut self, content: &str, file_name: &PyValue) -> Result<PyValue, CallError> {
        let name = match file_name {
            PyValue::None => return Ok(one("terminal_output", PyValue::str(content))),
            other => text_arg(other, "file_name")?,
        };
        if !valid_name(&name) {
            return Ok(error(format!(
                "echo: cannot write to '{name}': Invalid character"
            )));
        }
        if name.is_empty() {
            return Ok(one("terminal_output", PyValue::str(content)));
        }
        match self.get(self.current, &name) {
            Some(node) => match &mut self.nodes[node] {
                Node::File { content: old, .. } => {
                    *old = content.to_owned();
                    Ok(PyValue::None)
                }
                Node::Dir { .. } => Err(CallError::raised(
                    "'Directory' object has no attribute '_write'",
                )),
            },
            None => Ok(error(format!(
                "echo: cannot write to '{name}': No such file"
            ))),
        }
    }

    fn cat(&self, name: &str) -> PyValue {
        if !valid_name(name) {
            return error(format!("cat: '{name}': Invalid character"));
        }
        match self.get(self.current, name) {
            Some(node) => match self.content(node) {
                Some(content) => one("file_content", PyValue::str(content)),
                None => error(format!("cat: '{name}': Is a directory")),
            },
            None => error(format!("cat: '{name}': No such file or directory")),
        }
    }

    fn find(&self, path: &str, name: &PyValue) -> Result<PyValue, CallError> {
        let name = match name {
            PyValue::None => None,
            other => Some(text_arg(other, "name")?),
        };
        let target = match self.navigate(Some(path)) {
            Ok(target) => target,
            Err(err) => {
                return Ok(match err.get("error") {
                    Some(PyValue::Str(text)) if text.starts_with("cd:") => {
                        error(text.replacen("cd:", "find:", 1))
                    }
                    _ => err,
                });
            }
        };
        let mut matches = Vec::new();
        self.find_in(
            target,
            path.trim_end_matches('/'),
            name.as_deref(),
            &mut matches,
            0,
        )?;
        Ok(one("matches", strings(matches)))
    }

    fn wc(&self, name: &str, mode: &str) -> PyValue {
        if !matches!(mode, "l" | "w" | "c") {
            return error(format!("wc: invalid mode '{mode}'"));
        }
        let Some(content) = self.file_in_current(name) else {
            return error(format!("wc: {name}: No such file or directory"));
        };
        let (count, kind) = match mode {
            "l" => (py_splitlines(content).len(), "lines"),
            "w" => (py_split_whitespace(content).len(), "words"),
            _ => (content.chars().count(), "characters"),
        };
        PyValue::dict([
            ("count", PyValue::Int(count as i64)),
            ("type", PyValue::str(kind)),
        ])
    }

    fn du(&self, human_readable: &PyValue) -> Result<PyValue, CallError> {
        let total = self.size(self.current, 0)?;
        let text = if truthy(human_readable) {
            let mut size = total as f64;
            let mut text = None;
            for unit in ["B", "KB", "MB", "GB", "TB"] {
                if size < 1024.0 {
                    text = Some(format!("{size:.2} {unit}"));
                    break;
                }
                size /= 1024.0;
            }
            text.unwrap_or_else(|| format!("{size:.2} PB"))
        } else {
            format!("{total} bytes")
        };
        Ok(one("disk_usage", PyValue::Str(text)))
    }

    fn tail(&self, name: &str, lines: &PyValue) -> Result<PyValue, CallError> {
        let Some(content) = self.file_in_current(name) else {
            return Ok(error(format!("tail: {name}: No such file or directory")));
        };
        let &PyValue::Int(mut wanted) = lines else {
            return Err(CallError::Unsupported("tail with a non-int `lines`".into()));
        };
        let all = py_splitlines(content);
        let len = all.len() as i64;
        wanted = wanted.min(len);
        // Python's content[-lines:]
        let start = if wanted > 0 {
            len - wanted
        } else {
            (-wanted).min(len)
        };
        let last = all[start as usize..].join("\n");
        Ok(one("last_lines", PyValue::Str(last)))
    }

    fn diff(&self, first: &str, second: &str) -> PyValue {
        if let (Some(a), Some(b)) = (self.file_in_current(first), self.file_in_current(second)) {
            let lines: Vec<String> = py_splitlines(a)
                .iter()
                .zip(py_splitlines(b).iter())
                .filter(|(x, y)| x != y)
                .map(|(x, y)| format!("- {x}\n+ {y}"))
                .collect();
            return one("diff_lines", PyValue::Str(lines.join("\n")));
        }
        error(format!(
            "diff: {first} or {second}: No such file or directory"
        ))
    }

    fn move_or_copy(
        &mut self,
        source: &str,
        destination: &str,
        copy: bool,
    ) -> Result<PyValue, CallError> {
        let (verb, past) = if copy {
            ("cp", "copied")
        } else {
            ("mv", "moved")
        };
        let word = if copy { "copy" } else { "move" };
        let Some(item) = self.get(self.current, source) else {
            return Ok(error(format!(
                "{verb}: cannot {word} '{source}': No such file or directory"
            )));
        };
        if destination.contains('/') {
            return Ok(error(format!(
                "{verb}: path not allowed in destination. Provide only a file or directory name."
            )));
        }
        let (target_dir, new_name, message) = match self.get(self.current, destination) {
            Some(dest) if self.is_dir(dest) => {
                // mv refuses an existing name; cp's own check never matches (it looks for
                // "dest/source"), so cp fails inside `_add_file` / `_add_directory` instead.
                if !copy && self.contains(dest, source) {
                    return Ok(error(format!(
                        "mv: cannot move '{source}' to '{destination}/{source}': File exists"
                    )));
                }
                (
                    dest,
                    source,
                    format!("'{source}' {past} to '{destination}/{source}'"),
                )
            }
            Some(_) => {
                return Ok(error(format!(
                    "{verb}: cannot {word} '{source}' to '{destination}': Not a directory"
                )));
            }
            None => (
                self.current,
                destination,
                format!("'{source}' {past} to '{destination}'"),
            ),
        };
        if !copy {
            self.pop(self.current, source);
        }
        match self.nodes[item].clone() {
            Node::File { content, .. } => self.add_file(target_dir, new_name, &content)?,
            Node::Dir { contents, .. } => {
                let new_dir = self.add_dir(target_dir, new_name)?;
                let dict = if copy {
                    self.dicts.push(self.dicts[contents].clone());
                    self.dicts.len() - 1
                } else {
                    contents
                };
                self.set_contents(new_dir, dict);
            }
        }
        Ok(one("result", PyValue::Str(message)))
    }

    fn rm(&mut self, name: &str) -> PyValue {
        if self.contains(self.current, name) {
            self.pop(self.current, name);
            one("result", PyValue::Str(format!("'{name}' removed")))
        } else {
            error(format!(
                "rm: cannot remove '{name}': No such file or directory"
            ))
        }
    }

    fn rmdir(&mut self, name: &str) -> PyValue {
        match self.get(self.current, name) {
            Some(node) if self.is_dir(node) => {
                if self.dicts[self.dict_of(node)].is_empty() {
                    self.pop(self.current, name);
                    one("result", PyValue::Str(format!("'{name}' removed")))
                } else {
                    error(format!(
                        "rmdir: cannot remove '{name}': Directory not empty"
                    ))
                }
            }
            Some(_) => error(format!("rmdir: cannot remove '{name}': Not a directory")),
            None => error(format!(
                "rmdir: cannot remove '{name}': No such file or directory"
            )),
        }
    }
}

impl Backend for GorillaFileSystem {
    fn class_name(&self) -> &'static str {
        "GorillaFileSystem"
    }

    fn methods(&self) -> &'static [Method] {
        METHODS
    }

    fn load_scenario(
        &mut self,
        config: &PyValue,
        long_context: &LongContext,
    ) -> Result<(), CallError> {
        let filler = long_context.filler("GorillaFileSystem loading")?;
        *self = Self::default();
        self.long_context = Some(long_context.is_on());
        if let Some(PyValue::Dict(pairs)) = config.get("root")
            && let Some((name, data)) = pairs.first()
        {
            let root = self.new_dir(&name.to_py_str(), None);
            let contents = data.get("contents").cloned().unwrap_or(PyValue::None);
            self.load_directory(&contents, root, filler)?;
            self.root = root;
        }
        self.current = self.root;
        Ok(())
    }

    fn call(&mut self, method: &str, args: Vec<PyValue>) -> Result<PyValue, CallError> {
        let text = |index: usize, name: &str| text_arg(&args[index], name);
        match method {
            "pwd" => Ok(self.pwd()),
            "ls" => Ok(self.ls(&args[0])),
            "cd" => self.cd(&text(0, "folder")?),
            "mkdir" => self.mkdir(&text(0, "dir_name")?),
            "touch" => self.touch(&text(0, "file_name")?),
            "echo" => self.echo(&text(0, "content")?, &args[1]),
            "cat" => Ok(self.cat(&text(0, "file_name")?)),
            "find" => self.find(&text(0, "path")?, &args[1]),
            "wc" => Ok(self.wc(&text(0, "file_name")?, &text(1, "mode")?)),
            "sort" => Ok(match self.file_in_current(&text(0, "file_name")?) {
                Some(content) => {
                    let mut lines = py_splitlines(content);
                    lines.sort();
                    one("sorted_content", PyValue::Str(lines.join("\n")))
                }
                None => error(format!(
                    "sort: {}: No such file or directory",
                    text(0, "file_name")?
                )),
            }),
            "grep" => {
                let (name, pattern) = (text(0, "file_name")?, text(1, "pattern")?);
                Ok(match self.file_in_current(&name) {
                    Some(content) => one(
                        "matching_lines",
                        strings(
                            py_splitlines(content)
                                .into_iter()
                                .filter(|line| line.contains(pattern.as_str()))
                                .collect(),
                        ),
                    ),
                    None => error(format!("grep: {name}: No such file or directory")),
                })
            }
            "du" => self.du(&args[0]),
            "tail" => self.tail(&text(0, "file_name")?, &args[1]),
            "diff" => Ok(self.diff(&text(0, "file_name1")?, &text(1, "file_name2")?)),
            "mv" => self.move_or_copy(&text(0, "source")?, &text(1, "destination")?, false),
            "cp" => self.move_or_copy(&text(0, "source")?, &text(1, "destination")?, true),
            "rm" => Ok(self.rm(&text(0, "file_name")?)),
            "rmdir" => Ok(self.rmdir(&text(0, "dir_name")?)),
            other => Err(CallError::raised(format!(
                "'GorillaFileSystem' object has no attribute '{other}'"
            ))),
        }
    }

    fn state(&self) -> Vec<(&'static str, PyValue)> {
        let mut state = vec![("root", self.value_of(self.root, 0))];
        if let Some(flag) = self.long_context {
            state.push(("long_context", PyValue::Bool(flag)));
        }
        state
    }
}
