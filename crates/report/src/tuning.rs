//! The report of an SPSA tuning run: the path each parameter took over the run's game pairs,
//! the start and tuned values, the set-up, and the confirmation SPRT of the tuned values
//! against the start.
//!
//! A tuning run's steps are in the store (the values after each step, the step's W/D/L from
//! the plus side); its games are not (each step is tallied in memory), so there is no LLR or
//! Elo path of the run itself: what tells whether tuning helped is the confirmation, an
//! ordinary match run `NAME-tuned-vs-NAME-start-HASH` that `arbiter tune spsa` plays after
//! tuning, stored with a link to this run (`RunSpec::confirms`); one created before the store
//! kept that link is found by what it plays (the tuned engine at this run's last values
//! against the start values) by `arbiter_runner::lifecycle::older_run_upgrade`, which
//! `arbiter report` calls first. Its match report supplies the verdict, Elo and LLR.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use arbiter_records::spsa::{stored_theta, Hyper, ParamKind, SpsaSetup};
use arbiter_store::{Run, RunId, RunOutcome, RunState, Store, TuningMethod, Upgrade};
use serde::Serialize;

use crate::charts::{self, Ink, Line, LineChart};
use crate::render::{
    escape, field, page_start, totals_rows, write_formats, Format, Report, Summary,
};
use crate::{ReportError, RunData};

/// One committed step, as the report shows it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepPoint {
    /// The step's number, from 0.
    pub step: u64,
    /// Pairs played before the step: the SPSA iteration its perturbation was drawn at.
    pub iteration: u64,
    /// The step's games from the plus side.
    pub pairs: u64,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    /// The values after the step, one per parameter in the set-up's order.
    pub theta: Vec<f64>,
}

impl StepPoint {
    /// Pairs played when the step's values were reached: where a trace puts them.
    pub fn pairs_after(&self) -> u64 {
        self.iteration + self.pairs
    }
}

/// A tuning run as a report sees it.
#[derive(Clone, Debug)]
pub struct TuningData {
    pub run: Run,
    /// The tuned engine, as the configuration names it.
    pub engine: String,
    pub setup: SpsaSetup,
    /// The committed steps, oldest first.
    pub steps: Vec<StepPoint>,
    /// The confirmation SPRT's match report; none if the store holds no match of the tuned
    /// values against the start.
    pub confirmation: Option<Box<Report>>,
}

impl TuningData {
    /// Reads tuning run `run` from `store`; `None` for a run that is not a tuning run (a match,
    /// whose report is [`RunData`]'s). An unknown run is the store's `UnknownRun` error.
    pub async fn load(store: &Store, run: RunId) -> Result<Option<TuningData>, ReportError> {
        TuningData::load_with(store, run, &Upgrade::default()).await
    }

    /// [`TuningData::load`], with what the store lacks of an older run supplied by the caller
    /// (`arbiter_runner::lifecycle::older_run_upgrade`): the confirmation found by what it
    /// plays when the store holds no link, and the confirmation's facts when it has none.
    pub async fn load_with(
        store: &Store,
        run: RunId,
        upgrade: &Upgrade,
    ) -> Result<Option<TuningData>, ReportError> {
        let Some(stored) = store.tuning_setup(run).await? else {
            return Ok(None);
        };
        let unreadable = |what: &'static str, reason: String| ReportError::Tuning {
            run: run.get(),
            what,
            reason,
        };
        let setup: SpsaSetup = match stored.method {
            TuningMethod::Spsa => serde_json::from_str(&stored.setup)
                .map_err(|e| unreadable("set-up", e.to_string()))?,
        };
        let found = store.run(run).await?;
        // The tuned engine's own name: the run's two players are `NAME+` and `NAME-`.
        let engine = found
            .spec
            .engines
            .first()
            .map(|plus| plus.strip_suffix('+').unwrap_or(plus).to_owned())
            .unwrap_or_default();
        let mut steps = Vec::new();
        for committed in store.tuning_steps(run).await? {
            let s = committed.step;
            let theta = stored_theta(&s.theta)
                .map_err(|e| unreadable("values", format!("step {}: {e}", s.step)))?;
            if theta.len() != setup.params.len() {
                return Err(unreadable(
                    "values",
                    format!(
                        "step {}: {} values for {} parameters",
                        s.step,
                        theta.len(),
                        setup.params.len()
                    ),
                ));
            }
            steps.push(StepPoint {
                step: s.step,
                iteration: s.iteration,
                pairs: s.totals.pairs,
                wins: s.totals.wins,
                draws: s.totals.draws,
                losses: s.totals.losses,
                theta,
            });
        }
        // The confirmation the store links to this run; one created before the link was
        // stored is the one the caller found by what it plays.
        let confirmation = store
            .confirmations(run)
            .await?
            .last()
            .map(|c| c.id)
            .or_else(|| upgrade.confirmation_of(run));
        let confirmation = match confirmation {
            Some(id) => Some(Box::new(Report::build(
                &RunData::load_with(store, id, upgrade).await?,
            )?)),
            None => None,
        };
        Ok(Some(TuningData {
            run: found,
            engine,
            setup,
            steps,
            confirmation,
        }))
    }
}

