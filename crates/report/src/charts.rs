//! Each chart is one small function from a series to an SVG string, over a shared [`Style`]:
//! a new chart (the tuner's parameter traces, loss curves) is one more such function.
//!
//! The root `<svg>` element of each chart carries `data-chart="NAME"` and, for a path,
//! `data-points="N"` (the number of data points it shows), so that a test or a script can check
//! what a chart holds without reading its geometry. A [`line_chart`] adds `data-drawn="N"`: a
//! long path is thinned to at most [`MOST_DRAWN`] points that keep its shape (see [`thin`]),
//! while the JSON keeps them all.

use std::error::Error;

use arbiter_records::standings::{Crosstable, Standings};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::series::{
    Bin, EloPoint, LatencySpread, LlrPath, MoveTimes, OpeningResult, SprtEstimate, TimeTrouble,
    TIME_TROUBLE,
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

/// At most this many points of one line are drawn: a 100,000-game run's LLR path has 50,000,
/// which a 760-pixel chart cannot show apart and which made its page 16 MB. The JSON keeps them
/// all.
pub const MOST_DRAWN: usize = 2000;

/// How a line or mark is drawn: the palette in order for the series a chart is about, fixed
/// inks for what frames them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ink {
    /// The i-th series' colour (an engine, a parameter), thick.
    Series(usize),
    /// An interval's edge: thin and light.
    Interval,
    /// A bound whose crossing accepts H1, or H0.
    Accept,
    Reject,
    /// A reference level (zero Elo, a start value) and marks: thin grey, or black.
    Reference,
}

impl Ink {
    fn colour(self) -> RGBColor {
        match self {
            Ink::Series(i) => Style::engine(i),
            Ink::Interval => Style::INTERVAL,
            Ink::Accept => Style::ACCEPT,
            Ink::Reject => Style::REJECT,
            Ink::Reference => Style::GRID,
        }
    }

    fn width(self) -> u32 {
        match self {
            Ink::Interval | Ink::Reference => 1,
            _ => 2,
        }
    }
}

/// One named line of a [`LineChart`].
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// Its legend entry; an empty name stays out of the legend.
    pub name: String,
    pub ink: Ink,
    /// `(x, y)` in the order drawn.
    pub points: Vec<(f64, f64)>,
}

impl Line {
    pub fn new(name: impl Into<String>, ink: Ink, points: Vec<(f64, f64)>) -> Line {
        Line {
            name: name.into(),
            ink,
            points,
        }
    }

    /// A level across the whole chart, from `x.start` to `x.end`.
    pub fn level(name: impl Into<String>, ink: Ink, y: f64, x: std::ops::Range<f64>) -> Line {
        Line::new(name, ink, vec![(x.start, y), (x.end, y)])
    }
}

/// A labelled point on a [`LineChart`] (a decision, an estimate), with an optional vertical bar
/// through it (an interval). Lines keep their points at a mark's x however much they are thinned.
#[derive(Clone, Debug, PartialEq)]
pub struct Mark {
    pub x: f64,
    pub y: f64,
    /// The bar's ends; none for a point alone.
    pub span: Option<(f64, f64)>,
    pub label: String,
    pub ink: Ink,
}

/// Any number of named lines over a shared x axis: the LLR and Elo charts, and the tuner's
/// parameter traces and loss curves, are each one of these.
#[derive(Clone, Debug, PartialEq)]
pub struct LineChart {
    /// The chart's `data-chart` name (and file stem).
    pub name: &'static str,
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub lines: Vec<Line>,
    pub marks: Vec<Mark>,
    /// The y values shown; lines beyond are drawn along its edge. None fits every line and
    /// mark.
    pub y_range: Option<std::ops::Range<f64>>,
}

