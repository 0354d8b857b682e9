//! The read-only dashboard, served by the same process as the API: the runs with their state,
//! games, Elo and LLR, the workers with their last contact, and each run's report with its
//! charts. Plain HTML and inline SVG that reads on a phone. The runs page is live: a few lines
//! of script follow `GET /events` (server-sent events) and put each new state of the runs and
//! workers in place as the fleet changes; without script (or through a proxy that buffers
//! events) the page reloads itself while something runs. A report's page reloads itself.
//!
//! It needs no token, as fishtest's and OpenBench's pages do not: it shows what the fleet
//! plays, never a secret (no configuration text, no database URL), and changes nothing.

use std::convert::Infallible;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use arbiter_report::{Report, RunData, TuningData, TuningReport};
use arbiter_runner::fleet::{progress, RunProgress};
use arbiter_store::{QueuedRun, RunState, Worker};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::Html;
use futures_util::Stream;
use tokio::sync::watch;

use crate::app::{AppState, Refusal, RunPath};

/// How often a page that shows something running reloads itself.
pub const REFRESH_SECONDS: u32 = 10;

/// How often the server looks at the fleet for the live page.
pub const LOOK_EVERY: Duration = Duration::from_secs(2);

/// The longest a live page goes without a new state (its workers' "last contact" ages).
pub const FRESH_EVERY: Duration = Duration::from_secs(30);

/// `GET /`: the runs and the workers.
pub async fn index(State(state): State<AppState>) -> Result<Html<String>, Refusal> {
    let store = state.store();
    let runs = store.queued_runs().await?;
    let workers = store.workers().await?;
    Ok(Html(index_page(&runs, &workers, now_ms())))
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// `GET /events`: the live part of the runs page (`live` events, its HTML), sent when the runs
/// or the workers change and at least every [`FRESH_EVERY`]. One watcher per server process
/// reads the fleet every [`LOOK_EVERY`], however many pages follow it.
pub async fn events(
    State(state): State<AppState>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let updates = state.live(watch_fleet);
    let stream =
        futures_util::stream::unfold((updates, true), |(mut updates, mut first)| async move {
            loop {
                if !first && updates.changed().await.is_err() {
                    return None;
                }
                first = false;
                let live = updates.borrow_and_update().clone();
                // Nothing published yet: the watcher's first look is on its way.
                if live.is_empty() {
                    continue;
                }
                let event = Event::default().event("live").data(live.as_str());
                return Some((Ok(event), (updates, false)));
            }
        });
    Sse::new(stream).keep_alive(KeepAlive::default())
}

/// The watcher behind [`events`]: reads the runs and the workers every [`LOOK_EVERY`] and
/// publishes the live section when what it shows changed, or [`FRESH_EVERY`] after the last.
/// A database that does not answer is skipped over; the pages keep their last state.
async fn watch_fleet(state: AppState, publish: watch::Sender<Arc<String>>) {
    let mut shown: Option<(String, std::time::Instant)> = None;
    loop {
        // No page follows (the one receiver left is the state's own): only wait.
        if publish.receiver_count() <= 1 {
            shown = None;
            tokio::time::sleep(LOOK_EVERY).await;
            continue;
        }
        let store = state.store();
        if let (Ok(runs), Ok(workers)) = (store.queued_runs().await, store.workers().await) {
            // What the section shows, without the ages that move every second.
            let seen = format!(
                "{}|{:?}",
                serde_json::to_string(&runs).unwrap_or_default(),
                workers
                    .iter()
                    .map(|w| (w.id, &w.info.name, &w.info.host))
                    .collect::<Vec<_>>()
            );
            let stale = shown
                .as_ref()
                .is_none_or(|(last, at)| *last != seen || at.elapsed() >= FRESH_EVERY);
            if stale {
                let _ = publish.send(Arc::new(live_section(&runs, &workers, now_ms())));
                shown = Some((seen, std::time::Instant::now()));
            }
        }
        tokio::time::sleep(LOOK_EVERY).await;
    }
}

/// `GET /runs/{run}`: the run's report (a match's games and charts, a tuning run's values), as
/// `arbiter report` writes it, reloading itself while the run runs.
pub async fn run_page(
    State(state): State<AppState>,
    RunPath(run): RunPath,
) -> Result<Html<String>, Refusal> {
    let store = state.store();
    let found = store.run(run).await?;
    let page = match TuningData::load(store, run).await.map_err(report_refusal)? {
        Some(tuning) => TuningReport::build(&tuning).map_err(report_refusal)?.html(),
        None => {
            let data = RunData::load(store, run).await.map_err(report_refusal)?;
            Report::build(&data).map_err(report_refusal)?.html()
        }
    };
    let running = matches!(found.state, RunState::Running);
    Ok(Html(served_report(&page, running)))
}

fn report_refusal(e: arbiter_report::ReportError) -> Refusal {
    match e {
        arbiter_report::ReportError::Store(e) => Refusal::from(e),
        other => Refusal::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("the run's report: {other}"),
            None,
        ),
    }
}

