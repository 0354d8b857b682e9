//! The live report of `arbiter match -report DIR`, through the real binary on a real SQLite
//! store, and the report page as a real browser draws it: headless Chromium (Debian's
//! `chromium`, installed by scripts/ci-setup.sh) loads the page, and every chart must be there
//! and drawn, not only present in the text.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common::{arbiter, text, BOOK};
use arbiter_store::{Location, RunId, Store, Totals};

/// A short staunton match under an SPRT that cannot decide in 4 pairs, with its live report in
/// `live/`, from the cutechess grammar; fastchess's `-report penta=` comes as a second flag.
fn play_with_live_report(dir: &Path) -> Output {
    let line = format!(
        "-engine builtin=staunton name=dev -engine builtin=staunton name=base \
         -each tc=inf nodes=250 hash=0 -maxmoves 40 -openings file={BOOK} order=random \
         -rounds 4 -concurrency 2 -sprt elo0=0 elo1=10 -store runs.db \
         -report live -report penta=true"
    );
    let out = arbiter(&line.split_whitespace().collect::<Vec<_>>(), dir);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    out
}

fn store_totals(db: &Path) -> Totals {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let store = Store::open_existing(&Location::parse(&db.display().to_string()))
            .await
            .unwrap();
        store.totals(RunId::new(1)).await.unwrap()
    })
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every `data-chart` name in `text`, in order.
fn chart_names(text: &str) -> Vec<String> {
    text.match_indices("<svg data-chart=\"")
        .map(|(i, m)| {
            let start = i + m.len();
            let len = text[start..].find('"').unwrap();
            text[start..start + len].to_owned()
        })
        .collect()
}

/// Issue 12, item 1: the report is written while the run plays and once at the end, and its
/// numbers are the store's; the two `-report` flags (folder, fastchess's keys) do not clash.
#[test]
fn a_match_keeps_its_report_and_ends_it_with_the_stores_totals() {
    let dir = tempfile::tempdir().unwrap();
    let out = play_with_live_report(dir.path());
    let stderr = text(&out.stderr);
    assert!(!stderr.contains("given again"), "{stderr}");
    assert!(!stderr.contains("not refreshed"), "{stderr}");
    assert!(stderr.contains("Report: ./live/index.html"), "{stderr}");

    let totals = store_totals(&dir.path().join("runs.db"));
    assert!(totals.pairs >= 4, "{totals:?}");
    let live = dir.path().join("live");
    let html = read(&live.join("index.html"));
    let games = totals.wins + totals.draws + totals.losses;
    assert!(
        html.contains(&format!("<td data-field=\"games\">{games}</td>")),
        "{html}"
    );
    let json: serde_json::Value = serde_json::from_str(&read(&live.join("report.json"))).unwrap();
    let s = &json["summary"];
    assert_eq!(s["pairs"], totals.pairs);
    assert_eq!(s["wins"], totals.wins);
    assert_eq!(s["draws"], totals.draws);
    assert_eq!(s["losses"], totals.losses);
    assert_eq!(s["pentanomial"], serde_json::json!(totals.pentanomial));
    // The final refresh comes after the run is finished: the page shows its verdict.
    assert!(!s["verdict"].is_null(), "{s}");
    let md = read(&live.join("summary.md"));
    assert!(md.contains(&format!("| Games | {games} |")), "{md}");
    for chart in chart_names(&html) {
        assert!(live.join(format!("{chart}.svg")).exists(), "{chart}.svg");
    }
}

/// A report folder that cannot be made fails before the first game, naming it.
#[test]
fn an_unwritable_report_folder_is_refused_before_any_game() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("taken"), "a file, not a folder").unwrap();
    let line = format!(
        "-engine builtin=staunton name=dev -engine builtin=staunton name=base \
         -each tc=inf nodes=100 hash=0 -openings file={BOOK} -rounds 2 -store runs.db \
         -report taken"
    );
    let out = arbiter(&line.split_whitespace().collect::<Vec<_>>(), dir.path());
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("create the report folder ./taken"),
        "{stderr}"
    );
    assert!(!text(&out.stdout).contains("Started game"));
}

