//! The durable thread store (SPEC §11): one JSON file per thread under
//! `<state root>/threads/`, loaded on demand, replaced atomically.
//!
//! The store keeps documents as JSON values; the core owns their schema and
//! validates them. A thread is reached through [`StateStore::lock`], which
//! serialises requests on that thread (and only on that thread) and loads its
//! file the first time it is needed. A write fills one of the directory's
//! spare files (0600, never through a symlink), syncs it, and renames it
//! into place: a thread's first write takes the file's name
//! (`renameat2(RENAME_NOREPLACE)`, Linux), a later one trades places with
//! the old document (`RENAME_EXCHANGE`), which becomes a spare. Then the
//! directory is fsynced. Where that does not apply, a temp file in the same
//! directory is written, fsynced, renamed over the file, and the directory
//! fsynced. Either way a crash at any point leaves the old or the new
//! document, never a mix. Documents are padded with blanks to whole blocks.

use std::collections::{HashMap, VecDeque};
use std::fs::{File, OpenOptions};
use std::io::{Read as _, Write as _};
use std::os::unix::fs::{
    DirBuilderExt as _, FileExt as _, OpenOptionsExt as _, PermissionsExt as _,
};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use iac_agui_core::document::thread_key;
use serde_json::Value;
use tokio::sync::{oneshot, Mutex as AsyncMutex, OwnedMutexGuard};

/// Largest state file read (a thread document is small; anything bigger is
/// not ours).
pub const MAX_DOCUMENT_BYTES: u64 = 4 * 1024 * 1024;

/// Thread files written at once. A write is mostly waiting for its fsync,
/// but each one also holds a blocking thread, and creating or renaming an
/// entry takes the state directory's lock: a hundred concurrent writers
/// mean a hundred threads switching in and out and spinning on that lock
/// (BENCHMARKS.md), while this many still keep the disk's queue full.
const WRITERS: usize = 8;

/// While fewer other writes than this wait, a waiting admission write gets
/// the next slot set free; from there on, the other writes do (see
/// [`WaitLine`]).
const BACKLOG: usize = 32 * WRITERS;

/// Spare files kept in the state directory (`.spare-<hex>`), so that no
/// write waits for the file system to allocate an inode: a write fills a
/// spare and renames it into place (see `StateStore::write_through_spare`).
/// Only a thread's first write uses one up; a background task makes new
/// ones when half are gone.
const SPARES: usize = 64;
const SPARE_PREFIX: &str = ".spare-";

/// Why a thread document could not be read or written. Every variant maps to
/// `STATE_UNAVAILABLE` at admission or `STATE_PERSISTENCE_FAILED` mid-run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreError {
    /// The state file is a symlink (refused, never followed).
    Symlink,
    /// The file is not a JSON object (or too large).
    Corrupt,
    /// An I/O error that is not the operating system's, by its kind.
    Io(std::io::ErrorKind),
    /// An operating system error, by its number, so that the log names it
    /// ("Too many open files"). Never a path or content.
    Os(i32),
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::Symlink => f.write_str("state file is a symlink"),
            StoreError::Corrupt => f.write_str("state file is not a JSON object"),
            StoreError::Io(kind) => write!(f, "state file I/O failed: {kind}"),
            StoreError::Os(code) => write!(
                f,
                "state file I/O failed: {}",
                std::io::Error::from_raw_os_error(*code)
            ),
        }
    }
}

impl std::error::Error for StoreError {}