/// Draws `spec` as an SVG whose root carries `data-points` (the points of its
/// [`Ink::Series`] lines: the data) and `data-drawn` (how many of those were drawn, at most
/// [`MOST_DRAWN`] per line).
pub fn line_chart(spec: &LineChart) -> Result<String, ReportError> {
    let keep: Vec<f64> = spec.marks.iter().map(|m| m.x).collect();
    let lines: Vec<(&Line, Vec<(f64, f64)>)> = spec
        .lines
        .iter()
        .map(|line| (line, thin(&line.points, MOST_DRAWN, &keep)))
        .collect();
    let series = || {
        lines
            .iter()
            .filter(|(l, _)| matches!(l.ink, Ink::Series(_)))
    };
    let points = series().map(|(l, _)| l.points.len()).sum();
    let drawn: usize = series().map(|(_, d)| d.len()).sum();
    let legend = Legend::new(
        spec.lines
            .iter()
            .filter(|l| !l.name.is_empty())
            .map(|l| (l.name.clone(), l.ink.colour(), l.ink.width())),
    );
    let size = (Style::SIZE.0, Style::SIZE.1 + legend.height());
    let svg = svg(spec.name, size, Some(points), |whole_area| {
        let (plot, below) = whole_area.split_vertically(Style::SIZE.1);
        legend.draw(&below)?;
        let root = &plot;
        let xs = || lines.iter().flat_map(|(_, d)| d.iter().map(|p| p.0));
        let x_min = xs().chain(keep.iter().copied()).fold(0.0, f64::min);
        let x_max = xs().chain(keep.iter().copied()).fold(x_min + 1.0, f64::max);
        // Room at the right for a mark's bar where the lines end.
        let x_max = if keep.is_empty() {
            x_max
        } else {
            x_max + 0.02 * (x_max - x_min)
        };
        // Pairs, games and iterations are counted: their ticks are whole numbers.
        let counted = xs().all(|x| x.fract() == 0.0);
        let y = spec.y_range.clone().unwrap_or_else(|| {
            let marks = spec.marks.iter().flat_map(|m| {
                let (lo, hi) = m.span.unwrap_or((m.y, m.y));
                [m.y, lo, hi]
            });
            padded(
                lines
                    .iter()
                    .flat_map(|(_, d)| d.iter().map(|p| p.1))
                    .chain(marks),
                &[],
            )
        });
        let mut chart = ChartBuilder::on(root)
            .caption(&spec.title, Style::caption())
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(48)
            .build_cartesian_2d(x_min..x_max, y.clone())?;
        let mut mesh = chart.configure_mesh();
        mesh.x_desc(&spec.x_label)
            .y_desc(&spec.y_label)
            .label_style(Style::label())
            .light_line_style(Style::GRID.mix(0.1));
        if counted {
            mesh.x_label_formatter(&whole);
        }
        mesh.draw()?;
        let clamp = |v: f64| v.clamp(y.start, y.end);
        for (line, drawn) in &lines {
            chart.draw_series(LineSeries::new(
                drawn.iter().map(|&(x, v)| (x, clamp(v))),
                line.ink.colour().stroke_width(line.ink.width()),
            ))?;
        }
        for mark in &spec.marks {
            let colour = match mark.ink {
                Ink::Reference => BLACK,
                ink => ink.colour(),
            };
            if let Some((lo, hi)) = mark.span {
                let (lo, hi) = (clamp(lo), clamp(hi));
                chart.draw_series(std::iter::once(PathElement::new(
                    [(mark.x, lo), (mark.x, hi)],
                    colour.stroke_width(3),
                )))?;
                for end in [lo, hi] {
                    chart.draw_series(std::iter::once(
                        EmptyElement::at((mark.x, end))
                            + PathElement::new([(-6, 0), (6, 0)], colour.stroke_width(3)),
                    ))?;
                }
            }
            let at = (mark.x, clamp(mark.y));
            chart.draw_series(std::iter::once(Circle::new(at, 6, colour.filled())))?;
            // Left of the point: marks sit at the path's end, where the label would be cut.
            let label = Style::label().pos(Pos::new(HPos::Right, VPos::Bottom));
            chart.draw_series(std::iter::once(
                EmptyElement::at(at) + Text::new(mark.label.clone(), (-8, -6), label),
            ))?;
        }
        Ok(())
    })?;
    let name = format!("data-chart=\"{}\"", spec.name);
    Ok(svg.replacen(&name, &format!("{name} data-drawn=\"{drawn}\""), 1))
}

