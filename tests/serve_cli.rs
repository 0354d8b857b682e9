//! `arbiter serve` and `arbiter worker --server`: workers without database credentials play a
//! queued run to the verdict one machine reaches, and the server refuses what it must
//! (no token, the wrong scope, a revoked token, another worker's lease, malformed or oversized
//! bodies, metacharacters in paths) with a 4xx and a JSON message, changing nothing.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use arbiter_stats::{EloModel, Sample, Sprt};
use arbiter_store::{Location, QueuedRun, RunState, Store, TokenScope, Totals};
use serde_json::Value;

use crate::common::{arbiter, text};
use crate::fleet_cli::{batch_sums, block_on, config, one_machine};
use crate::report_browser::chromium;

/// A running `arbiter serve`, killed when dropped.
pub(crate) struct Server {
    pub(crate) child: Child,
    /// `http://127.0.0.1:PORT`.
    pub(crate) url: String,
    /// `127.0.0.1:PORT`.
    pub(crate) address: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `arbiter serve` on `db` on a free port, read back from its first line.
pub(crate) fn serve(db: &str, dir: &Path) -> Server {
    serve_on(db, dir, "127.0.0.1:0").unwrap_or_else(|said| panic!("arbiter serve: {said}"))
}

/// Starts `arbiter serve` on `db` listening on `listen`; what it said instead if it did not
/// start listening (the port still taken, say).
pub(crate) fn serve_on(db: &str, dir: &Path, listen: &str) -> Result<Server, String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(["serve", "--db", db, "--listen", listen])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start arbiter serve");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let first = lines.next().and_then(Result::ok).unwrap_or_default();
    let Some(address) = first
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .map(str::to_owned)
    else {
        let rest: Vec<String> = lines.map_while(Result::ok).collect();
        let _ = child.kill();
        let _ = child.wait();
        return Err(format!("{first}\n{}", rest.join("\n")));
    };
    // The rest of its stderr, drained so that it never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    Ok(Server {
        child,
        url: format!("http://{address}"),
        address,
    })
}

/// One HTTP/1.1 request to the server's API (`path` under `/api/v1`): its status and body.
fn http(
    server: &Server,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&[u8]>,
) -> (u16, String) {
    let mut stream = TcpStream::connect(&server.address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut head = format!(
        "{method} /api/v1{path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n",
        server.address
    );
    if let Some(token) = token {
        head.push_str(&format!("Authorization: Bearer {token}\r\n"));
    }
    let body = body.unwrap_or_default();
    if !body.is_empty() || method == "POST" {
        head.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        ));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    // The server may answer (413) and close before reading an oversized body to its end.
    let _ = stream.write_all(body);
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response);
    let response = String::from_utf8_lossy(&response).into_owned();
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status in {response:?}"));
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default();
    (status, body)
}

fn json(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body:?}"))
}

/// A refusal's status, and its JSON body's `error` and `field`.
fn refused(answer: (u16, String)) -> (u16, String, Option<String>) {
    let (status, body) = answer;
    let value = json(&body);
    let error = value["error"]
        .as_str()
        .unwrap_or_else(|| panic!("no error in {body}"))
        .to_owned();
    (status, error, value["field"].as_str().map(str::to_owned))
}

pub(crate) fn token(db: &str, name: &str, scope: TokenScope) -> String {
    block_on(async {
        let store = Store::open(&Location::parse(db)).await.unwrap();
        let (_, secret) = store.create_token(name, scope).await.unwrap();
        store.close().await;
        secret
    })
}

fn revoke(db: &str, name: &str) {
    block_on(async {
        let store = Store::open(&Location::parse(db)).await.unwrap();
        store.revoke_token(name).await.unwrap();
        store.close().await;
    })
}

/// What a refused request must leave as it was: the queue (runs, batches, leases, totals)
/// and the workers.
fn snapshot(db: &str) -> (Vec<QueuedRun>, Vec<String>) {
    block_on(async {
        let store = Store::open(&Location::parse(db)).await.unwrap();
        let queue = store.queued_runs().await.unwrap();
        let workers = store
            .workers()
            .await
            .unwrap()
            .into_iter()
            .map(|worker| format!("{worker:?}"))
            .collect();
        store.close().await;
        (queue, workers)
    })
}

/// A folder with the fixed-node SPRT of the fleet's tests queued in `fleet.db`.
fn queued_run(rounds: u64) -> (tempfile::TempDir, PathBuf, String) {
    let dir = tempfile::tempdir().unwrap();
    config(dir.path(), rounds);
    let db = dir.path().join("fleet.db");
    let db_url = db.display().to_string();
    let submitted = arbiter(&["submit", "sprt.toml", "--db", &db_url], dir.path());
    assert!(submitted.status.success(), "{}", text(&submitted.stderr));
    (dir, db, db_url)
}

fn server_worker(server: &Server, token_file: &Path, name: &str, dir: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args([
            "worker",
            "--server",
            &server.url,
            "--token-file",
            &token_file.display().to_string(),
            "--name",
            name,
            "--concurrency",
            "1",
            "--lease",
            "5",
            "--exit-when-idle",
            "--spool",
            &dir.join(format!("spool-{name}.db")).display().to_string(),
        ])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start a worker")
}