/// One parameter's line of the table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ParamRow {
    pub name: String,
    pub start: f64,
    /// The values after the last step (the start before any step).
    pub tuned: f64,
    /// What the engine is given: `tuned`, rounded for an integer parameter.
    pub engine_value: f64,
    pub min: f64,
    pub max: f64,
    /// A staunton piece value: the charts and the table show it in pawns (the value / 100).
    pub in_pawns: bool,
    pub kind: ParamKind,
}

impl ParamRow {
    /// As `arbiter tune spsa` shows the value (the records crate's one rule).
    fn shown(&self, value: f64) -> String {
        arbiter_records::spsa::shown(&self.name, self.kind, value)
    }
}

/// A parameter's chart: its file stem (`theta-NAME`), title and SVG.
#[derive(Clone, Debug)]
pub struct TuningChart {
    pub name: String,
    pub title: String,
    pub svg: String,
}

/// Everything a tuning report shows, computed once.
#[derive(Clone, Debug, Serialize)]
pub struct TuningReport {
    pub run: i64,
    pub name: String,
    /// The tuned engine.
    pub engine: String,
    /// None while the run is in progress; `complete` when every step was played,
    /// `interrupted` when it was stopped (rerunning resumes it).
    pub verdict: Option<RunOutcome>,
    pub params: Vec<ParamRow>,
    pub hyper: Hyper,
    pub steps_planned: u64,
    /// The pairs and games of all steps, from the plus side.
    pub pairs: u64,
    pub games: u64,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    /// Every committed step with its values.
    pub steps: Vec<StepPoint>,
    /// The confirmation SPRT's headline numbers; none without one.
    pub confirmation: Option<Summary>,
    #[serde(skip)]
    pub confirmation_report: Option<Box<Report>>,
    #[serde(skip)]
    pub charts: Vec<TuningChart>,
}

