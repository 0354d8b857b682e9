//! A throwaway PostgreSQL cluster: `initdb` into a temporary directory, the server on a free
//! loopback port, removed when dropped.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use tempfile::TempDir;

use crate::Error;

/// The cluster's superuser, made by `initdb`, and its password (loopback TCP connections use
/// SCRAM, as a real server would, so that a wrong password is refused; the Unix socket in the
/// cluster's directory trusts its local users).
pub const SUPERUSER: &str = "arbiter";
/// [`SUPERUSER`]'s password.
pub const PASSWORD: &str = "arbiter";

/// The name every cluster directory starts with, under the system's temporary folder.
const PREFIX: &str = "arbiter-pgtest-";
/// The bound on `pg_ctl start`'s and `stop`'s waits, in seconds.
const WAIT_SECONDS: u32 = 60;
/// Free ports are found by binding port 0 and closing it; another process may take the port
/// before the server binds it, so a start tries this many ports.
const PORT_ATTEMPTS: usize = 5;
/// A directory whose lock is free but younger than this may be a cluster being set up (the
/// lock file is created, then locked): the sweep leaves it to a later start.
const STALE_AFTER: Duration = Duration::from_secs(60);
/// How many lines of the server's log an error quotes.
const LOG_TAIL_LINES: usize = 20;

/// The programs a cluster needs, all from one installation.
const TOOLS: [&str; 4] = ["initdb", "pg_ctl", "postgres", "psql"];

/// The `bin` folder of the newest version under `root` (Debian's /usr/lib/postgresql/VERSION)
/// that has every program: versions compare as numbers (17 is newer than 9.6).
fn newest_installed(root: &Path, complete: impl Fn(&Path) -> bool) -> Option<PathBuf> {
    let mut installed: Vec<(Vec<u32>, PathBuf)> = fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let key = entry
                .file_name()
                .to_str()?
                .split('.')
                .map(str::parse)
                .collect::<Result<Vec<u32>, _>>()
                .ok()?;
            Some((key, entry.path().join("bin")))
        })
        .filter(|(_, dir)| complete(dir))
        .collect();
    installed.sort();
    installed.pop().map(|(_, dir)| dir)
}

/// The PostgreSQL server programs of one installation.
#[derive(Debug, Clone)]
pub(crate) struct Binaries {
    dir: PathBuf,
}

impl Binaries {
    /// `pg_ctl` on `PATH` (its real folder: Debian keeps the programs in
    /// /usr/lib/postgresql/VERSION/bin and links only the clients into /usr/bin), else the
    /// newest /usr/lib/postgresql/*/bin.
    pub(crate) fn find() -> Result<Binaries, Error> {
        let complete = |dir: &Path| TOOLS.iter().all(|t| dir.join(t).is_file());
        let on_path = std::env::var_os("PATH")
            .into_iter()
            .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
            .map(|dir| dir.join("pg_ctl"))
            .filter(|pg_ctl| pg_ctl.is_file())
            .filter_map(|pg_ctl| fs::canonicalize(pg_ctl).ok())
            .filter_map(|pg_ctl| pg_ctl.parent().map(Path::to_path_buf))
            .find(|dir| complete(dir));
        on_path
            .or_else(|| newest_installed(Path::new("/usr/lib/postgresql"), complete))
            .map(|dir| Binaries { dir })
            .ok_or(Error::NoBinaries)
    }

