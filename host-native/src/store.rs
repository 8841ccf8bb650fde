//! The durable thread store (SPEC §11): one JSON file per thread under
//! `<state root>/threads/`, loaded on demand, replaced atomically.
//!
//! The store keeps documents as JSON values; the core owns their schema and
//! validates them. A thread is reached through [`StateStore::lock`], which
//! serialises requests on that thread (and only on that thread) and loads its
//! file the first time it is needed. The directory is opened once, never
//! through a symlink, and every file is reached relative to it. A write
//! fills a spare inode (0600, never reached through a symlink), syncs it,
//! and puts it in place: a thread's first write fills an inode that has
//! no name yet (`O_TMPFILE`) and links it in under the file's name, a
//! later one fills one of the directory's spare files and trades places
//! with the old document (`renameat2(RENAME_EXCHANGE)`, Linux), which
//! becomes a spare. Then the directory is fsynced, and the inodes linked
//! in, whose link counts that would not write (see `settle`). Where that
//! does not apply, a temp file in the same directory is written, fsynced,
//! renamed over the file, and the directory fsynced. Either way a crash
//! at any point leaves the old or the new document, never a mix.
//! Documents are padded with blanks to whole blocks.
//!
//! Writes are made in batches (group commit), in two lanes that commit side
//! by side: admissions, and the other writes. In each lane the writes that
//! wait while one batch is made form the next. Each batch is flushed at
//! once where it can be, then renamed, then covered by one directory fsync
//! (see [`StateStore::commit_queued`]).
//!
//! The documents written last are also kept in memory, a bounded number
//! of them ([`Recent`]), so that a conversation's next turn is read from
//! there instead of from its file.

use std::collections::{HashMap, VecDeque};
use std::fs::{File, OpenOptions};
use std::io::{Read as _, Write as _};
use std::os::unix::fs::{
    DirBuilderExt as _, FileExt as _, OpenOptionsExt as _, PermissionsExt as _,
};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use iac_agui_core::document::thread_key;
use nix::errno::Errno;
use nix::fcntl::{openat, renameat, AtFlags, OFlag};
use nix::sys::stat::{fstatat, Mode, SFlag};
use serde_json::Value;
use tokio::sync::{oneshot, Mutex as AsyncMutex, OwnedMutexGuard};

/// Largest state file read (a thread document is small; anything bigger is
/// not ours).
pub const MAX_DOCUMENT_BYTES: u64 = 4 * 1024 * 1024;

/// Spare files kept in the state directory (`.spare-<hex>`), so that no
/// write waits for the file system to allocate an inode: a write fills a
/// spare and trades places with the thread's file (see
/// `StateStore::commit_through_spares`), whose inode becomes the spare.
/// Only a thread's first write uses one up, when no unnamed spare is left;
/// a background task makes new ones when half are gone.
const SPARES: usize = 64;
const SPARE_PREFIX: &str = ".spare-";

/// Unnamed spare inodes (`O_TMPFILE`, held open) kept for threads' first
/// writes: a first write fills one and links it in under the thread's
/// name, one directory entry added where a named spare costs two changes
/// (the rename adds the thread's name and removes the spare's) on top of
/// the entry the spare was made with. A background task makes new ones
/// when half are gone. They vanish when the process exits.
const UNNAMED_SPARES: usize = 64;

/// Unwritten data of others, in bytes, under which a batch of writes is
/// flushed with one `syncfs` (see `flush`).
const SYNCFS_SLACK: u64 = 4 << 20;

/// Files of one batch flushed at once when they are flushed one by one
/// (see `flush`).
const FLUSHERS: usize = 8;

/// Most writes in one batch: a batch holds a descriptor for each, so this
/// bounds the descriptors the store takes at once (see
/// [`MOST_DESCRIPTORS`]).
const MAX_BATCH: usize = SPARES;

/// Most descriptors the store holds at once: the directory, each lane's
/// batch (its files, and one more for a moment: a spare being made or
/// `/proc/meminfo`), the refill's spare being made, and the unnamed
/// spares (a batch's files come out of them). The server keeps them back
/// from its runs' connections (`app::DescriptorBudget`).
pub const MOST_DESCRIPTORS: u64 = 1 + 2 * (MAX_BATCH as u64 + 1) + 1 + UNNAMED_SPARES as u64;

/// Most documents kept in [`Recent`], and most bytes of them.
const RECENT_DOCUMENTS: usize = 1024;
const RECENT_BYTES: usize = 4 << 20;

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
    /// `dir`, opened once: files are opened, looked up and renamed
    /// relative to it (one name to look up, not the whole path), and its
    /// fsync makes a batch's renames durable.
    directory: File,
    slots: Mutex<HashMap<String, Arc<AsyncMutex<Slot>>>>,
    /// Writes waiting for the next batch, by lane: admissions, then the
    /// other writes (see [`lane`]).
    queues: [Mutex<WriteQueue>; 2],
    /// Names of the spare files ready for a write.
    spares: Mutex<Vec<String>>,
    /// Unnamed spare inodes ready for a first write, with their lengths.
    unnamed: Mutex<Vec<(File, u64)>>,
    /// `false` where unnamed inodes cannot be made or linked in (no
    /// `O_TMPFILE` on this file system, or no `/proc`).
    unnamed_ok: std::sync::atomic::AtomicBool,
    /// A refill of `spares` and `unnamed` is running.
    refilling: std::sync::atomic::AtomicBool,
    /// `false` once the file system refused `renameat2` flags: every write
    /// then takes the temp-file path.
    exchange: std::sync::atomic::AtomicBool,
    recent: Mutex<Recent>,
    #[cfg(test)]
    fail_before_rename: std::sync::atomic::AtomicBool,
    /// The batches committed: how many admissions, how many other writes.
    #[cfg(test)]
    batches: Mutex<Vec<(usize, usize)>>,
}

/// Exclusive access to one thread's document while the guard lives.
#[derive(Debug)]
pub struct ThreadGuard {
    slot: OwnedMutexGuard<Slot>,
    /// The thread's file name in the directory.
    name: String,
    store: Arc<StateStore>,
}

/// The writes waiting for the next batch, and whether a blocking task is
/// committing batches (it takes them until none wait).
#[derive(Debug, Default)]
struct WriteQueue {
    writes: Vec<Write>,
    committing: bool,
}

/// One document to write, and who waits for the outcome.
#[derive(Debug)]
struct Write {
    /// The file's name in the directory.
    name: String,
    /// Whether a document of ours is in the file, when the store knows it
    /// (it read or wrote the file last); else the write looks.
    exists: Option<bool>,
    bytes: Vec<u8>,
    /// A client waits on it for its first byte.
    admission: bool,
    /// Tests: the write stops just before its rename, as in a crash.
    fail_before_rename: bool,
    done: oneshot::Sender<Result<(), StoreError>>,
}

/// A spare filled with a write's document, and how it is put in place.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[derive(Debug)]
struct Spare {
    /// The spare file's name, renamed with `flags`; `None` for an unnamed
    /// inode, linked in under the thread's name.
    name: Option<String>,
    /// Shared with the blocking threads that flush it (`flush_each`).
    file: Arc<File>,
    flags: nix::fcntl::RenameFlags,
}