impl TuningReport {
    /// Computes the table and draws each parameter's trace.
    pub fn build(data: &TuningData) -> Result<TuningReport, ReportError> {
        let setup = &data.setup;
        let last = data.steps.last().map(|s| &s.theta);
        let params: Vec<ParamRow> = setup
            .params
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let tuned = last.map_or(p.start, |theta| theta[i]);
                ParamRow {
                    name: p.name.clone(),
                    start: p.start,
                    tuned,
                    engine_value: p.engine_value(tuned),
                    min: p.min,
                    max: p.max,
                    in_pawns: p.is_piece_value(),
                    kind: p.kind,
                }
            })
            .collect();
        let steps_planned = setup.steps_planned().ok_or_else(|| ReportError::Tuning {
            run: data.run.id.get(),
            what: "set-up",
            reason: "pairs_per_step must be at least 1".to_owned(),
        })?;
        let sum = |count: fn(&StepPoint) -> u64| data.steps.iter().map(count).sum::<u64>();
        let charts = params
            .iter()
            .enumerate()
            .map(|(i, row)| trace(row, i, &data.steps))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(TuningReport {
            run: data.run.id.get(),
            name: data.run.spec.name.clone(),
            engine: data.engine.clone(),
            verdict: match data.run.state {
                RunState::Finished { verdict } => Some(verdict),
                RunState::Running => None,
            },
            params,
            hyper: setup.hyper.clone(),
            steps_planned,
            pairs: sum(|s| s.pairs),
            games: 2 * sum(|s| s.pairs),
            wins: sum(|s| s.wins),
            draws: sum(|s| s.draws),
            losses: sum(|s| s.losses),
            steps: data.steps.clone(),
            confirmation: data.confirmation.as_ref().map(|r| r.summary.clone()),
            confirmation_report: data.confirmation.clone(),
            charts,
        })
    }

    /// Writes the `formats` into `dir` (created if needed); returns the files written.
    pub fn write(&self, dir: &Path, formats: &[Format]) -> std::io::Result<Vec<PathBuf>> {
        let mut charts: Vec<(&str, &str)> = self
            .charts
            .iter()
            .map(|c| (c.name.as_str(), c.svg.as_str()))
            .collect();
        charts.extend(
            self.confirmation_chart()
                .map(|c| ("confirmation-llr", c.svg.as_str())),
        );
        write_formats(
            dir,
            formats,
            &charts,
            || self.html(),
            || self.markdown(),
            || self.json(),
        )
    }

    /// The JSON document: the table, every step's values, the confirmation's numbers.
    pub fn json(&self) -> String {
        serde_json::to_string(self).expect("a report serializes") + "\n"
    }

    fn headline(&self) -> (String, String) {
        let title = format!("{} (SPSA tuning run {})", self.name, self.run);
        let status = self
            .verdict
            .map_or("in progress".to_owned(), |v| format!("finished: {v}"));
        (title, status)
    }

    /// The run's rows: (what, value).
    fn rows(&self) -> Vec<(&'static str, String)> {
        let h = &self.hyper;
        vec![
            ("Engine", self.engine.clone()),
            (
                "Steps",
                format!("{} of {}", self.steps.len(), self.steps_planned),
            ),
            ("Pairs", format!("{} of {}", self.pairs, h.pairs)),
            ("Games", self.games.to_string()),
            (
                "W / D / L",
                format!(
                    "{} / {} / {} (the plus side)",
                    self.wins, self.draws, self.losses
                ),
            ),
            (
                "Hyper-parameters",
                format!(
                    "{} pairs per step, A ratio {}, alpha {}, gamma {}",
                    h.pairs_per_step, h.a_ratio, h.alpha, h.gamma
                ),
            ),
            ("Confirmation", self.confirmation_line()),
        ]
    }

    /// The confirmation's verdict and numbers in one line.
    fn confirmation_line(&self) -> String {
        let Some(c) = &self.confirmation else {
            return "no confirmation SPRT".to_owned();
        };
        let verdict = c
            .verdict
            .map_or("in progress".to_owned(), |v| format!("{v}"));
        let mut line = format!("{} (run {}): {verdict}", c.name, c.run);
        if let (Some(elo), Some([lo, hi])) = (c.results.elo, c.results.elo_ci) {
            let _ = write!(line, ", Elo {elo:.2} +/- {:.2}", (hi - lo) / 2.0);
        }
        if let Some(llr) = c.results.llr {
            let _ = write!(line, ", LLR {llr:.2}");
        }
        let _ = write!(line, " after {} games", c.results.games);
        line
    }

    /// The confirmation's LLR chart, drawn by its match report.
    fn confirmation_chart(&self) -> Option<&crate::render::Chart> {
        self.confirmation_report
            .as_ref()
            .and_then(|r| r.charts.iter().find(|c| c.name == "llr"))
    }

    /// The parameters table: a header and one row per parameter.
    fn param_cells(&self) -> ([&'static str; 6], Vec<[String; 6]>) {
        let header = ["Parameter", "Start", "Tuned", "Engine value", "Min", "Max"];
        let rows = self
            .params
            .iter()
            .map(|p| {
                let name = if p.in_pawns {
                    format!("{} (pawns)", p.name)
                } else {
                    p.name.clone()
                };
                [
                    name,
                    p.shown(p.start),
                    p.shown(p.tuned),
                    p.shown(p.engine_value),
                    p.shown(p.min),
                    p.shown(p.max),
                ]
            })
            .collect();
        (header, rows)
    }

    /// The GitHub-renderable summary; charts are linked as the SVG files written beside it.
    pub fn markdown(&self) -> String {
        let (title, status) = self.headline();
        let mut md = format!("## arbiter report: {title}\n\n**{status}**\n\n| | |\n|---|---|\n");
        for (what, value) in self.rows() {
            let _ = writeln!(md, "| {what} | {} |", value.replace('|', "\\|"));
        }
        let (header, rows) = self.param_cells();
        let _ = write!(
            md,
            "\n| {} |\n|{}\n",
            header.join(" | "),
            "---|".repeat(header.len())
        );
        for row in rows {
            let _ = writeln!(md, "| {} |", row.join(" | "));
        }
        md.push('\n');
        for chart in &self.charts {
            let _ = writeln!(md, "![{}]({}.svg)\n", chart.title, chart.name);
        }
        if let Some(report) = &self.confirmation_report {
            let (title, status) = report.headline();
            let _ = write!(
                md,
                "### Confirmation SPRT: {title}\n\n**{status}**\n\n| | |\n|---|---|\n"
            );
            for (what, value) in report.rows() {
                let _ = writeln!(md, "| {what} | {} |", value.replace('|', "\\|"));
            }
            md.push('\n');
            if self.confirmation_chart().is_some() {
                md.push_str("![LLR over pairs](confirmation-llr.svg)\n\n");
            }
            let _ = writeln!(
                md,
                "The full report: `arbiter report {} --store STORE`.",
                report.summary.name
            );
        }
        md
    }

    /// The self-contained page: charts inline, no script, no network.
    pub fn html(&self) -> String {
        let (title, status) = self.headline();
        let mut html = page_start(&title, &status);
        totals_rows(&mut html, &self.rows());
        html.push_str("</table>\n<table class=\"params\">\n<tr>");
        let (header, rows) = self.param_cells();
        for h in header {
            let _ = write!(html, "<th>{h}</th>");
        }
        html.push_str("</tr>\n");
        for (p, row) in self.params.iter().zip(rows) {
            // The exact values ride along in data-value: the cells are rounded for people.
            let values = [p.start, p.tuned, p.engine_value, p.min, p.max];
            let _ = write!(
                html,
                "<tr data-param=\"{}\"><td>{}</td>",
                escape(&p.name),
                escape(&row[0])
            );
            for ((h, cell), value) in header[1..].iter().zip(&row[1..]).zip(values) {
                let _ = write!(
                    html,
                    "<td data-field=\"{}\" data-value=\"{value}\">{}</td>",
                    field(h),
                    escape(cell)
                );
            }
            html.push_str("</tr>\n");
        }
        html.push_str("</table>\n");
        for chart in &self.charts {
            let _ = writeln!(
                html,
                "<figure id=\"{}\">{}<figcaption>{}</figcaption></figure>",
                escape(&chart.name),
                chart.svg,
                escape(&chart.title)
            );
        }
        if let Some(report) = &self.confirmation_report {
            let (title, status) = report.headline();
            let _ = write!(
                html,
                "<section id=\"confirmation\">\n<h2>Confirmation SPRT: {}</h2>\n\
                 <p class=\"status\">{}</p>\n<table class=\"totals\">\n",
                escape(&title),
                escape(&status)
            );
            totals_rows(&mut html, &report.rows());
            html.push_str("</table>\n");
            if let Some(chart) = self.confirmation_chart() {
                let _ = writeln!(
                    html,
                    "<figure id=\"confirmation-llr\">{}<figcaption>{}</figcaption></figure>",
                    chart.svg, chart.title
                );
            }
            let _ = writeln!(
                html,
                "<p>The full report: <code>arbiter report {} --store STORE</code>.</p>\n\
                 </section>",
                escape(&report.summary.name)
            );
        }
        html.push_str("</body>\n</html>\n");
        html
    }
}

