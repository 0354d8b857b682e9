//! A report's three forms: a self-contained HTML page, a Markdown summary with the charts as
//! SVG files beside it, and a JSON document of the numbers and series.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use arbiter_records::entries::RunResults;
use arbiter_records::standings::{self, PairingResult, Standings, StandingsRow};
use arbiter_store::{JudgedOn, RunOutcome, RunState, Totals};
use serde::Serialize;

use crate::charts;
use crate::data::RunData;
use crate::series::{
    self, Bin, EloPoint, LatencySpread, LlrPath, MoveTimes, OpeningResult, SprtEstimate, TimeLoss,
    TimeTrouble,
};
use crate::ReportError;

/// The openings the per-opening chart shows (the JSON holds them all).
const OPENINGS_SHOWN: usize = 16;

/// One of the files `arbiter report` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `index.html`
    Html,
    /// `summary.md` and the charts as `NAME.svg`
    Markdown,
    /// `report.json`
    Json,
}

impl Format {
    pub const ALL: [Format; 3] = [Format::Html, Format::Markdown, Format::Json];
}

impl FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Format, String> {
        match s.trim() {
            "html" => Ok(Format::Html),
            "md" | "markdown" => Ok(Format::Markdown),
            "json" => Ok(Format::Json),
            other => Err(format!(
                "{other:?} is not a report format (expected html, md or json)"
            )),
        }
    }
}

/// The headline numbers, named as the run summary record names them.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub run: i64,
    pub name: String,
    pub engines: Vec<String>,
    /// `match`, `round-robin` or `gauntlet`.
    pub tournament: String,
    /// None while the run is in progress.
    pub verdict: Option<RunOutcome>,
    /// Played in colour-swapped pairs. Unpaired (`games = 1`, datagen), the store still commits
    /// games two at a time, but those units are no pairs: the report counts games only.
    pub paired: bool,
    pub pairs_planned: u64,
    pub games_planned: u64,
    /// The counts and their statistics, as the run's summary record gives them.
    #[serde(flatten)]
    pub results: RunResults,
    /// The SPRT's design: `[elo0, elo1]`, α, β and its Elo model.
    pub sprt_bounds: Option<[f64; 2]>,
    pub sprt_alpha: Option<f64>,
    pub sprt_beta: Option<f64>,
    pub sprt_model: Option<String>,
    /// After the SPRT decided: the stopping-aware Elo beside the plain `elo` (fishtest #1924).
    pub sprt_elo: Option<SprtEstimate>,
    /// Where the SPRT was judged on fewer pairs than the run holds: the prefix's pairs (the
    /// first ones in schedule order, none missing, up to the decision); `llr` and `state` are
    /// the prefix's, the counts and the Elo every pair's.
    pub sprt_judged_pairs: Option<u64>,
}

/// What the charts draw, as numbers.
#[derive(Clone, Debug, Serialize)]
pub struct Series {
    pub llr: Option<LlrPath>,
    pub elo: Vec<EloPoint>,
    pub terminations: Vec<(String, u64)>,
    pub lengths: Vec<Bin>,
    pub openings: Vec<OpeningResult>,
    /// Empty when no move had a clock.
    pub move_times: Vec<MoveTimes>,
    /// Empty when no engine reported its search time.
    pub latency: Vec<LatencySpread>,
    /// Empty when no game had a clock and none was lost on time.
    pub time_trouble: Vec<TimeTrouble>,
    /// The moves that lost on time, with the engine's reported search beside the runner's time.
    pub time_losses: Vec<TimeLoss>,
}

/// A chart ready to inline or write: its file stem, its title and its SVG.
#[derive(Clone, Debug)]
pub struct Chart {
    pub name: &'static str,
    pub title: &'static str,
    pub svg: String,
}

/// Everything a report shows, computed once from a run's data.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub summary: Summary,
    pub standings: Option<Standings>,
    pub series: Series,
    #[serde(skip)]
    pub charts: Vec<Chart>,
}