/// The report `page` with a way back to the runs, and a refresh every [`REFRESH_SECONDS`]
/// while `running`.
fn served_report(page: &str, running: bool) -> String {
    let head = if running {
        format!("<meta http-equiv=\"refresh\" content=\"{REFRESH_SECONDS}\">")
    } else {
        String::new()
    };
    let back = "<p><a href=\"/\">&larr; All runs</a></p>";
    let page = match page.find("<head>") {
        Some(at) => {
            let at = at + "<head>".len();
            format!("{}{head}{}", &page[..at], &page[at..])
        }
        None => format!("{head}{page}"),
    };
    match page.find("<body>") {
        Some(at) => {
            let at = at + "<body>".len();
            format!("{}{back}{}", &page[..at], &page[at..])
        }
        None => format!("{back}{page}"),
    }
}

/// Text for HTML: names come from whoever submitted a run or named a worker.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:0 auto;max-width:72rem;\
padding:0.75rem;color:#222}h1{font-size:1.3rem}h2{font-size:1.1rem;margin-top:1.5rem}\
.scroll{overflow-x:auto}table{border-collapse:collapse;width:100%;font-size:0.9rem}\
th,td{padding:0.3rem 0.5rem;border-bottom:1px solid #ddd;text-align:right;white-space:nowrap}\
th:nth-child(2),td:nth-child(2){text-align:left}a{color:#0645ad}.h1{color:#176117;font-weight:600}\
.h0{color:#a31515;font-weight:600}.muted{color:#777}svg{vertical-align:middle}";

/// The dashboard's page: runs, then workers, with when it was made; live through
/// [`events`], reloading itself without script while a run runs.
pub fn index_page(runs: &[QueuedRun], workers: &[Worker], now_ms: i64) -> String {
    let running = runs
        .iter()
        .any(|queued| matches!(queued.run.state, RunState::Running));
    let mut page = String::from("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">");
    page.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">");
    if running {
        let _ = write!(
            page,
            "<noscript><meta http-equiv=\"refresh\" content=\"{REFRESH_SECONDS}\"></noscript>"
        );
    }
    let _ = write!(
        page,
        "<title>arbiter: {} runs</title><style>{STYLE}</style></head><body><h1>arbiter</h1>\
         <div id=\"live\">{}</div><script>{LIVE_SCRIPT}</script></body></html>",
        runs.len(),
        live_section(runs, workers, now_ms)
    );
    page
}

/// Follows `/events` and puts each state in place; a dropped connection is retried by the
/// browser itself.
const LIVE_SCRIPT: &str = "if(window.EventSource){new EventSource('/events')\
.addEventListener('live',function(e){document.getElementById('live').innerHTML=e.data;});}";

/// The part of the runs page that changes: the runs, the workers and when it was made.
pub fn live_section(runs: &[QueuedRun], workers: &[Worker], now_ms: i64) -> String {
    let running = runs
        .iter()
        .any(|queued| matches!(queued.run.state, RunState::Running));
    let mut page = String::from("<h2>Runs</h2>");
    if runs.is_empty() {
        page.push_str("<p class=\"muted\">No run is queued.</p>");
    } else {
        page.push_str(
            "<div class=\"scroll\"><table><thead><tr><th>ID</th><th>Name</th><th>State</th>\
             <th>Games</th><th>Elo</th><th>LLR</th><th></th><th>Batches done/out/open</th>\
             <th>Workers</th></tr></thead><tbody>",
        );
        for queued in runs {
            page.push_str(&run_row(queued, &progress(queued)));
        }
        page.push_str("</tbody></table></div>");
    }
    page.push_str("<h2>Workers</h2>");
    if workers.is_empty() {
        page.push_str("<p class=\"muted\">No worker has registered.</p>");
    } else {
        page.push_str(
            "<div class=\"scroll\"><table><thead><tr><th>ID</th><th>Name</th><th>Host</th>\
             <th>Cores</th><th>Version</th><th>Last contact</th></tr></thead><tbody>",
        );
        for worker in workers {
            let _ = write!(
                page,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                worker.id,
                escape(&worker.info.name),
                escape(&worker.info.host),
                worker.info.cores,
                escape(&worker.info.version),
                ago(now_ms - worker.last_contact_ms),
            );
        }
        page.push_str("</tbody></table></div>");
    }
    let _ = write!(
        page,
        "<p class=\"muted\">Made at {} UTC{}.</p>",
        clock(now_ms),
        if running {
            "; live while a run runs"
        } else {
            ""
        }
    );
    page
}

fn run_row(queued: &QueuedRun, progress: &RunProgress) -> String {
    let run = &queued.run;
    let b = queued.batches;
    let state_class = match progress.state.to_ascii_lowercase().as_str() {
        "h1" => " class=\"h1\"",
        "h0" => " class=\"h0\"",
        _ => "",
    };
    let elo = match (progress.tuning, progress.elo) {
        (true, _) => "spsa".to_owned(),
        (false, Some((elo, half))) => format!("{elo:+.1} &plusmn; {half:.1}"),
        (false, None) => "&ndash;".to_owned(),
    };
    let (llr, bar) = match &progress.sprt {
        Some(sprt) => (
            format!(
                "{:.2} <span class=\"muted\">[{:.2}, {:.2}]</span>",
                sprt.llr, sprt.lower_bound, sprt.upper_bound
            ),
            llr_bar(sprt.llr, sprt.lower_bound, sprt.upper_bound),
        ),
        None => ("&ndash;".to_owned(), String::new()),
    };
    let workers = match queued.worker_limit {
        Some(limit) => format!("{}/{limit}", b.workers),
        None => b.workers.to_string(),
    };
    format!(
        "<tr><td>{id}</td><td><a href=\"/runs/{id}\">{name}</a></td><td{state_class}>{state}</td>\
         <td>{games}/{planned}</td><td>{elo}</td><td>{llr}</td><td>{bar}</td>\
         <td>{done}/{out}/{open}</td><td>{workers}</td></tr>",
        id = run.id,
        name = escape(&run.spec.name),
        state = escape(&progress.state),
        games = progress.games,
        planned = progress.games_planned,
        done = b.done,
        out = b.leased + b.expired,
        open = b.open,
    )
}

/// Where the LLR stands between its bounds: a small SVG bar, red at H0's end, green at H1's.
fn llr_bar(llr: f64, lower: f64, upper: f64) -> String {
    const WIDTH: f64 = 80.0;
    let span = upper - lower;
    let at = if span > 0.0 {
        ((llr - lower) / span).clamp(0.0, 1.0) * WIDTH
    } else {
        WIDTH / 2.0
    };
    format!(
        "<svg width=\"{WIDTH}\" height=\"10\" role=\"img\" aria-label=\"LLR {llr:.2} between {lower:.2} and {upper:.2}\">\
         <rect x=\"0\" y=\"3\" width=\"{WIDTH}\" height=\"4\" fill=\"#ddd\"/>\
         <rect x=\"0\" y=\"3\" width=\"3\" height=\"4\" fill=\"#a31515\"/>\
         <rect x=\"{right}\" y=\"3\" width=\"3\" height=\"4\" fill=\"#176117\"/>\
         <circle cx=\"{at:.1}\" cy=\"5\" r=\"4\" fill=\"#333\"/></svg>",
        right = WIDTH - 3.0,
    )
}

/// "12 s ago", "5 min ago", "3 h ago", "2 d ago".
fn ago(ms: i64) -> String {
    let s = (ms.max(0) / 1000) as u64;
    match s {
        0..=119 => format!("{s} s ago"),
        120..=7_199 => format!("{} min ago", s / 60),
        7_200..=172_799 => format!("{} h ago", s / 3600),
        _ => format!("{} d ago", s / 86_400),
    }
}

/// The time of day of `ms` since the epoch, UTC.
fn clock(ms: i64) -> String {
    let s = ms.max(0) / 1000;
    format!("{:02}:{:02}:{:02}", s / 3600 % 24, s / 60 % 60, s % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_escaped() {
        assert_eq!(
            escape("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"
        );
    }

    #[test]
    fn the_llr_mark_stays_inside_its_bar() {
        let at = |llr: f64| {
            let svg = llr_bar(llr, -2.94, 2.94);
            let cx = svg.split("cx=\"").nth(1).unwrap();
            cx.split('"').next().unwrap().parse::<f64>().unwrap()
        };
        assert_eq!(at(-10.0), 0.0);
        assert_eq!(at(10.0), 80.0);
        assert!((at(0.0) - 40.0).abs() < 0.1);
    }

    #[test]
    fn ages_read_as_people_say_them() {
        assert_eq!(ago(5_400), "5 s ago");
        assert_eq!(ago(600_000), "10 min ago");
        assert_eq!(ago(3 * 3_600_000), "3 h ago");
        assert_eq!(ago(-1), "0 s ago");
        assert_eq!(clock(3_723_000), "01:02:03");
    }
}
