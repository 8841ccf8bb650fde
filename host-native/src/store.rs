//! The durable thread store (SPEC §11): one JSON file per thread under
//! `<state root>/threads/`, loaded on demand, replaced atomically.
//!
//! The store keeps documents as JSON values; the core owns their schema and
//! validates them. A thread is reached through [`StateStore::lock`], which
//! serialises requests on that thread (and only on that thread) and loads its
//! file the first time it is needed. The first write of a thread goes to a
//! temp file in the same directory (created exclusively, 0600, never through
//! a symlink), is fsynced, renamed over the old file, and the directory is
//! fsynced; later ones go to the thread's `.<file>.swap`, are fsynced, and
//! trade places with the file (`renameat2(RENAME_EXCHANGE)`, Linux), then the
//! directory is fsynced. Either way a crash at any point leaves the old or the
//! new document, never a mix.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read as _, Write as _};
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use iac_agui_core::document::thread_key;
use serde_json::Value;
use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

/// Largest state file read (a thread document is small; anything bigger is
/// not ours).
pub const MAX_DOCUMENT_BYTES: u64 = 4 * 1024 * 1024;

/// Thread files written at once. A write is mostly waiting for its fsync,
/// but each one also holds a blocking thread, and creating or renaming an
/// entry takes the state directory's lock: a hundred concurrent writers
/// mean a hundred threads switching in and out and spinning on that lock
/// (BENCHMARKS.md), while this many still keep the disk's queue full.
const WRITERS: usize = 8;

/// Why a thread document could not be read or written. Every variant maps to
/// `STATE_UNAVAILABLE` at admission or `STATE_PERSISTENCE_FAILED` mid-run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreError {
    /// The state file is a symlink (refused, never followed).
    Symlink,
    /// The file is not a JSON object (or too large).
    Corrupt,
    /// An I/O error, with its kind (never a path or content).
    Io(std::io::ErrorKind),
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::Symlink => f.write_str("state file is a symlink"),
            StoreError::Corrupt => f.write_str("state file is not a JSON object"),
            StoreError::Io(kind) => write!(f, "state file I/O failed: {kind}"),
        }
    }
}

impl std::error::Error for StoreError {}

/// The file-backed store of thread documents.
#[derive(Debug)]
pub struct StateStore {
    dir: PathBuf,
    slots: Mutex<HashMap<String, Arc<AsyncMutex<Slot>>>>,
    writers: tokio::sync::Semaphore,
    #[cfg(test)]
    fail_before_rename: std::sync::atomic::AtomicBool,
}

/// Exclusive access to one thread's document while the guard lives.
#[derive(Debug)]
pub struct ThreadGuard {
    slot: OwnedMutexGuard<Slot>,
    path: PathBuf,
    store: Arc<StateStore>,
}

#[derive(Debug, Default)]
struct Slot {
    /// `None` until the file was read; then `Some(None)` for "no thread".
    document: Option<Option<Value>>,
}

