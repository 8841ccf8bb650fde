//! Workspace resolution (SPEC §3.1): expand, normalise, resolve symlinks,
//! confine to the allowed roots, create when missing.
//!
//! The verdict is the core's [`WorkspaceVerdict`], so the core never touches
//! the filesystem. Confinement is checked on the symlink-resolved path, and
//! again after a missing directory was created, so a symlink (even one planted
//! between the check and the creation) cannot move a workspace out of its root.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use iac_agui_core::validate::{workspace_error, WorkspaceVerdict};
use iac_agui_core::MessageKey;

/// The allowed workspace roots, resolved once at startup.
#[derive(Debug, Clone)]
pub struct WorkspacePolicy {
    roots: Vec<PathBuf>,
}

impl WorkspacePolicy {
    /// Roots from `IAC_CODE_AGUI_ALLOWED_CWDS`, else `IACCODE_A2A_ALLOWED_CWDS`
    /// (OS path-list separator), else the process working directory and the
    /// system temp directory. Roots that do not resolve to a directory are
    /// dropped.
    pub fn from_env(env: impl Fn(&str) -> Option<OsString>) -> Self {
        let raw = env("IAC_CODE_AGUI_ALLOWED_CWDS")
            .filter(|v| !v.is_empty())
            .or_else(|| env("IACCODE_A2A_ALLOWED_CWDS").filter(|v| !v.is_empty()));
        let candidates: Vec<PathBuf> = match raw {
            Some(list) => std::env::split_paths(&list)
                .filter(|p| !p.as_os_str().is_empty())
                .map(|p| expand_home(&p.to_string_lossy(), &env))
                .map(PathBuf::from)
                .collect(),
            None => std::env::current_dir()
                .into_iter()
                .chain([std::env::temp_dir()])
                .collect(),
        };
        WorkspacePolicy::with_roots(candidates)
    }

    /// A policy over explicit roots (each resolved through symlinks).
    pub fn with_roots(candidates: impl IntoIterator<Item = PathBuf>) -> Self {
        let roots = candidates
            .into_iter()
            .filter_map(|root| std::fs::canonicalize(root).ok())
            .filter(|root| root.is_dir())
            .collect();
        WorkspacePolicy { roots }
    }

    /// The resolved roots.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// Judges the `cwd` of a request; `env` supplies `HOME` and `$VAR`s.
    pub fn resolve(&self, raw: &str, env: impl Fn(&str) -> Option<OsString>) -> WorkspaceVerdict {
        match self.try_resolve(raw, &env) {
            Ok(path) => WorkspaceVerdict::Resolved(path),
            Err(key) => WorkspaceVerdict::Rejected(workspace_error(key)),
        }
    }

    fn try_resolve(
        &self,
        raw: &str,
        env: &impl Fn(&str) -> Option<OsString>,
    ) -> Result<String, MessageKey> {
        let expanded = expand_vars(&expand_home(raw, env), env);
        let path = Path::new(&expanded);
        if raw.is_empty() || !path.is_absolute() {
            return Err(MessageKey::WorkspaceNotAbsolute);
        }
        let resolved =
            resolve_lenient(&normalise(path)).map_err(|_| MessageKey::WorkspaceInvalid)?;
        if !self.contains(&resolved) {
            return Err(MessageKey::WorkspaceOutsideRoots);
        }
        match std::fs::metadata(&resolved) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => return Err(MessageKey::WorkspaceNotDirectory),
            Err(_) => {
                std::fs::create_dir_all(&resolved)
                    .map_err(|_| MessageKey::WorkspaceCannotCreate)?;
                let created = std::fs::canonicalize(&resolved)
                    .map_err(|_| MessageKey::WorkspaceCannotCreate)?;
                if created != resolved || !self.contains(&created) {
                    return Err(MessageKey::WorkspaceOutsideRoots);
                }
            }
        }
        resolved
            .into_os_string()
            .into_string()
            .map_err(|_| MessageKey::WorkspaceInvalid)
    }

    fn contains(&self, path: &Path) -> bool {
        self.roots.iter().any(|root| path.starts_with(root))
    }
}

/// `~` or `~/…` → `$HOME/…` (other `~user` forms are left alone).
fn expand_home(raw: &str, env: &impl Fn(&str) -> Option<OsString>) -> String {
    let rest = match raw.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => rest,
        _ => return raw.to_owned(),
    };
    match env("HOME") {
        Some(home) => format!("{}{rest}", home.to_string_lossy()),
        None => raw.to_owned(),
    }
}

/// `$NAME` and `${NAME}` → their values; unknown variables stay as written
/// (like the reference's `os.path.expandvars`).
fn expand_vars(raw: &str, env: &impl Fn(&str) -> Option<OsString>) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, consumed) = if let Some(braced) = after.strip_prefix('{') {
            match braced.find('}') {
                Some(end) => (&braced[..end], end + 2),
                None => ("", 0),
            }
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..end], end)
        };
        match (name.is_empty(), env(name)) {
            (false, Some(value)) => out.push_str(&value.to_string_lossy()),
            _ => out.push_str(&rest[at..at + 1 + consumed]),
        }
        rest = &after[consumed..];
    }
    out.push_str(rest);
    out
}