    pub(crate) fn tool(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

/// Who runs the server: this process's user, or (as root) the `postgres` system user.
#[derive(Debug, Clone, Copy)]
enum RunAs {
    Me,
    User { uid: u32, gid: u32 },
}

impl RunAs {
    fn decide() -> Result<RunAs, Error> {
        if !rustix::process::geteuid().is_root() {
            return Ok(RunAs::Me);
        }
        let id = |flag: &str| -> Result<u32, Error> {
            let output = Command::new("id")
                .args([flag, "postgres"])
                .output()
                .map_err(|e| Error::NoPostgresUser(format!("running `id`: {e}")))?;
            let text = String::from_utf8_lossy(&output.stdout);
            text.trim().parse().map_err(|_| {
                Error::NoPostgresUser(String::from_utf8_lossy(&output.stderr).trim().to_owned())
            })
        };
        Ok(RunAs::User {
            uid: id("-u")?,
            gid: id("-g")?,
        })
    }
}

/// A running (or deliberately stopped) PostgreSQL cluster of its own, on a loopback port.
///
/// The directory (`$TMPDIR/arbiter-pgtest-XXXXXX`) holds everything: `data/` (the cluster),
/// `server.log`, the server's Unix socket and `lock`, which the owning test process holds
/// locked while it lives. Three things end a cluster, whichever comes first:
/// - [`Drop`]: `pg_ctl stop -m immediate` (SIGKILL if that fails), then the directory goes;
/// - its watchdog, a `sh` started with the cluster that waits for end-of-file on a pipe only
///   this process writes to: when the process exits or is killed, even by SIGKILL, the pipe
///   closes and the watchdog stops the server and removes the directory. The shared cluster
///   ([`Cluster::shared`]), a static that is never dropped, ends this way;
/// - the next [`Cluster::start`] of any test process: a directory whose `lock` nobody holds
///   (its process and its watchdog were both killed, e.g. by SIGKILL to the whole process
///   group) and that is older than a minute is stopped and removed. Until then such a server runs on; PostgreSQL itself checks
///   about once a minute that its `postmaster.pid` is still there and shuts down when the
///   directory is gone, so removing the directory by hand is enough to end it.
///
/// PostgreSQL refuses to run as root. When this process's effective uid is 0 (CI's containers
/// and the development machine), `initdb`, `pg_ctl`, the server and the watchdog run as the
/// `postgres` system user (std's `Command::uid`, which also drops root's supplementary groups),
/// and the directory is given to it; as an ordinary user they run as that user.
pub struct Cluster {
    /// Removed after the server is stopped (fields drop after [`Drop::drop`]).
    root: TempDir,
    binaries: Binaries,
    run_as: RunAs,
    port: u16,
    /// The watchdog process; its stdin is the pipe whose closing tells it to clean up.
    watchdog: Mutex<Option<Child>>,
    /// Held locked while this process lives: the sweep's sign that the cluster is in use.
    _lock: File,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("directory", &self.root.path())
            .field("port", &self.port)
            .finish_non_exhaustive()
    }
}

static SHARED: OnceLock<Result<Cluster, String>> = OnceLock::new();
/// Makes every database name this process asks for its own.
static DATABASES: AtomicU64 = AtomicU64::new(0);

impl Cluster {
    /// Creates a cluster in a new temporary directory and starts it on a free loopback port,
    /// waiting (at most a minute) until it accepts connections.
    pub fn start() -> Result<Cluster, Error> {
        let binaries = Binaries::find()?;
        let run_as = RunAs::decide()?;
        sweep_stale(&binaries, run_as);
        let root = tempfile::Builder::new()
            .prefix(PREFIX)
            .tempdir()
            .map_err(|e| Error::io("creating the cluster's temporary directory", e))?;
        let lock_path = root.path().join("lock");
        let lock = File::create_new(&lock_path)
            .map_err(|e| Error::io(format!("creating {}", lock_path.display()), e))?;
        lock.try_lock()
            .map_err(|e| Error::io(format!("locking {}", lock_path.display()), e.into()))?;
        if let RunAs::User { uid, gid } = run_as {
            std::os::unix::fs::chown(root.path(), Some(uid), Some(gid)).map_err(|e| {
                Error::io(
                    format!("giving {} to the postgres user", root.path().display()),
                    e,
                )
            })?;
        }
        let mut cluster = Cluster {
            root,
            binaries,
            run_as,
            port: 0,
            watchdog: Mutex::new(None),
            _lock: lock,
        };
        cluster.init()?;
        *cluster
            .watchdog
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(cluster.spawn_watchdog()?);
        let mut attempt = 0;
        loop {
            attempt += 1;
            cluster.port = free_port()?;
            cluster.configure(&format!("port = {}\n", cluster.port))?;
            match cluster.start_server() {
                Ok(()) => return Ok(cluster),
                Err(Error::NotStarted { ref tail, .. })
                    if attempt < PORT_ATTEMPTS && tail.contains("Address already in use") => {}
                Err(e) => {
                    // The directory stays for the log the error names; a later start's sweep
                    // removes it once this process is gone.
                    cluster.root.disable_cleanup(true);
                    return Err(e);
                }
            }
        }
    }