impl Report {
    /// Computes the numbers, series and charts of `data`.
    pub fn build(data: &RunData) -> Result<Report, ReportError> {
        let run = data.run.id.get();
        let stats_error = |what: &str| {
            let what = what.to_owned();
            move |source| ReportError::Stats { run, what, source }
        };
        let tournament = data.is_tournament();
        // The path the verdict took, and the totals it rests on: every pair in commit order,
        // or the prefix in schedule order, as the run was judged.
        let (llr, judged) = match (&data.sprt, tournament, data.judged_on) {
            (Some(sprt), false, JudgedOn::AllPairs) => (
                Some(
                    series::llr_path(sprt, &data.pairs, data.paired)
                        .map_err(stats_error("the LLR path"))?,
                ),
                data.totals,
            ),
            (Some(sprt), false, JudgedOn::Prefix) => {
                let pairings = data.run.spec.pairings.len() as u64;
                let (path, judged) = series::prefix_path(sprt, &data.pairs, pairings, data.paired)
                    .map_err(stats_error("the LLR path"))?;
                (Some(path), judged)
            }
            _ => (None, data.totals),
        };
        let longest = data.games.iter().map(|g| g.plies).max().unwrap_or(0);
        let series = Series {
            llr,
            elo: if tournament {
                Vec::new()
            } else {
                series::elo_path(&data.pairs, data.paired)
            },
            terminations: series::terminations(&data.games),
            lengths: series::plies_histogram(&data.games, series::plies_bin_width(longest)),
            openings: series::openings(data),
            move_times: series::move_times(data.engines(), &data.times, &data.budgets),
            latency: series::latency(data.engines(), &data.times),
            time_trouble: series::time_trouble(data.engines(), &data.games, &data.budgets),
            time_losses: series::time_losses(&data.games),
        };
        let standings = if tournament {
            let results: Vec<PairingResult> = data
                .run
                .spec
                .pairings
                .iter()
                .zip(&data.pairing_totals)
                .map(|(p, totals)| PairingResult {
                    first: p.first,
                    second: p.second,
                    totals: *totals,
                })
                .collect();
            Some(
                standings::standings(data.engines(), &results, data.paired)
                    .map_err(stats_error("the standings"))?,
            )
        } else {
            None
        };
        let mut summary = summary(data, &judged);
        if let (
            Some(sprt),
            Some(LlrPath {
                decision: Some(_), ..
            }),
        ) = (&data.sprt, &series.llr)
        {
            summary.sprt_elo = Some(
                series::sprt_estimate(sprt, &judged, data.paired)
                    .map_err(stats_error("the SPRT-aware Elo"))?,
            );
        }
        let charts = charts_of(&summary, &series, standings.as_ref())?;
        Ok(Report {
            summary,
            standings,
            series,
            charts,
        })
    }

    /// Writes the `formats` into `dir` (created if needed); returns the files written.
    pub fn write(&self, dir: &Path, formats: &[Format]) -> std::io::Result<Vec<PathBuf>> {
        let charts: Vec<(&str, &str)> = self
            .charts
            .iter()
            .map(|c| (c.name, c.svg.as_str()))
            .collect();
        write_formats(
            dir,
            formats,
            &charts,
            || self.html(),
            || self.markdown(),
            || self.json(),
        )
    }

    /// The JSON document: summary, standings and series. Compact: a 100,000-game run's series
    /// hold 50,000 points each, which indentation made 12 MB instead of 7.
    pub fn json(&self) -> String {
        serde_json::to_string(self).expect("a report serializes") + "\n"
    }

    /// A heading line and the verdict in words.
    pub(crate) fn headline(&self) -> (String, String) {
        let s = &self.summary;
        let title = format!("{} (run {})", s.name, s.run);
        let status = match (s.verdict, &s.results.state) {
            (Some(v), _) => format!("finished: {v}"),
            (None, Some(state)) => format!("in progress (SPRT {state})"),
            (None, None) => "in progress".to_owned(),
        };
        (title, status)
    }