/// A chart's legend, drawn in a band below its plot, where it covers no data: inside the plot,
/// any corner covered the start of an Elo path or of a tuned parameter's trace (which start
/// where their intervals are widest or their bounds are), or their ends. The entries flow in
/// rows across the chart's width.
struct Legend {
    /// Each entry's text, ink and stroke width, and its place (x in pixels from the left, row).
    entries: Vec<(String, RGBColor, u32, i32, usize)>,
    rows: usize,
}

impl Legend {
    /// Where the entries start, under the plot's left edge.
    const LEFT: i32 = 60;
    const ROW: u32 = 18;
    /// The sample line's length, and the room after an entry's text.
    const SAMPLE: i32 = 16;
    const GAP: i32 = 24;

    fn new(entries: impl Iterator<Item = (String, RGBColor, u32)>) -> Legend {
        let right = Style::SIZE.0 as i32 - 12;
        let (mut x, mut row) = (Self::LEFT, 0);
        let mut placed = Vec::new();
        for (text, colour, width) in entries {
            let w = Self::SAMPLE + 6 + Self::text_width(&text);
            if x > Self::LEFT && x + w > right {
                x = Self::LEFT;
                row += 1;
            }
            placed.push((text, colour, width, x, row));
            x += w + Self::GAP;
        }
        let rows = if placed.is_empty() { 0 } else { row + 1 };
        Legend {
            entries: placed,
            rows,
        }
    }

    /// About the width of the label font's text: plotters' SVG backend has no font metrics.
    fn text_width(text: &str) -> i32 {
        (text.chars().count() as f64 * 6.6).ceil() as i32
    }

    /// The band's height in pixels; none without entries.
    fn height(&self) -> u32 {
        match self.rows {
            0 => 0,
            rows => rows as u32 * Self::ROW + 8,
        }
    }

    fn draw(&self, area: &Area<'_>) -> Drawn {
        let label = Style::label().pos(Pos::new(HPos::Left, VPos::Center));
        for (text, colour, width, x, row) in &self.entries {
            let y = (*row as u32 * Self::ROW + Self::ROW / 2) as i32;
            area.draw(&PathElement::new(
                [(*x, y), (x + Self::SAMPLE, y)],
                colour.stroke_width(*width),
            ))?;
            area.draw(&Text::new(
                text.clone(),
                (x + Self::SAMPLE + 6, y),
                label.clone(),
            ))?;
        }
        Ok(())
    }
}

/// At most about `most` of `points` with the line's shape: the first and last, each bucket's
/// lowest and highest, and every point at an x of `keep`. Fewer than `most` are all kept.
pub fn thin(points: &[(f64, f64)], most: usize, keep: &[f64]) -> Vec<(f64, f64)> {
    if points.len() <= most.max(4) {
        return points.to_vec();
    }
    let buckets = (most.max(4) - 2) / 2;
    let size = points.len().div_ceil(buckets);
    let mut kept = vec![false; points.len()];
    kept[0] = true;
    kept[points.len() - 1] = true;
    for (b, bucket) in points.chunks(size).enumerate() {
        let by_y = |a: &&(usize, &(f64, f64)), b: &&(usize, &(f64, f64))| a.1 .1.total_cmp(&b.1 .1);
        let indexed: Vec<(usize, &(f64, f64))> = bucket
            .iter()
            .enumerate()
            .map(|(i, p)| (b * size + i, p))
            .collect();
        for extreme in [indexed.iter().min_by(by_y), indexed.iter().max_by(by_y)]
            .into_iter()
            .flatten()
        {
            kept[extreme.0] = true;
        }
    }
    for (i, p) in points.iter().enumerate() {
        if keep.contains(&p.0) {
            kept[i] = true;
        }
    }
    points
        .iter()
        .zip(kept)
        .filter_map(|(p, k)| k.then_some(*p))
        .collect()
}

