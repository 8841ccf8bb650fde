//! The server's event loops: one single-threaded tokio runtime per worker
//! thread, each with its own share of the engine.
//!
//! A run's A2A stream, the engine actor that maps its frames and the writer
//! of its SSE response all live on one loop (the [`Home`] of the actor that
//! owns the run's thread), so an event never wakes another thread on its
//! way from the runtime to the client. Connections are accepted on the
//! first loop and move to their run's loop to have it admitted there and
//! write its response (`server::serve`).
//!
//! A multi-threaded tokio runtime gives the same parallelism, but its
//! workers wake each other to steal work: on two cores that cost about a
//! third more CPU per relayed event (BENCHMARKS.md).
//!
//! Each loop's blocking threads (the store's flushes, document reads,
//! large bodies and images) run [`BLOCKING_NICE`] steps nicer than the
//! loops. They spend their time in the kernel or on work that was sent
//! off the loops so as not to hold them up, and a loop woken by an event
//! should not then wait for a core behind them.

use std::cell::Cell;
use std::future::Future;

use tokio::runtime::{Builder, Handle, Runtime};

/// How much nicer than the process the loops' blocking threads run.
pub const BLOCKING_NICE: i32 = 10;

thread_local! {
    /// The index of the loop this thread drives, if any.
    static CURRENT: Cell<Option<usize>> = const { Cell::new(None) };
}

/// One event loop: where a shard of the engine and its runs' tasks run.
#[derive(Debug, Clone)]
pub struct Home {
    index: usize,
    handle: Handle,
}

impl Home {
    /// True when called from a task of this loop.
    pub fn is_current(&self) -> bool {
        CURRENT.get() == Some(self.index)
    }

    /// Runs `future` as a task of this loop.
    pub fn spawn<F>(&self, future: F) -> tokio::task::JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.handle.spawn(future)
    }
}

/// The server's event loops.
#[derive(Debug, Clone)]
pub struct EventLoops {
    homes: Vec<Home>,
}

impl EventLoops {
    /// Builds `count` loops (at least one). The first is returned as a
    /// runtime for the caller's thread to drive (`block_on`); the others
    /// run on threads of their own until the process ends.
    ///
    /// # Errors
    /// A runtime or a thread could not be created.
    pub fn start(count: usize) -> std::io::Result<(Runtime, EventLoops)> {
        let build = || {
            Builder::new_current_thread()
                .enable_all()
                .thread_name("iac-agui-block")
                .on_thread_start(|| {
                    // Raising one's own nice needs no privilege; where a
                    // sandbox refuses it, the thread runs as it is.
                    let _ = nicer_by(BLOCKING_NICE);
                })
                .build()
        };
        let first = build()?;
        CURRENT.set(Some(0));
        let mut homes = vec![Home {
            index: 0,
            handle: first.handle().clone(),
        }];
        for index in 1..count.max(1) {
            let runtime = build()?;
            homes.push(Home {
                index,
                handle: runtime.handle().clone(),
            });
            std::thread::Builder::new()
                .name(format!("iac-agui-loop-{index}"))
                .spawn(move || {
                    CURRENT.set(Some(index));
                    runtime.block_on(std::future::pending::<()>());
                })?;
        }
        Ok((first, EventLoops { homes }))
    }

    /// Every loop, the first (the caller's) first.
    pub fn homes(&self) -> &[Home] {
        &self.homes
    }
}

/// Makes the calling thread `steps` nicer, up to the lowest priority.
fn nicer_by(steps: i32) -> std::io::Result<()> {
    use rustix::process::{getpriority_process, setpriority_process};
    let nice = getpriority_process(None)?;
    setpriority_process(None, (nice + steps).min(19))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_run_on_their_own_loop() {
        let (runtime, loops) = EventLoops::start(3).unwrap();
        assert_eq!(loops.homes().len(), 3);
        runtime.block_on(async {
            for (index, home) in loops.homes().iter().enumerate() {
                assert_eq!(home.is_current(), index == 0);
                let (mine, others) = home
                    .spawn({
                        let homes = loops.homes().to_vec();
                        async move {
                            let thread = std::thread::current().id();
                            let mine: Vec<bool> = homes.iter().map(Home::is_current).collect();
                            (mine, thread)
                        }
                    })
                    .await
                    .unwrap();
                let expected: Vec<bool> = (0..3).map(|i| i == index).collect();
                assert_eq!(mine, expected);
                assert_eq!(others == std::thread::current().id(), index == 0);
            }
        });
    }

    #[test]
    fn blocking_threads_run_nicer_than_the_loops() {
        use rustix::process::getpriority_process;
        let (runtime, loops) = EventLoops::start(2).unwrap();
        let own = getpriority_process(None).unwrap();
        let expected = (own + BLOCKING_NICE).min(19);
        assert_ne!(
            own, expected,
            "the test runs at the lowest priority already"
        );
        runtime.block_on(async {
            for home in loops.homes() {
                let (on_loop, blocking) = home
                    .spawn(async {
                        let on_loop = getpriority_process(None).unwrap();
                        let blocking =
                            tokio::task::spawn_blocking(|| getpriority_process(None).unwrap());
                        (on_loop, blocking.await.unwrap())
                    })
                    .await
                    .unwrap();
                assert_eq!(on_loop, own);
                assert_eq!(blocking, expected);
            }
        });
    }
}