impl StateStore {
    /// Opens (creating, 0700) `<root>/threads`. Stale temp files left by a
    /// crash are removed.
    ///
    /// # Errors
    /// The directory cannot be created, is a symlink, or cannot be listed.
    pub fn open(root: &Path) -> Result<Arc<StateStore>, StoreError> {
        let dir = root.join("threads");
        for path in [root, dir.as_path()] {
            match std::fs::symlink_metadata(path) {
                Ok(meta) if meta.file_type().is_symlink() => return Err(StoreError::Symlink),
                Ok(_) => {}
                Err(_) => std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(path)
                    .map_err(io)?,
            }
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700)).map_err(io)?;
        }
        for entry in std::fs::read_dir(&dir).map_err(io)?.flatten() {
            let name = entry.file_name();
            if name.to_string_lossy().contains(".tmp-") {
                let _ = std::fs::remove_file(entry.path());
            }
        }
        Ok(Arc::new(StateStore {
            dir,
            slots: Mutex::new(HashMap::new()),
            writers: tokio::sync::Semaphore::new(WRITERS),
            #[cfg(test)]
            fail_before_rename: std::sync::atomic::AtomicBool::new(false),
        }))
    }

    /// The directory holding the thread files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Waits for exclusive access to `thread_id`. Requests on other threads
    /// are not blocked.
    pub async fn lock(self: &Arc<Self>, thread_id: &str) -> ThreadGuard {
        let slot = {
            let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
            Arc::clone(slots.entry(thread_id.to_owned()).or_default())
        };
        ThreadGuard {
            slot: slot.lock_owned().await,
            path: self.dir.join(format!("{}.json", thread_key(thread_id))),
            store: Arc::clone(self),
        }
    }

    /// Drops the cached document of a thread nobody holds (it is read again
    /// on its next use).
    pub fn forget(&self, thread_id: &str) {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        if slots
            .get(thread_id)
            .is_some_and(|slot| Arc::strong_count(slot) == 1 && slot.try_lock().is_ok())
        {
            slots.remove(thread_id);
        }
    }

    /// How many threads have been read from disk (tests check laziness).
    pub fn loaded_count(&self) -> usize {
        let slots: Vec<_> = self
            .slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect();
        slots
            .iter()
            .filter(|slot| {
                slot.try_lock()
                    .map(|s| s.document.is_some())
                    .unwrap_or(true)
            })
            .count()
    }
}

impl ThreadGuard {
    /// The thread's document, read from disk the first time (`None`: no such
    /// thread yet).
    ///
    /// # Errors
    /// Unreadable, symlinked or corrupt file. The error is not cached: the
    /// next request tries again.
    pub async fn document(&mut self) -> Result<Option<&Value>, StoreError> {
        if self.slot.document.is_none() {
            let path = self.path.clone();
            let loaded = tokio::task::spawn_blocking(move || read_document(&path))
                .await
                .map_err(|_| StoreError::Io(std::io::ErrorKind::Other))??;
            self.slot.document = Some(loaded);
        }
        Ok(self.slot.document.as_ref().and_then(Option::as_ref))
    }

    /// Replaces the document on disk. The store keeps no copy of what it
    /// wrote (the machine holds the live document): the next
    /// [`ThreadGuard::document`] reads the file again.
    ///
    /// # Errors
    /// The write failed; the old document stays in place on disk.
    pub async fn persist(&mut self, document: &Value) -> Result<(), StoreError> {
        let bytes = serde_json::to_vec(document).map_err(|_| StoreError::Corrupt)?;
        let path = self.path.clone();
        #[cfg(test)]
        let fail = self
            .store
            .fail_before_rename
            .load(std::sync::atomic::Ordering::SeqCst);
        #[cfg(not(test))]
        let fail = false;
        let _permit = self.store.writers.acquire().await;
        tokio::task::spawn_blocking(move || write_atomically(&path, &bytes, fail))
            .await
            .map_err(|_| StoreError::Io(std::io::ErrorKind::Other))??;
        self.slot.document = None;
        Ok(())
    }
}

fn io(err: std::io::Error) -> StoreError {
    StoreError::Io(err.kind())
}

fn read_document(path: &Path) -> Result<Option<Value>, StoreError> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path);
    let mut file = match file {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Err(StoreError::Symlink),
        Err(e) => return Err(io(e)),
    };
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() || meta.len() > MAX_DOCUMENT_BYTES {
        return Err(StoreError::Corrupt);
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.read_to_end(&mut bytes).map_err(io)?;
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(value) if value.is_object() => Ok(Some(value)),
        _ => Err(StoreError::Corrupt),
    }
}

