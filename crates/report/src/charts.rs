//! Each chart is one small function from a series to an SVG string, over a shared [`Style`]:
//! a new chart (the tuner's parameter traces, loss curves) is one more such function.
//!
//! The root `<svg>` element of each chart carries `data-chart="NAME"` and, for a path,
//! `data-points="N"` (the number of data points drawn), so that a test or a script can check
//! what a chart holds without reading its geometry.

use std::error::Error;

use arbiter_runner::standings::{Crosstable, Standings};
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::series::{
    Bin, EloPoint, LatencySpread, LlrPath, MoveTimes, OpeningResult, TimeTrouble, TIME_TROUBLE,
};
use crate::time::Distribution;
use crate::ReportError;

/// What every chart shares: its size, fonts and colours.
pub struct Style;

impl Style {
    pub const SIZE: (u32, u32) = (760, 380);
    const FONT: &'static str = "sans-serif";
    const PATH: RGBColor = RGBColor(31, 119, 180);
    const INTERVAL: RGBColor = RGBColor(158, 198, 225);
    const ACCEPT: RGBColor = RGBColor(44, 160, 44);
    const REJECT: RGBColor = RGBColor(214, 39, 40);
    const BAR: RGBColor = RGBColor(31, 119, 180);
    const GRID: RGBColor = RGBColor(120, 120, 120);
    /// One colour per engine, in the run's order, wherever engines are told apart by colour.
    const ENGINES: [RGBColor; 6] = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
    ];

    fn engine(i: usize) -> RGBColor {
        Self::ENGINES[i % Self::ENGINES.len()]
    }

    fn caption() -> TextStyle<'static> {
        (Self::FONT, 18).into_font().into()
    }

    fn label() -> TextStyle<'static> {
        (Self::FONT, 12).into_font().into()
    }
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type Drawn = Result<(), Box<dyn Error>>;

/// Draws on a fresh white canvas and returns the SVG, its root tagged with the chart's name and
/// (for a path) its number of data points.
fn svg(
    chart: &'static str,
    size: (u32, u32),
    points: Option<usize>,
    draw: impl FnOnce(&Area<'_>) -> Drawn,
) -> Result<String, ReportError> {
    let failed = |e: Box<dyn Error>| ReportError::Chart {
        chart,
        message: e.to_string(),
    };
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        root.fill(&WHITE).map_err(|e| failed(e.into()))?;
        draw(&root).map_err(failed)?;
        root.present().map_err(|e| failed(e.into()))?;
    }
    let mut tag = format!("<svg data-chart=\"{chart}\"");
    if let Some(n) = points {
        tag.push_str(&format!(" data-points=\"{n}\""));
    }
    Ok(out.replacen("<svg", &tag, 1))
}

/// A range that holds `values` and `always`, with a little room above and below.
fn padded(values: impl Iterator<Item = f64>, always: &[f64]) -> std::ops::Range<f64> {
    let (lo, hi) = values
        .chain(always.iter().copied())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    let (lo, hi) = if lo.is_finite() {
        (lo, hi)
    } else {
        (-1.0, 1.0)
    };
    let room = ((hi - lo) * 0.08).max(0.5);
    (lo - room)..(hi + room)
}

/// fishtest's graph: the LLR after each committed pair, both bounds, the decision marked.
pub fn llr(path: &LlrPath) -> Result<String, ReportError> {
    svg("llr", Style::SIZE, Some(path.points.len()), |root| {
        let x_max = path.points.last().map_or(1, |p| p.pairs).max(1) as f64;
        let y = padded(
            path.points.iter().map(|p| p.llr),
            &[path.lower_bound, path.upper_bound],
        );
        let mut chart = ChartBuilder::on(root)
            .caption("LLR over pairs", Style::caption())
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(48)
            .build_cartesian_2d(0.0..x_max, y)?;
        chart
            .configure_mesh()
            .x_desc("pairs")
            .y_desc("LLR")
            .label_style(Style::label())
            .light_line_style(Style::GRID.mix(0.1))
            .draw()?;
        for (bound, colour, name) in [
            (path.upper_bound, Style::ACCEPT, "H1 bound"),
            (path.lower_bound, Style::REJECT, "H0 bound"),
        ] {
            chart
                .draw_series(LineSeries::new(
                    [(0.0, bound), (x_max, bound)],
                    colour.stroke_width(2),
                ))?
                .label(format!("{name} {bound:.2}"))
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], colour));
        }
        chart
            .draw_series(LineSeries::new(
                path.points.iter().map(|p| (p.pairs as f64, p.llr)),
                Style::PATH.stroke_width(2),
            ))?
            .label("LLR")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], Style::PATH));
        if let Some(d) = path.decision {
            chart.draw_series(std::iter::once(Circle::new(
                (d.pairs as f64, d.llr),
                6,
                BLACK.filled(),
            )))?;
            chart.draw_series(std::iter::once(Text::new(
                format!("{} after {} pairs", d.state, d.pairs),
                (d.pairs as f64, d.llr),
                Style::label(),
            )))?;
        }
        chart
            .configure_series_labels()
            .label_font(Style::label())
            .border_style(Style::GRID)
            .background_style(WHITE.mix(0.8))
            .position(SeriesLabelPosition::UpperLeft)
            .draw()?;
        Ok(())
    })
}

