//! `GorillaFileSystem`: bfcl-eval's in-memory file system (`gorilla_file_system.py`).
//!
//! Python objects are shared by reference, and the original relies on it: `mv` and `cp` of a
//! directory make the new directory share the old one's contents dict (`cp` a shallow copy of it,
//! whose files and sub-directories stay shared), and moved children keep their old parent. The
//! port keeps that aliasing with two arenas: nodes (files, directories) and contents dicts.
//! Long-context loading appends bfcl-eval's filler text to file contents and adds its empty files
//! to every innermost directory ([`LongContextData`]); without the data it reports unsupported.

use super::backend::{Backend, CallError, Method, optional, required};
use super::long_context::{LongContext, LongContextData};
use super::pyops::truthy;
use super::text::{py_split_whitespace, py_splitlines};
use super::value::PyValue;

const METHODS: &[Method] = &[
    Method {
        name: "pwd",
        params: &[],
    },
    Method {
        name: "ls",
        params: &[optional("a", "False")],
    },
    Method {
        name: "cd",
        params: &[required("folder")],
    },
    Method {
        name: "mkdir",
        params: &[required("dir_name")],
    },
    Method {
        name: "touch",
        params: &[required("file_name")],
    },
    Method {
        name: "echo",
        params: &[required("content"), optional("file_name", "None")],
    },
    Method {
        name: "cat",
        params: &[required("file_name")],
    },
    Method {
        name: "find",
        params: &[optional("path", "'.'"), optional("name", "None")],
    },
    Method {
        name: "wc",
        params: &[required("file_name"), optional("mode", "'l'")],
    },
    Method {
        name: "sort",
        params: &[required("file_name")],
    },
    Method {
        name: "grep",
        params: &[required("file_name"), required("pattern")],
    },
    Method {
        name: "du",
        params: &[optional("human_readable", "False")],
    },
    Method {
        name: "tail",
        params: &[required("file_name"), optional("lines", "10")],
    },
    Method {
        name: "diff",
        params: &[required("file_name1"), required("file_name2")],
    },
    Method {
        name: "mv",
        params: &[required("source"), required("destination")],
    },
    Method {
        name: "rm",
        params: &[required("file_name")],
    },
    Method {
        name: "rmdir",
        params: &[required("dir_name")],
    },
    Method {
        name: "cp",
        params: &[required("source"), required("destination")],
    },
];

type NodeId = usize;
type DictId = usize;

/// Deeper trees than this are taken for a cycle (Python would raise `RecursionError`).
const MAX_DEPTH: usize = 200;

#[derive(Debug, Clone)]
enum Node {
    File {
        name: String,
        content: String,
    },
    Dir {
        name: String,
        parent: Option<NodeId>,
        contents: DictId,
    },
}

/// The `GorillaFileSystem` class.
#[derive(Debug, Clone)]
pub struct GorillaFileSystem {
    nodes: Vec<Node>,
    dicts: Vec<Vec<(String, NodeId)>>,
    root: NodeId,
    current: NodeId,
    long_context: Option<bool>,
}

impl Default for GorillaFileSystem {
    fn default() -> Self {
        let mut fs = Self {
            nodes: Vec::new(),
            dicts: Vec::new(),
            root: 0,
            current: 0,
            long_context: None,
        };
        fs.root = fs.new_dir("/", None);
        fs.current = fs.root;
        fs
    }
}

fn error(text: String) -> PyValue {
    PyValue::dict([("error", PyValue::Str(text))])
}

fn one(key: &str, value: PyValue) -> PyValue {
    PyValue::dict([(key, value)])
}

fn strings(items: Vec<String>) -> PyValue {
    PyValue::List(items.into_iter().map(PyValue::Str).collect())
}

fn valid_name(name: &str) -> bool {
    !name.chars().any(|c| "|/\\?%*:\"><".contains(c))
}

fn text_arg(value: &PyValue, name: &str) -> Result<String, CallError> {
    match value {
        PyValue::Str(text) => Ok(text.clone()),
        other => Err(CallError::Unsupported(format!(
            "GorillaFileSystem argument {name} of type {}",
            other.type_name()
        ))),
    }
}

impl GorillaFileSystem {
    fn new_dir(&mut self, name: &str, parent: Option<NodeId>) -> NodeId {
        self.dicts.push(Vec::new());
        self.nodes.push(Node::Dir {
            name: name.to_owned(),
            parent,
            contents: self.dicts.len() - 1,
        });
        self.nodes.len() - 1
    }

