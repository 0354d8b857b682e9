//! A loopback TCP proxy that spreads connections over several servers in turn, as an ordinary
//! load balancer in front of replicas does: the fleet's HTTP servers (`arbiter serve`) behind
//! one address, one of them killed while clients use it.
//!
//! Each new connection goes to the next server in turn; a server whose connect fails (killed,
//! not yet restarted) is skipped for the one after it, so a client that reconnects after its
//! server died reaches a live one. A connection whose server dies ends as it would without the
//! proxy: the client's next read or write fails.

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use crate::relay::{self, close};
use crate::Error;

/// What the accepting thread and the test share.
#[derive(Default)]
struct State {
    /// The server the next connection tries first.
    turn: usize,
    /// Connections let through to each server so far, by the server's place in the list.
    served: Vec<u64>,
    /// Both ends of every connection let through and not yet closed, by connection number.
    open: BTreeMap<u64, (TcpStream, TcpStream)>,
    /// The number of the next connection let through.
    next: u64,
}

/// A round-robin TCP proxy on a free loopback port. Dropping it closes every connection and
/// stops it.
pub struct RoundRobinProxy {
    address: SocketAddr,
    state: Arc<Mutex<State>>,
    stopping: Arc<AtomicBool>,
    acceptor: Option<JoinHandle<()>>,
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    // A pump thread cannot panic while holding the lock; a poisoned lock still holds sockets
    // that must be closed.
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

impl RoundRobinProxy {
    /// A proxy to `targets`, in turn from the first.
    pub fn start(targets: Vec<SocketAddr>) -> Result<RoundRobinProxy, Error> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .map_err(|e| Error::io("binding the proxy's loopback port", e))?;
        let address = listener
            .local_addr()
            .map_err(|e| Error::io("reading the proxy's port", e))?;
        let state = Arc::new(Mutex::new(State {
            served: vec![0; targets.len()],
            ..State::default()
        }));
        let stopping = Arc::new(AtomicBool::new(false));
        let acceptor = {
            let state = Arc::clone(&state);
            let stopping = Arc::clone(&stopping);
            std::thread::Builder::new()
                .name(format!("round-robin {address}"))
                .spawn(move || accept(&listener, &targets, &state, &stopping))
                .map_err(|e| Error::io("starting the proxy's thread", e))?
        };
        Ok(RoundRobinProxy {
            address,
            state,
            stopping,
            acceptor: Some(acceptor),
        })
    }

    /// The loopback address clients connect to.
    pub fn addr(&self) -> SocketAddr {
        self.address
    }

    /// How many connections each server was given so far, in the order of the targets.
    pub fn served(&self) -> Vec<u64> {
        lock(&self.state).served.clone()
    }
}

impl Drop for RoundRobinProxy {
    fn drop(&mut self) {
        self.stopping.store(true, Ordering::SeqCst);
        for (client, server) in std::mem::take(&mut lock(&self.state).open).into_values() {
            close(&client);
            close(&server);
        }
        // Wakes the accepting thread, which then sees `stopping`.
        let _ = TcpStream::connect(self.address);
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

/// The first of `targets` that accepts a connection, trying them in turn from `first`.
fn connect(targets: &[SocketAddr], first: usize) -> Option<(usize, TcpStream)> {
    (0..targets.len())
        .map(|k| (first + k) % targets.len())
        .find_map(|i| {
            TcpStream::connect(targets[i])
                .ok()
                .map(|server| (i, server))
        })
}

fn accept(
    listener: &TcpListener,
    targets: &[SocketAddr],
    state: &Arc<Mutex<State>>,
    stopping: &AtomicBool,
) {
    for client in listener.incoming() {
        if stopping.load(Ordering::SeqCst) {
            return;
        }
        let Ok(client) = client else { continue };
        let first = lock(state).turn;
        // Every server down: the client is refused as it would be by the server itself.
        let Some((chosen, server)) = connect(targets, first) else {
            close(&client);
            continue;
        };
        let Ok(ends) = relay::ends(&client, &server) else {
            close(&client);
            close(&server);
            continue;
        };
        let id = {
            let mut guard = lock(state);
            // The turn passes the server chosen, not merely the one tried first: after a
            // skipped server, the next connection goes to the one after the chosen.
            guard.turn = (chosen + 1) % targets.len();
            guard.served[chosen] += 1;
            let id = guard.next;
            guard.next += 1;
            guard.open.insert(id, (client, server));
            id
        };
        let shared = Arc::clone(state);
        relay::start_pumps(id, ends, "round-robin", move |id| {
            lock(&shared).open.remove(&id)
        });
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use super::*;

    /// A server on a free loopback port that answers each connection with `byte` and closes it.
    fn answering(byte: u8) -> (SocketAddr, JoinHandle<()>, Arc<AtomicBool>) {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let address = listener.local_addr().unwrap();
        let stopping = Arc::new(AtomicBool::new(false));
        let stop = Arc::clone(&stopping);
        let thread = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stop.load(Ordering::SeqCst) {
                    return;
                }
                let mut stream = stream.unwrap();
                let mut asked = [0u8; 1];
                stream.read_exact(&mut asked).unwrap();
                stream.write_all(&[byte, asked[0]]).unwrap();
            }
        });
        (address, thread, stopping)
    }

    fn ask(proxy: &RoundRobinProxy) -> Option<[u8; 2]> {
        let mut stream = TcpStream::connect(proxy.addr()).unwrap();
        stream.write_all(b"?").ok()?;
        let mut answer = [0u8; 2];
        stream.read_exact(&mut answer).ok()?;
        Some(answer)
    }

    /// Connections alternate between the servers, bytes go both ways, and a server that is
    /// down is skipped for the next one.
    #[test]
    fn connections_take_turns_and_skip_a_dead_server() {
        let (a, a_thread, a_stop) = answering(b'a');
        let (b, b_thread, b_stop) = answering(b'b');
        // A port nothing listens on: bound, read and closed.
        let dead = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .unwrap()
            .local_addr()
            .unwrap();
        let proxy = RoundRobinProxy::start(vec![a, dead, b]).unwrap();
        let answers: Vec<_> = (0..4).map(|_| ask(&proxy)).collect();
        assert_eq!(
            answers,
            [Some(*b"a?"), Some(*b"b?"), Some(*b"a?"), Some(*b"b?")]
        );
        assert_eq!(proxy.served(), [2, 0, 2]);
        for (stop, address, thread) in [(a_stop, a, a_thread), (b_stop, b, b_thread)] {
            stop.store(true, Ordering::SeqCst);
            let _ = TcpStream::connect(address);
            thread.join().unwrap();
        }
        // Every server down: the client's connection is closed at once.
        assert_eq!(ask(&proxy), None);
    }
}