/// fishtest's graph: the LLR after each committed pair, both bounds, the decision marked.
pub fn llr(path: &LlrPath) -> Result<String, ReportError> {
    let x = 0.0..path.points.last().map_or(1, |p| p.pairs).max(1) as f64;
    line_chart(&LineChart {
        name: "llr",
        title: "LLR over pairs".into(),
        x_label: "pairs".into(),
        y_label: "LLR".into(),
        lines: vec![
            Line::level(
                format!("H1 bound {:.2}", path.upper_bound),
                Ink::Accept,
                path.upper_bound,
                x.clone(),
            ),
            Line::level(
                format!("H0 bound {:.2}", path.lower_bound),
                Ink::Reject,
                path.lower_bound,
                x,
            ),
            Line::new(
                "LLR",
                Ink::Series(0),
                path.points
                    .iter()
                    .map(|p| (p.pairs as f64, p.llr))
                    .collect(),
            ),
        ],
        marks: path
            .decision
            .iter()
            .map(|d| Mark {
                x: d.pairs as f64,
                y: d.llr,
                span: None,
                label: format!("{} after {} pairs", d.state, d.pairs),
                ink: Ink::Reference,
            })
            .collect(),
        y_range: Some(padded(
            path.points.iter().map(|p| p.llr),
            &[path.lower_bound, path.upper_bound],
        )),
    })
}

/// The first engine's Elo over games with its 95% interval; after an SPRT's decision, the
/// stopping-aware estimate with its interval as a bar where the games end.
pub fn elo(points: &[EloPoint], aware: Option<&SprtEstimate>) -> Result<String, ReportError> {
    let x_max = points.last().map_or(1, |p| p.games).max(1) as f64;
    // The first few pairs' intervals span hundreds of Elo: clamp the view to what the later
    // path needs, as fishtest does, so the estimate stays readable.
    let y = padded(
        points
            .iter()
            .skip(points.len() / 10)
            .flat_map(|p| [p.lower, p.upper])
            .chain(aware.iter().flat_map(|a| [a.elo_ci[0], a.elo_ci[1]])),
        &[0.0],
    );
    let path = |value: fn(&EloPoint) -> f64| -> Vec<(f64, f64)> {
        points.iter().map(|p| (p.games as f64, value(p))).collect()
    };
    line_chart(&LineChart {
        name: "elo",
        title: "Elo with its 95% interval".into(),
        x_label: "games".into(),
        y_label: "Elo".into(),
        lines: vec![
            Line::new("95% interval", Ink::Interval, path(|p| p.lower)),
            Line::new("", Ink::Interval, path(|p| p.upper)),
            Line::level("", Ink::Reference, 0.0, 0.0..x_max),
            Line::new("Elo", Ink::Series(0), path(|p| p.elo)),
        ],
        marks: aware
            .iter()
            .map(|a| Mark {
                x: a.games as f64,
                y: a.elo,
                span: Some((a.elo_ci[0], a.elo_ci[1])),
                label: format!(
                    "SPRT-aware {:.1} [{:.1}, {:.1}]",
                    a.elo, a.elo_ci[0], a.elo_ci[1]
                ),
                ink: Ink::Series(1),
            })
            .collect(),
        y_range: Some(y),
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
        .build_cartesian_2d((0..n - 1).into_segmented(), 0.0..top)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .y_desc(y_desc)
        .label_style(Style::label())
        .y_label_formatter(&whole)
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
        histogram(&right, "Game length", lengths, "plies", "games")
    })
}

/// Bars over the bins of a numeric axis, whose ticks plotters places at round numbers: a label
/// under each of thirty bars ran into each other.
fn histogram(area: &Area<'_>, title: &str, bins: &[Bin], x_desc: &str, y_desc: &str) -> Drawn {
    let end = bins.last().map_or(2, |b| b.end);
    let top = bins.iter().map(|b| b.games).max().unwrap_or(0).max(1) as f64 * 1.1;
    let mut chart = ChartBuilder::on(area)
        .caption(title, Style::caption())
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(48)
        .build_cartesian_2d(0..end, 0.0..top)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .label_style(Style::label())
        .x_labels(8)
        .y_label_formatter(&whole)
        .draw()?;
    chart.draw_series(bins.iter().filter(|b| b.games > 0).map(|b| {
        Rectangle::new(
            [(b.start, 0.0), (b.end, b.games as f64)],
            Style::BAR.filled(),
        )
    }))?;
    // A hairline between neighbours, so that adjacent bars still read as bins.
    chart.draw_series(bins.iter().filter(|b| b.games > 0).map(|b| {
        Rectangle::new(
            [(b.start, 0.0), (b.end, b.games as f64)],
            WHITE.stroke_width(1),
        )
    }))?;
    Ok(())
}