    /// The rows of the totals table: (what, value). A tournament's are its size and progress
    /// only: its results are the standings and the pairings' table.
    pub(crate) fn rows(&self) -> Vec<(&'static str, String)> {
        let s = &self.summary;
        let engines = match self.standings {
            Some(_) => s.engines.join(", "),
            None => s.engines.join(" vs "),
        };
        let mut rows = vec![("Engines", engines)];
        if s.paired {
            rows.push((
                "Pairs",
                format!("{} of {}", s.results.pairs, s.pairs_planned),
            ));
            rows.push(("Games", s.results.games.to_string()));
        } else {
            rows.push((
                "Games",
                format!("{} of {}", s.results.games, s.games_planned),
            ));
        }
        if let [Some(w), Some(d), Some(l)] = [s.results.wins, s.results.draws, s.results.losses] {
            rows.push(("W / D / L", format!("{w} / {d} / {l}")));
        }
        if let Some(p) = s.results.pentanomial {
            rows.push(("Pentanomial", pentanomial_counts(p)));
        }
        if let (Some(elo), Some([lo, hi])) = (s.results.elo, s.results.elo_ci) {
            rows.push(("Elo", format!("{elo:.2} [{lo:.2}, {hi:.2}]")));
        }
        if let Some(a) = &s.sprt_elo {
            let [lo, hi] = a.elo_ci;
            let clamped = if a.clamped {
                " (LLR past its bound: taken as stopped on it)"
            } else {
                ""
            };
            rows.push((
                "SPRT-aware Elo",
                format!("{:.2} [{lo:.2}, {hi:.2}]{clamped}", a.elo),
            ));
        }
        if let Some(los) = s.results.los {
            rows.push((
                "LOS",
                format!("{}%", arbiter_records::text::percent(los, 1)),
            ));
        }
        if let (Some(nelo), Some([lo, hi])) = (s.results.nelo, s.results.nelo_ci) {
            rows.push(("nElo", format!("{nelo:.2} [{lo:.2}, {hi:.2}]")));
        }
        if let (Some(llr), Some(lower), Some(upper)) =
            (s.results.llr, s.results.lower_bound, s.results.upper_bound)
        {
            rows.push(("LLR", format!("{llr:.2} ({lower:.2}, {upper:.2})")));
        }
        if let (Some([e0, e1]), Some(model)) = (s.sprt_bounds, &s.sprt_model) {
            rows.push(("SPRT", format!("[{e0}, {e1}] {model}")));
        }
        if let Some(judged) = s.sprt_judged_pairs {
            rows.push((
                "SPRT judged on",
                format!(
                    "the first {judged} of {} pairs (the prefix the verdict was reached on)",
                    s.results.pairs
                ),
            ));
        }
        rows
    }

    /// The time losses table: a header and one row per flagged move.
    fn time_loss_table(&self) -> Option<Table> {
        let losses = &self.series.time_losses;
        if losses.is_empty() {
            return None;
        }
        let ms = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{v:.0} ms"));
        let rows = losses
            .iter()
            .map(|l| {
                vec![
                    l.game.to_string(),
                    l.engine.clone(),
                    ms(Some(l.move_ms)),
                    ms(l.engine_ms.map(|v| v as f64)),
                    ms(l.clock_ms.map(|v| v as f64)),
                    l.cause.describe().to_owned(),
                ]
            })
            .collect();
        let header = vec![
            "Game",
            "Lost on time",
            "Move took",
            "Search reported",
            "Clock after",
            "Where the time went",
        ];
        Some(Table {
            class: "time-losses",
            caption: "Time losses",
            header,
            rows,
        })
    }

    /// A tournament's results pairing by pairing, each from its first engine's side (the
    /// pentanomial counts when it was played in pairs).
    fn pairings_table(&self) -> Option<Table> {
        let s = self.standings.as_ref()?;
        let paired = s.model == "pentanomial";
        let mut header = vec!["Pairing", "Games", "W / D / L"];
        if paired {
            header.push("Pentanomial");
        }
        header.push("Score of the first");
        let rows = s
            .pairings
            .iter()
            .map(|p| {
                let mut row = vec![
                    format!("{} vs {}", p.first_name, p.second_name),
                    p.games.to_string(),
                    format!("{} / {} / {}", p.wins, p.draws, p.losses),
                ];
                if paired {
                    row.push(p.pentanomial.map_or("-".to_owned(), pentanomial_counts));
                }
                let points = p.wins as f64 + 0.5 * p.draws as f64;
                row.push(if p.games == 0 {
                    "-".to_owned()
                } else {
                    format!("{:.1}%", 100.0 * points / p.games as f64)
                });
                row
            })
            .collect();
        Some(Table {
            class: "pairings",
            caption: "Pairings (each from its first engine's side)",
            header,
            rows,
        })
    }

