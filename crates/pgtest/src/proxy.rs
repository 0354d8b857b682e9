//! A loopback TCP proxy that a test can cut and restore: the network between a worker and its
//! database failing and coming back, without touching the database itself.
//!
//! Cutting closes both ends of every open connection (the client's next read or write fails;
//! the server sees its client gone, so the session ends and its locks are released) and, until
//! [`CutProxy::restore`], accepts new connections only to close them at once: a client that
//! tries to reconnect is refused promptly instead of waiting out a timeout.

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
    /// Cut: no connection lives, none is let through.
    cut: bool,
    /// Both ends of every connection let through and not yet closed, by connection number.
    open: BTreeMap<u64, (TcpStream, TcpStream)>,
    /// The number of the next connection let through.
    next: u64,
}

/// A TCP proxy on a free loopback port forwarding to one address. Dropping it closes every
/// connection and stops it.
pub struct CutProxy {
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

impl CutProxy {
    /// A proxy to `target` (e.g. [`crate::Cluster::addr`]), forwarding until cut.
    pub fn start(target: SocketAddr) -> Result<CutProxy, Error> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .map_err(|e| Error::io("binding the proxy's loopback port", e))?;
        let address = listener
            .local_addr()
            .map_err(|e| Error::io("reading the proxy's port", e))?;
        let state = Arc::new(Mutex::new(State::default()));
        let stopping = Arc::new(AtomicBool::new(false));
        let acceptor = {
            let state = Arc::clone(&state);
            let stopping = Arc::clone(&stopping);
            std::thread::Builder::new()
                .name(format!("cut-proxy {address}"))
                .spawn(move || accept(&listener, target, &state, &stopping))
                .map_err(|e| Error::io("starting the proxy's thread", e))?
        };
        Ok(CutProxy {
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

    /// `url` (a cluster's or any server's) reaching its server through this proxy.
    pub fn url(&self, url: &str) -> String {
        crate::url::with_address(url, self.address)
    }

    /// Closes every open connection and refuses new ones until [`CutProxy::restore`].
    pub fn cut(&self) {
        let mut state = lock(&self.state);
        state.cut = true;
        for (client, server) in std::mem::take(&mut state.open).into_values() {
            close(&client);
            close(&server);
        }
    }

    /// Lets new connections through again (the ones cut stay closed).
    pub fn restore(&self) {
        lock(&self.state).cut = false;
    }

    /// Connections let through and still open, as the proxy knows them.
    pub fn open_connections(&self) -> usize {
        lock(&self.state).open.len()
    }
}

impl Drop for CutProxy {
    fn drop(&mut self) {
        self.cut();
        self.stopping.store(true, Ordering::SeqCst);
        // Wakes the accepting thread, which then sees `stopping`.
        let _ = TcpStream::connect(self.address);
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

fn accept(
    listener: &TcpListener,
    target: SocketAddr,
    state: &Arc<Mutex<State>>,
    stopping: &AtomicBool,
) {
    for client in listener.incoming() {
        if stopping.load(Ordering::SeqCst) {
            return;
        }
        let Ok(client) = client else { continue };
        if lock(state).cut {
            close(&client);
            continue;
        }
        // A server that is down refuses the client the same way.
        let Ok(server) = TcpStream::connect(target) else {
            close(&client);
            continue;
        };
        let Ok(ends) = relay::ends(&client, &server) else {
            close(&client);
            close(&server);
            continue;
        };
        let id = {
            // Checked again under the lock that `cut` takes: a connection is either registered
            // before a cut (and closed by it) or closed here, never left open across one.
            let mut guard = lock(state);
            if guard.cut {
                close(&client);
                close(&server);
                continue;
            }
            let id = guard.next;
            guard.next += 1;
            guard.open.insert(id, (client, server));
            id
        };
        let shared = Arc::clone(state);
        relay::start_pumps(id, ends, "cut-proxy", move |id| {
            lock(&shared).open.remove(&id)
        });
    }
}