/// The file-backed store of thread documents.
#[derive(Debug)]
pub struct StateStore {
    dir: PathBuf,
    slots: Mutex<HashMap<String, Arc<AsyncMutex<Slot>>>>,
    writers: Mutex<WaitLine>,
    /// Renames made and made durable, for [`StateStore::sync_dir`].
    dir_syncs: Mutex<DirSyncs>,
    dir_synced: std::sync::Condvar,
    /// Names of the spare files ready for a write.
    spares: Mutex<Vec<String>>,
    /// A refill of `spares` is running.
    refilling: std::sync::atomic::AtomicBool,
    /// `false` once the file system refused `renameat2` flags: every write
    /// then takes the temp-file path.
    exchange: std::sync::atomic::AtomicBool,
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

/// Who waits for one of the [`WRITERS`] write slots. Admission writes (a
/// client waits on them for its first byte) and the others queue apart. A
/// slot set free goes to the first admission, so that it does not wait
/// behind every write of the runs already going, unless [`BACKLOG`] other
/// writes wait: their runs hold frames and documents in memory while they
/// do. Without that bound, 3,000 streams opened 200 at a time starved the
/// runs' own writes and left the heap 60 % larger (BENCHMARKS.md); with
/// it, a server that cannot keep up finishes the runs it has before it
/// admits more.
#[derive(Debug, Default)]
struct WaitLine {
    free: usize,
    admissions: VecDeque<oneshot::Sender<WriteSlot>>,
    others: VecDeque<oneshot::Sender<WriteSlot>>,
}

/// Renames in the state directory, counted, and how many of them a
/// finished directory fsync covers (see [`StateStore::sync_dir`]).
#[derive(Debug, Default)]
struct DirSyncs {
    renamed: u64,
    synced: u64,
    syncing: bool,
}

/// One of the write slots; dropping it hands it to the next in line.
#[derive(Debug)]
struct WriteSlot(Option<Arc<StateStore>>);

impl Drop for WriteSlot {
    fn drop(&mut self) {
        if let Some(store) = self.0.take() {
            store.release_slot();
        }
    }
}

#[derive(Debug, Default)]
struct Slot {
    /// `None` until the file was read; then `Some(None)` for "no thread".
    document: Option<Option<Value>>,
}

impl StateStore {
    /// Opens (creating, 0700) `<root>/threads`. Stale temp files left by a
    /// crash are removed, and so are the per-thread `.swap` files of earlier
    /// versions; spare files are kept, and made up to [`SPARES`].
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
        let mut spares = Vec::new();
        for entry in std::fs::read_dir(&dir).map_err(io)?.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with(SPARE_PREFIX) {
                spares.push(name);
            } else if name.starts_with('.') && (name.contains(".tmp-") || name.ends_with(".swap")) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
        let store = StateStore {
            dir,
            slots: Mutex::new(HashMap::new()),
            writers: Mutex::new(WaitLine {
                free: WRITERS,
                ..WaitLine::default()
            }),
            dir_syncs: Mutex::new(DirSyncs::default()),
            dir_synced: std::sync::Condvar::new(),
            spares: Mutex::new(spares),
            refilling: std::sync::atomic::AtomicBool::new(false),
            exchange: std::sync::atomic::AtomicBool::new(true),
            #[cfg(test)]
            fail_before_rename: std::sync::atomic::AtomicBool::new(false),
        };
        store.make_spares();
        Ok(Arc::new(store))
    }

    /// Waits for a write slot: a free one, else one handed on (see
    /// [`WaitLine`]).
    async fn write_slot(self: &Arc<Self>, admission: bool) -> Option<WriteSlot> {
        let waiting = {
            let mut line = crate::locked(&self.writers);
            if line.free > 0 {
                line.free -= 1;
                None
            } else {
                let (tx, rx) = oneshot::channel();
                match admission {
                    true => line.admissions.push_back(tx),
                    false => line.others.push_back(tx),
                }
                Some(rx)
            }
        };
        match waiting {
            None => Some(WriteSlot(Some(Arc::clone(self)))),
            // Only a dropped store drops a waiter's sender.
            Some(rx) => rx.await.ok(),
        }
    }

    fn release_slot(self: &Arc<Self>) {
        loop {
            let next = {
                let mut guard = crate::locked(&self.writers);
                let line = &mut *guard;
                let (first, second) = if line.others.len() < BACKLOG {
                    (&mut line.admissions, &mut line.others)
                } else {
                    (&mut line.others, &mut line.admissions)
                };
                let next = first.pop_front().or_else(|| second.pop_front());
                match next {
                    Some(next) => next,
                    None => {
                        line.free += 1;
                        return;
                    }
                }
            };
            match next.send(WriteSlot(Some(Arc::clone(self)))) {
                Ok(()) => return,
                // That writer went away: the next one gets the slot.
                Err(mut slot) => {
                    slot.0 = None;
                }
            }
        }
    }