/// The first engine's Elo over games with its 95% interval.
pub fn elo(points: &[EloPoint]) -> Result<String, ReportError> {
    svg("elo", Style::SIZE, Some(points.len()), |root| {
        let x_max = points.last().map_or(1, |p| p.games).max(1) as f64;
        // The first few pairs' intervals span hundreds of Elo: clamp the view to what the
        // later path needs, as fishtest does, so the estimate stays readable.
        let y = padded(
            points
                .iter()
                .skip(points.len() / 10)
                .flat_map(|p| [p.lower, p.upper]),
            &[0.0],
        );
        let mut chart = ChartBuilder::on(root)
            .caption("Elo with its 95% interval", Style::caption())
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(48)
            .build_cartesian_2d(0.0..x_max, y.clone())?;
        chart
            .configure_mesh()
            .x_desc("games")
            .y_desc("Elo")
            .label_style(Style::label())
            .light_line_style(Style::GRID.mix(0.1))
            .draw()?;
        let clamp = |v: f64| v.clamp(y.start, y.end);
        for bound in [|p: &EloPoint| p.lower, |p: &EloPoint| p.upper] {
            chart.draw_series(LineSeries::new(
                points.iter().map(|p| (p.games as f64, clamp(bound(p)))),
                Style::INTERVAL.stroke_width(1),
            ))?;
        }
        chart.draw_series(LineSeries::new(
            [(0.0, 0.0), (x_max, 0.0)],
            Style::GRID.stroke_width(1),
        ))?;
        chart.draw_series(LineSeries::new(
            points.iter().map(|p| (p.games as f64, clamp(p.elo))),
            Style::PATH.stroke_width(2),
        ))?;
        Ok(())
    })
}

/// Bars over named categories, in `area`.
fn bars(area: &Area<'_>, title: &str, labels: &[String], values: &[f64], y_desc: &str) -> Drawn {
    let n = labels.len().max(1);
    let top = values.iter().copied().fold(0.0, f64::max).max(1.0) * 1.1;
    let mut chart = ChartBuilder::on(area)
        .caption(title, Style::caption())
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(48)
        .build_cartesian_2d((0..n).into_segmented(), 0.0..top)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .y_desc(y_desc)
        .label_style(Style::label())
        .x_labels(n)
        .x_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => {
                labels.get(*i).cloned().unwrap_or_default()
            }
            SegmentValue::Last => String::new(),
        })
        .draw()?;
    chart.draw_series(
        Histogram::vertical(&chart)
            .style(Style::BAR.filled())
            .margin(4)
            .data(values.iter().copied().enumerate()),
    )?;
    Ok(())
}

/// The pentanomial distribution of pairs (when paired) beside the W/D/L of games.
pub fn results(pentanomial: Option<[u64; 5]>, wdl: [u64; 3]) -> Result<String, ReportError> {
    svg("results", Style::SIZE, None, |root| {
        let names = |n: &[&str]| n.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let as_f64 = |c: &[u64]| c.iter().map(|&v| v as f64).collect::<Vec<_>>();
        match pentanomial {
            Some(penta) => {
                let (left, right) = root.split_horizontally(Style::SIZE.0 / 2);
                bars(
                    &left,
                    "Pairs",
                    &names(&["LL", "LD", "DD+WL", "DW", "WW"]),
                    &as_f64(&penta),
                    "pairs",
                )?;
                bars(
                    &right,
                    "Games",
                    &names(&["W", "D", "L"]),
                    &as_f64(&wdl),
                    "games",
                )
            }
            None => bars(
                root,
                "Games",
                &names(&["W", "D", "L"]),
                &as_f64(&wdl),
                "games",
            ),
        }
    })
}