/// A count axis labels only whole numbers: half a game is no tick.
fn whole(v: &f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        String::new()
    }
}

/// The lopsided openings (a pair won twice by the same engine), most lopsided at the top: the
/// score from each, both games of each pair together, as a bar from the even 50% (green toward
/// the engine whose score it is, red away from it) with the opening's name beside it. In a
/// match the score is the first engine's, named on the axis; in a tournament each row is one
/// pairing's opening, named `first-second`, and the score is that row's first engine's. Openings
/// whose pairs were all balanced are left out (the caller says so when none is left); beyond
/// `shown` rows, a last line says how many more there are.
pub fn openings(results: &[OpeningResult], shown: usize) -> Result<String, ReportError> {
    let lopsided: Vec<&OpeningResult> = results.iter().filter(|r| r.lopsided > 0).collect();
    let more = lopsided.len().saturating_sub(shown);
    let shown = &lopsided[..lopsided.len() - more];
    let one_pairing = lopsided
        .windows(2)
        .all(|w| (&w[0].first, &w[0].second) == (&w[1].first, &w[1].second));
    let x_desc = match lopsided.first() {
        Some(r) if one_pairing => format!(
            "{}'s score % against {} (pairs won twice by one engine / pairs)",
            r.first, r.second
        ),
        _ => "score % of the row's first engine (pairs won twice by one engine / pairs)".to_owned(),
    };
    let rows = shown.len() + usize::from(more > 0);
    let n = rows.max(1);
    let height = (n as u32 * 24 + 100).max(220);
    svg(
        "openings",
        (Style::SIZE.0, height),
        Some(shown.len()),
        |root| {
            let mut chart = ChartBuilder::on(root)
                .caption("Lopsided openings", Style::caption())
                .margin(12)
                .x_label_area_size(36)
                .y_label_area_size(if one_pairing { 200 } else { 280 })
                .build_cartesian_2d(0.0..100.0, n as f64..0.0)?;
            // Row i spans i..i+1 from the top; its name sits at its middle.
            let name = |y: &f64| {
                let i = y.floor();
                if (y - i - 0.5).abs() > 0.01 || i < 0.0 {
                    return String::new();
                }
                let i = i as usize;
                match shown.get(i) {
                    Some(r) if one_pairing => {
                        format!("{} ({}/{})", r.opening, r.lopsided, r.pairs)
                    }
                    Some(r) => format!(
                        "{}-{} {} ({}/{})",
                        r.first, r.second, r.opening, r.lopsided, r.pairs
                    ),
                    None if i == shown.len() && more > 0 => {
                        format!("+{more} more (report.json has all)")
                    }
                    None => String::new(),
                }
            };
            chart
                .configure_mesh()
                .disable_y_mesh()
                .x_desc(x_desc.as_str())
                .label_style(Style::label())
                .y_labels(2 * n + 1)
                .y_label_formatter(&name)
                .draw()?;
            for (i, r) in shown.iter().enumerate() {
                let score = 100.0 * r.points / (2.0 * r.pairs as f64);
                // An even score from lopsided pairs (won both ways) still shows as a sliver.
                let end = if (score - 50.0).abs() < 0.5 {
                    50.5
                } else {
                    score
                };
                let y = i as f64;
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(50.0, y + 0.2), (end, y + 0.8)],
                    heat(score / 100.0).mix(0.9).filled(),
                )))?;
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(50.0, y + 0.2), (end, y + 0.8)],
                    Style::GRID.stroke_width(1),
                )))?;
            }
            chart.draw_series(std::iter::once(PathElement::new(
                [(50.0, 0.0), (50.0, shown.len().max(1) as f64)],
                BLACK.stroke_width(1),
            )))?;
            Ok(())
        },
    )
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
            .x_label_formatter(&|&x| category_label(x, |i| s.engines.get(i).map(|e| &e.name)))
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
    let legend = Legend::new(
        lines
            .iter()
            .enumerate()
            .map(|(i, l)| (l.engine.clone(), Style::engine(i), 2)),
    );
    let size = (Style::SIZE.0, Style::SIZE.1 + legend.height());
    svg("time", size, Some(moves as usize), |whole_area| {
        let (root, below) = whole_area.split_vertically(Style::SIZE.1);
        legend.draw(&below)?;
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
            .x_label_formatter(&whole)
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
            .x_label_formatter(&whole)
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
            ))?;
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
            .x_label_formatter(&|&x| category_label(x, |i| spread.get(i).map(|s| &s.engine)))
            .draw()?;
        for (i, s) in spread.iter().enumerate() {
            let x = i as f64;
            let colour = Style::engine(i);
            let at = |v: f64| v.max(floor);
            chart.draw_series(std::iter::once(Rectangle::new(
                [(x - 0.15, at(s.median_ms)), (x + 0.15, at(s.p99_ms))],
                colour.mix(0.3).filled(),
            )))?;
            for v in [s.median_ms, s.p90_ms, s.p99_ms] {
                chart.draw_series(std::iter::once(PathElement::new(
                    [(x - 0.2, at(v)), (x + 0.2, at(v))],
                    colour.stroke_width(2),
                )))?;
            }
            chart.draw_series(std::iter::once(Circle::new(
                (x, at(s.max_ms)),
                4,
                colour.filled(),
            )))?;
            let marks = [
                (s.median_ms, "median"),
                (s.p90_ms, "p90"),
                (s.p99_ms, "p99"),
                (s.max_ms, "max"),
            ];
            for (v, text) in close_labels(&marks) {
                chart.draw_series(std::iter::once(Text::new(
                    text,
                    (x + 0.22, at(v)),
                    Style::label(),
                )))?;
            }
        }
        Ok(())
    })
}