    /// One cluster for the whole test process, started by its first caller: tests take a
    /// fresh database each ([`Cluster::database`]) and pay `initdb` once per test binary. It is
    /// never dropped; its watchdog removes it when the process ends. A failed start is
    /// reported to every caller.
    pub fn shared() -> Result<&'static Cluster, Error> {
        SHARED
            .get_or_init(|| Cluster::start().map_err(|e| e.to_string()))
            .as_ref()
            .map_err(|message| Error::Shared(message.clone()))
    }

    /// The server's loopback address (for a [`crate::CutProxy`]).
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.port))
    }

    /// The URL of the cluster's `postgres` database, as [`SUPERUSER`] over TCP.
    pub fn url(&self) -> String {
        format!("postgres://{SUPERUSER}:{PASSWORD}@{}/postgres", self.addr())
    }

    /// Creates a new, empty database whose name starts with `name` (letters, digits and `_`
    /// kept, a number added that makes it this process's own) and returns its URL.
    pub fn database(&self, name: &str) -> Result<String, Error> {
        let database = fresh_name(name);
        self.psql(&format!("CREATE DATABASE \"{database}\""))?;
        Ok(crate::url::with_database(&self.url(), &database))
    }

    /// The cluster's temporary directory (data, log, socket).
    pub fn directory(&self) -> &Path {
        self.root.path()
    }

    /// The server's log, which start errors quote the end of.
    pub fn log_file(&self) -> PathBuf {
        self.root.path().join("server.log")
    }

    /// Stops the server at once, as a crash would (`pg_ctl stop -m immediate`: no checkpoint,
    /// clients cut; the next start recovers from the WAL). Committed data survives:
    /// `fsync = off` only risks data when the machine, not the server, goes down.
    pub fn stop(&self) -> Result<(), Error> {
        let output = self.pg_ctl(&[
            "stop",
            "-m",
            "immediate",
            "-w",
            "-t",
            &WAIT_SECONDS.to_string(),
        ])?;
        if output.status.success() {
            return Ok(());
        }
        // pg_ctl could not stop it (or it was not running): make sure, then say what pg_ctl said.
        let killed = self.kill_postmaster();
        if killed || !self.data().join("postmaster.pid").exists() {
            Ok(())
        } else {
            Err(command_failed("pg_ctl stop", &output))
        }
    }

    /// Starts the stopped server again on the same port and data, waiting until it accepts
    /// connections.
    pub fn start_again(&self) -> Result<(), Error> {
        self.start_server()
    }

    /// [`Cluster::stop`] then [`Cluster::start_again`]: the database restarted under load.
    pub fn restart(&self) -> Result<(), Error> {
        self.stop()?;
        self.start_server()
    }

    fn data(&self) -> PathBuf {
        self.root.path().join("data")
    }

    /// A command for one of the server programs, run as the server's user in its directory
    /// (the postgres user may not be allowed into the test's working directory).
    fn command(&self, tool: &str) -> Command {
        let mut command = Command::new(self.binaries.tool(tool));
        command.current_dir(self.root.path()).stdin(Stdio::null());
        if let RunAs::User { uid, gid } = self.run_as {
            command.uid(uid).gid(gid);
        }
        command
    }

    fn pg_ctl(&self, args: &[&str]) -> Result<Output, Error> {
        let data = self.data();
        let log = self.log_file();
        let mut command = self.command("pg_ctl");
        command.arg("-D").arg(&data).arg("-l").arg(&log).args(args);
        command.output().map_err(|e| {
            Error::io(
                format!("running {}", self.binaries.tool("pg_ctl").display()),
                e,
            )
        })
    }

    fn init(&self) -> Result<(), Error> {
        let password = self.root.path().join("password");
        fs::write(&password, PASSWORD)
            .map_err(|e| Error::io(format!("writing {}", password.display()), e))?;
        let output = self
            .command("initdb")
            .arg("-D")
            .arg(self.data())
            .args([
                "-U",
                SUPERUSER,
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
            ])
            .arg(format!("--pwfile={}", password.display()))
            .args([
                "--no-sync",
                "--no-instructions",
                "--locale=C",
                "--encoding=UTF8",
            ])
            .output()
            .map_err(|e| {
                Error::io(
                    format!("running {}", self.binaries.tool("initdb").display()),
                    e,
                )
            })?;
        let _ = fs::remove_file(&password);
        if !output.status.success() {
            return Err(command_failed("initdb", &output));
        }
        // Loopback TCP only (no other machine reaches it), the socket in the cluster's own
        // directory (none in /var/run/postgresql), and no flushes to disk: the data lives as
        // long as a test, and what is written to the kernel survives the server's crash, which
        // is what the chaos tests do. Not `synchronous_commit = off`: a commit it acknowledges
        // can still be in the server's memory, and is lost when the server is killed (a test
        // of restarts saw it). Room for the fleet's chaos tests' many workers.
        self.configure(&format!(
            "listen_addresses = '127.0.0.1'\n\
             unix_socket_directories = '{}'\n\
             fsync = off\n\
             full_page_writes = off\n\
             shared_buffers = 16MB\n\
             max_connections = 200\n",
            self.root.path().display()
        ))
    }

    /// Appends settings to postgresql.conf (a later line wins over an earlier one).
    fn configure(&self, lines: &str) -> Result<(), Error> {
        let path = self.data().join("postgresql.conf");
        OpenOptions::new()
            .append(true)
            .open(&path)
            .and_then(|mut file| file.write_all(lines.as_bytes()))
            .map_err(|e| Error::io(format!("writing {}", path.display()), e))
    }

    fn start_server(&self) -> Result<(), Error> {
        let output = self.pg_ctl(&["start", "-w", "-t", &WAIT_SECONDS.to_string()])?;
        if output.status.success() {
            return Ok(());
        }
        // A server that pg_ctl gave up on may still be coming up: it must not outlive the error.
        self.kill_postmaster();
        let log = self.log_file();
        Err(Error::NotStarted {
            data: self.data(),
            tail: log_tail(&log),
            pg_ctl: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
            log,
        })
    }

    /// SIGKILL to the postmaster named in postmaster.pid; its backends notice and exit.
    fn kill_postmaster(&self) -> bool {
        let Some(pid) = fs::read_to_string(self.data().join("postmaster.pid"))
            .ok()
            .and_then(|text| text.lines().next()?.trim().parse::<i32>().ok())
            .and_then(rustix::process::Pid::from_raw)
        else {
            return false;
        };
        // A postmaster.pid left by a killed server may name a pid since reused by another
        // program, which must not be killed.
        let comm = fs::read_to_string(format!("/proc/{}/comm", pid.as_raw_nonzero()));
        if comm.is_ok_and(|name| name.trim() != "postgres") {
            return false;
        }
        rustix::process::kill_process(pid, rustix::process::Signal::KILL).is_ok()
    }

    fn psql(&self, sql: &str) -> Result<(), Error> {
        let output = Command::new(self.binaries.tool("psql"))
            .args([
                "-X",
                "-q",
                "-v",
                "ON_ERROR_STOP=1",
                "-U",
                SUPERUSER,
                "-d",
                "postgres",
            ])
            .arg("-h")
            .arg(self.root.path())
            .args(["-p", &self.port.to_string(), "-c", sql])
            .stdin(Stdio::null())
            .output()
            .map_err(|e| {
                Error::io(
                    format!("running {}", self.binaries.tool("psql").display()),
                    e,
                )
            })?;
        if output.status.success() {
            Ok(())
        } else {
            Err(command_failed(&format!("psql {sql:?}"), &output))
        }
    }

    /// A `sh` that waits for end-of-file on its stdin, then stops the server and removes the
    /// directory. Only this process holds the pipe's other end (std opens it close-on-exec, so
    /// no child inherits it), so the end-of-file comes when this process ends, however it
    /// ends. It ignores SIGINT and SIGHUP, which Ctrl-C and a closed terminal send to the
    /// whole process group, so that it outlives the test process it cleans up after.
    fn spawn_watchdog(&self) -> Result<Child, Error> {
        const SCRIPT: &str = r#"trap '' INT HUP
read _ignored
"$1" stop -D "$2/data" -m immediate -w -t 60 -s >/dev/null 2>&1 \
  || { pid=$(head -n 1 "$2/data/postmaster.pid" 2>/dev/null) && kill -9 "$pid" 2>/dev/null; }
rm -rf "$2""#;
        let mut command = Command::new("sh");
        command
            .args(["-c", SCRIPT, "arbiter-pgtest-watchdog"])
            .arg(self.binaries.tool("pg_ctl"))
            .arg(self.root.path())
            .current_dir(self.root.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if let RunAs::User { uid, gid } = self.run_as {
            command.uid(uid).gid(gid);
        }
        command
            .spawn()
            .map_err(|e| Error::io("starting the cluster's watchdog (sh)", e))
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // The watchdog first, so that it and this do not clean up the same directory at once.
        if let Some(mut watchdog) = self
            .watchdog
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            let _ = watchdog.kill();
            let _ = watchdog.wait();
        }
        // Bounded: pg_ctl waits at most WAIT_SECONDS, then the postmaster is killed.
        if self.stop().is_err() {
            self.kill_postmaster();
        }
        // `root` (a TempDir) removes the directory as it drops.
    }
}