    /// The directory holding the thread files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Waits for exclusive access to `thread_id`. Requests on other threads
    /// are not blocked.
    pub async fn lock(self: &Arc<Self>, thread_id: &str) -> ThreadGuard {
        let slot = {
            let mut slots = crate::locked(&self.slots);
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
        let mut slots = crate::locked(&self.slots);
        if slots
            .get(thread_id)
            .is_some_and(|slot| Arc::strong_count(slot) == 1 && slot.try_lock().is_ok())
        {
            slots.remove(thread_id);
        }
    }

    /// How many threads have been read from disk (tests check laziness).
    pub fn loaded_count(&self) -> usize {
        let slots: Vec<_> = crate::locked(&self.slots).values().cloned().collect();
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
            let loaded = if absent(&self.path) {
                None
            } else {
                let path = self.path.clone();
                tokio::task::spawn_blocking(move || read_document(&path))
                    .await
                    .map_err(|_| StoreError::Io(std::io::ErrorKind::Other))??
            };
            self.slot.document = Some(loaded);
        }
        Ok(self.slot.document.as_ref().and_then(Option::as_ref))
    }

    /// Replaces the document on disk. The store keeps no copy of what it
    /// wrote (the machine holds the live document): the next
    /// [`ThreadGuard::document`] reads the file again. An `admission` write
    /// (a client waits on it for its first byte) waits for a slot in a
    /// queue of its own (see [`WaitLine`]).
    ///
    /// # Errors
    /// The write failed; the old document stays in place on disk.
    pub async fn persist(&mut self, document: &Value, admission: bool) -> Result<(), StoreError> {
        let bytes = padded(serde_json::to_vec(document).map_err(|_| StoreError::Corrupt)?);
        let path = self.path.clone();
        #[cfg(test)]
        let fail = self
            .store
            .fail_before_rename
            .load(std::sync::atomic::Ordering::SeqCst);
        #[cfg(not(test))]
        let fail = false;
        let _slot = self.store.write_slot(admission).await;
        let store = Arc::clone(&self.store);
        let written = tokio::task::spawn_blocking(move || store.write(&path, &bytes, fail))
            .await
            .map_err(|_| StoreError::Io(std::io::ErrorKind::Other))?;
        if self.store.wants_spares() {
            let store = Arc::clone(&self.store);
            tokio::task::spawn_blocking(move || store.make_spares());
        }
        written?;
        self.slot.document = None;
        Ok(())
    }
}

impl StateStore {
    /// Writes `bytes` as the document at `path`, atomically: through a spare
    /// file where the file system allows it, else through a temp file.
    fn write(&self, path: &Path, bytes: &[u8], fail_before_rename: bool) -> Result<(), StoreError> {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        if let Some(result) = self.write_through_spare(path, bytes, fail_before_rename) {
            return result;
        }
        write_by_rename(path, bytes, fail_before_rename)
    }