fn write_atomically(path: &Path, bytes: &[u8], fail_before_rename: bool) -> Result<(), StoreError> {
    let dir = path
        .parent()
        .ok_or(StoreError::Io(std::io::ErrorKind::InvalidInput))?;
    let stem = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if let Some(result) = write_by_exchange(dir, &stem, path, bytes, fail_before_rename)
        .or_else(|| write_new_by_link(dir, &stem, path, bytes, fail_before_rename))
    {
        return result;
    }
    let mut nonce = [0u8; 8];
    getrandom::fill(&mut nonce).map_err(|_| StoreError::Io(std::io::ErrorKind::Other))?;
    let temp = dir.join(format!(".{stem}.tmp-{}", iac_agui_core::json::hex(&nonce)));
    let result = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&temp)
            .map_err(io)?;
        file.write_all(bytes).map_err(io)?;
        file.sync_all().map_err(io)?;
        if fail_before_rename {
            return Err(StoreError::Io(std::io::ErrorKind::Interrupted));
        }
        // rename() replaces a symlink at `path` itself; it never writes
        // through one.
        std::fs::rename(&temp, path).map_err(io)?;
        File::open(dir).and_then(|d| d.sync_all()).map_err(io)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

/// Once the new document is written and fsynced: the directory, to link or
/// rename it in (tests can make the write stop just before).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn written_then_dir(
    written: std::io::Result<()>,
    dir: &Path,
    fail_before_rename: bool,
) -> Result<File, StoreError> {
    written.map_err(io)?;
    if fail_before_rename {
        return Err(StoreError::Io(std::io::ErrorKind::Interrupted));
    }
    File::open(dir).map_err(io)
}

/// The first write of a thread: the document goes into an unnamed file
/// (`O_TMPFILE`), is fsynced, and is linked in under its name; then the
/// directory is fsynced. The file appears whole or not at all, as with a
/// temp file and `rename`, but its inode is allocated outside the
/// directory's lock, which on ext4 can be slow and would make every other
/// write wait. `None` when the path does not apply (the file exists, the
/// file system or `/proc` lacks what it needs) and the temp file must be
/// used.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn write_new_by_link(
    dir: &Path,
    stem: &str,
    path: &Path,
    bytes: &[u8],
    fail_before_rename: bool,
) -> Option<Result<(), StoreError>> {
    use nix::errno::Errno;
    use nix::fcntl::AtFlags;
    use std::os::fd::AsRawFd as _;

    if std::fs::symlink_metadata(path).is_ok() {
        return None;
    }
    let mut file = OpenOptions::new()
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_TMPFILE | libc::O_CLOEXEC)
        .open(dir)
        .ok()?;
    let written = file.write_all(bytes).and_then(|()| file.sync_all());
    let directory = match written_then_dir(written, dir, fail_before_rename) {
        Ok(directory) => directory,
        Err(error) => return Some(Err(error)),
    };
    let unnamed = format!("/proc/self/fd/{}", file.as_raw_fd());
    match nix::unistd::linkat(
        &directory,
        unnamed.as_str(),
        &directory,
        stem,
        AtFlags::AT_SYMLINK_FOLLOW,
    ) {
        Ok(()) => Some(directory.sync_all().map_err(io)),
        // Created meanwhile, or no /proc: the general path decides.
        Err(Errno::EEXIST | Errno::ENOENT) => None,
        Err(errno) => Some(Err(io(std::io::Error::from(errno)))),
    }
}