/// A database name of letters, digits and `_` from `name`, made unique within this process and
/// across processes (its pid): a shared cluster and an external server serve many tests.
pub(crate) fn fresh_name(name: &str) -> String {
    let mut base: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    if !base.starts_with(|c: char| c.is_ascii_lowercase() || c == '_') {
        base.insert(0, 'd');
    }
    let n = DATABASES.fetch_add(1, Ordering::Relaxed);
    format!("{base}_{}_{n}", std::process::id())
}

fn free_port() -> Result<u16, Error> {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .map_err(|e| Error::io("finding a free loopback port", e))
}

fn command_failed(what: &str, output: &Output) -> Error {
    let mut text = String::from_utf8_lossy(&output.stderr).trim().to_owned();
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !stdout.trim().is_empty() {
        text = format!("{text}\n{}", stdout.trim());
    }
    Error::Command {
        what: what.to_owned(),
        status: output.status.to_string(),
        output: text,
    }
}

fn log_tail(log: &Path) -> String {
    match fs::read_to_string(log) {
        Ok(text) => {
            let lines: Vec<&str> = text.lines().collect();
            lines[lines.len().saturating_sub(LOG_TAIL_LINES)..].join("\n")
        }
        Err(e) => format!("(unreadable: {e})"),
    }
}