    /// The document goes into a spare file, is synced, and the spare is
    /// renamed to the thread's file: a first write takes the name
    /// (`RENAME_NOREPLACE`), a later one trades places with the old document
    /// (`RENAME_EXCHANGE`), whose inode becomes the spare. Then the directory
    /// is fsynced. The file is at every moment the old document or the new
    /// one, as with a temp file and `rename`, but no inode is allocated or
    /// freed on the way: on ext4, under concurrent writes, that was most of
    /// a write's cost (BENCHMARKS.md). `None` when this path does not apply
    /// (a symlink where the file goes, no exchange on this file system, no
    /// spare to be had) and the temp file must be used.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn write_through_spare(
        &self,
        path: &Path,
        bytes: &[u8],
        fail_before_rename: bool,
    ) -> Option<Result<(), StoreError>> {
        use nix::errno::Errno;
        use nix::fcntl::{renameat2, RenameFlags};
        use std::sync::atomic::Ordering;

        if !self.exchange.load(Ordering::Relaxed) {
            return None;
        }
        let flags = match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.is_file() => RenameFlags::RENAME_EXCHANGE,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => RenameFlags::RENAME_NOREPLACE,
            _ => return None,
        };
        let stem = path.file_name()?;
        let (name, file, len) = self.take_spare()?;
        // Written over the old content: a document as long as the spare
        // (both padded to whole blocks) needs no block allocated or freed
        // and leaves the inode as it was, so fdatasync writes the data
        // alone, not the inode or the file system's bitmaps too.
        let written = file
            .write_all_at(bytes, 0)
            .and_then(|()| match len == bytes.len() as u64 {
                true => Ok(()),
                false => file.set_len(bytes.len() as u64),
            })
            .and_then(|()| file.sync_data());
        drop(file);
        let directory = match written_then_dir(written, &self.dir, fail_before_rename) {
            Ok(directory) => directory,
            Err(error) => {
                self.give_back(name);
                return Some(Err(error));
            }
        };
        match renameat2(&directory, name.as_str(), &directory, stem, flags) {
            Ok(()) => {
                if flags == RenameFlags::RENAME_EXCHANGE {
                    self.give_back(name);
                }
                Some(self.sync_dir(&directory))
            }
            Err(errno) => {
                self.give_back(name);
                match errno {
                    Errno::EINVAL | Errno::ENOSYS | Errno::EOPNOTSUPP => {
                        self.exchange.store(false, Ordering::Relaxed);
                        None
                    }
                    // The file appeared or went meanwhile: the general path decides.
                    Errno::EEXIST | Errno::ENOENT => None,
                    errno => Some(Err(io(std::io::Error::from(errno)))),
                }
            }
        }
    }

    /// Makes a rename just done in the state directory durable: it is once
    /// a directory fsync that began after it has finished. Concurrent
    /// writers share fsyncs (group commit): one running takes the renames
    /// made before it began, and those who wait for it return when it covers
    /// theirs, or start the next. Each fsync flushes the disk's cache, which
    /// in a virtual machine costs exits and context switches (about one
    /// fsync in eight was saved under 100 concurrent runs, BENCHMARKS.md).
    fn sync_dir(&self, directory: &File) -> Result<(), StoreError> {
        let mut syncs = crate::locked(&self.dir_syncs);
        syncs.renamed += 1;
        let mine = syncs.renamed;
        loop {
            if syncs.synced >= mine {
                return Ok(());
            }
            if !syncs.syncing {
                syncs.syncing = true;
                let covers = syncs.renamed;
                drop(syncs);
                let result = directory.sync_all();
                syncs = crate::locked(&self.dir_syncs);
                syncs.syncing = false;
                if result.is_ok() {
                    syncs.synced = syncs.synced.max(covers);
                }
                self.dir_synced.notify_all();
                // A failed fsync is its own writer's error; the others
                // covered by it try again themselves.
                return result.map_err(io);
            }
            syncs = self
                .dir_synced
                .wait(syncs)
                .unwrap_or_else(|e| e.into_inner());
        }
    }

    /// A spare from the pool (one that is no longer a plain file of ours is
    /// dropped from it), or a new one when the pool is empty; with its
    /// length.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn take_spare(&self) -> Option<(String, File, u64)> {
        use std::os::unix::fs::MetadataExt as _;
        let ours = |meta: &std::fs::Metadata| {
            meta.is_file() && meta.nlink() == 1 && meta.mode() & 0o777 == 0o600
        };
        loop {
            let pooled = crate::locked(&self.spares).pop();
            let made = pooled.is_none();
            let name = pooled.or_else(|| make_spare(&self.dir))?;
            let file = OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                .open(self.dir.join(&name));
            if let Ok(file) = file {
                if let Some(meta) = file.metadata().ok().filter(ours) {
                    return Some((name, file, meta.len()));
                }
            }
            if made {
                return None;
            }
        }
    }

    fn give_back(&self, spare: String) {
        crate::locked(&self.spares).push(spare);
    }

    /// Claims the refill when the pool is down to half (`false`: it is not,
    /// or another refill runs).
    fn wants_spares(&self) -> bool {
        use std::sync::atomic::Ordering;
        let low = crate::locked(&self.spares).len() < SPARES / 2;
        low && !self.refilling.swap(true, Ordering::AcqRel)
    }

    /// Tops the pool up to [`SPARES`]; runs on a blocking thread, one at a
    /// time, off every write's path.
    fn make_spares(&self) {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        while crate::locked(&self.spares).len() < SPARES {
            let Some(name) = make_spare(&self.dir) else {
                break;
            };
            self.give_back(name);
        }
        self.refilling
            .store(false, std::sync::atomic::Ordering::Release);
    }
}

fn io(err: std::io::Error) -> StoreError {
    err.raw_os_error()
        .map_or(StoreError::Io(err.kind()), StoreError::Os)
}