/// How games ended, beside the histogram of their lengths.
pub fn games(terminations: &[(String, u64)], lengths: &[Bin]) -> Result<String, ReportError> {
    svg("games", Style::SIZE, None, |root| {
        let (left, right) = root.split_horizontally(Style::SIZE.0 * 2 / 5);
        let (names, counts): (Vec<String>, Vec<f64>) = terminations
            .iter()
            .map(|(t, n)| (t.clone(), *n as f64))
            .unzip();
        bars(&left, "Terminations", &names, &counts, "games")?;
        let labels: Vec<String> = lengths.iter().map(|b| b.start.to_string()).collect();
        let counts: Vec<f64> = lengths.iter().map(|b| b.games as f64).collect();
        bars(&right, "Game length (plies)", &labels, &counts, "games")
    })
}

/// The first engine's score (%) from the most lopsided openings, both games of each pair
/// together.
pub fn openings(results: &[OpeningResult], shown: usize) -> Result<String, ReportError> {
    let shown = &results[..results.len().min(shown)];
    svg("openings", Style::SIZE, Some(shown.len()), |root| {
        let labels: Vec<String> = shown
            .iter()
            .map(|r| format!("{} ({}/{})", r.opening, r.lopsided, r.pairs))
            .collect();
        let scores: Vec<f64> = shown
            .iter()
            .map(|r| 100.0 * r.points / (2.0 * r.pairs as f64))
            .collect();
        bars(
            root,
            "Most lopsided openings: first engine's score, (lopsided/pairs)",
            &labels,
            &scores,
            "score %",
        )
    })
}

/// A tournament's standings: each engine's Elo with its 95% interval as an error bar.
pub fn standings(s: &Standings) -> Result<String, ReportError> {
    svg("standings", Style::SIZE, Some(s.engines.len()), |root| {
        let n = s.engines.len().max(1);
        let y = padded(s.engines.iter().flat_map(|e| e.elo_ci), &[0.0]);
        let mut chart = ChartBuilder::on(root)
            .caption("Standings: Elo with 95% interval", Style::caption())
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(48)
            .build_cartesian_2d(-0.5..n as f64 - 0.5, y)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .y_desc("Elo")
            .label_style(Style::label())
            .x_labels(n)
            .x_label_formatter(&|x| {
                let i = x.round();
                if (x - i).abs() > 0.01 || i < 0.0 {
                    return String::new();
                }
                s.engines
                    .get(i as usize)
                    .map(|e| e.name.clone())
                    .unwrap_or_default()
            })
            .draw()?;
        for (i, e) in s.engines.iter().enumerate() {
            let x = i as f64;
            chart.draw_series(std::iter::once(PathElement::new(
                [(x, e.elo_ci[0]), (x, e.elo_ci[1])],
                Style::PATH.stroke_width(2),
            )))?;
            for end in e.elo_ci {
                chart.draw_series(std::iter::once(PathElement::new(
                    [(x - 0.1, end), (x + 0.1, end)],
                    Style::PATH.stroke_width(2),
                )))?;
            }
            chart.draw_series(std::iter::once(Circle::new(
                (x, e.elo),
                5,
                Style::PATH.filled(),
            )))?;
        }
        Ok(())
    })
}