/// Stops and removes the clusters under the temporary folder whose test process and watchdog
/// are both gone (their lock is free), as far as this user may.
fn sweep_stale(binaries: &Binaries, run_as: RunAs) {
    let Ok(entries) = fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        if !entry
            .file_name()
            .to_str()
            .is_some_and(|name| name.starts_with(PREFIX))
        {
            continue;
        }
        let dir = entry.path();
        let Ok(lock) = File::open(dir.join("lock")) else {
            continue;
        };
        let old = lock
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|modified| SystemTime::now().duration_since(modified).ok())
            .is_some_and(|age| age >= STALE_AFTER);
        if !old || lock.try_lock().is_err() {
            continue;
        }
        let mut stop = Command::new(binaries.tool("pg_ctl"));
        stop.arg("-D")
            .arg(dir.join("data"))
            .args(["stop", "-m", "immediate", "-w", "-t", "10", "-s"])
            .current_dir(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if let RunAs::User { uid, gid } = run_as {
            stop.uid(uid).gid(gid);
        }
        let deadline = Instant::now() + Duration::from_secs(15);
        if let Ok(mut child) = stop.spawn() {
            while Instant::now() < deadline && matches!(child.try_wait(), Ok(None)) {
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = fs::remove_dir_all(&dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_complete_installation_is_found_by_number() {
        let root = tempfile::tempdir().unwrap();
        for (version, tools) in [
            ("9.6", &TOOLS[..]),
            ("15", &TOOLS[..]),
            ("16", &TOOLS[..]),
            ("17", &TOOLS[..2]),
            ("notes", &TOOLS[..]),
        ] {
            let bin = root.path().join(version).join("bin");
            fs::create_dir_all(&bin).unwrap();
            for tool in tools {
                fs::write(bin.join(tool), "").unwrap();
            }
        }
        let complete = |dir: &Path| TOOLS.iter().all(|t| dir.join(t).is_file());
        assert_eq!(
            newest_installed(root.path(), complete),
            Some(root.path().join("16/bin")),
            "16, not 9.6 (text order) nor 17 (no postgres or psql)"
        );
        assert_eq!(newest_installed(&root.path().join("none"), complete), None);
    }

    #[test]
    fn database_names_are_safe_and_distinct() {
        let a = fresh_name("Store's test-1");
        let b = fresh_name("Store's test-1");
        assert_ne!(a, b);
        assert!(a.starts_with("store_s_test_1_"), "{a}");
        assert!(fresh_name("1st").starts_with("d1st_"));
        let long = fresh_name(&"x".repeat(100));
        assert!(long.len() <= 63, "PostgreSQL's identifier limit: {long}");
        for name in [a, b, long] {
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
                "{name}"
            );
        }
    }
}