    /// What the page says where a chart would have nothing to show.
    fn notes(&self) -> Vec<String> {
        let openings = &self.series.openings;
        let mut notes = Vec::new();
        if !openings.is_empty() && openings.iter().all(|o| o.lopsided == 0) {
            let played = match openings.len() {
                1 => "the one opening".to_owned(),
                n => format!("any of the {n} openings"),
            };
            notes.push(format!(
                "No opening was lopsided: no engine won both games of a pair from {played} played."
            ));
        }
        notes
    }

    /// The GitHub-renderable summary; charts are linked as the SVG files written beside it.
    pub fn markdown(&self) -> String {
        let (title, status) = self.headline();
        let mut md = format!("## arbiter report: {title}\n\n**{status}**\n\n| | |\n|---|---|\n");
        for (what, value) in self.rows() {
            let _ = writeln!(md, "| {what} | {} |", value.replace('|', "\\|"));
        }
        if let Some(s) = &self.standings {
            md.push_str(
                "\n| # | Engine | Elo | 95% | Games | Score |\n|---|---|---|---|---|---|\n",
            );
            for e in &s.engines {
                let cells = standings_cells(e).map(|cell| cell.replace('|', "\\|"));
                let _ = writeln!(md, "| {} |", cells.join(" | "));
            }
        }
        md.push('\n');
        if let Some(table) = self.pairings_table() {
            table.markdown(&mut md);
        }
        for note in self.notes() {
            let _ = writeln!(md, "{note}\n");
        }
        for chart in &self.charts {
            let _ = writeln!(md, "![{}]({}.svg)\n", chart.title, chart.name);
        }
        if let Some(table) = self.time_loss_table() {
            table.markdown(&mut md);
        }
        md
    }

    /// The self-contained page: charts inline, no script, no network, readable on a phone.
    pub fn html(&self) -> String {
        let (title, status) = self.headline();
        let mut html = page_start(&title, &status);
        totals_rows(&mut html, &self.rows());
        html.push_str("</table>\n");
        if let Some(s) = &self.standings {
            html.push_str(
                "<table class=\"standings\">\n<tr><th>#</th><th>Engine</th><th>Elo</th>\
                 <th>95%</th><th>Games</th><th>Score</th></tr>\n",
            );
            for e in &s.engines {
                let cells: String = standings_cells(e)
                    .iter()
                    .map(|cell| format!("<td>{}</td>", escape(cell)))
                    .collect();
                let _ = writeln!(html, "<tr>{cells}</tr>");
            }
            html.push_str("</table>\n");
        }
        if let Some(table) = self.pairings_table() {
            table.html(&mut html);
        }
        for note in self.notes() {
            let _ = writeln!(html, "<p class=\"note\">{}</p>", escape(&note));
        }
        for chart in &self.charts {
            let _ = writeln!(
                html,
                "<figure id=\"{}\">{}<figcaption>{}</figcaption></figure>",
                chart.name, chart.svg, chart.title
            );
        }
        if let Some(table) = self.time_loss_table() {
            table.html(&mut html);
        }
        html.push_str("</body>\n</html>\n");
        html
    }
}

/// A table of the page and the Markdown below the charts' summary: the pairings of a
/// tournament, the time losses.
struct Table {
    /// The HTML table's class, for styles and tests.
    class: &'static str,
    caption: &'static str,
    header: Vec<&'static str>,
    rows: Vec<Vec<String>>,
}

impl Table {
    fn markdown(&self, md: &mut String) {
        let _ = write!(
            md,
            "**{}**\n\n| {} |\n|{}\n",
            self.caption,
            self.header.join(" | "),
            "---|".repeat(self.header.len())
        );
        for row in &self.rows {
            let cells: Vec<String> = row.iter().map(|c| c.replace('|', "\\|")).collect();
            let _ = writeln!(md, "| {} |", cells.join(" | "));
        }
        md.push('\n');
    }

    /// Each cell named by its column ([`field`]), as the totals table's are.
    fn html(&self, html: &mut String) {
        let header: String = self
            .header
            .iter()
            .map(|h| format!("<th>{}</th>", escape(h)))
            .collect();
        let _ = writeln!(
            html,
            "<table class=\"{}\">\n<caption>{}</caption>\n<tr>{header}</tr>",
            self.class,
            escape(self.caption)
        );
        for row in &self.rows {
            let cells: String = row
                .iter()
                .zip(&self.header)
                .map(|(c, h)| format!("<td data-field=\"{}\">{}</td>", field(h), escape(c)))
                .collect();
            let _ = writeln!(html, "<tr>{cells}</tr>");
        }
        html.push_str("</table>\n");
    }
}