/// Headless Chromium with a profile of its own, bounded in time so that a stuck browser fails
/// the test instead of hanging it.
pub(crate) fn chromium(args: &[&str]) -> Output {
    let browser = ["chromium", "chromium-browser"]
        .into_iter()
        .find(|b| {
            Command::new(b)
                .arg("--version")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
        .expect("chromium is not installed: run scripts/ci-setup.sh");
    let profile = tempfile::tempdir().unwrap();
    Command::new("timeout")
        .args(["120", browser])
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run chromium")
}

/// A PNG screenshot of `page` in a window of `size` ("W,H").
fn screenshot(page: &Path, size: &str, png: &Path) -> Vec<u8> {
    let out = chromium(&[
        &format!("--window-size={size}"),
        &format!("--screenshot={}", png.display()),
        &format!("file://{}", page.display()),
    ]);
    let bytes = std::fs::read(png)
        .unwrap_or_else(|e| panic!("{}: {e}; chromium: {}", png.display(), text(&out.stderr)));
    assert!(
        bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
        "{} is a PNG",
        png.display()
    );
    bytes
}

/// Marks each chart with the number of shapes the browser laid out with an area (the white
/// background excepted) and of its texts: a chart the browser cannot draw has none.
const MEASURE: &str = "<script>for (const svg of document.querySelectorAll('svg[data-chart]')) {\
  const shapes = [...svg.querySelectorAll('polyline,path,rect,circle,line,polygon')].slice(1)\
    .filter(e => { const b = e.getBBox(); return b.width > 0 || b.height > 0; }).length;\
  const texts = [...svg.querySelectorAll('text')].filter(e => e.getBBox().width > 0).length;\
  svg.setAttribute('data-shapes', shapes); svg.setAttribute('data-texts', texts); }</script>";

/// The number in `attribute="N"` after `from` in `dom`.
fn number_after(dom: &str, from: &str, attribute: &str) -> usize {
    let at = dom
        .find(from)
        .unwrap_or_else(|| panic!("{from} in the DOM"));
    let key = format!("{attribute}=\"");
    let start = at + dom[at..].find(&key).expect(attribute) + key.len();
    let len = dom[start..].find('"').unwrap();
    dom[start..start + len].parse().unwrap()
}

/// Issue 12, item 2: Chromium renders the report page: every chart the page holds is in the
/// browser's DOM with shapes and texts laid out, each chart alone screenshots differently from
/// a blank page of the same size, and scripts/report-screenshot.sh makes the page's PNG.
#[test]
fn chromium_draws_every_chart_of_the_report() {
    let dir = tempfile::tempdir().unwrap();
    play_with_live_report(dir.path());
    let live = dir.path().join("live");
    let html = read(&live.join("index.html"));
    let charts = chart_names(&html);
    for expected in ["llr", "elo", "results", "games"] {
        assert!(
            charts.iter().any(|c| c == expected),
            "{expected} in {charts:?}"
        );
    }
    // The openings chart shows lopsided openings only; without any the page says so.
    assert!(
        charts.iter().any(|c| c == "openings") || html.contains("No opening was lopsided"),
        "{charts:?}"
    );

    // The page as the browser parsed and laid it out, measured by a script added to a copy.
    let measured = live.join("measured.html");
    std::fs::write(
        &measured,
        html.replace("</body>", &format!("{MEASURE}</body>")),
    )
    .unwrap();
    let out = chromium(&["--dump-dom", &format!("file://{}", measured.display())]);
    let dom = text(&out.stdout);
    assert!(
        dom.contains("data-shapes"),
        "the script ran: {}",
        text(&out.stderr)
    );
    for chart in &charts {
        let tag = format!("<svg data-chart=\"{chart}\"");
        let shapes = number_after(&dom, &tag, "data-shapes");
        let texts = number_after(&dom, &tag, "data-texts");
        assert!(
            shapes > 0 && texts > 0,
            "{chart}: {shapes} shapes, {texts} texts"
        );
    }

    // Each chart alone against a blank page of the same window: drawn pixels differ.
    let blank = live.join("blank.html");
    std::fs::write(&blank, "<!DOCTYPE html><html><body></body></html>").unwrap();
    let blank_png = screenshot(&blank, "800,420", &live.join("blank.png"));
    for chart in &charts {
        let svg = read(&live.join(format!("{chart}.svg")));
        let page = live.join(format!("only-{chart}.html"));
        std::fs::write(
            &page,
            format!("<!DOCTYPE html><html><body style=\"margin:0\">{svg}</body></html>"),
        )
        .unwrap();
        let png = screenshot(&page, "800,420", &live.join(format!("{chart}.png")));
        assert!(
            png != blank_png && png.len() > blank_png.len(),
            "{chart}: {} bytes against a blank page's {}",
            png.len(),
            blank_png.len()
        );
    }

    // The script users run to look at a report.
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/report-screenshot.sh");
    let shot = dir.path().join("report.png");
    let out = Command::new("bash")
        .arg(&script)
        .arg(&live)
        .arg(&shot)
        .output()
        .expect("run report-screenshot.sh");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let page_png = std::fs::read(&shot).unwrap();
    assert!(page_png.starts_with(b"\x89PNG\r\n\x1a\n"));
    assert!(
        page_png.len() > blank_png.len() * 4,
        "{} bytes",
        page_png.len()
    );
}
