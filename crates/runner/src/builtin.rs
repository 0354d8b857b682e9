//! staunton in process: the fast player for self-play.
//!
//! No processes and no pipes: a game's engine is a value, and its searches run on a pool of
//! OS threads sized to the machine, so thousands of games can be in flight at once (each
//! with a small hash) while only as many searches run as there are cores. The async game
//! loop waits on a channel for each search, so waiting games cost nothing.

use std::sync::atomic::AtomicBool;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use arbiter_rules::uci::move_to_uci;
use arbiter_rules::Position;
use staunton::{ClockLimits, Engine, Limits, Params};
use tokio::sync::oneshot;

use crate::process::{EngineFault, Reply};
use crate::uci::{GoLimits, Info, Score};

/// How to build the in-process engine.
#[derive(Clone, Debug, PartialEq)]
pub struct BuiltinSpec {
    pub params: Params,
    pub hash_mb: usize,
}

type Job = Box<dyn FnOnce() + Send>;

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
                    .spawn(move || loop {
                        let job = match rx.lock() {
                            Ok(rx) => rx.recv(),
                            Err(_) => return,
                        };
                        match job {
                            Ok(job) => job(),
                            Err(_) => return,
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

/// One game's in-process engine.
pub struct BuiltinPlayer {
    /// Taken while a search runs on the pool, given back with its result.
    engine: Option<Box<Engine>>,
}

impl BuiltinPlayer {
    pub fn new(spec: &BuiltinSpec) -> BuiltinPlayer {
        BuiltinPlayer {
            engine: Some(Box::new(Engine::new(spec.params.clone(), spec.hash_mb))),
        }
    }

    pub fn new_game(&mut self) {
        if let Some(engine) = self.engine.as_mut() {
            engine.new_game();
        }
    }

    /// Searches the last position of `history` on the pool. The clock is the search's own
    /// elapsed time, not the time spent queueing for a core, so a full pool never costs a
    /// game on time.
    pub async fn think(
        &mut self,
        history: &[Position],
        limits: &GoLimits,
    ) -> Result<Reply, EngineFault> {
        let mut engine = self.engine.take().ok_or(EngineFault::Exited)?;
        let history = history.to_vec();
        let limits = to_staunton(limits);
        let (tx, rx) = oneshot::channel();
        CpuPool::global().submit(Box::new(move || {
            let stop = AtomicBool::new(false);
            let started = Instant::now();
            let result = engine.search(&history, &limits, &stop, &mut |_| {});
            let _ = tx.send((engine, result, started.elapsed()));
        }));
        let (engine, result, elapsed) = rx.await.map_err(|_| EngineFault::Exited)?;
        self.engine = Some(engine);
        let score = match result.score {
            staunton::Score::Cp(cp) => Score::Cp(cp),
            staunton::Score::Mate(m) => Score::Mate(m),
        };
        let info = Info {
            depth: Some(result.depth),
            seldepth: Some(result.seldepth),
            score: Some(score),
            nodes: Some(result.nodes),
            time: Some(result.elapsed),
            pv: result.pv.iter().map(|&mv| move_to_uci(Some(mv))).collect(),
            ..Info::default()
        };
        let bestmove = result
            .best_move
            .map_or_else(|| "(none)".to_owned(), |mv| move_to_uci(Some(mv)));
        Ok(Reply {
            bestmove,
            ponder: result.ponder.map(|mv| move_to_uci(Some(mv))),
            info: Some(info),
            elapsed,
        })
    }
}

/// The same limits a UCI engine would get from `go`, as staunton's library type.
fn to_staunton(limits: &GoLimits) -> Limits {
    Limits {
        depth: limits.depth,
        nodes: limits.nodes,
        movetime: limits.movetime,
        clock: limits
            .clocks
            .map(|(wtime, btime, winc, binc, movestogo)| ClockLimits {
                wtime,
                btime,
                winc,
                binc,
                movestogo,
            }),
        move_overhead: Duration::from_millis(5),
        ..Limits::default()
    }
}