/// Two workers that reach the database only through the server play the run to the verdict
/// and totals that `arbiter match` reaches alone, every batch counted once; the server stops
/// on SIGTERM with 143.
#[test]
fn two_workers_on_the_server_reach_the_verdict_of_one_machine() {
    let (dir, db, db_url) = queued_run(40);
    let (local_totals, local_state) = one_machine(dir.path());
    let server = serve(&db_url, dir.path());
    let token_file = dir.path().join("worker.token");
    std::fs::write(
        &token_file,
        format!("{}\n", token(&db_url, "workers", TokenScope::Worker)),
    )
    .unwrap();
    let workers: Vec<Child> = ["w1", "w2"]
        .iter()
        .map(|name| server_worker(&server, &token_file, name, dir.path()))
        .collect();
    for worker in workers {
        let out = worker.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        let log = text(&out.stderr);
        assert!(log.contains("nothing left to play"), "{log}");
    }
    let queue = snapshot(&db_url).0;
    let run = &queue[0];
    assert_eq!(run.run.state, local_state, "the verdict");
    assert_eq!(run.totals, local_totals, "the totals");
    let (batches, summed) = batch_sums(&db);
    assert_eq!(
        summed, run.totals,
        "the counted batches add up to the totals"
    );
    assert!(batches > 1, "the run was played in batches: {batches}");
    // The workers registered under the token's name, through the server.
    let workers = snapshot(&db_url).1;
    assert!(
        workers.iter().any(|w| w.contains("\"w1\""))
            && workers.iter().any(|w| w.contains("\"w2\"")),
        "{workers:?}"
    );
    let pid = server.child.id().to_string();
    let killed = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(killed.success());
    let mut server = server;
    let status = server.child.wait().unwrap();
    assert_eq!(status.code(), Some(143), "SIGTERM's status");
}

