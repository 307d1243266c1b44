//! Files inside a tree, opened so that the kernel resolves every component of the path beneath
//! the tree's root: `openat2` with `RESOLVE_BENEATH` refuses any `..` or symbolic link (dangling
//! ones included) that would leave it, and links to `/proc` magic files; on kernels without
//! `openat2` (before Linux 5.6) the path is walked one component at a time with `O_NOFOLLOW`, which
//! refuses every symbolic link. Only regular files are read or written, and every open is
//! non-blocking, so a FIFO, a socket or a device named by the agent is refused at once instead of
//! blocking the tool.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

/// An open directory (a workspace tree) under which paths are opened.
#[derive(Debug)]
pub struct Tree {
    root: OwnedFd,
}

/// What a path names: a directory (open) or a regular file (open for reading).
#[derive(Debug)]
pub enum Entry {
    /// A directory.
    Directory(OwnedFd),
    /// A regular file.
    File(File),
}

impl Tree {
    /// Opens the tree's root directory.
    ///
    /// # Errors
    /// A message naming the root when it cannot be opened.
    pub fn open(root: &Path) -> Result<Self, String> {
        rustix::fs::open(
            root,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map(|root| Self { root })
        .map_err(|error| format!("cannot open the workspace {}: {error}", root.display()))
    }

    /// Opens `relative` (a path without `..`, relative to the root; empty = the root) with
    /// `flags` (non-blocking and close-on-exec are added); `name` is the path as the agent gave
    /// it, for messages.
    ///
    /// # Errors
    /// A message for the model: the path leaves the tree, does not exist, cannot be opened.
    pub fn open_at(&self, relative: &Path, flags: OFlags, name: &str) -> Result<OwnedFd, String> {
        let flags = flags | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
        let path = if relative.as_os_str().is_empty() {
            Path::new(".")
        } else {
            relative
        };
        let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
        // openat2 refuses a mode without O_CREAT; files are created by `create` only.
        match rustix::fs::openat2(&self.root, path, flags, Mode::empty(), resolve) {
            Err(Errno::NOSYS) => self.walk(path, flags),
            other => other,
        }
        .map_err(|errno| describe(name, errno))
    }

    /// The fallback of [`Tree::open_at`]: one component at a time, no link followed.
    fn walk(&self, path: &Path, flags: OFlags) -> Result<OwnedFd, Errno> {
        let parts: Vec<&std::ffi::OsStr> = path
            .components()
            .filter_map(|component| match component {
                Component::Normal(part) => Some(part),
                _ => None,
            })
            .collect();
        let Some((last, parents)) = parts.split_last() else {
            return rustix::fs::openat(&self.root, ".", flags, Mode::empty());
        };
        let mut dir: Option<OwnedFd> = None;
        for part in parents {
            let directory = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let next = match &dir {
                Some(dir) => rustix::fs::openat(dir, *part, directory, Mode::empty())?,
                None => rustix::fs::openat(&self.root, *part, directory, Mode::empty())?,
            };
            dir = Some(next);
        }
        let mode = Mode::empty();
        match &dir {
            Some(dir) => rustix::fs::openat(dir, *last, flags | OFlags::NOFOLLOW, mode),
            None => rustix::fs::openat(&self.root, *last, flags | OFlags::NOFOLLOW, mode),
        }
    }

    /// Opens an existing directory or regular file for reading.
    ///
    /// # Errors
    /// A message for the model (see [`Tree::open_at`]); anything but a directory or a regular file
    /// (FIFO, socket, device) is refused.
    pub fn entry(&self, relative: &Path, name: &str) -> Result<Entry, String> {
        let fd = self.open_at(relative, OFlags::RDONLY, name)?;
        let kind = file_kind(&fd, name)?;
        match kind {
            FileType::Directory => Ok(Entry::Directory(fd)),
            FileType::RegularFile => Ok(Entry::File(File::from(fd))),
            other => Err(not_regular(name, other)),
        }
    }

    /// The text of the regular file `relative`, at most `max_bytes` long.
    ///
    /// # Errors
    /// A message for the model: a bad path, a directory or another non-regular file, too large,
    /// not UTF-8.
    pub fn read_text(&self, relative: &Path, name: &str, max_bytes: u64) -> Result<String, String> {
        match self.entry(relative, name)? {
            Entry::File(file) => read_file(file, name, max_bytes),
            Entry::Directory(_) => Err(format!("`{name}` is a directory")),
        }
    }

    /// Replaces the content of the existing regular file `relative` by `text`.
    ///
    /// # Errors
    /// A message for the model (bad path, not a regular file, write error).
    pub fn overwrite(&self, relative: &Path, name: &str, text: &str) -> Result<(), String> {
        let fd = self.open_at(relative, OFlags::WRONLY, name)?;
        match file_kind(&fd, name)? {
            FileType::RegularFile => {}
            other => return Err(not_regular(name, other)),
        }
        let mut file = File::from(fd);
        file.set_len(0)
            .and_then(|()| file.write_all(text.as_bytes()))
            .map_err(|error| format!("cannot write `{name}`: {error}"))
    }

    /// Creates the regular file `relative` with `text`, and its missing parent directories.
    ///
    /// # Errors
    /// A message for the model: the file (or a link by that name) exists, a parent leaves the
    /// tree, a write error.
    pub fn create(&self, relative: &Path, name: &str, text: &str) -> Result<(), String> {
        let file_name = relative
            .file_name()
            .ok_or_else(|| format!("`{name}` names no file"))?;
        let directory = OFlags::RDONLY | OFlags::DIRECTORY;
        let mut parent = self.open_at(Path::new(""), directory, name)?;
        let mut prefix = PathBuf::new();
        for part in relative.parent().into_iter().flat_map(Path::components) {
            prefix.push(part);
            let opened = match self.open_at(&prefix, directory, name) {
                Err(_) if !exists_at(&parent, part.as_os_str()) => {
                    rustix::fs::mkdirat(&parent, part.as_os_str(), Mode::from_raw_mode(0o755))
                        .map_err(|errno| describe(name, errno))?;
                    self.open_at(&prefix, directory, name)
                }
                other => other,
            };
            parent = opened?;
        }
        // O_EXCL: a file or a symbolic link (dangling or not) by that name is never followed.
        let flags = OFlags::WRONLY
            | OFlags::CREATE
            | OFlags::EXCL
            | OFlags::NOFOLLOW
            | OFlags::NONBLOCK
            | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(&parent, file_name, flags, Mode::from_raw_mode(0o644))
            .map_err(|errno| match errno {
                Errno::EXIST => {
                    format!("`{name}` exists already; edit it with str_replace or insert")
                }
                other => describe(name, other),
            })?;
        File::from(fd)
            .write_all(text.as_bytes())
            .map_err(|error| format!("cannot write `{name}`: {error}"))
    }
}

/// The entries of the directory `dir` (`.`, `..` and `.git` left out), with their kinds
/// (symbolic links are not followed), sorted by name.
pub fn list(dir: &OwnedFd) -> Vec<(String, FileType)> {
    let Ok(entries) = rustix::fs::Dir::read_from(dir) else {
        return Vec::new();
    };
    let mut out: Vec<(String, FileType)> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name == "." || name == ".." || name == ".git" {
                return None;
            }
            let kind = match entry.file_type() {
                FileType::Unknown => {
                    rustix::fs::statat(dir, entry.file_name(), AtFlags::SYMLINK_NOFOLLOW)
                        .map_or(FileType::Unknown, |stat| {
                            FileType::from_raw_mode(stat.st_mode)
                        })
                }
                kind => kind,
            };
            Some((name, kind))
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// The text of an open regular file, at most `max_bytes` long (`name` for messages).
///
/// # Errors
/// A message for the model: too large, not UTF-8, a read error.
pub fn read_file(file: File, name: &str, max_bytes: u64) -> Result<String, String> {
    let mut bytes = Vec::new();
    file.take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| format!("cannot read `{name}`: {error}"))?;
    if bytes.len() as u64 > max_bytes {
        return Err(format!("`{name}` is larger than {max_bytes} bytes"));
    }
    String::from_utf8(bytes).map_err(|_| format!("`{name}` is not UTF-8 text"))
}

fn file_kind(fd: &OwnedFd, name: &str) -> Result<FileType, String> {
    rustix::fs::fstat(fd)
        .map(|stat| FileType::from_raw_mode(stat.st_mode))
        .map_err(|errno| format!("cannot read `{name}`: {errno}"))
}

fn exists_at(dir: &OwnedFd, part: &std::ffi::OsStr) -> bool {
    rustix::fs::statat(dir, part, AtFlags::SYMLINK_NOFOLLOW).is_ok()
}

fn not_regular(name: &str, kind: FileType) -> String {
    let what = match kind {
        FileType::Fifo => "a FIFO",
        FileType::Socket => "a socket",
        FileType::CharacterDevice | FileType::BlockDevice => "a device",
        FileType::Symlink => "a symbolic link",
        _ => "not a regular file",
    };
    format!("refused: `{name}` is {what}; the tools read and write regular files only")
}

/// The agent-facing message for a failed open of `name`.
fn describe(name: &str, errno: Errno) -> String {
    match errno {
        Errno::XDEV => format!("refused: `{name}` leads outside the workspace through a link"),
        Errno::LOOP => format!("refused: `{name}` goes through a symbolic link"),
        Errno::NOENT => format!("`{name}` does not exist"),
        Errno::NOTDIR => format!("`{name}`: a parent of it is not a directory"),
        Errno::ISDIR => format!("`{name}` is a directory"),
        Errno::NXIO => format!("refused: `{name}` is not a regular file"),
        other => format!("cannot open `{name}`: {other}"),
    }
}
