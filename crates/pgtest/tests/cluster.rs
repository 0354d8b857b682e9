//! The clusters and the proxy against the real PostgreSQL programs: started, connected to with
//! sqlx as the store connects, restarted with their data, cut off and restored, and gone when
//! their test process is killed.

use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use arbiter_pgtest::{url, Cluster, CutProxy, Error};
use sqlx::{Connection, PgConnection};

/// Polls `done` every 50 ms for at most `limit`; whether it came true.
fn within(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if done() {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

async fn select_one(url: &str) -> Result<i32, sqlx::Error> {
    let mut connection = PgConnection::connect(url).await?;
    let one = sqlx::query_scalar("SELECT 1")
        .fetch_one(&mut connection)
        .await?;
    connection.close().await?;
    Ok(one)
}

#[tokio::test]
async fn a_cluster_starts_and_answers_on_its_own_port() {
    let started = Instant::now();
    let cluster = Cluster::start().expect("a throwaway cluster");
    eprintln!(
        "pgtest: initdb + start of a cluster: {:.2} s",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(select_one(&cluster.url()).await.unwrap(), 1);
    assert!(cluster.addr().ip().is_loopback());
    assert!(cluster.log_file().starts_with(cluster.directory()));

    let database = cluster.database("Answers-1").unwrap();
    let mut connection = PgConnection::connect(&database).await.unwrap();
    let name: String = sqlx::query_scalar("SELECT current_database()")
        .fetch_one(&mut connection)
        .await
        .unwrap();
    assert!(name.starts_with("answers_1_"), "{name}");
    assert_eq!(
        database,
        url::with_database(&cluster.url(), &name),
        "the URL names the database made"
    );
    let tables: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'",
    )
    .fetch_one(&mut connection)
    .await
    .unwrap();
    assert_eq!(tables, 0, "a fresh database is empty");
}

#[tokio::test]
async fn a_wrong_password_is_refused_over_tcp() {
    let cluster = Cluster::shared().unwrap();
    let wrong = url::with_password(&cluster.url(), "not-the-password");
    let error = select_one(&wrong).await.expect_err("a wrong password");
    assert!(
        error.to_string().contains("password authentication failed"),
        "{error}"
    );
}

#[tokio::test]
async fn the_shared_cluster_hands_out_distinct_empty_databases() {
    let a = arbiter_pgtest::database("shared").unwrap();
    let b = arbiter_pgtest::database("shared").unwrap();
    assert_ne!(a, b);
    assert_eq!(
        std::ptr::from_ref(Cluster::shared().unwrap()),
        std::ptr::from_ref(Cluster::shared().unwrap()),
        "one cluster per process"
    );
    let mut first = PgConnection::connect(&a).await.unwrap();
    sqlx::query("CREATE TABLE only_in_a (x int)")
        .execute(&mut first)
        .await
        .unwrap();
    let mut second = PgConnection::connect(&b).await.unwrap();
    let seen: Option<String> = sqlx::query_scalar("SELECT to_regclass('only_in_a')::text")
        .fetch_one(&mut second)
        .await
        .unwrap();
    assert_eq!(seen, None);
}

#[tokio::test]
async fn a_restart_keeps_committed_data_and_the_port() {
    let cluster = Cluster::start().unwrap();
    let database = cluster.database("restart").unwrap();
    let mut connection = PgConnection::connect(&database).await.unwrap();
    sqlx::query("CREATE TABLE kept (x int)")
        .execute(&mut connection)
        .await
        .unwrap();
    sqlx::query("INSERT INTO kept VALUES (1), (2), (3)")
        .execute(&mut connection)
        .await
        .unwrap();
    let port = cluster.addr().port();

    cluster.restart().unwrap();
    assert!(
        sqlx::query("SELECT 1")
            .execute(&mut connection)
            .await
            .is_err(),
        "a connection from before the restart is broken"
    );
    assert_eq!(cluster.addr().port(), port);
    let mut again = PgConnection::connect(&database).await.unwrap();
    let sum: i64 = sqlx::query_scalar("SELECT sum(x) FROM kept")
        .fetch_one(&mut again)
        .await
        .unwrap();
    assert_eq!(sum, 6);

    cluster.stop().unwrap();
    assert!(
        select_one(&database).await.is_err(),
        "stopped means stopped"
    );
    cluster.start_again().unwrap();
    assert_eq!(select_one(&database).await.unwrap(), 1);
}

#[tokio::test]
async fn two_clusters_run_at_once_apart() {
    let (a, b) = (Cluster::start().unwrap(), Cluster::start().unwrap());
    assert_ne!(a.addr(), b.addr());
    assert_ne!(a.directory(), b.directory());
    let mut on_a = PgConnection::connect(&a.url()).await.unwrap();
    sqlx::query("CREATE TABLE only_on_a (x int)")
        .execute(&mut on_a)
        .await
        .unwrap();
    let mut on_b = PgConnection::connect(&b.url()).await.unwrap();
    let seen: Option<String> = sqlx::query_scalar("SELECT to_regclass('only_on_a')::text")
        .fetch_one(&mut on_b)
        .await
        .unwrap();
    assert_eq!(seen, None);
    on_a.close().await.unwrap();
    on_b.close().await.unwrap();

    let directory = a.directory().to_path_buf();
    let address = a.addr();
    drop(a);
    assert!(
        !directory.exists(),
        "dropped: {} is gone",
        directory.display()
    );
    assert!(
        TcpStream::connect(address).is_err(),
        "dropped: nothing on {address}"
    );
    assert_eq!(select_one(&b.url()).await.unwrap(), 1, "the other runs on");
}

/// A server that cannot start names its log and quotes the end of it.
#[test]
fn a_failed_start_quotes_the_servers_log() {
    let cluster = Cluster::start().unwrap();
    cluster.stop().unwrap();
    let conf = cluster.directory().join("data/postgresql.conf");
    let mut text = std::fs::read_to_string(&conf).unwrap();
    text.push_str("no_such_setting_of_arbiter = 1\n");
    std::fs::write(&conf, text).unwrap();
    let error = cluster.start_again().expect_err("an unknown setting");
    let message = error.to_string();
    assert!(matches!(error, Error::NotStarted { .. }), "{error:?}");
    assert!(
        message.contains(&cluster.log_file().display().to_string()),
        "{message}"
    );
    assert!(message.contains("no_such_setting_of_arbiter"), "{message}");
}

#[tokio::test]
async fn a_cut_breaks_open_connections_and_refuses_new_ones_until_restored() {
    let cluster = Cluster::shared().unwrap();
    let database = cluster.database("cut").unwrap();
    let proxy = CutProxy::start(cluster.addr()).unwrap();
    let through = proxy.url(&database);
    assert_ne!(through, database);

    let mut open = PgConnection::connect(&through).await.unwrap();
    let locked: bool = sqlx::query_scalar("SELECT pg_try_advisory_lock(20)")
        .fetch_one(&mut open)
        .await
        .unwrap();
    assert!(locked);
    assert_eq!(proxy.open_connections(), 1);

    proxy.cut();
    assert_eq!(proxy.open_connections(), 0);
    assert!(
        sqlx::query("SELECT 1").execute(&mut open).await.is_err(),
        "an open connection is broken by the cut"
    );
    assert!(
        select_one(&through).await.is_err(),
        "a new connection is refused while cut"
    );
    // The server sees its client gone: the session ends and its lock is free, as a worker's
    // lease must be when the worker is cut off.
    let mut direct = PgConnection::connect(&database).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let free: bool = sqlx::query_scalar("SELECT pg_try_advisory_lock(20)")
            .fetch_one(&mut direct)
            .await
            .unwrap();
        if free {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the cut session still holds its lock"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    proxy.restore();
    assert_eq!(select_one(&through).await.unwrap(), 1, "restored");
}

/// Set by the test below for the copy of this binary it starts and kills.
const CHILD_ENV: &str = "ARBITER_PGTEST_HOLD_A_CLUSTER";
/// Where the child's line saying where its cluster is starts (the harness may print the test's
/// name before it on the same line).
const CLUSTER_LINE: &str = "child's cluster: ";

/// In the child only: start a cluster, say where it is, and wait to be killed.
#[test]
fn hold_a_cluster_when_asked() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    let cluster = Cluster::start().unwrap();
    println!(
        "{CLUSTER_LINE}{} {}",
        cluster.directory().display(),
        cluster.addr()
    );
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

/// SIGKILL to a test process runs no destructor: its watchdog stops the server and removes the
/// directory.
#[test]
fn a_killed_test_process_leaves_no_cluster_behind() {
    if std::env::var_os(CHILD_ENV).is_some() {
        return;
    }
    let (mut child, cluster) = child_holding_a_cluster();
    let Some((directory, address)) = cluster else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("the child did not start a cluster within 120 s");
    };
    assert!(directory.exists());
    assert!(
        TcpStream::connect(address).is_ok(),
        "the child's server runs"
    );

    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        within(Duration::from_secs(60), || !directory.exists()),
        "{} is still there",
        directory.display()
    );
    assert!(
        within(Duration::from_secs(60), || TcpStream::connect(address)
            .is_err()),
        "a server still answers on {address}"
    );
}

/// A copy of this binary holding a cluster, in a process group of its own, and where its
/// cluster is (directory, address); `None` if it said nothing within two minutes.
fn child_holding_a_cluster() -> (std::process::Child, Option<(PathBuf, SocketAddr)>) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "hold_a_cluster_when_asked",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, "1")
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    // Read on a thread, so that a child that never says where its cluster is fails the test
    // instead of hanging it.
    let (said, heard) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in stdout.lines().map_while(Result::ok) {
            if let Some((_, where_)) = line.trim().split_once(CLUSTER_LINE) {
                let _ = said.send(where_.to_owned());
            }
        }
    });
    let Ok(where_) = heard.recv_timeout(Duration::from_secs(120)) else {
        return (child, None);
    };
    let (directory, address) = where_.split_once(' ').unwrap();
    (
        child,
        Some((PathBuf::from(directory), address.parse().unwrap())),
    )
}