/// No token, a malformed header, an unknown or revoked token: 401; a token of the wrong scope:
/// 403. Each with a JSON message, and nothing changed in the database.
#[test]
fn the_server_refuses_requests_without_the_right_token() {
    let (dir, _db, db_url) = queued_run(4);
    let server = serve(&db_url, dir.path());
    let worker = token(&db_url, "worker", TokenScope::Worker);
    let user = token(&db_url, "user", TokenScope::User);
    let revoked = token(&db_url, "gone", TokenScope::Worker);
    revoke(&db_url, "gone");
    let before = snapshot(&db_url);
    let info = br#"{"name": "w", "host": "h", "cores": 1, "version": "0"}"#;
    for (token, why) in [
        (None, "no token"),
        (Some("not-a-token"), "unknown or revoked token"),
        (Some(revoked.as_str()), "unknown or revoked token"),
    ] {
        let (status, error, field) = refused(http(&server, "POST", "/workers", token, Some(info)));
        assert_eq!(status, 401, "{error}");
        assert!(error.contains(why), "{error}");
        assert_eq!(field.as_deref(), Some("authorization"));
    }
    // A header that is not `Bearer TOKEN`.
    let mut stream = TcpStream::connect(&server.address).unwrap();
    write!(
        stream,
        "GET /api/v1/queue HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Basic {worker}\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
    // A user's token cannot act as a worker, nor a worker's as a user.
    let (status, error, _) = refused(http(&server, "POST", "/workers", Some(&user), Some(info)));
    assert_eq!(status, 403);
    assert!(
        error.contains("scope user") && error.contains("needs worker"),
        "{error}"
    );
    let (status, error, _) = refused(http(&server, "GET", "/runs", Some(&worker), None));
    assert_eq!(status, 403);
    assert!(error.contains("needs user"), "{error}");
    let (status, error, _) = refused(http(&server, "POST", "/runs/1/stop", Some(&worker), None));
    assert_eq!(status, 403, "{error}");
    assert_eq!(snapshot(&db_url), before, "nothing changed");
    // The right scope is served.
    let (status, body) = http(&server, "GET", "/runs", Some(&user), None);
    assert_eq!(status, 200, "{body}");
    assert_eq!(json(&body).as_array().map(Vec::len), Some(1));
}

/// A worker's token acts only for the workers it registered: another token's worker cannot
/// heartbeat, release or submit its lease, nor take its name; the lease stays its holder's.
#[test]
fn a_worker_token_cannot_touch_another_workers_lease() {
    let (dir, _db, db_url) = queued_run(4);
    let server = serve(&db_url, dir.path());
    let a = token(&db_url, "a", TokenScope::Worker);
    let b = token(&db_url, "b", TokenScope::Worker);
    let register = |token: &str, name: &str| {
        http(
            &server,
            "POST",
            "/workers",
            Some(token),
            Some(
                format!(r#"{{"name": "{name}", "host": "h", "cores": 1, "version": "0"}}"#)
                    .as_bytes(),
            ),
        )
    };
    let (status, worker_a) = register(&a, "worker-a");
    assert_eq!(status, 200, "{worker_a}");
    let (status, worker_b) = register(&b, "worker-b");
    assert_eq!(status, 200, "{worker_b}");
    let claim = format!(r#"{{"worker": {worker_a}, "lease_ms": 60000}}"#);
    let (status, lease) = http(&server, "POST", "/claim", Some(&a), Some(claim.as_bytes()));
    assert_eq!(status, 200, "{lease}");
    assert!(json(&lease)["worker"].is_number(), "a lease: {lease}");
    // B claims for A's worker: refused.
    let (status, error, field) = refused(http(
        &server,
        "POST",
        "/claim",
        Some(&b),
        Some(claim.as_bytes()),
    ));
    assert_eq!((status, field.as_deref()), (403, Some("worker")), "{error}");
    let before = snapshot(&db_url);
    let heartbeat = format!(r#"{{"lease": {lease}, "lease_ms": 60000}}"#);
    let release = format!(r#"{{"lease": {lease}}}"#);
    let submit = format!(r#"{{"lease": {lease}, "pairs": [], "signatures": "{{}}"}}"#);
    for (path, body) in [
        ("/heartbeat", &heartbeat),
        ("/release", &release),
        ("/submit", &submit),
    ] {
        let (status, error, field) =
            refused(http(&server, "POST", path, Some(&b), Some(body.as_bytes())));
        assert_eq!(status, 403, "{path}: {error}");
        assert_eq!(field.as_deref(), Some("lease.worker"), "{path}");
        assert!(
            error.contains("not one that token \"b\" registered"),
            "{error}"
        );
    }
    // B cannot take A's worker by its name either.
    let (status, error, field) = refused(register(&b, "worker-a"));
    assert_eq!((status, field.as_deref()), (409, Some("name")), "{error}");
    assert_eq!(snapshot(&db_url), before, "nothing changed");
    // A still holds its lease.
    let (status, held) = http(
        &server,
        "POST",
        "/heartbeat",
        Some(&a),
        Some(heartbeat.as_bytes()),
    );
    assert_eq!(status, 200, "{held}");
    assert!(held.contains("Held"), "{held}");
}

/// Malformed, mistyped and oversized bodies, and path ids that are not ids: 4xx naming the
/// field, nothing changed; SQL metacharacters in a worker's name are stored verbatim.
#[test]
fn malformed_bodies_and_paths_are_refused_naming_the_field() {
    let (dir, _db, db_url) = queued_run(4);
    let server = serve(&db_url, dir.path());
    let w = token(&db_url, "w", TokenScope::Worker);
    let user = token(&db_url, "u", TokenScope::User);
    let before = snapshot(&db_url);
    let post = |path: &str, body: &[u8]| refused(http(&server, "POST", path, Some(&w), Some(body)));
    let (status, error, field) = post("/claim", br#"{"lease_ms": 60000}"#);
    assert_eq!((status, field.as_deref()), (422, Some("worker")), "{error}");
    let (status, error, field) = post("/claim", br#"{"worker": "x", "lease_ms": 60000}"#);
    assert_eq!((status, field.as_deref()), (422, Some("worker")), "{error}");
    let (status, error, _) = post("/claim", b"{not json");
    assert_eq!(status, 400, "{error}");
    let (status, error, field) = post("/claim", br#"{"worker": 1, "lease_ms": 5}"#);
    // Worker 1 is not this token's, which is checked first: no lease of 5 ms is taken either.
    assert_eq!(status, 403, "{error} {field:?}");
    let huge = vec![b' '; 33 * 1024 * 1024];
    let (status, _) = http(&server, "POST", "/workers", Some(&w), Some(&huge));
    assert_eq!(status, 413, "an oversized body");
    for path in [
        "/runs/1;DROP%20TABLE%20runs/setup",
        "/runs/..%2F..%2Fetc/setup",
        "/runs/-3/setup",
    ] {
        let (status, error, field) = refused(http(&server, "GET", path, Some(&w), None));
        assert_eq!(
            (status, field.as_deref()),
            (400, Some("run")),
            "{path}: {error}"
        );
    }
    let (status, error, _) = refused(http(&server, "GET", "/runs/999/setup", Some(&w), None));
    assert_eq!(status, 404, "{error}");
    let (status, error, _) = refused(http(&server, "GET", "/runs/999", Some(&user), None));
    assert_eq!(status, 404, "{error}");
    let (status, error, _) = refused(http(&server, "GET", "/no/such/route", Some(&w), None));
    assert_eq!(status, 404, "{error}");
    assert_eq!(snapshot(&db_url), before, "nothing changed");
    let name = "x'); DROP TABLE workers;--";
    let body = serde_json::json!({"name": name, "host": "h", "cores": 1, "version": "0"});
    let (status, id) = http(
        &server,
        "POST",
        "/workers",
        Some(&w),
        Some(body.to_string().as_bytes()),
    );
    assert_eq!(status, 200, "{id}");
    let workers = block_on(async {
        let store = Store::open(&Location::parse(&db_url)).await.unwrap();
        store.workers().await.unwrap()
    });
    assert_eq!(workers.len(), 1);
    assert_eq!(workers[0].info.name, name, "stored verbatim");
}

/// The dashboard as headless Chromium renders it (its DOM after layout), and a screenshot.
fn dashboard(server: &Server, path: &str, png: &Path) -> String {
    let url = format!("{}{path}", server.url);
    let shot = chromium(&[
        "--window-size=1100,700",
        &format!("--screenshot={}", png.display()),
        &url,
    ]);
    let bytes = std::fs::read(png)
        .unwrap_or_else(|e| panic!("{}: {e}; chromium: {}", png.display(), text(&shot.stderr)));
    assert!(
        bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
        "{} is a PNG",
        png.display()
    );
    let dom = chromium(&["--dump-dom", &url]);
    assert!(dom.status.success(), "{}", text(&dom.stderr));
    text(&dom.stdout)
}

/// A follower of the dashboard's `GET /events` (HTTP/1.0: the stream unchunked).
struct LiveEvents {
    lines: std::io::Lines<BufReader<TcpStream>>,
}

impl LiveEvents {
    fn follow(server: &Server) -> LiveEvents {
        let mut stream = TcpStream::connect(&server.address).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        stream
            .write_all(b"GET /events HTTP/1.0\r\nAccept: text/event-stream\r\n\r\n")
            .unwrap();
        let mut lines = BufReader::new(stream).lines();
        let status = lines.next().unwrap().unwrap();
        assert!(status.contains(" 200 "), "{status}");
        let headers: Vec<String> = lines
            .by_ref()
            .map_while(Result::ok)
            .take_while(|line| !line.is_empty())
            .collect();
        assert!(
            headers
                .iter()
                .any(|h| h.eq_ignore_ascii_case("content-type: text/event-stream")),
            "{headers:?}"
        );
        LiveEvents { lines }
    }

    /// The next `live` event's data, within the read timeout.
    fn next(&mut self) -> String {
        let mut event = None;
        for line in self.lines.by_ref() {
            let line = line.expect("an event within a minute");
            if let Some(name) = line.strip_prefix("event: ") {
                event = Some(name.to_owned());
            } else if let Some(data) = line.strip_prefix("data: ") {
                if event.as_deref() == Some("live") {
                    return data.to_owned();
                }
            }
        }
        panic!("the event stream ended");
    }

    /// The first `live` event for which `wanted` holds, skipping older states.
    fn until(&mut self, wanted: impl Fn(&str) -> bool) -> String {
        loop {
            let data = self.next();
            if wanted(&data) {
                return data;
            }
        }
    }
}

/// The text of the table row of run `name` in the dashboard's DOM, cells separated by `|`.
fn row_of(dom: &str, name: &str) -> String {
    let at = dom
        .find(&format!(">{name}</a>"))
        .unwrap_or_else(|| panic!("no row for {name} in {dom}"));
    let start = dom[..at].rfind("<tr>").unwrap();
    let end = at + dom[at..].find("</tr>").unwrap();
    let mut cells = Vec::new();
    for cell in dom[start..end].split("<td").skip(1) {
        let mut text = String::new();
        let mut inside = false;
        for c in cell.chars() {
            match c {
                '<' => inside = true,
                '>' => inside = false,
                c if !inside => text.push(c),
                _ => {}
            }
        }
        cells.push(text.trim().to_owned());
    }
    cells.join("|")
}

/// The dashboard in a browser at each state of a run (queued, running, finished): its state,
/// games, batches, Elo and LLR are the store's, and a name with markup is shown as text.
#[test]
fn the_dashboard_shows_each_state_of_a_run_with_the_stores_numbers() {
    let (dir, _db, db_url) = queued_run(12);
    let server = serve(&db_url, dir.path());
    let name = "fleet-sprt";
    // Queued: no batch out yet.
    let dom = dashboard(&server, "/", &dir.path().join("queued.png"));
    let row = row_of(&dom, name);
    assert!(row.starts_with(&format!("1|{name}|queued|0/24|")), "{row}");
    assert!(dom.contains("No worker has registered."), "{dom}");
    assert!(
        dom.contains("http-equiv=\"refresh\""),
        "without script, a running run reloads the page"
    );
    // Live: the page's section as the events give it, now and after the fleet changes.
    let mut live = LiveEvents::follow(&server);
    let first = live.next();
    assert!(
        first.contains(">queued<") && first.contains("No worker has registered."),
        "{first}"
    );
    // Running: a worker holds a batch.
    let w = token(&db_url, "w", TokenScope::Worker);
    let body = br#"{"name": "<b>w1</b>", "host": "h", "cores": 2, "version": "0"}"#;
    let (status, worker) = http(&server, "POST", "/workers", Some(&w), Some(body));
    assert_eq!(status, 200, "{worker}");
    let claim = format!(r#"{{"worker": {worker}, "lease_ms": 60000}}"#);
    let (status, lease) = http(&server, "POST", "/claim", Some(&w), Some(claim.as_bytes()));
    assert_eq!(status, 200, "{lease}");
    let event = live.until(|data| data.contains(">running<"));
    assert!(event.contains("&lt;b&gt;w1&lt;/b&gt;"), "{event}");
    let dom = dashboard(&server, "/", &dir.path().join("running.png"));
    let row = row_of(&dom, name);
    let queue = snapshot(&db_url).0;
    let b = queue[0].batches;
    assert!(row.starts_with(&format!("1|{name}|running|0/24|")), "{row}");
    assert!(
        row.ends_with(&format!("|{}/{}/{}|1", b.done, b.leased, b.open)),
        "batches and workers: {row}"
    );
    assert!(
        dom.contains("&lt;b&gt;w1&lt;/b&gt;"),
        "the worker's name as text: {dom}"
    );
    // Finished: a worker on the server plays the run to its end; the page shows the store's
    // numbers.
    let (status, _) = http(
        &server,
        "POST",
        "/release",
        Some(&w),
        Some(format!(r#"{{"lease": {lease}}}"#).as_bytes()),
    );
    assert_eq!(status, 200);
    let token_file = dir.path().join("w.token");
    std::fs::write(&token_file, &w).unwrap();
    let out = server_worker(&server, &token_file, "w2", dir.path())
        .wait_with_output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let dom = dashboard(&server, "/", &dir.path().join("finished.png"));
    let row = row_of(&dom, name);
    let queue = snapshot(&db_url).0;
    let run = &queue[0];
    let RunState::Finished { verdict } = &run.run.state else {
        panic!("{:?}", run.run.state)
    };
    let totals = run.prefix.totals;
    let sample = Sample::of_run(true, totals.wdl(), totals.pentanomial);
    let elo = arbiter_stats::estimate::elo(&sample).unwrap();
    let sprt = Sprt::new(0.05, 0.05, 0.0, 25.0, EloModel::Normalized).unwrap();
    let status = sprt.status(&sample).unwrap();
    let expected = format!(
        "1|{name}|{}|{}/24|{:+.1} ± {:.1}|{:.2} [{:.2}, {:.2}]|",
        verdict.as_str(),
        totals.games(),
        elo.elo,
        elo.half_width,
        status.llr,
        status.lower_bound,
        status.upper_bound
    );
    assert!(row.starts_with(&expected), "{row}\nexpected {expected}");
    assert!(
        !dom.contains("http-equiv=\"refresh\""),
        "nothing runs: no reload"
    );
    // The run's page is its report.
    let page = dashboard(&server, "/runs/1", &dir.path().join("run.png"));
    assert!(page.contains("LLR over pairs"), "{page}");
    assert!(
        page.contains(&format!("{} of 12", run.totals.pairs)),
        "every counted pair in the report"
    );
    assert!(page.contains("href=\"/\""), "a way back to the runs");
}

/// `arbiter submit`, `runs` and `stop` through the server with a user's token: the run queued
/// is the one `arbiter submit --db` queues (configuration, files, batches, seed); a worker's
/// token is refused; a stop reaches the database.
#[test]
fn a_user_submits_lists_and_stops_a_run_through_the_server() {
    let dir = tempfile::tempdir().unwrap();
    config(dir.path(), 40);
    let db = dir.path().join("fleet.db").display().to_string();
    let direct = dir.path().join("direct.db").display().to_string();
    // The database and its tokens exist before the server opens it.
    let user_file = dir.path().join("user.token");
    std::fs::write(&user_file, token(&db, "alice", TokenScope::User)).unwrap();
    let worker_file = dir.path().join("worker.token");
    std::fs::write(&worker_file, token(&db, "farm", TokenScope::Worker)).unwrap();
    let server = serve(&db, dir.path());
    let via = |file: &Path, args: &[&str]| {
        let mut all: Vec<&str> = args.to_vec();
        let file = file.display().to_string();
        all.extend(["--server", &server.url, "--token-file", &file]);
        arbiter(&all, dir.path())
    };
    let refused = via(&worker_file, &["submit", "sprt.toml"]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
    assert!(
        text(&refused.stderr).contains("needs user"),
        "{}",
        text(&refused.stderr)
    );
    let submitted = via(&user_file, &["submit", "sprt.toml", "--batch-pairs", "4"]);
    assert!(submitted.status.success(), "{}", text(&submitted.stderr));
    let line = text(&submitted.stdout);
    assert!(
        line.starts_with("queued run 1 (fleet-sprt): 40 pairs in 10 batches of 4, seed 11"),
        "{line}"
    );
    let local = arbiter(
        &["submit", "sprt.toml", "--db", &direct, "--batch-pairs", "4"],
        dir.path(),
    );
    assert!(local.status.success(), "{}", text(&local.stderr));
    assert_eq!(
        text(&local.stdout),
        line,
        "the same run as a submit to the database"
    );
    let stored = |db: &str| {
        block_on(async {
            let store = Store::open(&Location::parse(db)).await.unwrap();
            let run = store.run(arbiter_store::RunId::new(1)).await.unwrap();
            let files = store.run_files(run.id).await.unwrap();
            (run.spec, files)
        })
    };
    let (through_server, files) = stored(&db);
    assert_eq!((through_server.clone(), files.clone()), stored(&direct));
    assert_eq!(files.len(), 1, "the book is stored with the run");
    assert_eq!(
        files[0].content,
        std::fs::read(dir.path().join("book.epd")).unwrap()
    );
    let listed = via(&user_file, &["runs"]);
    assert!(listed.status.success(), "{}", text(&listed.stderr));
    let listed = text(&listed.stdout);
    assert!(
        listed
            .lines()
            .nth(1)
            .is_some_and(|row| row.contains("fleet-sprt") && row.contains("queued")),
        "{listed}"
    );
    let stopped = via(&user_file, &["stop", "fleet-sprt"]);
    assert!(stopped.status.success(), "{}", text(&stopped.stderr));
    assert!(text(&stopped.stdout).starts_with("stopped run 1 (fleet-sprt)"));
    let state = snapshot(&db).0[0].run.state.clone();
    assert_eq!(
        state,
        RunState::Finished {
            verdict: arbiter_store::RunOutcome::Stopped
        }
    );
    let again = via(&user_file, &["stop", "fleet-sprt"]);
    assert_eq!(again.status.code(), Some(2));
    assert!(
        text(&again.stderr).contains("already finished"),
        "{}",
        text(&again.stderr)
    );
}

/// Waits until `log` (a file a process appends to) holds `needle`; the log on failure.
fn wait_for(log: &Path, needle: &str, seconds: u64) -> String {
    let deadline = std::time::Instant::now() + Duration::from_secs(seconds);
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if text.contains(needle) {
            return text;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no {needle:?} in {} within {seconds} s:\n{text}",
            log.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A worker cut off from the server after its claim plays its batch, cannot submit it and is
/// killed while it retries: the batch waits in its spool, and the worker started again under
/// its name submits it from there, without playing it again, and the run completes.
#[test]
fn a_killed_workers_played_batch_is_submitted_from_its_spool() {
    let dir = tempfile::tempdir().unwrap();
    // One batch of 4 pairs, seconds long at 5,000 nodes: the network is cut while it plays.
    crate::fleet_cli::config_at(dir.path(), 4, 5000);
    let db_url = dir.path().join("fleet.db").display().to_string();
    let submitted = arbiter(
        &["submit", "sprt.toml", "--db", &db_url, "--batch-pairs", "4"],
        dir.path(),
    );
    assert!(submitted.status.success(), "{}", text(&submitted.stderr));
    let server = serve(&db_url, dir.path());
    let proxy = arbiter_pgtest::CutProxy::start(server.address.parse().unwrap()).unwrap();
    let token_file = dir.path().join("w.token");
    std::fs::write(&token_file, token(&db_url, "w", TokenScope::Worker)).unwrap();
    let spool = dir.path().join("state/spool.db");
    let start = |log: &Path| {
        let log = std::fs::File::create(log).unwrap();
        Command::new(env!("CARGO_BIN_EXE_arbiter"))
            .args([
                "worker",
                "--server",
                &format!("http://{}", proxy.addr()),
                "--token-file",
                &token_file.display().to_string(),
                "--name",
                "cut-off",
                "--concurrency",
                "1",
                "--lease",
                "5",
                "--exit-when-idle",
                "--spool",
                &spool.display().to_string(),
            ])
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap()
    };
    let first_log = dir.path().join("first.log");
    let mut first = start(&first_log);
    wait_for(
        &first_log,
        "batch 0 of run 1 (fleet-sprt): units 0 to 3",
        60,
    );
    proxy.cut();
    let log = wait_for(&first_log, "submitting a batch:", 120);
    first.kill().unwrap();
    first.wait().unwrap();
    assert!(
        !log.contains("counted"),
        "nothing reached the server: {log}"
    );
    let waiting = block_on(async {
        let spool = arbiter_store::Spool::open(&spool).await.unwrap();
        spool.batches().await.unwrap()
    });
    assert_eq!(waiting.len(), 1, "the played batch is in the spool");
    assert_eq!(waiting[0].pairs.len(), 4);
    assert_eq!(snapshot(&db_url).0[0].totals.pairs, 0, "not counted yet");
    proxy.restore();
    let second_log = dir.path().join("second.log");
    let second = start(&second_log).wait_with_output().unwrap();
    let log = std::fs::read_to_string(&second_log).unwrap();
    assert!(second.status.success(), "{log}");
    assert!(
        log.contains("1 played batch(es) waiting in the spool"),
        "{log}"
    );
    assert!(log.contains("batch 0 of run 1: counted"), "{log}");
    assert!(
        !log.contains("(fleet-sprt): units"),
        "the batch is not played again: {log}"
    );
    let run = &snapshot(&db_url).0[0];
    assert_eq!(
        run.totals,
        waiting[0].pairs.iter().fold(Totals::default(), |mut t, p| {
            t.add(p.tally);
            t
        }),
        "the spooled pairs are the run's"
    );
    assert!(
        matches!(run.run.state, RunState::Finished { .. }),
        "{:?}",
        run.run.state
    );
    let left = block_on(async {
        let spool = arbiter_store::Spool::open(&spool).await.unwrap();
        spool.batches().await.unwrap()
    });
    assert_eq!(left, [], "a confirmed batch leaves the spool");
}

/// An expired lease that another worker took: its old holder's heartbeat and release are
/// refused (409, naming the lease); the batch stays the new holder's, unchanged.
#[test]
fn an_expired_lease_taken_by_another_worker_is_not_its_old_holders() {
    let (dir, _db, db_url) = queued_run(4);
    let server = serve(&db_url, dir.path());
    let w = token(&db_url, "w", TokenScope::Worker);
    let register = |name: &str| {
        let body = format!(r#"{{"name": "{name}", "host": "h", "cores": 1, "version": "0"}}"#);
        let (status, id) = http(&server, "POST", "/workers", Some(&w), Some(body.as_bytes()));
        assert_eq!(status, 200, "{id}");
        id
    };
    let (old, new) = (register("old"), register("new"));
    let claim = |worker: &str, lease_ms: u64| {
        let body = format!(r#"{{"worker": {worker}, "lease_ms": {lease_ms}}}"#);
        let (status, lease) = http(&server, "POST", "/claim", Some(&w), Some(body.as_bytes()));
        assert_eq!(status, 200, "{lease}");
        lease
    };
    let lapsed = claim(&old, 1_000);
    std::thread::sleep(Duration::from_millis(1_300));
    let taken = claim(&new, 60_000);
    assert_eq!(
        json(&taken)["sequence"],
        json(&lapsed)["sequence"],
        "the lapsed batch first"
    );
    assert_eq!(json(&taken)["claims"], 2, "{taken}");
    let before = snapshot(&db_url);
    let heartbeat = format!(r#"{{"lease": {lapsed}, "lease_ms": 60000}}"#);
    let (status, error, field) = refused(http(
        &server,
        "POST",
        "/heartbeat",
        Some(&w),
        Some(heartbeat.as_bytes()),
    ));
    assert_eq!((status, field.as_deref()), (409, Some("lease")), "{error}");
    assert!(error.contains("is no longer worker"), "{error}");
    let release = format!(r#"{{"lease": {lapsed}}}"#);
    let (status, error, _) = refused(http(
        &server,
        "POST",
        "/release",
        Some(&w),
        Some(release.as_bytes()),
    ));
    assert_eq!(status, 409, "nothing to give back: {error}");
    let after = snapshot(&db_url);
    assert_eq!(after.0, before.0, "the queue is unchanged");
    let heartbeat = format!(r#"{{"lease": {taken}, "lease_ms": 60000}}"#);
    let (status, answer) = http(
        &server,
        "POST",
        "/heartbeat",
        Some(&w),
        Some(heartbeat.as_bytes()),
    );
    assert_eq!(status, 200);
    assert!(answer.contains("Held"), "the new holder keeps it: {answer}");
}

/// A run of UCI engines submitted with `--upload-engines` is played by a worker on a machine
/// without the binary: it fetches the artifact by the engine's signature, checks its hash,
/// caches it by hash, executable, and plays from there. A binary whose hash is not the path's
/// is refused; an unknown or malformed hash is a 404 or a 400.
#[test]
fn a_worker_without_the_engine_fetches_it_as_an_artifact() {
    let dir = tempfile::tempdir().unwrap();
    let submitter = dir.path().join("submitter");
    let elsewhere = dir.path().join("worker");
    std::fs::create_dir_all(submitter.join("engines")).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    let binary = submitter.join("engines/staunton-dev");
    std::fs::copy(crate::common::staunton(), &binary).unwrap();
    std::fs::copy(crate::common::BOOK, submitter.join("book.epd")).unwrap();
    std::fs::write(
        submitter.join("uci.toml"),
        "name = \"uci-artifact\"\nrounds = 4\nseed = 5\nconcurrency = 1\n\
         [each]\ntc = \"inf\"\nnodes = 200\n\
         [[engine]]\nname = \"dev\"\ncmd = \"engines/staunton-dev\"\n\
         [[engine]]\nname = \"base\"\ncmd = \"engines/staunton-dev\"\n\
         [openings]\nfile = \"book.epd\"\norder = \"random\"\n",
    )
    .unwrap();
    let db_url = dir.path().join("fleet.db").display().to_string();
    let user = submitter.join("user.token");
    std::fs::write(&user, token(&db_url, "u", TokenScope::User)).unwrap();
    let worker_token = elsewhere.join("worker.token");
    std::fs::write(&worker_token, token(&db_url, "w", TokenScope::Worker)).unwrap();
    let server = serve(&db_url, dir.path());
    let submitted = arbiter(
        &[
            "submit",
            "uci.toml",
            "--server",
            &server.url,
            "--token-file",
            &user.display().to_string(),
            "--upload-engines",
            "--batch-pairs",
            "2",
        ],
        &submitter,
    );
    assert!(submitted.status.success(), "{}", text(&submitted.stderr));
    let cache = elsewhere.join("cache");
    let worked = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(["worker", "--server", &server.url, "--token-file"])
        .arg(&worker_token)
        .args([
            "--name",
            "elsewhere",
            "--concurrency",
            "1",
            "--exit-when-idle",
        ])
        .arg("--artifacts")
        .arg(&cache)
        .arg("--spool")
        .arg(elsewhere.join("spool.db"))
        .current_dir(&elsewhere)
        .output()
        .unwrap();
    let log = text(&worked.stderr);
    assert!(worked.status.success(), "{log}");
    assert!(!log.contains("refused"), "{log}");
    let sha = arbiter_store::sha256_hex(&std::fs::read(&binary).unwrap());
    let cached = cache.join(&sha);
    assert_eq!(
        arbiter_store::sha256_hex(&std::fs::read(&cached).unwrap()),
        sha,
        "cached by its hash"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&cached).unwrap().permissions().mode();
        assert_eq!(mode & 0o111, 0o111, "executable: {mode:o}");
    }
    let run = &snapshot(&db_url).0[0];
    assert_eq!(run.totals.pairs, 4, "the run was played: {log}");
    assert!(matches!(run.run.state, RunState::Finished { .. }));
    // The artifact routes refuse what they must.
    let user_secret = std::fs::read_to_string(&user).unwrap();
    let worker_secret = std::fs::read_to_string(&worker_token).unwrap();
    let wrong = "0".repeat(64);
    let (status, error, field) = refused(http(
        &server,
        "PUT",
        &format!("/artifacts/{wrong}"),
        Some(&user_secret),
        Some(b"not the binary"),
    ));
    assert_eq!((status, field.as_deref()), (422, Some("sha256")), "{error}");
    let (status, error, _) = refused(http(
        &server,
        "GET",
        &format!("/artifacts/{wrong}"),
        Some(&worker_secret),
        None,
    ));
    assert_eq!(status, 404, "{error}");
    let (status, error, field) = refused(http(
        &server,
        "GET",
        "/artifacts/..%2F..%2Fetc%2Fpasswd",
        Some(&worker_secret),
        None,
    ));
    assert_eq!((status, field.as_deref()), (400, Some("sha256")), "{error}");
    let (status, _) = http(
        &server,
        "GET",
        &format!("/artifacts/{sha}"),
        Some(&user_secret),
        None,
    );
    assert_eq!(status, 403, "a user's token does not fetch engines");
}

/// A tuning run submitted through the server and played by a worker on the server is
/// `arbiter tune spsa`'s run on one machine, step for step to the last bit: the server makes
/// each step with the run's own tuner from the perturbation the worker played. A perturbation
/// that is not the run's for its batch is refused naming `played`, changing nothing.
#[test]
fn a_tuning_run_is_tuned_through_the_server_step_for_step() {
    let dir = tempfile::tempdir().unwrap();
    let config = crate::fleet_spsa::config(dir.path(), 16, 4);
    let local = arbiter(&["tune", "spsa", "tune.toml"], dir.path());
    assert!(local.status.success(), "{}", text(&local.stderr));
    let (_, _, local_steps) =
        crate::fleet_spsa::stored(&dir.path().join("local.db").display().to_string());
    assert_eq!(local_steps.len(), 4);

    let db_url = dir.path().join("fleet.db").display().to_string();
    let worker_token = token(&db_url, "workers", TokenScope::Worker);
    let user_file = dir.path().join("user.token");
    std::fs::write(&user_file, token(&db_url, "me", TokenScope::User)).unwrap();
    let worker_file = dir.path().join("worker.token");
    std::fs::write(&worker_file, &worker_token).unwrap();
    let server = serve(&db_url, dir.path());
    let submitted = arbiter(
        &[
            "submit",
            config.to_str().unwrap(),
            "--server",
            &server.url,
            "--token-file",
            user_file.to_str().unwrap(),
        ],
        dir.path(),
    );
    assert!(submitted.status.success(), "{}", text(&submitted.stderr));
    assert!(
        text(&submitted.stdout).contains("4 batches of 4 (SPSA: a batch is a step)"),
        "{}",
        text(&submitted.stdout)
    );

    // A forged perturbation for a claimed batch: refused, nothing counted.
    let (status, worker) = http(
        &server,
        "POST",
        "/workers",
        Some(&worker_token),
        Some(br#"{"name": "forger", "host": "h", "cores": 1, "version": "0"}"#),
    );
    assert_eq!(status, 200, "{worker}");
    let claim = format!(r#"{{"worker": {worker}, "lease_ms": 60000}}"#);
    let (status, lease) = http(
        &server,
        "POST",
        "/claim",
        Some(&worker_token),
        Some(claim.as_bytes()),
    );
    assert_eq!(status, 200, "{lease}");
    let played = serde_json::json!({
        "step": json(&lease)["sequence"], "iteration": 0, "flips": [1, 1], "c": [0.5, 0.5],
        "r": [0.1, 0.1], "plus": [201.0, 451.0], "minus": [200.0, 450.0],
    });
    let forged = serde_json::json!({
        "lease": json(&lease),
        "tally": {"pairs": 4, "wins": 8, "draws": 0, "losses": 0, "pentanomial": [0, 0, 0, 0, 4]},
        "signatures": "{}",
        "played": played.to_string(),
    });
    let before = snapshot(&db_url);
    let (status, error, field) = refused(http(
        &server,
        "POST",
        "/submit/tuning",
        Some(&worker_token),
        Some(forged.to_string().as_bytes()),
    ));
    assert_eq!((status, field.as_deref()), (422, Some("played")), "{error}");
    assert!(error.contains("not this run's for step 0"), "{error}");
    assert_eq!(snapshot(&db_url), before, "nothing changed");
    let release = format!(r#"{{"lease": {lease}}}"#);
    let (status, released) = http(
        &server,
        "POST",
        "/release",
        Some(&worker_token),
        Some(release.as_bytes()),
    );
    assert_eq!(status, 200, "{released}");

    let out = server_worker(&server, &worker_file, "only", dir.path())
        .wait_with_output()
        .unwrap();
    let log = text(&out.stderr);
    assert!(out.status.success(), "{log}");
    assert!(
        log.contains("counted as step 3; run finished: complete"),
        "{log}"
    );
    let (state, _, fleet_steps) = crate::fleet_spsa::stored(&db_url);
    assert_eq!(
        state,
        RunState::Finished {
            verdict: arbiter_store::RunOutcome::Complete
        }
    );
    assert_eq!(fleet_steps, local_steps, "{log}");
    assert_ne!(local_steps[3].theta, "[200.0,450.0]");
}