impl Write {
    fn finish(self, result: Result<(), StoreError>) {
        // The writer may have gone (its run ended); the outcome is on disk.
        let _ = self.done.send(result);
    }
}

/// The documents this store wrote last, as the JSON of their files
/// (without the padding), by file. A thread's next request reads its
/// document from here, on the event loop, instead of from its file on a
/// blocking thread: a conversation's turns come back to the same threads,
/// which the engine forgets between runs (BENCHMARKS.md, twenty-fourth
/// session). Only a write that succeeded enters; a failed one removes its
/// file's entry, since the file may then hold either document. At most
/// [`RECENT_DOCUMENTS`] documents and [`RECENT_BYTES`] bytes; the oldest go
/// first.
#[derive(Debug, Default)]
struct Recent {
    /// By file name: the document's number in `order`, and its JSON.
    documents: HashMap<String, (u64, Arc<[u8]>)>,
    /// Files from the oldest write to the newest, with each write's
    /// number; an entry whose number is no longer its file's is stale.
    order: VecDeque<(u64, String)>,
    written: u64,
    bytes: usize,
}

impl Recent {
    fn get(&self, name: &str) -> Option<Arc<[u8]>> {
        self.documents.get(name).map(|(_, json)| Arc::clone(json))
    }

    fn insert(&mut self, name: String, json: Arc<[u8]>) {
        self.remove(&name);
        self.written += 1;
        self.bytes += json.len();
        self.order.push_back((self.written, name.clone()));
        self.documents.insert(name, (self.written, json));
        while self.documents.len() > RECENT_DOCUMENTS || self.bytes > RECENT_BYTES {
            let Some((number, oldest)) = self.order.pop_front() else {
                break;
            };
            if self
                .documents
                .get(&oldest)
                .is_some_and(|(n, _)| *n == number)
            {
                self.remove(&oldest);
            }
        }
        // Rewrites of the same files leave stale entries behind.
        if self.order.len() > 2 * RECENT_DOCUMENTS {
            let documents = &self.documents;
            self.order
                .retain(|(number, name)| documents.get(name).is_some_and(|(n, _)| n == number));
        }
    }

    fn remove(&mut self, name: &str) {
        if let Some((_, json)) = self.documents.remove(name) {
            self.bytes -= json.len();
        }
    }
}

#[derive(Debug, Default)]
struct Slot {
    /// `None` until the file was read; then `Some(None)` for "no thread".
    document: Option<Option<Value>>,
    /// Whether the thread's file holds a document of ours, as far as the
    /// store knows: since it last read or wrote the file (`None`: not
    /// known, the next write looks).
    on_disk: Option<bool>,
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
        let directory = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&dir)
            .map_err(|e| match e.raw_os_error() {
                Some(libc::ELOOP) => StoreError::Symlink,
                _ => io(e),
            })?;
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
            directory,
            slots: Mutex::new(HashMap::new()),
            queues: Default::default(),
            spares: Mutex::new(spares),
            unnamed: Mutex::new(Vec::new()),
            unnamed_ok: std::sync::atomic::AtomicBool::new(Path::new("/proc/self/fd").is_dir()),
            refilling: std::sync::atomic::AtomicBool::new(false),
            exchange: std::sync::atomic::AtomicBool::new(true),
            recent: Mutex::default(),
            #[cfg(test)]
            fail_before_rename: std::sync::atomic::AtomicBool::new(false),
            #[cfg(test)]
            batches: Mutex::new(Vec::new()),
        };
        store.make_spares();
        Ok(Arc::new(store))
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
            name: format!("{}.json", thread_key(thread_id)),
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

    /// How many threads have been loaded (tests check laziness).
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
    /// The thread's document, the first time taken from the store's recent
    /// documents or read from disk (`None`: no such thread yet).
    ///
    /// # Errors
    /// Unreadable, symlinked or corrupt file. The error is not cached: the
    /// next request tries again.
    pub async fn document(&mut self) -> Result<Option<&Value>, StoreError> {
        if self.slot.document.is_none() {
            let recent = crate::locked(&self.store.recent).get(&self.name);
            let remembered = recent.and_then(|json| serde_json::from_slice(&json).ok());
            let loaded = if let Some(document) = remembered {
                Some(document)
            } else if self.store.absent(&self.name) {
                None
            } else {
                let (store, name) = (Arc::clone(&self.store), self.name.clone());
                tokio::task::spawn_blocking(move || store.read_document(&name))
                    .await
                    .map_err(|_| StoreError::Io(std::io::ErrorKind::Other))??
            };
            self.slot.on_disk = Some(loaded.is_some());
            self.slot.document = Some(loaded);
        }
        Ok(self.slot.document.as_ref().and_then(Option::as_ref))
    }

    /// Replaces the document on disk with `document` (its JSON text), in
    /// the next batch of writes. The
    /// guard keeps no copy of what it wrote (the machine holds the live
    /// document); the next [`ThreadGuard::document`] finds it among the
    /// store's recent documents, or reads the file again.
    /// An `admission` write (a client waits on it for its first byte) goes
    /// in a lane of its own (see [`StateStore::commit_queued`]).
    ///
    /// # Errors
    /// The write failed; the old document stays in place on disk.
    pub async fn persist(&mut self, document: Vec<u8>, admission: bool) -> Result<(), StoreError> {
        let json: Arc<[u8]> = Arc::from(document.as_slice());
        let bytes = padded(document);
        #[cfg(test)]
        let fail_before_rename = self
            .store
            .fail_before_rename
            .load(std::sync::atomic::Ordering::SeqCst);
        #[cfg(not(test))]
        let fail_before_rename = false;
        // A document among the recent ones is in its file: this store
        // wrote it last.
        let exists = self.slot.on_disk.or_else(|| {
            let recent = crate::locked(&self.store.recent);
            recent.documents.contains_key(&self.name).then_some(true)
        });
        let (done, outcome) = oneshot::channel();
        self.store.enqueue(Write {
            name: self.name.clone(),
            exists,
            bytes,
            admission,
            fail_before_rename,
            done,
        });
        let written = outcome
            .await
            .unwrap_or(Err(StoreError::Io(std::io::ErrorKind::Other)));
        if self.store.wants_spares() {
            let store = Arc::clone(&self.store);
            tokio::task::spawn_blocking(move || store.make_spares());
        }
        self.slot.on_disk = written.is_ok().then_some(true);
        let mut recent = crate::locked(&self.store.recent);
        match written {
            Ok(()) => recent.insert(self.name.clone(), json),
            Err(_) => recent.remove(&self.name),
        }
        drop(recent);
        written?;
        self.slot.document = None;
        Ok(())
    }
}

impl StateStore {
    /// Queues a write for its lane's next batch, and starts the lane's
    /// committer on a blocking thread unless it runs.
    fn enqueue(self: &Arc<Self>, write: Write) {
        let lane = lane(write.admission);
        let start = {
            let mut queue = crate::locked(&self.queues[lane]);
            queue.writes.push(write);
            !std::mem::replace(&mut queue.committing, true)
        };
        if start {
            let store = Arc::clone(self);
            tokio::task::spawn_blocking(move || store.commit_queued(lane));
        }
    }