/// Whether no file (nor symlink) is at `path`: one lookup, made on the
/// event loop so that a new thread's admission needs no trip to a blocking
/// thread. The state directory is written all the time, so its blocks are
/// in the page cache and the lookup does not wait for the disk (the
/// workspace check makes a few such lookups per request too). Reading a
/// file that is there is left to a blocking thread.
fn absent(path: &Path) -> bool {
    matches!(std::fs::symlink_metadata(path), Err(e) if e.kind() == std::io::ErrorKind::NotFound)
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

/// The general path: a temp file in the same directory (created
/// exclusively, 0600, never through a symlink), fsynced, renamed over the
/// document, then the directory fsynced.
fn write_by_rename(path: &Path, bytes: &[u8], fail_before_rename: bool) -> Result<(), StoreError> {
    let dir = path
        .parent()
        .ok_or(StoreError::Io(std::io::ErrorKind::InvalidInput))?;
    let stem = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = dir.join(format!(".{stem}.tmp-{}", nonce_hex()?));
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

fn nonce_hex() -> Result<String, StoreError> {
    let mut nonce = [0u8; 8];
    getrandom::fill(&mut nonce).map_err(|_| StoreError::Io(std::io::ErrorKind::Other))?;
    Ok(iac_agui_core::json::hex(&nonce))
}

/// Once the new document is written and fsynced: the directory, to rename
/// it in (tests can make the write stop just before).
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

/// A new spare file (0600, one padded block of blanks, its data on disk)
/// under a fresh `.spare-<hex>` name. Its inode comes from `O_TMPFILE` and
/// is linked in after, so that the allocation, slow on ext4, does not hold
/// the directory's lock that every write's rename takes; without
/// `O_TMPFILE` or `/proc` it is created by name.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn make_spare(dir: &Path) -> Option<String> {
    use nix::fcntl::{AtFlags, AT_FDCWD};
    use std::os::fd::AsRawFd as _;

    let name = format!("{SPARE_PREFIX}{}", nonce_hex().ok()?);
    let path = dir.join(&name);
    let blank = padded(Vec::new());
    let unnamed = OpenOptions::new()
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_TMPFILE | libc::O_CLOEXEC)
        .open(dir);
    if let Ok(mut file) = unnamed {
        let proc_path = format!("/proc/self/fd/{}", file.as_raw_fd());
        let filled = file.write_all(&blank).and_then(|()| file.sync_data());
        let linked = filled.is_ok()
            && nix::unistd::linkat(
                AT_FDCWD,
                proc_path.as_str(),
                AT_FDCWD,
                path.as_path(),
                AtFlags::AT_SYMLINK_FOLLOW,
            )
            .is_ok();
        if linked {
            return Some(name);
        }
    }
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&path)
        .ok()?;
    // Unfilled, it is still a spare: its first write allocates the block.
    let _ = file.write_all(&blank).and_then(|()| file.sync_data());
    Some(name)
}

/// Documents are padded with blanks to whole blocks of this size (JSON
/// allows trailing whitespace; a file takes a whole block anyway). Then a
/// rewrite is almost always as long as the file it overwrites, which
/// leaves the inode alone: `fdatasync` writes the data block and flushes,
/// with no inode write to wait for (BENCHMARKS.md).
const PAD_TO: usize = 4096;

