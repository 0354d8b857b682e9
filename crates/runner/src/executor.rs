//! Where games and searches run: the CPU pool of in-process searches, `block_on` for a game
//! that runs whole on one thread, and the flag that marks a game's own thread.
//!
//! In-process searches ([`crate::builtin`]) run on a pool of OS threads sized to the machine,
//! so thousands of games can be in flight at once while only as many searches run as there are
//! cores. A game between two in-process engines runs whole on one pool thread
//! ([`run_on_pool`] with [`block_on`]). A game against a UCI engine runs on a thread of its own
//! (see [`crate::game::play_game`]), marked by [`as_game_thread`]: there, a wait for an
//! engine's output blocks the thread on the engine's pipe (see [`crate::process`]) instead of
//! going through the async runtime. Both player kinds ask this module; it asks neither.

use std::cell::Cell;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::pin;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll, Wake, Waker};
use std::thread::Thread;

use tokio::sync::oneshot;

type Job = Box<dyn FnOnce() + Send>;

thread_local! {
    /// Set on the pool's own threads: a search asked for there runs where it is.
    static ON_POOL: Cell<bool> = const { Cell::new(false) };
}

/// Worker threads that run searches. One per core: searches are CPU-bound.
struct CpuPool {
    jobs: Mutex<mpsc::Sender<Job>>,
}

impl CpuPool {
    fn global() -> &'static CpuPool {
        static POOL: OnceLock<CpuPool> = OnceLock::new();
        POOL.get_or_init(|| {
            let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
            let (tx, rx) = mpsc::channel::<Job>();
            let rx = Arc::new(Mutex::new(rx));
            for i in 0..threads {
                let rx = Arc::clone(&rx);
                std::thread::Builder::new()
                    .name(format!("staunton-{i}"))
                    // A search needs about 1 MiB of stack; leave room.
                    .stack_size(8 << 20)
                    .spawn(move || {
                        ON_POOL.with(|on| on.set(true));
                        loop {
                            let job = match rx.lock() {
                                Ok(rx) => rx.recv(),
                                Err(_) => return,
                            };
                            match job {
                                // A panicking job (a bug) drops its result sender, which its
                                // waiter sees; the thread lives on for the next job.
                                Ok(job) => {
                                    let _ = std::panic::catch_unwind(AssertUnwindSafe(job));
                                }
                                Err(_) => return,
                            }
                        }
                    })
                    .expect("spawn a search thread");
            }
            CpuPool {
                jobs: Mutex::new(tx),
            }
        })
    }

    fn submit(&self, job: Job) {
        if let Ok(tx) = self.jobs.lock() {
            let _ = tx.send(job);
        }
    }
}

/// Runs `job` on the CPU pool; the async caller waits without holding a runtime thread.
/// `None` if the job panicked.
pub(crate) async fn run_on_pool<T: Send + 'static>(
    job: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    let (tx, rx) = oneshot::channel();
    CpuPool::global().submit(Box::new(move || {
        let _ = tx.send(job());
    }));
    rx.await.ok()
}

/// Drives a future to completion on the current thread. For a game of two in-process engines
/// on a pool thread, whose searches complete inline, so the future is ready at its first
/// poll; parking covers anything that is not.
pub(crate) fn block_on<F: Future>(future: F) -> F::Output {
    struct Unpark(Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        match future.as_mut().poll(&mut cx) {
            Poll::Ready(output) => return output,
            Poll::Pending => std::thread::park(),
        }
    }
}

thread_local! {
    /// Set while a game runs on a thread of its own (see the module's docs).
    static GAME_THREAD: Cell<bool> = const { Cell::new(false) };
}

/// Whether this thread is one of the CPU pool's: a search asked for there runs where it is.
pub(crate) fn on_pool() -> bool {
    ON_POOL.with(Cell::get)
}

/// Runs `game` with this thread marked as a game's own thread (see [`GAME_THREAD`]).
pub(crate) fn as_game_thread<R>(game: impl FnOnce() -> R) -> R {
    struct Unmark;
    impl Drop for Unmark {
        fn drop(&mut self) {
            GAME_THREAD.with(|on| on.set(false));
        }
    }
    GAME_THREAD.with(|on| on.set(true));
    let _unmark = Unmark;
    game()
}

/// Whether this thread is a game's own (see [`as_game_thread`]).
pub(crate) fn on_game_thread() -> bool {
    GAME_THREAD.with(Cell::get)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn a_panicking_job_is_reported_and_the_pool_goes_on() {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        for _ in 0..threads {
            assert_eq!(run_on_pool(|| -> u32 { panic!("a bug") }).await, None);
        }
        // Every pool thread has seen a panic; they all still take work.
        for i in 0..2 * threads as u32 {
            assert_eq!(run_on_pool(move || i * 2).await, Some(i * 2));
        }
    }

    #[test]
    fn block_on_waits_for_a_wake_up() {
        // Pending at the first poll, woken from another thread, ready at the second.
        let mut polls = 0;
        let value = block_on(std::future::poll_fn(|cx| {
            polls += 1;
            if polls == 1 {
                let waker = cx.waker().clone();
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_millis(20));
                    waker.wake();
                });
                Poll::Pending
            } else {
                Poll::Ready(42)
            }
        }));
        assert_eq!((value, polls), (42, 2));
    }
}