/// Labels for ascending values on a log axis, those within a factor of 1.3 of the first of
/// their run joined into one (`p90 0.9, p99 1.0, max 1.0`): a few pixels apart, separate
/// labels were drawn over each other.
fn close_labels(marks: &[(f64, &str)]) -> Vec<(f64, String)> {
    let mut labels: Vec<(f64, String)> = Vec::new();
    for &(v, name) in marks {
        let text = format!("{name} {v:.1}");
        match labels.last_mut() {
            Some((at, joined)) if v <= *at * 1.3 || v <= *at + 0.05 => {
                joined.push_str(", ");
                joined.push_str(&text);
            }
            _ => labels.push((v, text)),
        }
    }
    labels
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
        // An empty panel reads as a chart that failed to draw: say there was nothing.
        let title = if rows.iter().all(|r| r.forfeits == 0) {
            "Time forfeits: none"
        } else {
            "Time forfeits"
        };
        bars(&right, title, &names, &forfeits, "games")
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

/// The name of the category drawn at x = 0, 1, 2 ... (an engine), for an axis whose ticks also
/// fall between them: empty off the categories' centres.
fn category_label<'a>(x: f64, name: impl Fn(usize) -> Option<&'a String>) -> String {
    let i = x.round();
    if (x - i).abs() > 0.01 || i < 0.0 {
        return String::new();
    }
    name(i as usize).cloned().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A zigzag of 50,000 points (period 7, from -3 to 3) with one spike.
    fn zigzag() -> Vec<(f64, f64)> {
        (0..50_000)
            .map(|i| {
                let y = if i == 31_337 {
                    100.0
                } else {
                    f64::from(i % 7) - 3.0
                };
                (f64::from(i), y)
            })
            .collect()
    }

    /// Thinned, the path keeps its ends, its spike, the point at a mark, and in every window of
    /// 200 points the lowest and highest the full path reaches there.
    #[test]
    fn thinning_keeps_the_shape_and_the_marked_points() {
        let points = zigzag();
        let kept = thin(&points, MOST_DRAWN, &[12_345.0]);
        assert!(kept.len() <= MOST_DRAWN + 1, "{}", kept.len());
        assert_eq!(kept.first(), points.first());
        assert_eq!(kept.last(), points.last());
        assert!(kept.contains(&(31_337.0, 100.0)));
        assert!(kept.contains(&points[12_345]));
        assert!(
            kept.windows(2).all(|w| w[0].0 < w[1].0),
            "in order, no repeats"
        );
        let extremes = |p: &mut dyn Iterator<Item = f64>| {
            p.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), y| {
                (lo.min(y), hi.max(y))
            })
        };
        for start in (0..50_000 - 200).step_by(200) {
            let window = f64::from(start)..f64::from(start) + 200.0;
            let full = extremes(&mut points.iter().filter(|p| window.contains(&p.0)).map(|p| p.1));
            let drawn = extremes(&mut kept.iter().filter(|p| window.contains(&p.0)).map(|p| p.1));
            assert_eq!(full, drawn, "{window:?}");
        }
        // A short path is drawn whole.
        assert_eq!(thin(&points[..500], MOST_DRAWN, &[]), &points[..500]);
    }

    /// The number of points in each polyline of `svg`.
    fn polylines(svg: &str) -> Vec<usize> {
        svg.match_indices("points=\"")
            .map(|(i, _)| {
                let rest = &svg[i + 8..];
                rest[..rest.find('"').unwrap()].split_whitespace().count()
            })
            .collect()
    }

    #[test]
    fn a_line_chart_counts_its_data_and_draws_a_few_thousand_points() {
        let spec = LineChart {
            name: "trace",
            title: "A parameter".into(),
            x_label: "iterations".into(),
            y_label: "value".into(),
            lines: vec![
                Line::new("knight_mg", Ink::Series(0), zigzag()),
                Line::new("bishop_mg", Ink::Series(1), zigzag()[..300].to_vec()),
                Line::level("start", Ink::Reference, 0.0, 0.0..50_000.0),
            ],
            marks: vec![Mark {
                x: 40_000.0,
                y: 2.0,
                span: Some((1.0, 3.0)),
                label: "here".into(),
                ink: Ink::Reference,
            }],
            y_range: None,
        };
        let svg = line_chart(&spec).unwrap();
        assert!(
            svg.starts_with("<svg data-chart=\"trace\" data-drawn=\""),
            "{}",
            &svg[..80]
        );
        assert!(
            svg.contains("data-points=\"50300\""),
            "the data, not the bounds"
        );
        let lines = polylines(&svg);
        assert!(lines.contains(&300), "the short series whole: {lines:?}");
        assert!(lines.contains(&2), "the level: {lines:?}");
        let longest = *lines.iter().max().unwrap();
        assert!(longest > 1000 && longest <= MOST_DRAWN + 1, "{lines:?}");
        for text in ["knight_mg", "bishop_mg", "start", "here", "iterations"] {
            assert!(svg.contains(text), "{text}");
        }
        assert!(svg.len() < 200_000, "{} bytes", svg.len());
    }

    /// The `<text>` element showing `text` exactly: its x and y and its width estimate.
    fn text_at(svg: &str, text: &str) -> (f64, f64) {
        let end = svg
            .find(&format!(">\n{text}\n</text>"))
            .unwrap_or_else(|| panic!("{text} in {svg}"));
        let start = svg[..end].rfind("<text").unwrap();
        let element = &svg[start..end];
        let number = |attribute: &str| -> f64 {
            let from = element.find(&format!(" {attribute}=\"")).unwrap() + attribute.len() + 3;
            let len = element[from..].find('"').unwrap();
            element[from..from + len].parse().unwrap()
        };
        (number("x"), number("y"))
    }

    /// The legends of the Elo, LLR and SPSA charts covered the start of their lines (upper left,
    /// inside the plot): each entry is now below the plot area, and entries do not overlap.
    #[test]
    fn legends_sit_below_the_plot_and_apart() {
        let names: Vec<String> = (0..9).map(|i| format!("parameter_{i}_mg")).collect();
        let spec = LineChart {
            name: "trace",
            title: "Parameters".into(),
            x_label: "pairs".into(),
            y_label: "value".into(),
            lines: names
                .iter()
                .enumerate()
                .map(|(i, name)| Line::new(name.clone(), Ink::Series(i), zigzag()[..50].to_vec()))
                .chain([Line::level("", Ink::Reference, 0.0, 0.0..50.0)])
                .collect(),
            marks: Vec::new(),
            y_range: None,
        };
        let svg = line_chart(&spec).unwrap();
        let plot_bottom = f64::from(Style::SIZE.1);
        let mut placed: Vec<(f64, f64, &str)> = Vec::new();
        for name in &names {
            let (x, y) = text_at(&svg, name);
            assert!(y > plot_bottom, "{name} at y {y}, inside the plot");
            for (other_x, other_y, other) in &placed {
                let apart = (y - other_y).abs() >= 12.0
                    || (x - other_x).abs() >= f64::from(Legend::text_width(other));
                assert!(apart, "{name} over {other}");
            }
            placed.push((x, y, name));
        }
        let rows = placed
            .iter()
            .map(|p| p.1 as i64)
            .collect::<std::collections::BTreeSet<_>>();
        assert!(rows.len() > 1, "nine entries take more than one row");
        let height = |svg: &str| -> u32 {
            let from = svg.find("height=\"").unwrap() + 8;
            svg[from..from + svg[from..].find('"').unwrap()]
                .parse()
                .unwrap()
        };
        assert_eq!(
            height(&svg),
            Style::SIZE.1 + Legend::new(names.iter().map(|n| (n.clone(), BLACK, 1))).height()
        );

        // The Elo chart's legend, likewise.
        let points: Vec<EloPoint> = (1..=20)
            .map(|i| EloPoint {
                games: 2 * i,
                elo: 10.0,
                lower: -200.0 / i as f64,
                upper: 200.0 / i as f64,
            })
            .collect();
        let elo = elo(&points, None).unwrap();
        assert!(text_at(&elo, "95% interval").1 > plot_bottom);
    }

    /// Only openings with a pair won twice by one engine are drawn.
    #[test]
    fn only_lopsided_openings_are_drawn() {
        let opening = |name: &str, lopsided| OpeningResult {
            opening: name.into(),
            first: "dev".into(),
            second: "base".into(),
            pairs: 2,
            points: 2.0 + lopsided as f64,
            lopsided,
        };
        let results = [
            opening("a.epd:1", 2),
            opening("a.epd:2", 0),
            opening("a.epd:3", 1),
        ];
        let svg = openings(&results, 16).unwrap();
        assert!(svg.contains("data-points=\"2\""), "{svg}");
        assert!(svg.contains("a.epd:1 (2/2)") && svg.contains("a.epd:3 (1/2)"));
        assert!(!svg.contains("a.epd:2"));
        let none = openings(&results[1..2], 16).unwrap();
        assert!(none.contains("data-points=\"0\""));
    }

    /// 20 lopsided openings and room for 16: the chart says that 4 more are left out.
    #[test]
    fn the_openings_chart_says_how_many_more_there_are() {
        let results: Vec<OpeningResult> = (1..=20)
            .map(|line| OpeningResult {
                opening: format!("quick.epd:{line}"),
                first: "dev".into(),
                second: "base".into(),
                pairs: 1,
                points: 2.0,
                lopsided: 1,
            })
            .collect();
        let svg = openings(&results, 16).unwrap();
        assert!(svg.contains("data-points=\"16\""), "{svg}");
        assert!(svg.contains("+4 more"), "{svg}");
        assert!(svg.contains("quick.epd:16 (1/1)") && !svg.contains("quick.epd:17 "));
        assert!(svg.contains("dev&apos;s score % against base"), "{svg}");
        let all = openings(&results[..16], 16).unwrap();
        assert!(!all.contains("more"), "{all}");
    }
}