/// The crosstable as a heat map: each cell the row engine's score against the column engine,
/// red below 50%, green above.
pub fn crosstable(table: &Crosstable) -> Result<String, ReportError> {
    let n = table.names.len();
    let side = (n as u32 * 70 + 160).min(900);
    svg("crosstable", (side, side), Some(n * n), |root| {
        let mut chart = ChartBuilder::on(root)
            .caption("Crosstable (row's score)", Style::caption())
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(100)
            .build_cartesian_2d(0.0..n.max(1) as f64, n.max(1) as f64..0.0)?;
        let name = |v: &f64| {
            let i = v.floor();
            if (v - i - 0.5).abs() > 0.01 {
                return String::new();
            }
            table.names.get(i as usize).cloned().unwrap_or_default()
        };
        chart
            .configure_mesh()
            .disable_mesh()
            .label_style(Style::label())
            .x_labels(2 * n + 1)
            .y_labels(2 * n + 1)
            .x_label_formatter(&name)
            .y_label_formatter(&name)
            .draw()?;
        for (r, row) in table.cells.iter().enumerate() {
            for (c, cell) in row.iter().enumerate() {
                let (fill, text) = match cell.filter(|cell| cell.games() > 0) {
                    Some(cell) => {
                        let score = cell.points() / cell.games() as f64;
                        (
                            heat(score),
                            format!("{:.1}/{}", cell.points(), cell.games()),
                        )
                    }
                    None => (RGBColor(235, 235, 235), String::new()),
                };
                let (x, y) = (c as f64, r as f64);
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(x, y), (x + 1.0, y + 1.0)],
                    fill.filled(),
                )))?;
                chart.draw_series(std::iter::once(Text::new(
                    text,
                    (x + 0.15, y + 0.45),
                    Style::label(),
                )))?;
            }
        }
        Ok(())
    })
}

/// A log axis from the smallest to the largest of `values`, widened to whole decades so that
/// milliseconds from a pipe's fraction to a long think share one readable scale.
fn decades(values: impl Iterator<Item = f64>) -> std::ops::Range<f64> {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    let floor = Distribution::FLOOR_MS;
    if !lo.is_finite() {
        return floor..1.0;
    }
    let lo = 10f64.powf(lo.max(floor).log10().floor());
    let hi = 10f64.powf(hi.max(lo * 10.0).log10().ceil());
    lo..hi
}

/// Time used per move against the clock left, per engine: median lines by the engine's move
/// number out of book, with its base (and the time-trouble line) when it had a clock.
pub fn move_times(lines: &[MoveTimes]) -> Result<String, ReportError> {
    let moves: u64 = lines.iter().map(|l| l.moves).sum();
    svg("time", Style::SIZE, Some(moves as usize), |root| {
        let (left, right) = root.split_horizontally(Style::SIZE.0 / 2);
        let x_max = lines
            .iter()
            .flat_map(|l| l.points.last())
            .map(|p| p.move_number)
            .max()
            .map_or(2.0, |n| f64::from(n.max(2)));
        let mut used = ChartBuilder::on(&left)
            .caption("Time per move (median)", Style::caption())
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(56)
            .build_cartesian_2d(
                1.0..x_max,
                decades(
                    lines
                        .iter()
                        .flat_map(|l| l.points.iter().map(|p| p.median_ms)),
                )
                .log_scale(),
            )?;
        used.configure_mesh()
            .x_desc("engine's move")
            .y_desc("ms")
            .label_style(Style::label())
            .light_line_style(Style::GRID.mix(0.1))
            .draw()?;
        let clock_values = lines.iter().flat_map(|l| {
            let budget = l.budget.map(|b| b.base_ms);
            l.points
                .iter()
                .filter_map(|p| p.median_clock_ms)
                .chain(budget)
        });
        let top = clock_values.fold(1.0, f64::max) * 1.08;
        let mut clock = ChartBuilder::on(&right)
            .caption("Clock left after the move (median)", Style::caption())
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(56)
            .build_cartesian_2d(1.0..x_max, 0.0..top)?;
        clock
            .configure_mesh()
            .x_desc("engine's move")
            .y_desc("ms")
            .label_style(Style::label())
            .light_line_style(Style::GRID.mix(0.1))
            .draw()?;
        for (i, line) in lines.iter().enumerate() {
            let colour = Style::engine(i);
            used.draw_series(LineSeries::new(
                line.points
                    .iter()
                    .map(|p| (f64::from(p.move_number), p.median_ms)),
                colour.stroke_width(2),
            ))?
            .label(line.engine.clone())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], colour));
            clock.draw_series(LineSeries::new(
                line.points
                    .iter()
                    .filter_map(|p| Some((f64::from(p.move_number), p.median_clock_ms?))),
                colour.stroke_width(2),
            ))?;
            if let Some(budget) = line.budget {
                for level in [budget.base_ms, TIME_TROUBLE * budget.base_ms] {
                    clock.draw_series(LineSeries::new(
                        [(1.0, level), (x_max, level)],
                        colour.mix(0.5).stroke_width(1),
                    ))?;
                }
                if budget.increment_ms > 0.0 {
                    used.draw_series(LineSeries::new(
                        [(1.0, budget.increment_ms), (x_max, budget.increment_ms)],
                        colour.mix(0.5).stroke_width(1),
                    ))?;
                }
            }
        }
        used.configure_series_labels()
            .label_font(Style::label())
            .border_style(Style::GRID)
            .background_style(WHITE.mix(0.8))
            .position(SeriesLabelPosition::UpperRight)
            .draw()?;
        Ok(())
    })
}

