//! What both test proxies do with a connection once they hold its two ends: copy bytes both
//! ways on two threads, and close both ends when either side ends.

use std::io;
use std::net::{Shutdown, TcpStream};

/// Closes `stream`; one the other side closed already is fine: the point is that it is closed.
pub(crate) fn close(stream: &TcpStream) {
    let _ = stream.shutdown(Shutdown::Both);
}

/// The four handles a relay needs (client in, server in, client out, server out), with Nagle
/// off on both sockets; an error when a handle cannot be cloned.
pub(crate) fn ends(client: &TcpStream, server: &TcpStream) -> io::Result<[TcpStream; 4]> {
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    Ok([
        client.try_clone()?,
        server.try_clone()?,
        client.try_clone()?,
        server.try_clone()?,
    ])
}

/// Starts the two pumps of connection `id` (`ends` as [`ends`] gives them), threads named
/// `"{name} pump {id}"`. `forget(id)` takes the connection out of its proxy's table and gives
/// back its sockets, which are then closed: when a pump's side ends, or at once if a pump
/// cannot start (a connection with one pump is half dead).
pub(crate) fn start_pumps<F>(id: u64, ends: [TcpStream; 4], name: &str, forget: F)
where
    F: Fn(u64) -> Option<(TcpStream, TcpStream)> + Clone + Send + 'static,
{
    let [client_in, server_in, client_out, server_out] = ends;
    for (mut from, mut to) in [(client_in, server_out), (server_in, client_out)] {
        let forget_after = forget.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("{name} pump {id}"))
            .spawn(move || {
                let _ = io::copy(&mut from, &mut to);
                close(&from);
                close(&to);
                forget_after(id);
            });
        if spawned.is_err() {
            if let Some((client, server)) = forget(id) {
                close(&client);
                close(&server);
            }
        }
    }
}