    fn new_file(&mut self, name: &str, content: &str) -> NodeId {
        self.nodes.push(Node::File {
            name: name.to_owned(),
            content: content.to_owned(),
        });
        self.nodes.len() - 1
    }

    fn name(&self, node: NodeId) -> &str {
        match &self.nodes[node] {
            Node::File { name, .. } | Node::Dir { name, .. } => name,
        }
    }

    fn dict_of(&self, dir: NodeId) -> DictId {
        match self.nodes[dir] {
            Node::Dir { contents, .. } => contents,
            Node::File { .. } => unreachable!("only directories hold contents"),
        }
    }

    fn is_dir(&self, node: NodeId) -> bool {
        matches!(self.nodes[node], Node::Dir { .. })
    }

    fn content(&self, node: NodeId) -> Option<&str> {
        match &self.nodes[node] {
            Node::File { content, .. } => Some(content),
            Node::Dir { .. } => None,
        }
    }

    fn get(&self, dir: NodeId, name: &str) -> Option<NodeId> {
        self.dicts[self.dict_of(dir)]
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, node)| *node)
    }

    fn contains(&self, dir: NodeId, name: &str) -> bool {
        self.get(dir, name).is_some()
    }

    /// `_get_item`: `.` is the directory itself.
    fn item(&self, dir: NodeId, name: &str) -> Option<NodeId> {
        if name == "." {
            Some(dir)
        } else {
            self.get(dir, name)
        }
    }

    fn insert(&mut self, dir: NodeId, name: &str, node: NodeId) {
        let dict = self.dict_of(dir);
        match self.dicts[dict].iter_mut().find(|(key, _)| key == name) {
            Some(slot) => slot.1 = node,
            None => self.dicts[dict].push((name.to_owned(), node)),
        }
    }

    fn pop(&mut self, dir: NodeId, name: &str) {
        let dict = self.dict_of(dir);
        self.dicts[dict].retain(|(key, _)| key != name);
    }

    fn add_file(&mut self, dir: NodeId, name: &str, content: &str) -> Result<(), CallError> {
        if self.contains(dir, name) {
            return Err(CallError::raised(format!(
                "File '{name}' already exists in directory '{}'.",
                self.name(dir)
            )));
        }
        let file = self.new_file(name, content);
        self.insert(dir, name, file);
        Ok(())
    }

    fn add_dir(&mut self, dir: NodeId, name: &str) -> Result<NodeId, CallError> {
        if self.contains(dir, name) {
            return Err(CallError::raised(format!(
                "Directory '{name}' already exists in directory '{}'.",
                self.name(dir)
            )));
        }
        let child = self.new_dir(name, Some(dir));
        self.insert(dir, name, child);
        Ok(child)
    }

    fn set_contents(&mut self, dir: NodeId, dict: DictId) {
        if let Node::Dir { contents, .. } = &mut self.nodes[dir] {
            *contents = dict;
        }
    }

    /// `_load_directory`; in long-context mode (`filler` given) file contents get the filler
    /// text appended (except the files bfcl-eval leaves as they are) and every directory without
    /// subdirectories gets the filler's empty files (`_populate_directory`).
    fn load_directory(
        &mut self,
        current: &PyValue,
        parent: NodeId,
        filler: Option<&LongContextData>,
    ) -> Result<(), CallError> {
        let PyValue::Dict(pairs) = current else {
            return Err(CallError::raised("directory contents must be a dict"));
        };
        let mut bottommost = true;
        for (name, data) in pairs {
            let name = name.to_py_str();
            match data.get("type") {
                Some(PyValue::Str(kind)) if kind == "directory" => {
                    bottommost = false;
                    let dir = self.new_dir(&name, Some(parent));
                    let contents = data.get("contents").cloned().unwrap_or(PyValue::None);
                    self.load_directory(&contents, dir, filler)?;
                    self.insert(parent, &name, dir);
                }
                Some(PyValue::Str(kind)) if kind == "file" => {
                    let mut content = match data.get("content") {
                        Some(PyValue::Str(text)) => text.clone(),
                        _ => return Err(CallError::raised("file content must be a string")),
                    };
                    if let Some(filler) = filler
                        && !filler.files_tail_used.contains(&name)
                    {
                        content.push_str(&filler.file_content);
                    }
                    let file = self.new_file(&name, &content);
                    self.insert(parent, &name, file);
                }
                _ => {}
            }
        }
        if bottommost && let Some(filler) = filler {
            for name in &filler.populate_files {
                self.add_file(parent, name, "")?;
            }
        }
        Ok(())
    }

    /// `_navigate_to_directory`.
    fn navigate(&self, path: Option<&str>) -> Result<NodeId, PyValue> {
        let path = match path {
            None | Some(".") => return Ok(self.current),
            Some("/") => return Ok(self.root),
            Some(path) => path,
        };
        let mut dir = if path.starts_with('/') {
            self.root
        } else {
            self.current
        };
        for name in path.trim_matches('/').split('/') {
            match self.item(dir, name) {
                Some(next) if self.is_dir(next) => dir = next,
                _ => return Err(error(format!("cd: '{path}': No such file or directory"))),
            }
        }
        Ok(dir)
    }

    /// Python's `==` on `Directory`/`File`: name and contents (dicts regardless of order).
    fn equal(&self, a: NodeId, other: &Self, b: NodeId, depth: usize) -> Result<bool, CallError> {
        if depth > MAX_DEPTH {
            return Err(CallError::Unsupported(
                "a directory that contains itself".into(),
            ));
        }
        Ok(match (&self.nodes[a], &other.nodes[b]) {
            (
                Node::File { name, content },
                Node::File {
                    name: n,
                    content: c,
                },
            ) => name == n && content == c,
            (
                Node::Dir { name, contents, .. },
                Node::Dir {
                    name: n,
                    contents: c,
                    ..
                },
            ) => {
                let (mine, theirs) = (&self.dicts[*contents], &other.dicts[*c]);
                if name != n || mine.len() != theirs.len() {
                    return Ok(false);
                }
                for (key, node) in mine {
                    let Some((_, their_node)) = theirs.iter().find(|(k, _)| k == key) else {
                        return Ok(false);
                    };
                    if !self.equal(*node, other, *their_node, depth + 1)? {
                        return Ok(false);
                    }
                }
                true
            }
            _ => false,
        })
    }

    /// The tree as a comparable value: `('Directory', name, {child: …})`, `('File', name,
    /// content)`; equal exactly when Python's `==` on the objects is.
    fn value_of(&self, node: NodeId, depth: usize) -> PyValue {
        if depth > MAX_DEPTH {
            return PyValue::Opaque("<cycle>".into());
        }
        let tag = |text: &str| PyValue::str(text);
        match &self.nodes[node] {
            Node::File { name, content } => {
                PyValue::Tuple(vec![tag("File"), tag(name), tag(content)])
            }
            Node::Dir { name, contents, .. } => PyValue::Tuple(vec![
                tag("Directory"),
                tag(name),
                PyValue::dict(
                    self.dicts[*contents]
                        .iter()
                        .map(|(key, child)| (key.clone(), self.value_of(*child, depth + 1))),
                ),
            ]),
        }
    }

    fn size(&self, node: NodeId, depth: usize) -> Result<usize, CallError> {
        if depth > MAX_DEPTH {
            return Err(CallError::Unsupported(
                "a directory that contains itself".into(),
            ));
        }
        match &self.nodes[node] {
            Node::File { content, .. } => Ok(content.len()),
            Node::Dir { contents, .. } => self.dicts[*contents]
                .iter()
                .try_fold(0, |total, (_, child)| {
                    Ok(total + self.size(*child, depth + 1)?)
                }),
        }
    }

    fn find_in(
        &self,
        dir: NodeId,
        base: &str,
        name: Option<&str>,
        matches: &mut Vec<String>,
        depth: usize,
    ) -> Result<(), CallError> {
        if depth > MAX_DEPTH {
            return Err(CallError::Unsupported(
                "a directory that contains itself".into(),
            ));
        }
        for (item_name, item) in &self.dicts[self.dict_of(dir)] {
            let path = format!("{base}/{item_name}");
            if name.is_none_or(|wanted| item_name.contains(wanted)) {
                matches.push(path.clone());
            }
            if self.is_dir(*item) {
                self.find_in(*item, &path, name, matches, depth + 1)?;
            }
        }
        Ok(())
    }

    fn file_in_current(&self, name: &str) -> Option<&str> {
        self.get(self.current, name)
            .and_then(|node| self.content(node))
    }
}

mod methods;