    /// Commits a lane's batches until none of its writes waits: each batch
    /// holds the writes queued when it starts, up to [`MAX_BATCH`]. A
    /// batch needs one or two flushes of the disk's cache and one
    /// directory fsync, however many writes it holds (see `flush`), so a
    /// burst of admissions waits for a few batches instead of queueing for
    /// the disk one write after another. The admissions (a client waits on
    /// each for its first byte) have a lane of their own, so that they
    /// never wait behind a batch of the runs' other writes (BENCHMARKS.md).
    /// A thread never has two writes in flight: its writes are made under
    /// its lock, one after the other.
    fn commit_queued(&self, lane: usize) {
        loop {
            let batch = {
                let mut queue = crate::locked(&self.queues[lane]);
                if queue.writes.is_empty() {
                    queue.committing = false;
                    return;
                }
                let taken = queue.writes.len().min(MAX_BATCH);
                queue.writes.drain(..taken).collect()
            };
            self.commit(batch);
        }
    }

    /// Commits one batch: through spare files where that path applies,
    /// the rest through temp files.
    fn commit(&self, batch: Vec<Write>) {
        if batch.is_empty() {
            return;
        }
        #[cfg(test)]
        crate::locked(&self.batches).push((
            batch.iter().filter(|write| write.admission).count(),
            batch.iter().filter(|write| !write.admission).count(),
        ));
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        let batch = self.commit_through_spares(batch);
        for write in batch {
            let result = self.write_by_rename(&write.name, &write.bytes, write.fail_before_rename);
            write.finish(result);
        }
    }

    /// Writes a batch through spares: each document goes into a spare,
    /// each spare is synced, and each is put in place: a first write links
    /// an unnamed inode in under the thread's name (or, with none left,
    /// renames a spare file to it, `RENAME_NOREPLACE`), a later one trades
    /// places with the old document (`RENAME_EXCHANGE`), whose inode becomes
    /// the spare. Then one directory fsync, or one `syncfs` where inodes
    /// were linked in, makes the new names durable (`settle`). A
    /// file is at every moment the old document or the new one, as with a
    /// temp file and `rename`, but no inode is allocated or freed on the
    /// way: on ext4, under concurrent writes, that was most of a write's
    /// cost (BENCHMARKS.md). Returns the writes this path does not take (a
    /// symlink where the file goes, no exchange on this file system, no
    /// spare to be had): they need the temp file.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn commit_through_spares(&self, batch: Vec<Write>) -> Vec<Write> {
        use nix::fcntl::{renameat2, RenameFlags};
        use std::sync::atomic::Ordering;