/// Each engine's latency beyond its reported search: a bar from the median to the 99th
/// percentile, ticks at the median, 90th and 99th, a dot at the maximum, on a log scale.
pub fn latency(spread: &[LatencySpread]) -> Result<String, ReportError> {
    let moves: u64 = spread.iter().map(|s| s.moves).sum();
    svg("latency", Style::SIZE, Some(moves as usize), |root| {
        let n = spread.len().max(1);
        let y = decades(spread.iter().flat_map(|s| [s.median_ms, s.max_ms]));
        let floor = y.start;
        let mut chart = ChartBuilder::on(root)
            .caption(
                "Latency beyond the engine's reported search",
                Style::caption(),
            )
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(56)
            .build_cartesian_2d(-0.5..n as f64 - 0.5, y.log_scale())?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .y_desc("ms (runner's time - engine's time)")
            .label_style(Style::label())
            .x_labels(n)
            .x_label_formatter(&|x| {
                let i = x.round();
                if (x - i).abs() > 0.01 || i < 0.0 {
                    return String::new();
                }
                spread
                    .get(i as usize)
                    .map(|s| s.engine.clone())
                    .unwrap_or_default()
            })
            .draw()?;
        for (i, s) in spread.iter().enumerate() {
            let x = i as f64;
            let colour = Style::engine(i);
            let at = |v: f64| v.max(floor);
            chart.draw_series(std::iter::once(Rectangle::new(
                [(x - 0.15, at(s.median_ms)), (x + 0.15, at(s.p99_ms))],
                colour.mix(0.3).filled(),
            )))?;
            for (v, name) in [
                (s.median_ms, "median"),
                (s.p90_ms, "p90"),
                (s.p99_ms, "p99"),
            ] {
                chart.draw_series(std::iter::once(PathElement::new(
                    [(x - 0.2, at(v)), (x + 0.2, at(v))],
                    colour.stroke_width(2),
                )))?;
                chart.draw_series(std::iter::once(Text::new(
                    format!("{name} {v:.1}"),
                    (x + 0.22, at(v)),
                    Style::label(),
                )))?;
            }
            chart.draw_series(std::iter::once(Circle::new(
                (x, at(s.max_ms)),
                4,
                colour.filled(),
            )))?;
            chart.draw_series(std::iter::once(Text::new(
                format!("max {:.1}", s.max_ms),
                (x + 0.22, at(s.max_ms)),
                Style::label(),
            )))?;
        }
        Ok(())
    })
}

/// Games each engine played in time trouble, beside the games it lost on time.
pub fn time_trouble(rows: &[TimeTrouble]) -> Result<String, ReportError> {
    svg("time-trouble", Style::SIZE, Some(rows.len()), |root| {
        let (left, right) = root.split_horizontally(Style::SIZE.0 / 2);
        let names: Vec<String> = rows.iter().map(|r| r.engine.clone()).collect();
        let trouble: Vec<f64> = rows.iter().map(|r| r.in_trouble as f64).collect();
        let forfeits: Vec<f64> = rows.iter().map(|r| r.forfeits as f64).collect();
        bars(
            &left,
            &format!("Games under {:.0}% of base", 100.0 * TIME_TROUBLE),
            &names,
            &trouble,
            "games",
        )?;
        bars(&right, "Time forfeits", &names, &forfeits, "games")
    })
}

/// Red (0%) through white (50%) to green (100%).
fn heat(score: f64) -> RGBColor {
    let t = (score.clamp(0.0, 1.0) - 0.5) * 2.0;
    let towards =
        |from: u8, to: u8, t: f64| (f64::from(from) + (f64::from(to) - f64::from(from)) * t) as u8;
    if t < 0.0 {
        RGBColor(255, towards(255, 120, -t), towards(255, 120, -t))
    } else {
        RGBColor(towards(255, 120, t), 255, towards(255, 120, t))
    }
}