/// Writes a report's `formats` into `dir` (created if needed): `index.html`, `summary.md` with
/// the `charts` (file stem, SVG) beside it, `report.json`. Returns the files written.
pub(crate) fn write_formats(
    dir: &Path,
    formats: &[Format],
    charts: &[(&str, &str)],
    html: impl Fn() -> String,
    markdown: impl Fn() -> String,
    json: impl Fn() -> String,
) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    let mut put = |name: &str, text: &str| -> std::io::Result<()> {
        let path = dir.join(name);
        std::fs::write(&path, text)?;
        written.push(path);
        Ok(())
    };
    for format in formats {
        match format {
            Format::Html => put("index.html", &html())?,
            Format::Markdown => {
                for (name, svg) in charts {
                    put(&format!("{name}.svg"), svg)?;
                }
                put("summary.md", &markdown())?;
            }
            Format::Json => put("report.json", &json())?,
        }
    }
    Ok(written)
}

/// Scales the charts to the screen's width, so a phone shows the whole page without zooming.
const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:820px;margin:0 auto;\
padding:12px;color:#222}h1{font-size:1.3em;word-break:break-word}.status{font-weight:bold}\
table{border-collapse:collapse;margin:8px 0;width:100%}th,td{text-align:left;padding:4px 8px;\
border-bottom:1px solid #ddd}figure{margin:16px 0}figure svg{width:100%;height:auto}\
figcaption{font-size:.9em;color:#555}caption{text-align:left;font-weight:bold}";

/// `[LL, LD, DD+WL, DW, WW]` as the tables show them: a match's and each pairing's.
fn pentanomial_counts(p: [u64; 5]) -> String {
    format!("[{}, {}, {}, {}, {}]", p[0], p[1], p[2], p[3], p[4])
}

/// A standings row's cells, as the Markdown and the page both show them; an engine without
/// games has no rating, `-`, as in the console's table.
fn standings_cells(e: &StandingsRow) -> [String; 6] {
    let rated = e.games > 0;
    [
        e.rank.to_string(),
        e.name.clone(),
        if rated {
            format!("{:.1}", e.elo)
        } else {
            "-".to_owned()
        },
        if rated {
            format!("[{:.1}, {:.1}]", e.elo_ci[0], e.elo_ci[1])
        } else {
            "-".to_owned()
        },
        e.games.to_string(),
        e.score
            .map_or("-".to_owned(), |s| format!("{:.1}%", 100.0 * s)),
    ]
}

/// Every report page's start: the head with its style, the title, the status line and the
/// totals table, left open for its rows.
pub(crate) fn page_start(title: &str, status: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>arbiter report: {}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <h1>{}</h1>\n<p class=\"status\">{}</p>\n<table class=\"totals\">\n",
        escape(title),
        escape(title),
        escape(status),
    )
}

/// A totals table's rows, each value's cell named by its row ([`field`]).
pub(crate) fn totals_rows(html: &mut String, rows: &[(&'static str, String)]) {
    for (what, value) in rows {
        let _ = writeln!(
            html,
            "<tr><th>{what}</th><td data-field=\"{}\">{}</td></tr>",
            field(what),
            escape(value)
        );
    }
}

/// A row's or column's name as its cells' `data-field`, for scripts and tests: `W / D / L` is
/// `wdl`, `SPRT-aware Elo` is `sprt-awareelo`.
pub(crate) fn field(what: &str) -> String {
    what.to_lowercase().replace([' ', '/'], "")
}

pub(crate) fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The summary of `data`, whose SPRT was judged on the totals `judged` (all its pairs, or its
/// prefix).
fn summary(data: &RunData, judged: &Totals) -> Summary {
    let totals = &data.totals;
    let tournament = data.is_tournament();
    // The SPRT's status of what it was judged on: the LLR path's last point.
    let status = data
        .sprt
        .as_ref()
        .filter(|_| !tournament && judged.pairs > 0)
        .and_then(|sprt| {
            sprt.status(&arbiter_stats::Sample::of_run(
                data.paired,
                judged.wdl(),
                judged.pentanomial,
            ))
            .ok()
        });
    Summary {
        run: data.run.id.get(),
        name: data.run.spec.name.clone(),
        engines: data.engines().to_vec(),
        tournament: data.kind.clone(),
        verdict: match data.run.state {
            RunState::Finished { verdict } => Some(verdict),
            RunState::Running => None,
        },
        paired: data.paired,
        pairs_planned: data.run.pairs_planned(),
        games_planned: data.games_planned,
        results: RunResults::of(totals, data.paired, tournament, status),
        sprt_bounds: data.sprt.as_ref().map(|s| [s.elo0(), s.elo1()]),
        sprt_alpha: data.sprt.as_ref().map(|s| s.alpha()),
        sprt_beta: data.sprt.as_ref().map(|s| s.beta()),
        sprt_model: data.sprt.as_ref().map(|s| s.model().name().to_owned()),
        sprt_elo: None,
        sprt_judged_pairs: (data.sprt.is_some() && !tournament && judged != totals)
            .then_some(judged.pairs),
    }
}

fn charts_of(
    summary: &Summary,
    series: &Series,
    standings: Option<&Standings>,
) -> Result<Vec<Chart>, ReportError> {
    let mut charts = Vec::new();
    let mut add = |name, title, svg| charts.push(Chart { name, title, svg });
    if let Some(path) = &series.llr {
        add(
            "llr",
            "LLR over pairs, with the SPRT's bounds",
            charts::llr(path)?,
        );
    }
    if !series.elo.is_empty() {
        add(
            "elo",
            "Elo with its 95% interval over games",
            charts::elo(&series.elo, summary.sprt_elo.as_ref())?,
        );
    }
    if let Some(s) = standings {
        add(
            "standings",
            "Standings: Elo with 95% intervals",
            charts::standings(s)?,
        );
        add(
            "crosstable",
            "Crosstable",
            charts::crosstable(&s.crosstable)?,
        );
    }
    // A tournament's W/D/L are each pairing's, in its table and the crosstable.
    if let [Some(w), Some(d), Some(l)] = [
        summary.results.wins,
        summary.results.draws,
        summary.results.losses,
    ] {
        let title = if summary.results.pentanomial.is_some() {
            "Pentanomial pairs and W/D/L"
        } else {
            "W/D/L"
        };
        add(
            "results",
            title,
            charts::results(summary.results.pentanomial, [w, d, l])?,
        );
    }
    add(
        "games",
        "Terminations and game lengths",
        charts::games(&series.terminations, &series.lengths)?,
    );
    if series.openings.iter().any(|o| o.lopsided > 0) {
        add(
            "openings",
            "Openings whose pairs one engine won twice, and its score from them",
            charts::openings(&series.openings, OPENINGS_SHOWN)?,
        );
    }
    if !series.move_times.is_empty() {
        add(
            "time",
            "Time per move against the clock left, by each engine's move out of book",
            charts::move_times(&series.move_times)?,
        );
    }
    if !series.latency.is_empty() {
        add(
            "latency",
            "Latency beyond the search each engine reported (pipe, scheduling, engine I/O)",
            charts::latency(&series.latency)?,
        );
    }
    if !series.time_trouble.is_empty() {
        add(
            "time-trouble",
            "Time trouble and time forfeits per engine",
            charts::time_trouble(&series.time_trouble)?,
        );
    }
    Ok(charts)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 18, item 15: an engine that has not played was shown as `0.0 [0.0, 0.0]`.
    #[test]
    fn an_engine_without_games_has_no_rating() {
        let row = |games: u64| StandingsRow {
            rank: 1,
            engine: 0,
            name: "idle".to_owned(),
            elo: 0.0,
            half_width: 0.0,
            elo_ci: [0.0, 0.0],
            games,
            wins: games,
            draws: 0,
            losses: 0,
            score: (games > 0).then_some(1.0),
            draw_ratio: (games > 0).then_some(0.0),
            los_next: None,
            group: 0,
            separated: false,
        };
        assert_eq!(standings_cells(&row(0)), ["1", "idle", "-", "-", "0", "-"]);
        assert_eq!(
            standings_cells(&row(2)),
            ["1", "idle", "0.0", "[0.0, 0.0]", "2", "100.0%"]
        );
    }
}