        if !self.exchange.load(Ordering::Relaxed) {
            return batch;
        }
        let directory = &self.directory;
        let mut general = Vec::new();
        let mut filled = Vec::new();
        for write in batch {
            match self.fill_spare(&write) {
                Some(Ok(spare)) => filled.push((write, spare)),
                Some(Err(error)) => write.finish(Err(error)),
                None => general.push(write),
            }
        }
        // Whether little else waits to be written, read at most once.
        let batch_bytes: u64 = filled.iter().map(|(w, _)| w.bytes.len() as u64).sum();
        let quiet = std::cell::OnceCell::new();
        let quiet = || {
            *quiet.get_or_init(|| {
                unwritten_bytes().is_some_and(|bytes| bytes <= batch_bytes + SYNCFS_SLACK)
            })
        };
        let flushed = flush(&filled, directory, quiet);
        let mut in_place = Vec::new();
        for ((write, spare), synced) in filled.into_iter().zip(flushed) {
            let stopped = Err(StoreError::Io(std::io::ErrorKind::Interrupted));
            let synced = if write.fail_before_rename {
                stopped
            } else {
                synced
            };
            if let Err(error) = synced {
                self.give_back_filled(spare, &write);
                write.finish(Err(error));
                continue;
            }
            let placed = match &spare.name {
                Some(name) => renameat2(
                    directory,
                    name.as_str(),
                    directory,
                    write.name.as_str(),
                    spare.flags,
                ),
                None => link_unnamed(&spare.file, directory, &write.name),
            };
            match placed {
                Ok(()) => {
                    let linked = spare.name.is_none().then(|| Arc::clone(&spare.file));
                    if spare.flags == RenameFlags::RENAME_EXCHANGE {
                        self.give_back_filled(spare, &write);
                    }
                    in_place.push((write, linked));
                }
                Err(errno) => {
                    let refused = match spare.name {
                        Some(_) => &self.exchange,
                        None => &self.unnamed_ok,
                    };
                    self.give_back_filled(spare, &write);
                    match errno {
                        Errno::EINVAL | Errno::ENOSYS | Errno::EOPNOTSUPP => {
                            refused.store(false, Ordering::Relaxed);
                            general.push(write);
                        }
                        // The file appeared or went meanwhile: the general path decides.
                        Errno::EEXIST | Errno::ENOENT => general.push(write),
                        errno => write.finish(Err(os(errno))),
                    }
                }
            }
        }
        if !in_place.is_empty() {
            settle(in_place, directory, quiet);
        }
        general
    }

    /// A spare holding `write`'s document, not yet synced, and how it is
    /// put in place. `None` when the spare path does not apply.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn fill_spare(&self, write: &Write) -> Option<Result<Spare, StoreError>> {
        use nix::fcntl::RenameFlags;
        // Known, the file needs no lookup. Should it have been replaced
        // behind the store's back meanwhile, the rename says so (the file
        // went, or came: the general path decides), or trades a symlink or
        // directory into the spare's name, which `take_spare` then drops
        // from the pool; nothing is written through it.
        let exists = match write.exists {
            Some(known) => known,
            None => match fstatat(
                &self.directory,
                write.name.as_str(),
                AtFlags::AT_SYMLINK_NOFOLLOW,
            ) {
                Ok(stat) if is_file(&stat) => true,
                Err(Errno::ENOENT) => false,
                _ => return None,
            },
        };
        let unnamed = if exists { None } else { self.take_unnamed() };
        let (name, file, len, flags) = match unnamed {
            Some((file, len)) => (None, file, len, RenameFlags::empty()),
            None => {
                let (name, file, len) = self.take_spare()?;
                let flags = if exists {
                    RenameFlags::RENAME_EXCHANGE
                } else {
                    RenameFlags::RENAME_NOREPLACE
                };
                (Some(name), file, len, flags)
            }
        };
        // Written over the old content: a document as long as the spare
        // (both padded to whole blocks) needs no block allocated or freed
        // and leaves the inode as it was, so fdatasync writes the data
        // alone, not the inode or the file system's bitmaps too. Only a
        // longer spare is cut; the write itself lengthens a shorter one.
        let bytes = &write.bytes;
        let filled = file
            .write_all_at(bytes, 0)
            .and_then(|()| match len > bytes.len() as u64 {
                true => file.set_len(bytes.len() as u64),
                false => Ok(()),
            });
        Some(match filled {
            Ok(()) => Ok(Spare {
                name,
                file: Arc::new(file),
                flags,
            }),
            Err(error) => {
                // An unnamed inode of unknown length is dropped (freed).
                if let Some(name) = name {
                    self.give_back(name);
                }
                Err(io(error))
            }
        })
    }

    /// An unnamed spare inode from the pool, with its length.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn take_unnamed(&self) -> Option<(File, u64)> {
        crate::locked(&self.unnamed).pop()
    }

    /// Returns a spare that `write` filled to its pool (an unnamed inode
    /// is now as long as the write's document).
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn give_back_filled(&self, spare: Spare, write: &Write) {
        match spare.name {
            Some(name) => self.give_back(name),
            None => {
                if let Ok(file) = Arc::try_unwrap(spare.file) {
                    let len = write.bytes.len() as u64;
                    crate::locked(&self.unnamed).push((file, len));
                }
            }
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
            let name = pooled.or_else(|| make_spare(&self.directory))?;
            if let Ok(file) = open_at(&self.directory, &name, OFlag::O_WRONLY, 0) {
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

    /// Claims the refill when a pool is down to half (`false`: neither is,
    /// or another refill runs).
    fn wants_spares(&self) -> bool {
        use std::sync::atomic::Ordering;
        let low = crate::locked(&self.spares).len() < SPARES / 2
            || (self.unnamed_ok.load(Ordering::Relaxed)
                && crate::locked(&self.unnamed).len() < UNNAMED_SPARES / 2);
        low && !self.refilling.swap(true, Ordering::AcqRel)
    }

    /// Tops the pools up to [`SPARES`] and [`UNNAMED_SPARES`]; runs on a
    /// blocking thread, one at a time, off every write's path.
    fn make_spares(&self) {
        use std::sync::atomic::Ordering;
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        {
            while crate::locked(&self.spares).len() < SPARES {
                let Some(name) = make_spare(&self.directory) else {
                    break;
                };
                self.give_back(name);
            }
            while self.unnamed_ok.load(Ordering::Relaxed)
                && crate::locked(&self.unnamed).len() < UNNAMED_SPARES
            {
                match make_unnamed(&self.directory) {
                    Ok(file) => crate::locked(&self.unnamed).push((file, 0)),
                    Err(Errno::EOPNOTSUPP | Errno::EISDIR | Errno::EINVAL) => {
                        self.unnamed_ok.store(false, Ordering::Relaxed);
                    }
                    Err(_) => break,
                }
            }
        }
        self.refilling.store(false, Ordering::Release);
    }

    /// Whether no file (nor symlink) is named `name`: one lookup, made on
    /// the event loop so that a new thread's admission needs no trip to a
    /// blocking thread. The state directory is written all the time, so
    /// its blocks are in the page cache and the lookup does not wait for
    /// the disk (the workspace check makes a few such lookups per request
    /// too). Reading a file that is there is left to a blocking thread.
    fn absent(&self, name: &str) -> bool {
        matches!(
            fstatat(&self.directory, name, AtFlags::AT_SYMLINK_NOFOLLOW),
            Err(Errno::ENOENT)
        )
    }

    fn read_document(&self, name: &str) -> Result<Option<Value>, StoreError> {
        let mut file = match open_at(&self.directory, name, OFlag::O_RDONLY, 0) {
            Ok(file) => file,
            Err(Errno::ENOENT) => return Ok(None),
            Err(Errno::ELOOP) => return Err(StoreError::Symlink),
            Err(errno) => return Err(os(errno)),
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

    /// The general path: a temp file in the directory (created
    /// exclusively, 0600, never through a symlink), fsynced, renamed over
    /// the document, then the directory fsynced.
    fn write_by_rename(
        &self,
        name: &str,
        bytes: &[u8],
        fail_before_rename: bool,
    ) -> Result<(), StoreError> {
        let directory = &self.directory;
        let temp = format!(".{name}.tmp-{}", nonce_hex()?);
        let result = (|| {
            let flags = OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL;
            let mut file = open_at(directory, &temp, flags, 0o600).map_err(os)?;
            file.write_all(bytes).map_err(io)?;
            file.sync_all().map_err(io)?;
            if fail_before_rename {
                return Err(StoreError::Io(std::io::ErrorKind::Interrupted));
            }
            // A rename replaces a symlink at `name` itself; it never writes
            // through one.
            renameat(directory, temp.as_str(), directory, name).map_err(os)?;
            directory.sync_all().map_err(io)
        })();
        if result.is_err() {
            let flag = nix::unistd::UnlinkatFlags::NoRemoveDir;
            let _ = nix::unistd::unlinkat(directory, temp.as_str(), flag);
        }
        result
    }
}

/// The lane of a write: 0 for admissions, 1 for the others.
fn lane(admission: bool) -> usize {
    usize::from(!admission)
}

fn io(err: std::io::Error) -> StoreError {
    err.raw_os_error()
        .map_or(StoreError::Io(err.kind()), StoreError::Os)
}

fn os(errno: Errno) -> StoreError {
    StoreError::Os(errno as i32)
}

/// Opens `name` in `directory`, never through a symlink.
fn open_at(directory: &File, name: &str, flags: OFlag, mode: u32) -> Result<File, Errno> {
    let flags = flags | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    openat(directory, name, flags, Mode::from_bits_truncate(mode)).map(File::from)
}

fn is_file(stat: &nix::sys::stat::FileStat) -> bool {
    SFlag::from_bits_truncate(stat.st_mode & SFlag::S_IFMT.bits()) == SFlag::S_IFREG
}

fn nonce_hex() -> Result<String, StoreError> {
    let mut nonce = [0u8; 8];
    getrandom::fill(&mut nonce).map_err(|_| StoreError::Io(std::io::ErrorKind::Other))?;
    Ok(iac_agui_core::json::hex(&nonce))
}

/// Flushes the data of a batch's filled spares; an outcome for each. A
/// batch of more than one is flushed at once where little else waits to be
/// written: `syncfs` writes out every dirty file of the directory's file
/// system and flushes the disk's cache once. Per file, each flush also
/// flushes the cache, and in a burst of admissions they queued behind one
/// another (BENCHMARKS.md). When more than [`SYNCFS_SLACK`] of other
/// unwritten data is about (someone else's; `quiet` says whether there is
/// less), each file is flushed on its own instead, so that a write never
/// waits for another program's data.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn flush(
    filled: &[(Write, Spare)],
    directory: &File,
    quiet: impl Fn() -> bool,
) -> Vec<Result<(), StoreError>> {
    if filled.len() > 1 && quiet() {
        let synced = nix::unistd::syncfs(directory).map_err(os);
        return vec![synced; filled.len()];
    }
    let files: Vec<Arc<File>> = filled
        .iter()
        .map(|(_, spare)| Arc::clone(&spare.file))
        .collect();
    flush_each(&files, Flush::Data)
}

/// Makes a batch's new names durable, and the link counts of the inodes
/// it linked in (`placed`: each write, with its inode if it linked one
/// in). A directory fsync writes the directory alone; an inode linked in
/// has its link count changed in memory only, and on a file system
/// without a journal (ext4 here) the disk would still say 0 until
/// write-back, up to 30 s later: a crash then leaves a name pointing at
/// an inode the disk holds deleted (BENCHMARKS.md). So where little else
/// waits to be written one `syncfs` writes both; otherwise the directory
/// is flushed, then each linked inode.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn settle(placed: Vec<(Write, Option<Arc<File>>)>, directory: &File, quiet: impl Fn() -> bool) {
    let linked: Vec<Arc<File>> = placed.iter().filter_map(|(_, file)| file.clone()).collect();
    if !linked.is_empty() && quiet() {
        let synced = nix::unistd::syncfs(directory).map_err(os);
        placed
            .into_iter()
            .for_each(|(w, _)| w.finish(synced.clone()));
        return;
    }
    let synced = directory.sync_all().map_err(io);
    // Each linked inode is flushed once the directory is.
    let mut inodes = match synced {
        Ok(()) => flush_each(&linked, Flush::Inode),
        Err(_) => Vec::new(),
    }
    .into_iter();
    for (write, file) in placed {
        let result = match (&synced, file) {
            (Ok(()), Some(_)) => inodes.next().expect("an outcome for each inode"),
            _ => synced.clone(),
        };
        write.finish(result);
    }
}

/// What [`flush_each`] makes durable of each file.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[derive(Clone, Copy, PartialEq, Eq)]
enum Flush {
    /// Its data (`fdatasync`).
    Data,
    /// Its inode too (`fsync`).
    Inode,
}

/// Flushes each file on its own, up to [`FLUSHERS`] at once. For their
/// data, every file's write-back is started first, without waiting for it
/// (`posix_fadvise(DONTNEED)` on a dirty file starts it), so the data of
/// the whole batch goes to the disk together and the flushes that follow
/// mostly wait for the disk's cache flush, which overlapping flushes share
/// (BENCHMARKS.md). The hint's outcome does not matter; `fdatasync` makes
/// the data durable.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn flush_each(files: &[Arc<File>], what: Flush) -> Vec<Result<(), StoreError>> {
    use nix::fcntl::{posix_fadvise, PosixFadviseAdvice};
    if what == Flush::Data && files.len() > 1 {
        for file in files {
            let _ = posix_fadvise(file, 0, 0, PosixFadviseAdvice::POSIX_FADV_DONTNEED);
        }
    }
    let per_file = move |files: &[Arc<File>]| -> Vec<Result<(), StoreError>> {
        files
            .iter()
            .map(|file| match what {
                Flush::Data => file.sync_data(),
                Flush::Inode => file.sync_all(),
            })
            .map(|flushed| flushed.map_err(io))
            .collect()
    };
    let mut parts = files.chunks(files.len().div_ceil(FLUSHERS).max(1));
    let first = parts.next().unwrap_or_default();
    // The other parts go to the runtime's blocking threads, which outlive
    // the batch: no thread is started per batch.
    let others: Vec<_> = parts
        .map(|part| {
            let (tx, rx) = std::sync::mpsc::sync_channel(1);
            let owned = part.to_vec();
            let sent = tokio::runtime::Handle::try_current().map(|runtime| {
                runtime.spawn_blocking(move || tx.send(per_file(&owned)));
            });
            (part, sent.ok().map(|()| rx))
        })
        .collect();
    let mut flushed = per_file(first);
    for (part, rx) in others {
        // A part that no thread flushed (no runtime, or it is shutting
        // down) is flushed here.
        match rx.and_then(|rx| rx.recv().ok()) {
            Some(outcomes) => flushed.extend(outcomes),
            None => flushed.extend(per_file(part)),
        }
    }
    flushed
}

/// The machine's data waiting to be written to disk or being written
/// (`Dirty` and `Writeback` of `/proc/meminfo`), in bytes.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn unwritten_bytes() -> Option<u64> {
    // One `read` into a buffer well over the file's 1.5 KiB: `/proc` gives a
    // file's whole text in one read, and says its size is 0, so
    // `read_to_string` asked for the size and then read in ever larger
    // pieces from 32 bytes on (eleven calls instead of three, once per batch).
    // A text cut short only makes the batch flush each file on its own.
    let mut buffer = [0u8; 8192];
    let length = File::open("/proc/meminfo").ok()?.read(&mut buffer).ok()?;
    let meminfo = std::str::from_utf8(&buffer[..length]).ok()?;
    let kib = |field: &str| -> Option<u64> {
        let line = meminfo.lines().find_map(|line| line.strip_prefix(field))?;
        line.trim().strip_suffix("kB")?.trim().parse().ok()
    };
    Some((kib("Dirty:")? + kib("Writeback:")?) * 1024)
}