/// Lexical normalisation (`.` dropped, `..` pops), as `os.path.normpath`.
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Resolves every existing prefix through symlinks and appends the missing
/// tail as is (the tail has no `..` left after [`normalise`]). A path that
/// exists, the usual case, is one `realpath`; only a missing one is walked
/// prefix by prefix.
fn resolve_lenient(path: &Path) -> std::io::Result<PathBuf> {
    if let Ok(resolved) = std::fs::canonicalize(path) {
        return Ok(resolved);
    }
    let mut current = PathBuf::new();
    for component in path.components() {
        current.push(component.as_os_str());
        if std::fs::symlink_metadata(&current).is_ok() {
            current = std::fs::canonicalize(&current)?;
        }
    }
    Ok(current)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let map: HashMap<String, OsString> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), OsString::from(v)))
            .collect();
        move |k| map.get(k).cloned()
    }

    fn rejected(verdict: WorkspaceVerdict) -> MessageKey {
        match verdict {
            WorkspaceVerdict::Rejected(e) => e.key,
            WorkspaceVerdict::Resolved(p) => panic!("unexpectedly resolved to {p}"),
        }
    }

    fn resolved(verdict: WorkspaceVerdict) -> String {
        match verdict {
            WorkspaceVerdict::Resolved(p) => p,
            WorkspaceVerdict::Rejected(e) => panic!("rejected: {e}"),
        }
    }

    #[test]
    fn expands_home_and_vars_and_creates_missing() {
        let root = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(root.path()).unwrap();
        let policy = WorkspacePolicy::with_roots([base.clone()]);
        let home = base.to_string_lossy().into_owned();
        let env = env_of(&[("HOME", &home), ("PROJ", "p1")]);
        let got = resolved(policy.resolve("~/ws/$PROJ/${PROJ}x/./a/../b", &env));
        assert_eq!(PathBuf::from(&got), base.join("ws/p1/p1x/b"));
        assert!(Path::new(&got).is_dir(), "a missing workspace is created");
        let unknown = resolved(policy.resolve(&format!("{home}/$NOPE"), &env));
        assert!(unknown.ends_with("/$NOPE"));
    }

    #[test]
    fn relative_and_empty_are_not_absolute() {
        let policy = WorkspacePolicy::with_roots([std::env::temp_dir()]);
        let env = env_of(&[("REL", "rel/dir")]);
        for raw in ["", "rel", "./x", "$REL", "~nobody/x"] {
            assert_eq!(
                rejected(policy.resolve(raw, &env)),
                MessageKey::WorkspaceNotAbsolute,
                "{raw}"
            );
        }
    }

    #[test]
    fn outside_roots_and_dotdot_escape() {
        let root = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(root.path()).unwrap();
        let inner = base.join("inner");
        std::fs::create_dir(&inner).unwrap();
        let policy = WorkspacePolicy::with_roots([inner.clone()]);
        let env = env_of(&[]);
        let escape = format!("{}/../other", inner.display());
        assert_eq!(
            rejected(policy.resolve(&escape, &env)),
            MessageKey::WorkspaceOutsideRoots
        );
        assert!(
            !base.join("other").exists(),
            "nothing is created outside the roots"
        );
        assert_eq!(
            rejected(policy.resolve("/", &env)),
            MessageKey::WorkspaceOutsideRoots
        );
    }

    #[test]
    fn symlink_cannot_escape_its_root() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(root.path()).unwrap();
        std::os::unix::fs::symlink(outside.path(), base.join("link")).unwrap();
        let policy = WorkspacePolicy::with_roots([base.clone()]);
        let env = env_of(&[]);
        let through = format!("{}/link/sub", base.display());
        assert_eq!(
            rejected(policy.resolve(&through, &env)),
            MessageKey::WorkspaceOutsideRoots
        );
        assert!(!outside.path().join("sub").exists());
        // The link itself exists: resolved in one go, and refused the same.
        assert_eq!(
            rejected(policy.resolve(&format!("{}/link", base.display()), &env)),
            MessageKey::WorkspaceOutsideRoots
        );
        // A symlink that stays inside the root resolves to its target.
        std::fs::create_dir(base.join("real")).unwrap();
        std::os::unix::fs::symlink(base.join("real"), base.join("alias")).unwrap();
        let got = resolved(policy.resolve(&format!("{}/alias", base.display()), &env));
        assert_eq!(PathBuf::from(got), base.join("real"));
    }

    #[test]
    fn file_is_not_a_directory_and_uncreatable() {
        let root = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(root.path()).unwrap();
        std::fs::write(base.join("file"), b"x").unwrap();
        let policy = WorkspacePolicy::with_roots([base.clone()]);
        let env = env_of(&[]);
        let file = format!("{}/file", base.display());
        assert_eq!(
            rejected(policy.resolve(&file, &env)),
            MessageKey::WorkspaceNotDirectory
        );
        let under_file = format!("{}/file/sub", base.display());
        assert_eq!(
            rejected(policy.resolve(&under_file, &env)),
            MessageKey::WorkspaceCannotCreate
        );
    }

    #[test]
    fn roots_from_env_with_fallback() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        let list = std::env::join_paths([a.path(), Path::new("/definitely/missing"), b.path()])
            .unwrap()
            .into_string()
            .unwrap();
        let policy = WorkspacePolicy::from_env(env_of(&[("IACCODE_A2A_ALLOWED_CWDS", &list)]));
        assert_eq!(policy.roots().len(), 2, "missing roots are dropped");
        let first = a.path().to_string_lossy().into_owned();
        let policy = WorkspacePolicy::from_env(env_of(&[
            ("IAC_CODE_AGUI_ALLOWED_CWDS", &first),
            ("IACCODE_A2A_ALLOWED_CWDS", &list),
        ]));
        assert_eq!(policy.roots(), [std::fs::canonicalize(a.path()).unwrap()]);
        let defaults = WorkspacePolicy::from_env(env_of(&[]));
        assert!(defaults
            .roots()
            .contains(&std::fs::canonicalize(std::env::temp_dir()).unwrap()));
    }
}