/// SIGKILL to a test process's whole process group takes its watchdog too: the server runs on
/// in a directory whose lock nobody holds, and the next cluster's start stops and removes it.
#[test]
fn the_next_start_sweeps_a_cluster_whose_process_and_watchdog_were_killed() {
    if std::env::var_os(CHILD_ENV).is_some() {
        return;
    }
    let (mut child, cluster) = child_holding_a_cluster();
    let group = rustix::process::Pid::from_child(&child);
    let kill_group = || {
        let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
    };
    let Some((directory, address)) = cluster else {
        kill_group();
        let _ = child.wait();
        panic!("the child did not start a cluster within 120 s");
    };
    kill_group();
    child.wait().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        directory.exists(),
        "nothing cleaned up after the killed group"
    );
    assert!(
        TcpStream::connect(address).is_ok(),
        "the orphaned server still runs (pg_ctl starts it in a session of its own)"
    );
    // Younger than a minute, a free lock may be a cluster being set up: made older here.
    let old = std::time::SystemTime::now() - Duration::from_secs(120);
    std::fs::File::options()
        .write(true)
        .open(directory.join("lock"))
        .and_then(|lock| lock.set_modified(old))
        .unwrap();

    let _next = Cluster::start().unwrap();
    assert!(
        !directory.exists(),
        "swept: {} is gone",
        directory.display()
    );
    assert!(
        within(Duration::from_secs(30), || TcpStream::connect(address)
            .is_err()),
        "swept: nothing answers on {address}"
    );
}