/// A new spare file (0600, empty) under a fresh `.spare-<hex>` name. The
/// write that first fills it allocates its block, and that write's flush
/// covers the block; flushing a blank block here too cost the runs that
/// wait for the disk meanwhile (BENCHMARKS.md). A spare that a later write
/// frees (`RENAME_EXCHANGE`) keeps its blocks. Its inode comes from
/// `O_TMPFILE` and is linked in after, so that the allocation, slow on
/// ext4, does not hold the directory's lock that every write's rename
/// takes; without `O_TMPFILE` or `/proc` it is created by name.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn make_spare(directory: &File) -> Option<String> {
    let name = format!("{SPARE_PREFIX}{}", nonce_hex().ok()?);
    if let Ok(unnamed) = make_unnamed(directory) {
        if link_unnamed(&unnamed, directory, &name).is_ok() {
            return Some(name);
        }
    }
    let flags = OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL;
    open_at(directory, &name, flags, 0o600).ok()?;
    Some(name)
}

/// A new inode in `directory`'s file system with no name yet (0600, empty,
/// `O_TMPFILE`): freed when it is closed unless it was linked in first.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn make_unnamed(directory: &File) -> Result<File, Errno> {
    let flags = OFlag::O_TMPFILE | OFlag::O_WRONLY | OFlag::O_CLOEXEC;
    openat(directory, ".", flags, Mode::from_bits_truncate(0o600)).map(File::from)
}