/// The fast path once a thread's file exists: the new document goes into
/// `.<file>.swap` (which holds the document before last), is fsynced, and
/// trades places with the file in one `renameat2(RENAME_EXCHANGE)`; then
/// the directory is fsynced. The file is at every moment either the old or
/// the new document, as with a temp file and `rename`, but no inode is
/// created or freed: on ext4 that allocation, under concurrent writes, was
/// most of a write's cost (BENCHMARKS.md). `None` when the path does not
/// apply (no regular file yet, a file system without the exchange, a swap
/// file that is not a plain file of ours) and the temp file must be used.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn write_by_exchange(
    dir: &Path,
    stem: &str,
    path: &Path,
    bytes: &[u8],
    fail_before_rename: bool,
) -> Option<Result<(), StoreError>> {
    use nix::errno::Errno;
    use nix::fcntl::{renameat2, RenameFlags};
    use std::os::unix::fs::MetadataExt as _;

    if !std::fs::symlink_metadata(path).ok()?.is_file() {
        return None;
    }
    let swap_name = format!(".{stem}.swap");
    // Opened without O_CREAT when it exists: creating takes the directory's
    // lock even for a file that is there, and every write would queue on it.
    let open = |create: bool| {
        OpenOptions::new()
            .write(true)
            .create_new(create)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(dir.join(&swap_name))
    };
    let mut swap = match open(false) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => open(true),
        other => other,
    }
    .ok()?;
    let meta = swap.metadata().ok()?;
    if !meta.is_file() || meta.nlink() != 1 || meta.mode() & 0o777 != 0o600 {
        return None;
    }
    let written = (|| {
        swap.set_len(0)?;
        swap.write_all(bytes)?;
        swap.sync_all()
    })();
    let directory = match written_then_dir(written, dir, fail_before_rename) {
        Ok(directory) => directory,
        Err(error) => return Some(Err(error)),
    };
    match renameat2(
        &directory,
        swap_name.as_str(),
        &directory,
        stem,
        RenameFlags::RENAME_EXCHANGE,
    ) {
        Ok(()) => Some(directory.sync_all().map_err(io)),
        Err(Errno::EINVAL | Errno::ENOSYS | Errno::EOPNOTSUPP) => None,
        Err(errno) => Some(Err(io(std::io::Error::from(errno)))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::atomic::Ordering;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[tokio::test]
    async fn persist_and_reload_with_permissions() {
        let root = tempfile::tempdir().unwrap();
        let store = StateStore::open(&root.path().join("agui")).unwrap();
        let mut guard = store.lock("thread-1").await;
        assert_eq!(guard.document().await.unwrap(), None);
        guard
            .persist(&json!({"threadId": "thread-1", "n": 1}))
            .await
            .unwrap();
        drop(guard);
        let file = store.dir().join("thread-1.json");
        assert_eq!(mode(&file), 0o600);
        assert_eq!(mode(store.dir()), 0o700);
        assert_eq!(mode(&root.path().join("agui")), 0o700);
        let fresh = StateStore::open(&root.path().join("agui")).unwrap();
        let mut guard = fresh.lock("thread-1").await;
        assert_eq!(guard.document().await.unwrap().unwrap()["n"], 1);
    }

    #[tokio::test]
    async fn crash_between_write_and_rename_keeps_old_document() {
        let root = tempfile::tempdir().unwrap();
        let store = StateStore::open(root.path()).unwrap();
        let mut guard = store.lock("t").await;
        guard.persist(&json!({"v": "old"})).await.unwrap();
        store.fail_before_rename.store(true, Ordering::SeqCst);
        assert!(guard.persist(&json!({"v": "new"})).await.is_err());
        assert_eq!(
            guard.document().await.unwrap().unwrap()["v"],
            "old",
            "memory untouched"
        );
        drop(guard);
        // A crashed writer leaves its temp file behind; a restart ignores and
        // removes it.
        std::fs::write(store.dir().join(".t.json.tmp-deadbeef"), b"{\"v\":\"ne").unwrap();
        let restarted = StateStore::open(root.path()).unwrap();
        let mut guard = restarted.lock("t").await;
        assert_eq!(guard.document().await.unwrap().unwrap()["v"], "old");
        let names: Vec<_> = std::fs::read_dir(restarted.dir())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|name| !name.ends_with(".swap"))
            .collect();
        assert_eq!(names, ["t.json"]);
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[tokio::test]
    async fn a_first_write_appears_whole_or_not_at_all() {
        use std::os::unix::fs::PermissionsExt as _;
        let root = tempfile::tempdir().unwrap();
        let store = StateStore::open(root.path()).unwrap();
        let names = || -> Vec<String> {
            std::fs::read_dir(store.dir())
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect()
        };
        // A crash before the link leaves no file at all, not even a temp.
        store.fail_before_rename.store(true, Ordering::SeqCst);
        let mut guard = store.lock("t").await;
        assert!(guard.persist(&json!({"v": 1})).await.is_err());
        assert_eq!(names(), Vec::<String>::new());
        assert_eq!(guard.document().await.unwrap(), None);
        store.fail_before_rename.store(false, Ordering::SeqCst);
        guard.persist(&json!({"v": 2})).await.unwrap();
        assert_eq!(names(), ["t.json"]);
        let meta = std::fs::metadata(store.dir().join("t.json")).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        assert_eq!(guard.document().await.unwrap().unwrap()["v"], 2);
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[tokio::test]
    async fn later_writes_trade_places_with_the_swap_file() {
        use std::os::unix::fs::MetadataExt as _;
        let root = tempfile::tempdir().unwrap();
        let store = StateStore::open(root.path()).unwrap();
        let file = store.dir().join("t.json");
        let swap = store.dir().join(".t.json.swap");
        let mut guard = store.lock("t").await;
        guard.persist(&json!({"v": 1})).await.unwrap();
        assert!(!swap.exists(), "the first write makes the file");
        guard.persist(&json!({"v": 2})).await.unwrap();
        let ino = |p: &Path| std::fs::metadata(p).unwrap().ino();
        let (file_before, swap_before) = (ino(&file), ino(&swap));
        guard.persist(&json!({"v": 3})).await.unwrap();
        // Same two inodes, exchanged: nothing was created or freed.
        assert_eq!((ino(&file), ino(&swap)), (swap_before, file_before));
        assert_eq!(std::fs::read(&file).unwrap(), b"{\"v\":3}");
        assert_eq!(std::fs::read(&swap).unwrap(), b"{\"v\":2}");
        assert_eq!((mode(&file), mode(&swap)), (0o600, 0o600));
        drop(guard);
        let restarted = StateStore::open(root.path()).unwrap();
        let mut guard = restarted.lock("t").await;
        assert_eq!(guard.document().await.unwrap().unwrap()["v"], 3);
    }

    #[tokio::test]
    async fn a_swap_file_that_is_not_ours_is_left_alone() {
        let root = tempfile::tempdir().unwrap();
        let store = StateStore::open(root.path()).unwrap();
        let elsewhere = root.path().join("elsewhere.json");
        std::fs::write(&elsewhere, b"keep").unwrap();
        std::os::unix::fs::symlink(&elsewhere, store.dir().join(".t.json.swap")).unwrap();
        let mut guard = store.lock("t").await;
        for v in 1..=3 {
            guard.persist(&json!({ "v": v })).await.unwrap();
        }
        assert_eq!(std::fs::read(&elsewhere).unwrap(), b"keep");
        let stored = std::fs::read(store.dir().join("t.json")).unwrap();
        assert_eq!(stored, b"{\"v\":3}");
    }

    #[tokio::test]
    async fn symlinked_state_file_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let store = StateStore::open(root.path()).unwrap();
        let target = root.path().join("elsewhere.json");
        std::fs::write(&target, b"{\"threadId\":\"s\"}").unwrap();
        std::os::unix::fs::symlink(&target, store.dir().join("s.json")).unwrap();
        let mut guard = store.lock("s").await;
        assert_eq!(guard.document().await.unwrap_err(), StoreError::Symlink);
        // Writing replaces the link, never the file it points to.
        guard.persist(&json!({"threadId": "s"})).await.unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"{\"threadId\":\"s\"}");
        assert!(!std::fs::symlink_metadata(store.dir().join("s.json"))
            .unwrap()
            .file_type()
            .is_symlink());
    }

    #[tokio::test]
    async fn symlinked_state_dir_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let real = root.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::os::unix::fs::symlink(&real, root.path().join("threads")).unwrap();
        assert_eq!(
            StateStore::open(root.path()).unwrap_err(),
            StoreError::Symlink
        );
    }

    #[tokio::test]
    async fn corrupt_files_are_errors_not_panics() {
        let root = tempfile::tempdir().unwrap();
        let store = StateStore::open(root.path()).unwrap();
        for (id, content) in [
            ("a", &b"{not json"[..]),
            ("b", b"[1,2]"),
            ("c", b"\xff\xfe"),
            ("d", b""),
        ] {
            std::fs::write(store.dir().join(format!("{id}.json")), content).unwrap();
            let mut guard = store.lock(id).await;
            assert_eq!(
                guard.document().await.unwrap_err(),
                StoreError::Corrupt,
                "{id}"
            );
        }
        std::fs::create_dir(store.dir().join("e.json")).unwrap();
        let mut guard = store.lock("e").await;
        assert!(guard.document().await.is_err());
    }

    #[tokio::test]
    async fn thousand_threads_load_lazily() {
        let root = tempfile::tempdir().unwrap();
        let store = StateStore::open(root.path()).unwrap();
        for i in 0..1000 {
            let id = format!("thread-{i}");
            store
                .lock(&id)
                .await
                .persist(&json!({"threadId": id}))
                .await
                .unwrap();
        }
        let fresh = StateStore::open(root.path()).unwrap();
        assert_eq!(fresh.loaded_count(), 0);
        let mut guard = fresh.lock("thread-737").await;
        assert_eq!(
            guard.document().await.unwrap().unwrap()["threadId"],
            "thread-737"
        );
        drop(guard);
        assert_eq!(fresh.loaded_count(), 1, "only the requested thread is read");
    }

    #[tokio::test]
    async fn forget_drops_only_idle_threads() {
        let root = tempfile::tempdir().unwrap();
        let store = StateStore::open(root.path()).unwrap();
        store
            .lock("a")
            .await
            .persist(&json!({"n": 1}))
            .await
            .unwrap();
        let held = store.lock("b").await;
        assert_eq!(store.slots.lock().unwrap().len(), 2);
        store.forget("a");
        store.forget("b");
        assert_eq!(store.slots.lock().unwrap().len(), 1, "a held thread stays");
        drop(held);
        let mut again = store.lock("a").await;
        assert_eq!(
            again.document().await.unwrap().unwrap()["n"],
            1,
            "re-read from disk"
        );
    }

    #[tokio::test]
    async fn one_thread_serialises_others_do_not_block() {
        let root = tempfile::tempdir().unwrap();
        let store = StateStore::open(root.path()).unwrap();
        let held = store.lock("busy").await;
        let other =
            tokio::time::timeout(std::time::Duration::from_secs(5), store.lock("free")).await;
        assert!(other.is_ok(), "a different thread is not blocked");
        let same = Arc::clone(&store);
        let waiter = tokio::spawn(async move { same.lock("busy").await.path.clone() });
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished(), "the same thread waits");
        drop(held);
        assert!(waiter.await.unwrap().ends_with("busy.json"));
    }

    #[test]
    fn thread_keys() {
        assert_eq!(thread_key("abc-1_2.x"), "abc-1_2.x");
        assert_eq!(thread_key("Abc"), "aguiid~416263");
        assert_eq!(
            thread_key("../etc/passwd"),
            format!("aguiid~{}", iac_agui_core::json::hex(b"../etc/passwd"))
        );
        for odd in [
            ".", "..", "a.", "con", "nul.txt", "com1", "lpt9.log", "", "a/b", "é",
        ] {
            let key = thread_key(odd);
            assert!(key.starts_with("aguiid~"), "{odd:?} → {key}");
        }
        assert_eq!(thread_key("com0"), "com0");
        assert_eq!(thread_key("console"), "console");
        let long = "X".repeat(96); // 7 + 192 = 199 characters
        assert!(thread_key(&long).starts_with("aguiid~"));
        let longer = "X".repeat(97); // 7 + 194 = 201 characters
        let key = thread_key(&longer);
        assert_eq!(
            key,
            format!(
                "aguihash~{}",
                iac_agui_core::json::sha256_hex(longer.as_bytes())
            )
        );
        assert!(key.len() <= 200);
    }
}