/// The values a trace shows: the path with room around it, but never beyond the range the
/// tuner keeps the values in (`min..max`), so a path that reaches a bound runs along the edge.
fn visible(values: impl Iterator<Item = f64>, min: f64, max: f64) -> std::ops::Range<f64> {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    let room = ((hi - lo) * 0.15).max((max - min) * 0.02);
    let y = (lo - room).max(min)..(hi + room).min(max);
    if y.end > y.start {
        y
    } else {
        min..max
    }
}

/// The path of parameter `index` over the run's pairs: the start at 0, then the values after
/// each step at the pairs played by then; the start as a level, the range as the chart's
/// limits where the path comes near them.
fn trace(row: &ParamRow, index: usize, steps: &[StepPoint]) -> Result<TuningChart, ReportError> {
    let scale = if row.in_pawns { 0.01 } else { 1.0 };
    let points: Vec<(f64, f64)> = std::iter::once((0.0, row.start))
        .chain(
            steps
                .iter()
                .map(|s| (s.pairs_after() as f64, s.theta[index])),
        )
        .map(|(x, v)| (x, v * scale))
        .collect();
    let (min, max) = (row.min * scale, row.max * scale);
    let x_end = points.last().map_or(1.0, |p| p.0).max(1.0);
    let y = visible(points.iter().map(|p| p.1), min, max);
    let mut lines = Vec::new();
    for (bound, label) in [(min, "min"), (max, "max")] {
        if y.contains(&bound) || bound == y.end {
            lines.push(Line::level(
                format!("{label} {}", row.shown(bound / scale)),
                Ink::Reject,
                bound,
                0.0..x_end,
            ));
        }
    }
    // After the bounds, so that a start on a bound (a value tuned up from its minimum) shows.
    lines.push(Line::level(
        format!("start {}", row.shown(row.start)),
        Ink::Reference,
        row.start * scale,
        0.0..x_end,
    ));
    lines.push(Line::new(row.name.clone(), Ink::Series(index), points));
    let unit = if row.in_pawns { "pawns" } else { "value" };
    let svg = charts::line_chart(&LineChart {
        name: "theta",
        title: format!("{} over pairs", row.name),
        x_label: "pairs".into(),
        y_label: unit.into(),
        lines,
        marks: Vec::new(),
        y_range: Some(y),
    })?;
    Ok(TuningChart {
        // A file stem and an HTML id: a parameter named `Foo Bar/2` is `theta-Foo_Bar_2`.
        name: format!(
            "theta-{}",
            row.name.replace(
                |c: char| !c.is_ascii_alphanumeric() && c != '_' && c != '-',
                "_"
            )
        ),
        title: format!(
            "{} ({unit}) after each step, from the start {}",
            row.name,
            row.shown(row.start)
        ),
        svg,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbiter_records::spsa::SpsaParam;

    fn row(name: &str, start: f64, min: f64, max: f64) -> ParamRow {
        let param = SpsaParam {
            name: name.to_owned(),
            kind: ParamKind::Int,
            start,
            min,
            max,
            c_end: 1.0,
            r_end: 0.002,
        };
        ParamRow {
            name: param.name.clone(),
            start,
            tuned: start,
            engine_value: start,
            min,
            max,
            in_pawns: param.is_piece_value(),
            kind: param.kind,
        }
    }

    fn steps(values: &[f64]) -> Vec<StepPoint> {
        values
            .iter()
            .enumerate()
            .map(|(i, &v)| StepPoint {
                step: i as u64,
                iteration: 4 * i as u64,
                pairs: 4,
                wins: 4,
                draws: 0,
                losses: 4,
                theta: vec![v],
            })
            .collect()
    }

    #[test]
    fn a_path_onto_its_bound_runs_along_the_charts_edge() {
        let y = visible([10.0, 11.0, 12.0].into_iter(), 0.0, 12.0);
        assert_eq!(y.end, 12.0);
        assert!(y.start > 0.0 && y.start < 10.0, "{y:?}");
        // A path that never moved still has a range to draw in.
        let y = visible([5.0, 5.0].into_iter(), 5.0, 5.0);
        assert_eq!(y, 5.0..5.0);
        let y = visible([5.0, 5.0].into_iter(), 0.0, 100.0);
        assert!(y.start < 5.0 && y.end > 5.0, "{y:?}");
    }

    #[test]
    fn a_trace_holds_the_start_and_each_step_with_the_bound_it_reaches() {
        let chart = trace(&row("x", 10.0, 0.0, 12.0), 0, &steps(&[11.0, 12.0])).unwrap();
        assert_eq!(chart.name, "theta-x");
        assert!(chart.svg.contains(" data-points=\"3\""), "{}", chart.svg);
        assert!(chart.svg.contains("start 10"), "{}", chart.svg);
        assert!(chart.svg.contains("max 12") && !chart.svg.contains("min 0"));
    }

    #[test]
    fn staunton_piece_values_are_charted_in_pawns() {
        let knight = row("knight_mg", 200.0, 100.0, 500.0);
        assert!(knight.in_pawns);
        assert!(!row("lmr_base", 200.0, 100.0, 500.0).in_pawns);
        let chart = trace(&knight, 0, &steps(&[210.0])).unwrap();
        assert!(chart.svg.contains("start 2.00") && chart.svg.contains("pawns"));
        assert_eq!(knight.shown(203.4), "2.03");
    }

    #[test]
    fn a_parameter_name_becomes_a_file_stem() {
        let chart = trace(&row("Foo Bar/2", 1.0, 0.0, 2.0), 0, &[]).unwrap();
        assert_eq!(chart.name, "theta-Foo_Bar_2");
    }
}