/// Gives the unnamed inode open as `file` the name `name` in `directory`
/// (through `/proc/self/fd`, which needs no privilege); `EEXIST` when the
/// name is taken, whatever it names.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn link_unnamed(file: &File, directory: &File, name: &str) -> Result<(), Errno> {
    use nix::fcntl::AT_FDCWD;
    use std::os::fd::AsRawFd as _;
    let proc_path = format!("/proc/self/fd/{}", file.as_raw_fd());
    nix::unistd::linkat(
        AT_FDCWD,
        proc_path.as_str(),
        directory,
        name,
        AtFlags::AT_SYMLINK_FOLLOW,
    )
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

    /// The JSON text of `value`, as [`ThreadGuard::persist`] takes it.
    fn doc(value: Value) -> Vec<u8> {
        serde_json::to_vec(&value).unwrap()
    }

    /// A write of `bytes` to `name` outside a lane, and where its outcome
    /// arrives.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn write_of(
        name: String,
        exists: Option<bool>,
        bytes: Vec<u8>,
    ) -> (Write, oneshot::Receiver<Result<(), StoreError>>) {
        let (done, outcome) = oneshot::channel();
        let write = Write {
            name,
            exists,
            bytes,
            admission: false,
            fail_before_rename: false,
            done,
        };
        (write, outcome)
    }

    #[tokio::test]
    async fn persist_and_reload_with_permissions() {
        let root = tempfile::tempdir().unwrap();
        let store = StateStore::open(&root.path().join("agui")).unwrap();
        let mut guard = store.lock("thread-1").await;
        assert_eq!(guard.document().await.unwrap(), None);
        guard
            .persist(doc(json!({"threadId": "thread-1", "n": 1})), false)
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

    fn unnamed_pooled(store: &StateStore) -> usize {
        store.unnamed.lock().unwrap().len()
    }

    /// Leaves the store without unnamed inodes, as on a file system
    /// without `O_TMPFILE`.
    fn without_unnamed(store: &StateStore) {
        store.unnamed_ok.store(false, Ordering::SeqCst);
        store.unnamed.lock().unwrap().clear();
    }

    #[tokio::test]
    async fn a_document_written_lately_is_read_from_memory_until_a_write_fails() {
        let root = tempfile::tempdir().unwrap();
        let store = StateStore::open(root.path()).unwrap();
        let mut guard = store.lock("t").await;
        guard.persist(doc(json!({"turn": 1})), false).await.unwrap();
        drop(guard);
        store.forget("t");
        // The file is not read again: its garbage goes unseen.
        let file = store.dir().join("t.json");
        std::fs::write(&file, b"not json").unwrap();
        let mut guard = store.lock("t").await;
        assert_eq!(guard.document().await.unwrap().unwrap()["turn"], 1);
        // A failed write may leave either document in the file: from then
        // on the file is read.
        store.fail_before_rename.store(true, Ordering::SeqCst);
        assert!(guard.persist(doc(json!({"turn": 2})), false).await.is_err());
        drop(guard);
        store.forget("t");
        let mut guard = store.lock("t").await;
        assert_eq!(guard.document().await.unwrap_err(), StoreError::Corrupt);
    }

    #[test]
    fn recent_documents_are_bounded_by_count_and_bytes() {
        let path = |i: usize| format!("t{i}.json");
        let json = |len: usize| Arc::<[u8]>::from(vec![b' '; len]);
        let mut recent = Recent::default();
        for i in 0..=RECENT_DOCUMENTS {
            recent.insert(path(i), json(10));
        }
        assert!(recent.get(&path(0)).is_none(), "the oldest went");
        assert!(recent.get(&path(1)).is_some());
        assert_eq!(recent.documents.len(), RECENT_DOCUMENTS);
        assert_eq!(recent.bytes, 10 * RECENT_DOCUMENTS);
        // Rewrites of one file keep one entry, and no long trail of stale ones.
        for _ in 0..10 * RECENT_DOCUMENTS {
            recent.insert(path(5), json(20));
        }
        assert_eq!(recent.documents.len(), RECENT_DOCUMENTS);
        assert_eq!(recent.bytes, 10 * (RECENT_DOCUMENTS - 1) + 20);
        assert!(recent.order.len() <= 2 * RECENT_DOCUMENTS);
        // Two big documents do not fit together.
        recent.insert(path(7), json(RECENT_BYTES / 2 + 1));
        recent.insert(path(8), json(RECENT_BYTES / 2 + 1));
        assert!(recent.get(&path(7)).is_none());
        assert!(recent.get(&path(8)).is_some());
        assert!(recent.bytes <= RECENT_BYTES);
        recent.remove(&path(8));
        assert_eq!(recent.bytes, 0, "nothing else was left");
    }

    #[tokio::test]
    async fn a_failed_write_names_the_os_error_but_no_path() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("gone");
        let store = StateStore::open(&dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let mut guard = store.lock("t").await;
        let error = guard
            .persist(doc(json!({"v": 1})), false)
            .await
            .unwrap_err();
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
        guard
            .persist(doc(json!({"v": "old"})), false)
            .await
            .unwrap();
        store.fail_before_rename.store(true, Ordering::SeqCst);
        assert!(guard
            .persist(doc(json!({"v": "new"})), false)
            .await
            .is_err());
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
        assert!(guard.persist(doc(json!({"v": 1})), false).await.is_err());
        assert_eq!(documents(&store), Vec::<String>::new());
        assert_eq!(guard.document().await.unwrap(), None);
        assert_eq!(pooled(&store), SPARES);
        assert_eq!(
            unnamed_pooled(&store),
            UNNAMED_SPARES,
            "the inode went back"
        );
        store.fail_before_rename.store(false, Ordering::SeqCst);
        guard.persist(doc(json!({"v": 2})), false).await.unwrap();
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
        guard.persist(doc(json!({"v": 1})), false).await.unwrap();
        // The first write links an unnamed inode in: no spare is used up.
        assert_eq!(spares_on_disk(&store), spares);
        assert!(!spares.values().any(|&i| i == ino(&file)));
        assert_eq!(unnamed_pooled(&store), UNNAMED_SPARES - 1);
        let inodes = |spares: &BTreeMap<String, u64>| {
            let mut all: Vec<u64> = spares.values().copied().collect();
            all.push(ino(&file));
            all.sort_unstable();
            all
        };
        for v in 2..=4 {
            let (before, old) = (inodes(&spares_on_disk(&store)), ino(&file));
            guard.persist(doc(json!({ "v": v })), false).await.unwrap();
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
        guard.persist(doc(long), false).await.unwrap();
        guard.persist(doc(json!({"v": 6})), false).await.unwrap();
        guard.persist(doc(json!({"v": 7})), false).await.unwrap();
        assert_eq!(stored(&file), r#"{"v":7}"#);
        assert_eq!(std::fs::metadata(&file).unwrap().len(), PAD_TO as u64);
        assert_eq!(
            unnamed_pooled(&store),
            UNNAMED_SPARES - 1,
            "only the first write took one"
        );
        drop(guard);
        let restarted = StateStore::open(root.path()).unwrap();
        assert_eq!(pooled(&restarted), SPARES, "spares found again and made up");
        let mut guard = restarted.lock("t").await;
        assert_eq!(guard.document().await.unwrap().unwrap()["v"], 7);
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn spares_are_made_up_when_half_are_used() {
        use std::os::unix::fs::MetadataExt as _;
        let root = tempfile::tempdir().unwrap();
        let store = StateStore::open(root.path()).unwrap();
        let refilled = |pool: fn(&StateStore) -> usize, full: usize| {
            let store = Arc::clone(&store);
            async move {
                let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
                while pool(&store) < full && std::time::Instant::now() < deadline {
                    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                }
                pool(&store)
            }
        };
        let spares = spares_on_disk(&store);
        for i in 0..=UNNAMED_SPARES / 2 {
            let mut guard = store.lock(&format!("t{i}")).await;
            guard.persist(doc(json!({ "i": i })), false).await.unwrap();
        }
        // The write that left fewer than half of them started a refill.
        assert_eq!(
            refilled(unnamed_pooled, UNNAMED_SPARES).await,
            UNNAMED_SPARES
        );
        assert_eq!(spares_on_disk(&store), spares, "no spare file used up");
        assert_eq!(documents(&store).len(), UNNAMED_SPARES / 2 + 1);
        // Without unnamed inodes, a first write takes a spare file's inode
        // and name instead, and the spare files are made up in turn.
        without_unnamed(&store);
        for i in 0..=SPARES / 2 {
            let id = format!("u{i}");
            let mut guard = store.lock(&id).await;
            guard.persist(doc(json!({ "i": i })), false).await.unwrap();
            let file = store.dir().join(format!("{id}.json"));
            let inode = std::fs::metadata(&file).unwrap().ino();
            assert!(spares.values().any(|&spare| spare == inode));
        }
        assert_eq!(refilled(pooled, SPARES).await, SPARES);
        assert_eq!(spares_on_disk(&store).len(), SPARES);
        assert_eq!(unnamed_pooled(&store), 0);
        let written = UNNAMED_SPARES / 2 + 1 + SPARES / 2 + 1;
        assert_eq!(documents(&store).len(), written);
    }

    /// A thread's next write does not look its file up: the store knows
    /// it wrote it. A file deleted, or replaced by a symlink, behind the
    /// store's back still gets the new document, and nothing is written
    /// through the symlink then or later.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[tokio::test]
    async fn a_file_changed_behind_the_stores_back_still_gets_the_next_write() {
        let root = tempfile::tempdir().unwrap();
        let store = StateStore::open(root.path()).unwrap();
        let file = store.dir().join("t.json");
        let elsewhere = root.path().join("elsewhere.json");
        std::fs::write(&elsewhere, b"keep").unwrap();
        let mut guard = store.lock("t").await;
        guard.persist(doc(json!({"v": 1})), false).await.unwrap();
        assert_eq!(guard.slot.on_disk, Some(true));
        std::fs::remove_file(&file).unwrap();
        guard.persist(doc(json!({"v": 2})), false).await.unwrap();
        assert_eq!(stored(&file), r#"{"v":2}"#);
        std::fs::remove_file(&file).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &file).unwrap();
        guard.persist(doc(json!({"v": 3})), false).await.unwrap();
        assert!(std::fs::symlink_metadata(&file).unwrap().is_file());
        assert_eq!(stored(&file), r#"{"v":3}"#);
        // Traded into a spare's name, as no lookup saw the link first.
        let traded = spares_on_disk(&store).into_keys().filter(|name| {
            let meta = std::fs::symlink_metadata(store.dir().join(name)).unwrap();
            meta.file_type().is_symlink()
        });
        assert_eq!(traded.count(), 1);
        // Enough writes of other threads to go through every spare (a
        // thread's second write is the first to take one).
        for i in 0..2 * SPARES {
            let mut other = store.lock(&format!("o{i}")).await;
            for _ in 0..2 {
                other.persist(doc(json!({ "i": i })), false).await.unwrap();
            }
        }
        assert_eq!(std::fs::read(&elsewhere).unwrap(), b"keep");
        drop(guard);
        store.forget("t");
        let mut guard = store.lock("t").await;
        assert_eq!(guard.document().await.unwrap().unwrap()["v"], 3);
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
            guard.persist(doc(json!({ "v": v })), false).await.unwrap();
        }
        assert_eq!(std::fs::read(&elsewhere).unwrap(), b"keep");
        assert_eq!(std::fs::read(&linked).unwrap(), b"keep");
        assert_eq!(stored(&store.dir().join("t.json")), r#"{"v":3}"#);
    }

    /// `n` writes (the even ones admissions), queued in their lanes once
    /// the last committers have ended, while the store is told both lanes'
    /// committers run, so that the test decides when they are committed;
    /// with their outcomes. They bypass [`ThreadGuard::persist`], so the
    /// store's recent documents do not hold them: tests read the files.
    async fn queued_writes(
        store: &Arc<StateStore>,
        n: usize,
        failing: Option<usize>,
    ) -> Vec<oneshot::Receiver<Result<(), StoreError>>> {
        while store.queues.iter().any(|q| q.lock().unwrap().committing) {
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        }
        let mut queues: Vec<_> = store.queues.iter().map(|q| q.lock().unwrap()).collect();
        for queue in &mut queues {
            assert!(queue.writes.is_empty());
            queue.committing = true;
        }
        (0..n)
            .map(|i| {
                let (done, outcome) = oneshot::channel();
                let admission = i % 2 == 0;
                queues[lane(admission)].writes.push(Write {
                    name: format!("t{i}.json"),
                    exists: None,
                    bytes: padded(format!("{{\"v\":\"new-{i}\"}}").into_bytes()),
                    admission,
                    fail_before_rename: failing == Some(i),
                    done,
                });
                outcome
            })
            .collect()
    }

    /// A store where threads `t0`..`t{n-1}` hold the document `{"v":"old"}`.
    async fn store_with_old_documents(n: usize) -> (tempfile::TempDir, Arc<StateStore>) {
        let root = tempfile::tempdir().unwrap();
        let store = StateStore::open(root.path()).unwrap();
        for i in 0..n {
            let mut guard = store.lock(&format!("t{i}")).await;
            guard
                .persist(doc(json!({ "v": "old" })), false)
                .await
                .unwrap();
        }
        (root, store)
    }

    fn batches(store: &StateStore) -> Vec<(usize, usize)> {
        store.batches.lock().unwrap().clone()
    }

    #[tokio::test]
    async fn writes_that_wait_together_are_committed_together_in_their_lane() {
        // Half the threads have a document already (an exchange), half not
        // (a first write).
        let (_root, store) = store_with_old_documents(10).await;
        let before = batches(&store).len();
        let mut outcomes = queued_writes(&store, 20, None).await;
        let committer = Arc::clone(&store);
        tokio::task::spawn_blocking(move || committer.commit_queued(lane(true)))
            .await
            .unwrap();
        assert_eq!(batches(&store)[before..], [(10, 0)], "the ten admissions");
        for (i, outcome) in outcomes.iter_mut().enumerate() {
            match i % 2 {
                0 => assert_eq!(outcome.try_recv(), Ok(Ok(()))),
                _ => assert!(outcome.try_recv().is_err(), "t{i} waits for its lane"),
            }
        }
        let committer = Arc::clone(&store);
        tokio::task::spawn_blocking(move || committer.commit_queued(lane(false)))
            .await
            .unwrap();
        for outcome in outcomes.into_iter().skip(1).step_by(2) {
            outcome.await.unwrap().unwrap();
        }
        assert_eq!(
            batches(&store)[before..],
            [(10, 0), (0, 10)],
            "then the ten others in one batch"
        );
        assert!(
            store.queues.iter().all(|q| !q.lock().unwrap().committing),
            "the committers ended"
        );
        for i in 0..20 {
            let file = store.dir().join(format!("t{i}.json"));
            assert_eq!(stored(&file), format!(r#"{{"v":"new-{i}"}}"#));
        }
        // A write queued now starts a committer of its own.
        let mut guard = store.lock("t0").await;
        guard
            .persist(doc(json!({ "v": "later" })), false)
            .await
            .unwrap();
        assert_eq!(batches(&store)[before + 2..], [(0, 1)]);
    }

    #[tokio::test]
    async fn a_batch_takes_at_most_max_batch_writes() {
        let (_root, store) = store_with_old_documents(0).await;
        let outcomes = queued_writes(&store, 2 * (MAX_BATCH + 3), None).await;
        store.commit_queued(lane(true));
        store.commit_queued(lane(false));
        for outcome in outcomes {
            outcome.await.unwrap().unwrap();
        }
        assert_eq!(
            batches(&store),
            [(MAX_BATCH, 0), (3, 0), (0, MAX_BATCH), (0, 3)],
            "each lane in two batches, the first one full"
        );
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[tokio::test]
    async fn a_failed_write_leaves_the_rest_of_its_batch() {
        let (_root, store) = store_with_old_documents(5).await;
        let pooled_before = pooled(&store);
        let outcomes = queued_writes(&store, 5, Some(2)).await;
        store.commit_queued(lane(true));
        store.commit_queued(lane(false));
        for (i, outcome) in outcomes.into_iter().enumerate() {
            let result = outcome.await.unwrap();
            let file = store.dir().join(format!("t{i}.json"));
            let v = serde_json::from_str::<Value>(&stored(&file)).unwrap()["v"].clone();
            if i == 2 {
                assert_eq!(result, Err(StoreError::Io(std::io::ErrorKind::Interrupted)));
                assert_eq!(v, "old", "the failed write left its old document");
            } else {
                assert_eq!(result, Ok(()));
                assert_eq!(v, format!("new-{i}"));
            }
        }
        assert_eq!(pooled(&store), pooled_before, "every spare came back");
        assert_eq!(documents(&store).len(), 5);
    }

    /// Flushes 20 filled spares one by one, the 14th a character device
    /// (fdatasync refuses it: EINVAL), and checks each outcome is its own.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn flush_twenty_with_one_bad() {
        let root = tempfile::tempdir().unwrap();
        let store = StateStore::open(root.path()).unwrap();
        let filled: Vec<(Write, Spare)> = (0..20)
            .map(|i| {
                let (write, _) = write_of(format!("t{i}.json"), None, padded(b"{}".to_vec()));
                let spare = match i {
                    13 => Spare {
                        name: Some("null".into()),
                        file: Arc::new(File::open("/dev/null").unwrap()),
                        flags: nix::fcntl::RenameFlags::RENAME_NOREPLACE,
                    },
                    _ => store.fill_spare(&write).unwrap().unwrap(),
                };
                (write, spare)
            })
            .collect();
        let files: Vec<Arc<File>> = filled.iter().map(|(_, s)| Arc::clone(&s.file)).collect();
        let outcomes = flush_each(&files, Flush::Data);
        let failed: Vec<usize> = (0..20).filter(|&i| outcomes[i].is_err()).collect();
        assert_eq!(outcomes.len(), 20);
        assert_eq!(failed, [13], "each outcome is its own file's");
        assert_eq!(outcomes[13], Err(StoreError::Os(libc::EINVAL)));
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[tokio::test]
    async fn files_flushed_one_by_one_each_get_their_own_outcome() {
        // Parts of the batch go to the runtime's blocking threads.
        flush_twenty_with_one_bad();
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn without_a_runtime_every_file_is_flushed_on_the_calling_thread() {
        assert!(tokio::runtime::Handle::try_current().is_err());
        flush_twenty_with_one_bad();
    }

    /// Settles three placed writes, the second a linked "inode" that
    /// `fsync` refuses (a character device: EINVAL), and returns their
    /// outcomes.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn settle_three(quiet: bool) -> Vec<Result<(), StoreError>> {
        let root = tempfile::tempdir().unwrap();
        let directory = File::open(root.path()).unwrap();
        let linked = [None, Some(File::open("/dev/null").unwrap()), None];
        let (placed, outcomes): (Vec<_>, Vec<_>) = linked
            .into_iter()
            .enumerate()
            .map(|(i, file)| {
                let (write, outcome) = write_of(format!("t{i}.json"), None, Vec::new());
                ((write, file.map(Arc::new)), outcome)
            })
            .unzip();
        settle(placed, &directory, || quiet);
        outcomes
            .into_iter()
            .map(|o| o.blocking_recv().unwrap())
            .collect()
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn a_linked_inode_is_flushed_with_the_directory() {
        // Much else unwritten: the directory, then each linked inode, is
        // flushed, and only the linked one's outcome is its flush's.
        let einval = Err(StoreError::Os(libc::EINVAL));
        assert_eq!(settle_three(false), [Ok(()), einval, Ok(())]);
        // Little else unwritten: one syncfs writes them all.
        assert_eq!(settle_three(true), [Ok(()), Ok(()), Ok(())]);
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn renames_alone_settle_with_a_directory_fsync() {
        let root = tempfile::tempdir().unwrap();
        let directory = File::open(root.path()).unwrap();
        let (write, outcome) = write_of("t.json".into(), Some(true), Vec::new());
        settle(vec![(write, None)], &directory, || {
            panic!("no inode linked in: no syncfs to weigh")
        });
        assert_eq!(outcome.blocking_recv().unwrap(), Ok(()));
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn unwritten_data_is_read_from_meminfo() {
        let bytes = unwritten_bytes().expect("Dirty and Writeback in /proc/meminfo");
        assert_eq!(bytes % 1024, 0, "counted in KiB");
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn concurrent_writes_each_land_on_their_own_thread() {
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
                        .persist(doc(json!({ "i": i })), false)
                        .await
                })
            })
            .collect();
        for writer in writers {
            writer.await.unwrap().unwrap();
        }
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
        let store = StateStore::open(root.path()).unwrap();
        std::fs::write(store.dir().join("t.json"), padded(br#"{"v":1}"#.to_vec())).unwrap();
        assert_eq!(store.read_document("t.json").unwrap().unwrap()["v"], 1);
    }

    #[test]
    fn absence_is_one_lookup() {
        let root = tempfile::tempdir().unwrap();
        let store = StateStore::open(root.path()).unwrap();
        assert!(store.absent("missing.json"));
        std::fs::write(store.dir().join("present.json"), b"{}").unwrap();
        assert!(!store.absent("present.json"));
        let missing = store.dir().join("missing.json");
        std::os::unix::fs::symlink(&missing, store.dir().join("link.json")).unwrap();
        assert!(
            !store.absent("link.json"),
            "a dangling symlink is not an absence"
        );
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
            .persist(doc(json!({"threadId": "s"})), false)
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
                .persist(doc(json!({"threadId": id})), false)
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
            .persist(doc(json!({"n": 1})), false)
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
        let waiter = tokio::spawn(async move { same.lock("busy").await.name.clone() });
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished(), "the same thread waits");
        drop(held);
        assert_eq!(waiter.await.unwrap(), "busy.json");
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