/// `bytes`, then blanks and a newline up to a multiple of [`PAD_TO`].
fn padded(mut bytes: Vec<u8>) -> Vec<u8> {
    let len = (bytes.len() + 1).next_multiple_of(PAD_TO);
    bytes.resize(len - 1, b' ');
    bytes.push(b'\n');
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::BTreeMap;
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
            .persist(&json!({"threadId": "thread-1", "n": 1}), false)
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

    /// The directory's names other than spare files.
    fn documents(store: &StateStore) -> Vec<String> {
        let mut names: Vec<_> = std::fs::read_dir(store.dir())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|name| !name.starts_with(SPARE_PREFIX))
            .collect();
        names.sort();
        names
    }

    /// The spare files on disk, by name, with their inode numbers.
    fn spares_on_disk(store: &StateStore) -> BTreeMap<String, u64> {
        use std::os::unix::fs::MetadataExt as _;
        std::fs::read_dir(store.dir())
            .unwrap()
            .map(|e| e.unwrap())
            .map(|e| {
                (
                    e.file_name().into_string().unwrap(),
                    e.metadata().unwrap().ino(),
                )
            })
            .filter(|(name, _)| name.starts_with(SPARE_PREFIX))
            .collect()
    }

    /// A file's document, without the padding.
    fn stored(path: &Path) -> String {
        let text = std::fs::read_to_string(path).unwrap();
        assert_eq!(text.len() % PAD_TO, 0, "padded to whole blocks");
        assert!(text.ends_with('\n'));
        text.trim_end().to_owned()
    }

    fn pooled(store: &StateStore) -> usize {
        store.spares.lock().unwrap().len()
    }

    #[tokio::test]
    async fn a_failed_write_names_the_os_error_but_no_path() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("gone");
        let store = StateStore::open(&dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let mut guard = store.lock("t").await;
        let error = guard.persist(&json!({"v": 1}), false).await.unwrap_err();
        assert_eq!(error, StoreError::Os(libc::ENOENT));
        let message = error.to_string();
        assert!(message.contains("No such file or directory"), "{message}");
        assert!(!message.contains("gone"), "{message}");
    }

    #[tokio::test]
    async fn crash_between_write_and_rename_keeps_old_document() {
        let root = tempfile::tempdir().unwrap();
        let store = StateStore::open(root.path()).unwrap();
        let mut guard = store.lock("t").await;
        guard.persist(&json!({"v": "old"}), false).await.unwrap();
        store.fail_before_rename.store(true, Ordering::SeqCst);
        assert!(guard.persist(&json!({"v": "new"}), false).await.is_err());
        assert_eq!(
            guard.document().await.unwrap().unwrap()["v"],
            "old",
            "memory untouched"
        );
        drop(guard);
        // A crashed writer leaves its temp file behind, an older version its
        // swap file; a restart ignores and removes both.
        std::fs::write(store.dir().join(".t.json.tmp-deadbeef"), b"{\"v\":\"ne").unwrap();
        std::fs::write(store.dir().join(".t.json.swap"), b"{\"v\":\"older\"}").unwrap();
        let restarted = StateStore::open(root.path()).unwrap();
        let mut guard = restarted.lock("t").await;
        assert_eq!(guard.document().await.unwrap().unwrap()["v"], "old");
        assert_eq!(documents(&restarted), ["t.json"]);
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[tokio::test]
    async fn a_first_write_appears_whole_or_not_at_all() {
        let root = tempfile::tempdir().unwrap();
        let store = StateStore::open(root.path()).unwrap();
        // A crash before the rename leaves no file at all, not even a temp.
        store.fail_before_rename.store(true, Ordering::SeqCst);
        let mut guard = store.lock("t").await;
        assert!(guard.persist(&json!({"v": 1}), false).await.is_err());
        assert_eq!(documents(&store), Vec::<String>::new());
        assert_eq!(guard.document().await.unwrap(), None);
        assert_eq!(pooled(&store), SPARES, "the spare went back");
        store.fail_before_rename.store(false, Ordering::SeqCst);
        guard.persist(&json!({"v": 2}), false).await.unwrap();
        assert_eq!(documents(&store), ["t.json"]);
        assert_eq!(mode(&store.dir().join("t.json")), 0o600);
        assert_eq!(guard.document().await.unwrap().unwrap()["v"], 2);
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[tokio::test]
    async fn writes_trade_places_with_spare_files() {
        use std::os::unix::fs::MetadataExt as _;
        let root = tempfile::tempdir().unwrap();
        let store = StateStore::open(root.path()).unwrap();
        let spares = spares_on_disk(&store);
        assert_eq!(spares.len(), SPARES, "made when the store opens");
        let file = store.dir().join("t.json");
        let ino = |p: &Path| std::fs::metadata(p).unwrap().ino();
        let mut guard = store.lock("t").await;
        guard.persist(&json!({"v": 1}), false).await.unwrap();
        // The first write takes a spare's inode and name.
        let after_first = spares_on_disk(&store);
        assert_eq!(after_first.len(), SPARES - 1);
        assert!(spares.values().any(|&i| i == ino(&file)));
        assert!(!after_first.values().any(|&i| i == ino(&file)));
        let inodes = |spares: &BTreeMap<String, u64>| {
            let mut all: Vec<u64> = spares.values().copied().collect();
            all.push(ino(&file));
            all.sort_unstable();
            all
        };
        for v in 2..=4 {
            let (before, old) = (inodes(&spares_on_disk(&store)), ino(&file));
            guard.persist(&json!({ "v": v }), false).await.unwrap();
            let after = spares_on_disk(&store);
            // The same inodes: one spare and the file traded places.
            assert_eq!(inodes(&after), before, "nothing created or freed");
            assert_ne!(ino(&file), old);
            let holder = after.iter().find(|(_, &i)| i == old).unwrap().0;
            let previous = format!("{{\"v\":{}}}", v - 1);
            assert_eq!(stored(&store.dir().join(holder)), previous);
            assert_eq!(mode(&store.dir().join(holder)), 0o600);
        }
        assert_eq!(stored(&file), r#"{"v":4}"#);
        assert_eq!(std::fs::metadata(&file).unwrap().len(), PAD_TO as u64);
        assert_eq!(mode(&file), 0o600);
        // A longer document, then a shorter one, over the same inodes.
        let long = json!({ "v": "x".repeat(5000) });
        guard.persist(&long, false).await.unwrap();
        guard.persist(&json!({"v": 6}), false).await.unwrap();
        guard.persist(&json!({"v": 7}), false).await.unwrap();
        assert_eq!(stored(&file), r#"{"v":7}"#);
        assert_eq!(std::fs::metadata(&file).unwrap().len(), PAD_TO as u64);
        drop(guard);
        let restarted = StateStore::open(root.path()).unwrap();
        assert_eq!(pooled(&restarted), SPARES, "spares found again and made up");
        let mut guard = restarted.lock("t").await;
        assert_eq!(guard.document().await.unwrap().unwrap()["v"], 7);
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn spares_are_made_up_when_half_are_used() {
        let root = tempfile::tempdir().unwrap();
        let store = StateStore::open(root.path()).unwrap();
        for i in 0..=SPARES / 2 {
            let id = format!("t{i}");
            let mut guard = store.lock(&id).await;
            guard.persist(&json!({ "i": i }), false).await.unwrap();
        }
        // The write that left fewer than half of them started a refill.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while pooled(&store) < SPARES && std::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        assert_eq!(pooled(&store), SPARES);
        assert_eq!(spares_on_disk(&store).len(), SPARES);
        assert_eq!(documents(&store).len(), SPARES / 2 + 1);
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[tokio::test]
    async fn a_spare_that_is_not_ours_is_left_alone() {
        let root = tempfile::tempdir().unwrap();
        let store = StateStore::open(root.path()).unwrap();
        let elsewhere = root.path().join("elsewhere.json");
        std::fs::write(&elsewhere, b"keep").unwrap();
        let linked = root.path().join("linked.json");
        // Every spare the pool holds becomes a symlink or a hard link.
        let names: Vec<String> = store.spares.lock().unwrap().clone();
        for (i, name) in names.iter().enumerate() {
            let path = store.dir().join(name);
            std::fs::remove_file(&path).unwrap();
            if i % 2 == 0 {
                std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
            } else {
                std::fs::write(&path, b"keep").unwrap();
                let _ = std::fs::remove_file(&linked);
                std::fs::hard_link(&path, &linked).unwrap();
            }
        }
        let mut guard = store.lock("t").await;
        for v in 1..=3 {
            guard.persist(&json!({ "v": v }), false).await.unwrap();
        }
        assert_eq!(std::fs::read(&elsewhere).unwrap(), b"keep");
        assert_eq!(std::fs::read(&linked).unwrap(), b"keep");
        assert_eq!(stored(&store.dir().join("t.json")), r#"{"v":3}"#);
    }

    /// A store, and all its write slots, held.
    async fn slots_all_taken() -> (tempfile::TempDir, Arc<StateStore>, Vec<WriteSlot>) {
        let root = tempfile::tempdir().unwrap();
        let store = StateStore::open(root.path()).unwrap();
        let mut held = Vec::new();
        for _ in 0..WRITERS {
            held.push(store.write_slot(false).await.unwrap());
        }
        (root, store, held)
    }

    #[tokio::test]
    async fn admissions_get_a_write_slot_first() {
        let (_root, store, mut held) = slots_all_taken().await;
        let (order_tx, mut order) = tokio::sync::mpsc::unbounded_channel();
        let mut waiters = Vec::new();
        let queued = [
            ("other-1", false),
            ("other-2", false),
            ("other-3", false),
            ("admission-1", true),
            ("admission-2", true),
        ];
        for (name, admission) in queued {
            let (store, order_tx) = (Arc::clone(&store), order_tx.clone());
            waiters.push(tokio::spawn(async move {
                let slot = store.write_slot(admission).await;
                order_tx.send(name).unwrap();
                slot
            }));
            tokio::task::yield_now().await;
        }
        assert!(order.try_recv().is_err(), "all {WRITERS} slots are taken");
        let mut served = Vec::new();
        for _ in 0..queued.len() {
            drop(held.pop());
            served.push(order.recv().await.unwrap());
        }
        // Admissions first; each queue in its order.
        let expected = [
            "admission-1",
            "admission-2",
            "other-1",
            "other-2",
            "other-3",
        ];
        assert_eq!(served, expected);
        // A waiter that went away does not keep the slot it was handed.
        let gone = tokio::spawn({
            let store = Arc::clone(&store);
            async move { store.write_slot(false).await }
        });
        tokio::task::yield_now().await;
        gone.abort();
        drop(held.pop());
        assert!(gone.await.unwrap_err().is_cancelled());
        let mut slots = Vec::new();
        for waiter in waiters {
            slots.push(waiter.await.unwrap());
        }
        drop(slots);
        drop(held);
        let line = store.writers.lock().unwrap();
        assert_eq!(line.free, WRITERS, "every slot came back");
        assert!(line.admissions.is_empty() && line.others.is_empty());
    }

    #[tokio::test]
    async fn a_long_backlog_of_run_writes_goes_before_admissions() {
        let (_root, store, mut held) = slots_all_taken().await;
        let (order_tx, mut order) = tokio::sync::mpsc::unbounded_channel();
        let mut waiters = Vec::new();
        for i in 0..=BACKLOG {
            let admission = i == BACKLOG / 2;
            let (store, order_tx) = (Arc::clone(&store), order_tx.clone());
            waiters.push(tokio::spawn(async move {
                let slot = store.write_slot(admission).await;
                order_tx.send(admission).unwrap();
                drop(slot);
            }));
            tokio::task::yield_now().await;
        }
        // BACKLOG other writes wait: the first slot set free goes to one of
        // them; then fewer wait, and the admission is next.
        let mut served = Vec::new();
        for _ in 0..3 {
            drop(held.pop());
            served.push(order.recv().await.unwrap());
        }
        assert_eq!(served, [false, true, false]);
        drop(held);
        for waiter in waiters {
            waiter.await.unwrap();
        }
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn concurrent_writes_are_each_covered_by_a_directory_fsync() {
        let root = tempfile::tempdir().unwrap();
        let store = StateStore::open(root.path()).unwrap();
        let writers: Vec<_> = (0..64)
            .map(|i| {
                let store = Arc::clone(&store);
                tokio::spawn(async move {
                    let id = format!("t{}", i % 16);
                    store
                        .lock(&id)
                        .await
                        .persist(&json!({ "i": i }), i % 3 == 0)
                        .await
                })
            })
            .collect();
        for writer in writers {
            writer.await.unwrap().unwrap();
        }
        let (renamed, synced) = {
            let syncs = store.dir_syncs.lock().unwrap();
            (syncs.renamed, syncs.synced)
        };
        assert_eq!(renamed, 64);
        assert_eq!(synced, 64, "every rename is covered by a finished fsync");
        let fresh = StateStore::open(root.path()).unwrap();
        for t in 0..16 {
            let mut guard = fresh.lock(&format!("t{t}")).await;
            let i = guard.document().await.unwrap().unwrap()["i"]
                .as_u64()
                .unwrap();
            assert_eq!(i % 16, t, "the thread's own document");
        }
    }

    #[test]
    fn documents_are_padded_to_whole_blocks() {
        for (len, padded_len) in [
            (0, PAD_TO),
            (600, PAD_TO),
            (PAD_TO - 1, PAD_TO),
            (PAD_TO, 2 * PAD_TO),
        ] {
            let bytes = padded(vec![b'x'; len]);
            assert_eq!(bytes.len(), padded_len, "{len}");
            assert!(bytes[..len].iter().all(|&b| b == b'x'));
            assert!(bytes[len..padded_len - 1].iter().all(|&b| b == b' '));
            assert_eq!(bytes.last(), Some(&b'\n'));
        }
        let root = tempfile::tempdir().unwrap();
        let path = root.path().join("t.json");
        std::fs::write(&path, padded(br#"{"v":1}"#.to_vec())).unwrap();
        assert_eq!(read_document(&path).unwrap().unwrap()["v"], 1);
    }

    #[test]
    fn absence_is_one_lookup() {
        let root = tempfile::tempdir().unwrap();
        let missing = root.path().join("missing.json");
        assert!(absent(&missing));
        let present = root.path().join("present.json");
        std::fs::write(&present, b"{}").unwrap();
        assert!(!absent(&present));
        let link = root.path().join("link.json");
        std::os::unix::fs::symlink(&missing, &link).unwrap();
        assert!(!absent(&link), "a dangling symlink is not an absence");
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
        guard
            .persist(&json!({"threadId": "s"}), false)
            .await
            .unwrap();
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
                .persist(&json!({"threadId": id}), false)
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
            .persist(&json!({"n": 1}), false)
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
