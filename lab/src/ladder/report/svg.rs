//! A small SVG writer: line plots with quartile bands, the pooled figure, run-time
//! distributions, and boards.

use concur::puzzle::{Board, DOWN, LEFT, Puzzle, RIGHT, UP};
use std::fmt::Write;

/// An SVG document under construction.
pub(crate) struct Svg {
    buf: String,
}

impl Svg {
    pub(crate) fn new(width: f64, height: f64) -> Self {
        let mut buf = String::new();
        let _ = writeln!(
            buf,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">"#
        );
        let _ = writeln!(buf, r#"<rect width="100%" height="100%" fill="white"/>"#);
        Svg { buf }
    }
    pub(crate) fn line(&mut self, x1: f64, y1: f64, x2: f64, y2: f64, stroke: &str, width: f64) {
        let _ = writeln!(
            self.buf,
            r#"<line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{stroke}" stroke-width="{width}"/>"#
        );
    }
    pub(crate) fn dashed_line(&mut self, x1: f64, y1: f64, x2: f64, y2: f64, stroke: &str, width: f64) {
        let _ = writeln!(
            self.buf,
            r#"<line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{stroke}" stroke-width="{width}" stroke-dasharray="6 4"/>"#
        );
    }
    pub(crate) fn polyline(&mut self, pts: &[(f64, f64)], stroke: &str, width: f64) {
        let p: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
        let _ = writeln!(
            self.buf,
            r#"<polyline points="{}" fill="none" stroke="{stroke}" stroke-width="{width}"/>"#,
            p.join(" ")
        );
    }
    pub(crate) fn dotted_polyline(&mut self, pts: &[(f64, f64)], stroke: &str, width: f64) {
        let p: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
        let _ = writeln!(
            self.buf,
            r#"<polyline points="{}" fill="none" stroke="{stroke}" stroke-width="{width}" stroke-dasharray="2 3"/>"#,
            p.join(" ")
        );
    }
    /// A circle drawn as a ring (an open marker).
    pub(crate) fn ring(&mut self, x: f64, y: f64, r: f64, stroke: &str) {
        let _ = writeln!(
            self.buf,
            r#"<circle cx="{x:.1}" cy="{y:.1}" r="{r}" fill="white" stroke="{stroke}" stroke-width="1.8"/>"#
        );
    }
    pub(crate) fn polygon(&mut self, pts: &[(f64, f64)], fill: &str, opacity: f64) {
        let p: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
        let _ = writeln!(
            self.buf,
            r#"<polygon points="{}" fill="{fill}" fill-opacity="{opacity}" stroke="none"/>"#,
            p.join(" ")
        );
    }
    pub(crate) fn circle(&mut self, x: f64, y: f64, r: f64, fill: &str) {
        let _ = writeln!(self.buf, r#"<circle cx="{x:.1}" cy="{y:.1}" r="{r}" fill="{fill}"/>"#);
    }
    pub(crate) fn text(&mut self, x: f64, y: f64, anchor: &str, s: &str) {
        let s = s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
        let _ = writeln!(self.buf, r#"<text x="{x:.1}" y="{y:.1}" text-anchor="{anchor}">{s}</text>"#);
    }
    /// Text turned a quarter anticlockwise (for a y-axis label).
    pub(crate) fn vtext(&mut self, x: f64, y: f64, s: &str) {
        let s = s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
        let _ = writeln!(
            self.buf,
            r#"<text x="{x:.1}" y="{y:.1}" text-anchor="middle" transform="rotate(-90 {x:.1} {y:.1})">{s}</text>"#
        );
    }
    pub(crate) fn finish(mut self) -> String {
        self.buf.push_str("</svg>\n");
        self.buf
    }
}

/// Distinct colours for plot series and puzzle colours.
pub(crate) const PALETTE: [&str; 24] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
    "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d", "#31a354", "#756bb1", "#636363",
    "#6baed6", "#fd8d3c", "#74c476", "#9e9ac8",
];

/// One series of a plot: points (x, median, q1, q3); a q3 of `+inf` leaves the band open
/// to the top of the plot (the quartile lies beyond the budget).
pub(crate) struct Series {
    pub name: String,
    pub points: Vec<(f64, f64, f64, f64)>,
}

/// A conservative estimate of the width in pixels of `s` at the 12 px sans-serif of these
/// plots (wider than DejaVu Sans and Helvetica/Arial), so that legends stay inside the canvas.
pub(crate) fn text_width(s: &str) -> f64 {
    s.chars()
        .map(|c| match c {
            'i' | 'j' | 'l' | '.' | ',' | ':' | ';' | '\'' | '|' | '!' | ' ' | '(' | ')' | '[' | ']' => 4.5,
            'm' | 'w' | 'M' | 'W' | '@' | '%' => 11.5,
            c if c.is_ascii_uppercase() => 9.0,
            c if c.is_ascii() => 7.5,
            _ => 12.0,
        })
        .sum()
}

/// Legend entries `(colour, name)` drawn in a region from `x` to the right, from `y` down.
fn legend(svg: &mut Svg, x: f64, y: f64, entries: &[(&str, &str)]) {
    for (i, (col, name)) in entries.iter().enumerate() {
        let ly = y + 16.0 + 18.0 * i as f64;
        svg.line(x, ly - 4.0, x + 20.0, ly - 4.0, col, 3.0);
        svg.text(x + 26.0, ly, "start", name);
    }
}

/// The width of the legend region for these names.
fn legend_width<'a>(names: impl Iterator<Item = &'a str>) -> f64 {
    26.0 + names.map(text_width).fold(0.0, f64::max) + 12.0
}

/// The plot area's margins (left, top, bottom) and size.
const L: f64 = 74.0;
const T: f64 = 40.0;
const B: f64 = 50.0;
const PW: f64 = 520.0;
const PH: f64 = 370.0;

/// A canvas holding a `PW` x `PH` plot area, a legend region to its right and the title.
fn canvas(title: &str, legend_w: f64) -> (Svg, f64, f64) {
    let w = (L + PW + 16.0 + legend_w).max(text_width(title) + 20.0).ceil();
    let h = T + PH + B;
    let mut svg = Svg::new(w, h);
    svg.text(w / 2.0, 22.0, "middle", title);
    (svg, w, h)
}

/// A plot with a linear x axis and a log10 y axis; quartile bands shaded. Values at or below
/// zero are drawn at the lowest decade.
pub(crate) fn log_plot(title: &str, xlabel: &str, ylabel: &str, series: &[Series]) -> String {
    let lw = legend_width(series.iter().map(|s| s.name.as_str()));
    let (mut svg, w, h) = canvas(title, lw);
    let all: Vec<&(f64, f64, f64, f64)> = series.iter().flat_map(|s| s.points.iter()).collect();
    if all.is_empty() {
        svg.text(w / 2.0, h / 2.0, "middle", "no size with a median within the budget");
        return svg.finish();
    }
    let finite_pos = |v: f64| v.is_finite() && v > 0.0;
    let lows: Vec<f64> = all.iter().flat_map(|p| [p.1, p.2]).filter(|&v| finite_pos(v)).collect();
    let highs: Vec<f64> = all.iter().flat_map(|p| [p.1, p.3]).filter(|&v| finite_pos(v)).collect();
    let ymin = lows.iter().map(|v| v.log10()).fold(f64::INFINITY, f64::min);
    let ymin = if ymin.is_finite() { ymin.floor() } else { 0.0 };
    let ymax = highs.iter().map(|v| v.log10()).fold(f64::NEG_INFINITY, f64::max).ceil().max(ymin + 1.0);
    let xmin = all.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let xmax = all.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max).max(xmin + 1.0);
    let px = |x: f64| L + (x - xmin) / (xmax - xmin) * PW;
    let py = |y: f64| {
        let ly = if y > 0.0 { y.log10().clamp(ymin, ymax) } else { ymin };
        T + PH - (ly - ymin) / (ymax - ymin) * PH
    };
    svg.line(L, T + PH, L + PW, T + PH, "black", 1.0);
    svg.line(L, T, L, T + PH, "black", 1.0);
    let mut e = ymin as i32;
    while e as f64 <= ymax {
        let y = py(10f64.powi(e));
        svg.line(L - 4.0, y, L + PW, y, "#dddddd", 0.5);
        svg.text(L - 8.0, y + 4.0, "end", &format!("1e{e}"));
        e += 1;
    }
    for i in 0..=5 {
        let x = xmin + (xmax - xmin) * i as f64 / 5.0;
        svg.line(px(x), T + PH, px(x), T + PH + 4.0, "black", 1.0);
        svg.text(px(x), T + PH + 18.0, "middle", &format!("{x:.0}"));
    }
    svg.text(L + PW / 2.0, h - 10.0, "middle", xlabel);
    svg.vtext(18.0, T + PH / 2.0, ylabel);
    let mut entries = Vec::new();
    for (i, s) in series.iter().enumerate() {
        let col = PALETTE[i % PALETTE.len()];
        let mut pts = s.points.clone();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut band: Vec<(f64, f64)> = pts.iter().map(|p| (px(p.0), py(p.3))).collect();
        band.extend(pts.iter().rev().map(|p| (px(p.0), py(p.2))));
        svg.polygon(&band, col, 0.18);
        let line: Vec<(f64, f64)> = pts.iter().map(|p| (px(p.0), py(p.1))).collect();
        svg.polyline(&line, col, 2.0);
        for &(x, y) in &line {
            svg.circle(x, y, 3.0, col);
        }
        entries.push((col, s.name.as_str()));
    }
    legend(&mut svg, L + PW + 16.0, T, &entries);
    svg.finish()
}

/// One curve of a run-time distribution plot.
pub(crate) struct Curve {
    pub name: String,
    /// Index into [`PALETTE`], so that a method keeps its colour across plots.
    pub color: usize,
    /// `(time, fraction solved just after)` at each solve, increasing in time.
    pub steps: Vec<(f64, f64)>,
    /// Times at which unsolved runs stopped (marked with a tick).
    pub censored: Vec<f64>,
    /// The largest observation: the curve is drawn up to here.
    pub end: f64,
    /// Past this time fewer than [`MIN_AT_RISK`] runs remain at risk, so the curve's steps
    /// there rest on one or two runs: it is drawn dotted and thin from here (`+inf`: never).
    pub sparse_from: f64,
}

/// The fewest runs at risk for which a run-time distribution is drawn solid: past that a
/// last solve after every other run was censored would draw a step to 1.0 on one run.
pub(crate) const MIN_AT_RISK: usize = 3;

/// The time past which fewer than [`MIN_AT_RISK`] of these observation times remain at risk
/// (at risk at `t`: observed at or after `t`): the third largest time, or 0 with fewer runs.
pub(crate) fn sparse_from(times: &[f64]) -> f64 {
    let mut v: Vec<f64> = times.to_vec();
    v.sort_by(|a, b| b.total_cmp(a));
    v.get(MIN_AT_RISK - 1).copied().unwrap_or(0.0)
}

/// A label for `k * 10^e` seconds (`k` in 1..10).
fn seconds_label(k: i64, e: i32) -> String {
    let unit = |base: i32, u: &str| format!("{} {u}", k * 10i64.pow((e - base) as u32));
    match e {
        -6..=-4 => unit(-6, "µs"),
        -3..=-1 => unit(-3, "ms"),
        0..=4 => unit(0, "s"),
        e => format!("{k}e{e} s"),
    }
}

/// A run-time distribution plot (Hoos and Stützle): the fraction of runs solved against
/// seconds, log x axis, one step curve per method, ticks where unsolved runs stopped, the
/// budget as a dashed line, and each curve dotted where fewer than [`MIN_AT_RISK`] runs remain
/// at risk.
pub(crate) fn rtd_plot(title: &str, curves: &[Curve], budget: Option<f64>) -> String {
    step_plot(title, curves, budget, &YAxis { lo: 0.0, hi: 1.0, label: "fraction of runs solved", decimals: 2 })
}

/// The y axis of a [`step_plot`].
pub(crate) struct YAxis<'a> {
    pub lo: f64,
    pub hi: f64,
    pub label: &'a str,
    /// Decimals of the tick labels.
    pub decimals: usize,
}

/// Step curves against seconds on a log x axis (run-time distributions, scores reached).
pub(crate) fn step_plot(title: &str, curves: &[Curve], budget: Option<f64>, y: &YAxis) -> String {
    let lw = legend_width(curves.iter().map(|c| c.name.as_str()));
    let (mut svg, w, h) = canvas(title, lw);
    let times: Vec<f64> = curves
        .iter()
        .flat_map(|c| c.steps.iter().map(|s| s.0).chain(c.censored.iter().copied()).chain([c.end]))
        .chain(budget)
        .filter(|t| t.is_finite() && *t > 0.0)
        .collect();
    if times.is_empty() {
        svg.text(w / 2.0, h / 2.0, "middle", "no runs");
        return svg.finish();
    }
    // From the decade below the first observation to just past the last one.
    let xmin = times.iter().map(|t| t.log10()).fold(f64::INFINITY, f64::min).floor();
    let xmax = (times.iter().map(|t| t.log10()).fold(f64::NEG_INFINITY, f64::max) + 0.04).max(xmin + 1.0);
    let px = |t: f64| {
        let lt = if t > 0.0 { t.log10().clamp(xmin, xmax) } else { xmin };
        L + (lt - xmin) / (xmax - xmin) * PW
    };
    let span = (y.hi - y.lo).max(f64::MIN_POSITIVE);
    let py = |f: f64| T + PH - ((f - y.lo) / span).clamp(0.0, 1.0) * PH;
    svg.line(L, T + PH, L + PW, T + PH, "black", 1.0);
    svg.line(L, T, L, T + PH, "black", 1.0);
    for i in 0..=4 {
        let f = y.lo + span * i as f64 / 4.0;
        svg.line(L - 4.0, py(f), L + PW, py(f), "#dddddd", 0.5);
        svg.text(L - 8.0, py(f) + 4.0, "end", &format!("{f:.*}", y.decimals));
    }
    // Decades labelled; 2 and 5 labelled too on a short axis; other multiples as minor ticks.
    let short = xmax - xmin <= 2.5;
    let mut e = xmin as i32;
    while e as f64 <= xmax {
        for k in 1..10i64 {
            let v = k as f64 * 10f64.powi(e);
            if v.log10() > xmax + 1e-9 {
                break;
            }
            let x = px(v);
            if k == 1 {
                svg.line(x, T, x, T + PH, "#eeeeee", 0.5);
            }
            let labelled = k == 1 || (short && (k == 2 || k == 5));
            svg.line(x, T + PH, x, T + PH + if labelled { 5.0 } else { 3.0 }, "black", 1.0);
            if labelled {
                svg.text(x, T + PH + 18.0, "middle", &seconds_label(k, e));
            }
        }
        e += 1;
    }
    svg.text(L + PW / 2.0, h - 10.0, "middle", "seconds (log scale)");
    svg.vtext(18.0, T + PH / 2.0, y.label);
    if let Some(b) = budget.filter(|b| b.is_finite() && *b > 0.0) {
        svg.dashed_line(px(b), T, px(b), T + PH, "#555555", 1.0);
        svg.text(px(b) - 4.0, T + 12.0, "end", "budget");
    }
    let mut entries = Vec::new();
    for c in curves {
        let col = PALETTE[c.color % PALETTE.len()];
        // The solid curve up to `sparse_from`, a dotted one from there to the end.
        let cut = c.sparse_from.min(c.end);
        let mut pts = vec![(px(0.0), py(y.lo))];
        let mut tail: Vec<(f64, f64)> = Vec::new();
        let mut level = y.lo;
        for &(t, f) in &c.steps {
            if t > cut {
                if tail.is_empty() {
                    pts.push((px(cut), py(level)));
                    tail.push((px(cut), py(level)));
                }
                tail.push((px(t), py(level)));
                tail.push((px(t), py(f)));
            } else {
                pts.push((px(t), py(level)));
                pts.push((px(t), py(f)));
            }
            level = f;
        }
        if tail.is_empty() {
            pts.push((px(cut), py(level)));
            if c.end > cut {
                tail.push((px(cut), py(level)));
            }
        }
        if !tail.is_empty() {
            tail.push((px(c.end), py(level)));
            svg.dotted_polyline(&tail, col, 1.2);
        }
        svg.polyline(&pts, col, 2.0);
        for &t in &c.censored {
            let lv = c.steps.iter().take_while(|s| s.0 <= t).last().map_or(y.lo, |s| s.1);
            svg.line(px(t), py(lv) - 5.0, px(t), py(lv) + 5.0, col, 1.5);
        }
        entries.push((col, c.name.as_str()));
    }
    legend(&mut svg, L + PW + 16.0, T, &entries);
    if curves.iter().any(|c| c.sparse_from < c.end) {
        let ly = T + 16.0 + 18.0 * entries.len() as f64 + 8.0;
        svg.dotted_polyline(&[(L + PW + 16.0, ly - 4.0), (L + PW + 36.0, ly - 4.0)], "#555555", 1.2);
        svg.text(L + PW + 42.0, ly, "start", SPARSE_NOTE);
    }
    svg.finish()
}

/// The legend's note on a dotted tail.
pub(crate) const SPARSE_NOTE: &str = "fewer than 3 at risk";

/// One point of a [`pooled_plot`]: at `x` (cells), the pooled mean per solution with its 95%
/// interval, or, where nothing solved (`mean` `None`), the one-sided 95% lower bound `lo`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct PooledPoint {
    pub x: f64,
    pub mean: Option<f64>,
    pub lo: Option<f64>,
    pub hi: Option<f64>,
}

/// One method's points in a [`pooled_plot`] panel.
pub(crate) struct PooledSeries {
    pub name: String,
    /// Index into [`PALETTE`], so that a method keeps its colour across plots.
    pub color: usize,
    pub points: Vec<PooledPoint>,
}

/// One panel of a [`pooled_plot`]: a quantity per solution against cells.
pub(crate) struct Panel<'a> {
    pub title: &'a str,
    pub ylabel: &'a str,
    /// Label the y decades in seconds (µs, ms, s) rather than as powers of ten.
    pub seconds: bool,
    pub series: &'a [PooledSeries],
}

/// Panel geometry of a [`pooled_plot`]: its plot area's width and height, and the band
/// above each plot area for the panel's title.
const QW: f64 = 720.0;
const QH: f64 = 330.0;
const QT: f64 = 30.0;
/// Below each plot area: two rows of tick labels and the axis label.
const QB: f64 = 62.0;
/// The length of the arrow above a one-sided bound.
const ARROW: f64 = 20.0;

/// Tick labels at `xs` (pixel positions, increasing): the row (0 or 1) of each label, so that
/// a label that would touch its left neighbour on the first row drops to the second.
pub(crate) fn tick_rows(xs: &[f64], labels: &[String]) -> Vec<usize> {
    let mut rows = Vec::with_capacity(xs.len());
    let mut right_edge = [f64::NEG_INFINITY; 2];
    for (x, l) in xs.iter().zip(labels) {
        let half = text_width(l) / 2.0 + 2.0;
        let row = if x - half >= right_edge[0] { 0 } else { 1 };
        right_edge[row] = x + half;
        rows.push(row);
    }
    rows
}

/// The pooled figure: panels stacked, each a quantity per solution (log y) against the board's
/// cells, x ticks at the measured sizes only. Per method and size a filled marker at the pooled
/// mean with its 95% interval as a bar; where nothing solved, an open marker at the one-sided
/// 95% lower bound with an arrow up (the cost lies above). Solid lines join a method's means;
/// a bound is not joined. The legend, to the right of the first panel, explains the marks.
pub(crate) fn pooled_plot(title: &str, panels: &[Panel]) -> String {
    let names: Vec<(usize, &str)> = {
        let mut v: Vec<(usize, &str)> = Vec::new();
        for p in panels {
            for s in p.series {
                if !v.iter().any(|(_, n)| *n == s.name) {
                    v.push((s.color, s.name.as_str()));
                }
            }
        }
        v
    };
    let notes = ["mean per solution, 95% interval", "none solved: 95% lower bound"];
    let lw = legend_width(names.iter().map(|(_, n)| *n).chain(notes));
    let w = (L + QW + 16.0 + lw).max(text_width(title) + 20.0).ceil();
    let panel_h = QT + QH + QB;
    let h = T + panel_h * panels.len() as f64;
    let mut svg = Svg::new(w, h);
    svg.text(w / 2.0, 22.0, "middle", title);
    let all = |p: &Panel| p.series.iter().flat_map(|s| s.points.iter().copied()).collect::<Vec<_>>();
    let mut xs: Vec<f64> = panels.iter().flat_map(|p| all(p).into_iter().map(|q| q.x)).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    if xs.is_empty() {
        svg.text(w / 2.0, h / 2.0, "middle", "no pooled rates");
        return svg.finish();
    }
    let (x0, x1) = (xs[0], xs[xs.len() - 1]);
    let pad = ((x1 - x0) * 0.04).max(1.0);
    let (xmin, xmax) = (x0 - pad, x1 + pad);
    let px = |x: f64| L + (x - xmin) / (xmax - xmin) * QW;
    let nseries = names.len().max(1) as f64;
    // Methods side by side around each size, so that bars at one size do not hide each other.
    let dodge = |color: usize| {
        let i = names.iter().position(|(c, _)| *c == color).unwrap_or(0) as f64;
        (i - (nseries - 1.0) / 2.0) * 3.2
    };
    for (k, panel) in panels.iter().enumerate() {
        let top = T + panel_h * k as f64 + QT;
        svg.text(L + QW / 2.0, top - 10.0, "middle", panel.title);
        let pts = all(panel);
        let vals: Vec<f64> =
            pts.iter().flat_map(|q| [q.mean, q.lo, q.hi]).flatten().filter(|v| v.is_finite() && *v > 0.0).collect();
        if vals.is_empty() {
            svg.text(L + QW / 2.0, top + QH / 2.0, "middle", "no pooled rates");
            continue;
        }
        let ymin = vals.iter().map(|v| v.log10()).fold(f64::INFINITY, f64::min).floor();
        let top_val = vals.iter().map(|v| v.log10()).fold(f64::NEG_INFINITY, f64::max);
        // Room above the highest bound for its arrow.
        let ymax = (top_val + 0.3).ceil().max(ymin + 1.0);
        let py = |v: f64| top + QH - (v.log10().clamp(ymin, ymax) - ymin) / (ymax - ymin) * QH;
        svg.line(L, top + QH, L + QW, top + QH, "black", 1.0);
        svg.line(L, top, L, top + QH, "black", 1.0);
        let mut e = ymin as i32;
        while e as f64 <= ymax {
            let y = py(10f64.powi(e));
            svg.line(L - 4.0, y, L + QW, y, "#dddddd", 0.5);
            let label = match (panel.seconds, e) {
                (true, ..=3) => seconds_label(1, e),
                (true, _) => format!("1e{e} s"),
                (false, _) => format!("1e{e}"),
            };
            svg.text(L - 8.0, y + 4.0, "end", &label);
            e += 1;
        }
        let labels: Vec<String> = xs.iter().map(|x| format!("{x:.0}")).collect();
        let tx: Vec<f64> = xs.iter().map(|&x| px(x)).collect();
        for ((&x, l), row) in tx.iter().zip(&labels).zip(tick_rows(&tx, &labels)) {
            svg.line(x, top + QH, x, top + QH + 5.0 + 13.0 * row as f64, "black", 1.0);
            svg.text(x, top + QH + 18.0 + 13.0 * row as f64, "middle", l);
        }
        svg.text(L + QW / 2.0, top + QH + QB - 8.0, "middle", "board size (cells; ticks at the sizes measured)");
        svg.vtext(18.0, top + QH / 2.0, panel.ylabel);
        for s in panel.series {
            let col = PALETTE[s.color % PALETTE.len()];
            let d = dodge(s.color);
            let mut line: Vec<(f64, f64)> = Vec::new();
            let mut sorted = s.points.clone();
            sorted.sort_by(|a, b| a.x.total_cmp(&b.x));
            for q in &sorted {
                let x = px(q.x) + d;
                match (q.mean, q.lo, q.hi) {
                    (Some(m), lo, hi) if m > 0.0 => {
                        if let (Some(lo), Some(hi)) = (lo, hi)
                            && lo > 0.0
                        {
                            svg.line(x, py(lo), x, py(hi), col, 1.5);
                            svg.line(x - 3.0, py(lo), x + 3.0, py(lo), col, 1.5);
                            svg.line(x - 3.0, py(hi), x + 3.0, py(hi), col, 1.5);
                        }
                        line.push((x, py(m)));
                    }
                    (None, Some(lo), _) if lo > 0.0 => {
                        let y = py(lo);
                        svg.line(x, y - 4.0, x, y - ARROW, col, 1.5);
                        svg.polygon(
                            &[(x - 4.0, y - ARROW + 6.0), (x + 4.0, y - ARROW + 6.0), (x, y - ARROW - 2.0)],
                            col,
                            1.0,
                        );
                        svg.ring(x, y, 4.0, col);
                    }
                    _ => {}
                }
            }
            if line.len() > 1 {
                svg.polyline(&line, col, 1.5);
            }
            for &(x, y) in &line {
                svg.circle(x, y, 3.5, col);
            }
        }
    }
    let lx = L + QW + 16.0;
    let entries: Vec<(&str, &str)> = names.iter().map(|(c, n)| (PALETTE[c % PALETTE.len()], *n)).collect();
    legend(&mut svg, lx, T + QT, &entries);
    let ny = T + QT + 16.0 + 18.0 * entries.len() as f64 + 12.0;
    svg.line(lx + 10.0, ny - 12.0, lx + 10.0, ny + 4.0, "#555555", 1.5);
    svg.circle(lx + 10.0, ny - 4.0, 3.5, "#555555");
    svg.text(lx + 26.0, ny, "start", notes[0]);
    let by = ny + 30.0;
    svg.line(lx + 10.0, by - 8.0, lx + 10.0, by - 20.0, "#555555", 1.5);
    svg.polygon(&[(lx + 6.0, by - 18.0), (lx + 14.0, by - 18.0), (lx + 10.0, by - 25.0)], "#555555", 1.0);
    svg.ring(lx + 10.0, by - 4.0, 4.0, "#555555");
    svg.text(lx + 26.0, by, "start", notes[1]);
    svg.finish()
}

/// Draws a board: each cell as four triangles in its edge colours (grey rim as light grey);
/// mismatched joins are marked with a thick red line.
pub fn board(puzzle: &Puzzle, board: &Board) -> String {
    let cell = 40.0;
    let (w, h) = (puzzle.width(), puzzle.height());
    let mut svg = Svg::new(w as f64 * cell + 2.0, h as f64 * cell + 2.0);
    let fill = |k: u8| if k == 0 { "#d9d9d9" } else { PALETTE[(k as usize - 1) % PALETTE.len()] };
    for c in 0..w * h {
        let (x0, y0) = ((c % w) as f64 * cell + 1.0, (c / w) as f64 * cell + 1.0);
        let (x1, y1) = (x0 + cell, y0 + cell);
        let (cx, cy) = (x0 + cell / 2.0, y0 + cell / 2.0);
        let pl = board.cells[c];
        let tri = [
            (UP, [(x0, y0), (x1, y0), (cx, cy)]),
            (RIGHT, [(x1, y0), (x1, y1), (cx, cy)]),
            (DOWN, [(x1, y1), (x0, y1), (cx, cy)]),
            (LEFT, [(x0, y1), (x0, y0), (cx, cy)]),
        ];
        for (s, pts) in tri {
            svg.polygon(&pts, fill(puzzle.color(pl, s)), 1.0);
        }
        svg.line(x0, y0, x1, y1, "white", 0.5);
        svg.line(x1, y0, x0, y1, "white", 0.5);
    }
    for c in 0..w * h {
        let (x0, y0) = ((c % w) as f64 * cell + 1.0, (c / w) as f64 * cell + 1.0);
        if let Some(m) = puzzle.neighbour(c, RIGHT)
            && puzzle.color(board.cells[c], RIGHT) != puzzle.color(board.cells[m], LEFT)
        {
            svg.line(x0 + cell, y0, x0 + cell, y0 + cell, "red", 4.0);
        }
        if let Some(m) = puzzle.neighbour(c, DOWN)
            && puzzle.color(board.cells[c], DOWN) != puzzle.color(board.cells[m], UP)
        {
            svg.line(x0, y0 + cell, x0 + cell, y0 + cell, "red", 4.0);
        }
    }
    for i in 0..=w {
        svg.line(i as f64 * cell + 1.0, 1.0, i as f64 * cell + 1.0, h as f64 * cell + 1.0, "black", 1.0);
    }
    for j in 0..=h {
        svg.line(1.0, j as f64 * cell + 1.0, w as f64 * cell + 1.0, j as f64 * cell + 1.0, "black", 1.0);
    }
    svg.finish()
}

/// One point of a [`scatter_plot`], in log10 units: `x` with its interval `x_ci`, `y` with
/// its interval, or (`y_ci` `None`) a lower bound on `y`, drawn open with an arrow up.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct ErrorPoint {
    pub x: f64,
    pub x_ci: [f64; 2],
    pub y: f64,
    pub y_ci: Option<[f64; 2]>,
    /// Index into [`PALETTE`] and into the plot's `groups`.
    pub color: usize,
}

/// A fitted line with its band in a [`scatter_plot`], in log10 units at the `xs`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ScatterBand {
    pub name: String,
    pub xs: Vec<f64>,
    pub mid: Vec<f64>,
    pub lo: Vec<f64>,
    pub hi: Vec<f64>,
}

/// A log-log scatter with error bars on both axes.
pub(crate) struct ScatterPlot<'a> {
    pub title: &'a str,
    pub xlabel: &'a str,
    pub ylabel: &'a str,
    pub points: &'a [ErrorPoint],
    /// Legend entries of the point colours: `(palette index, name)`.
    pub groups: &'a [(usize, String)],
    pub band: Option<ScatterBand>,
    /// A dashed reference line `y = intercept + slope x` (log10 units) and its name.
    pub reference: Option<(f64, f64, String)>,
    /// A second fitted line, dashed dark, `y = intercept + slope x` over `[x0, x1]` (log10
    /// units), and its name: a part's fit beside the whole one.
    pub part: Option<(f64, f64, [f64; 2], String)>,
    /// The legend's words for an open marker (a lower bound).
    pub bound_note: &'a str,
}

/// The part of the line `y = c + m x` inside `[x0, x1] x [y0, y1]`, as its two ends.
fn clip_line(c: f64, m: f64, [x0, x1]: [f64; 2], [y0, y1]: [f64; 2]) -> Option<[(f64, f64); 2]> {
    let (mut a, mut b) = (x0, x1);
    if m == 0.0 {
        if !(y0..=y1).contains(&c) {
            return None;
        }
    } else {
        let (u, v) = ((y0 - c) / m, (y1 - c) / m);
        a = a.max(u.min(v));
        b = b.min(u.max(v));
    }
    (a < b).then_some([(a, c + m * a), (b, c + m * b)])
}

/// A log-log scatter (both axes in decades): per point a filled marker with its intervals as
/// bars in x and y, or an open marker with an arrow up at a lower bound on y (with its x bar);
/// a fitted line with its band; a dashed reference line; the legend to the right.
pub(crate) fn scatter_plot(p: &ScatterPlot) -> String {
    let line_name = p.band.as_ref().map(|b| b.name.as_str());
    let ref_name = p.reference.as_ref().map(|r| r.2.as_str());
    let part_name = p.part.as_ref().map(|r| r.3.as_str());
    let names: Vec<&str> = p
        .groups
        .iter()
        .map(|g| g.1.as_str())
        .chain(line_name)
        .chain(ref_name)
        .chain(part_name)
        .chain([p.bound_note])
        .collect();
    let (mut svg, w, h) = canvas(p.title, legend_width(names.into_iter()));
    if p.points.is_empty() {
        svg.text(w / 2.0, h / 2.0, "middle", "no instance to place");
        return svg.finish();
    }
    let xs = p.points.iter().flat_map(|q| [q.x, q.x_ci[0], q.x_ci[1]]);
    let ys = p.points.iter().flat_map(|q| {
        let [lo, hi] = q.y_ci.unwrap_or([q.y, q.y + 0.4]);
        [q.y, lo, hi]
    });
    let (xs, ys): (Vec<f64>, Vec<f64>) =
        (xs.filter(|v| v.is_finite()).collect(), ys.filter(|v| v.is_finite()).collect());
    let lo = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min).floor();
    let hi = |v: &[f64], l: f64| v.iter().copied().fold(f64::NEG_INFINITY, f64::max).ceil().max(l + 1.0);
    let (xmin, ymin) = (lo(&xs), lo(&ys));
    let (xmax, ymax) = (hi(&xs, xmin), hi(&ys, ymin));
    let px = |x: f64| L + (x.clamp(xmin, xmax) - xmin) / (xmax - xmin) * PW;
    let py = |y: f64| T + PH - (y.clamp(ymin, ymax) - ymin) / (ymax - ymin) * PH;
    svg.line(L, T + PH, L + PW, T + PH, "black", 1.0);
    svg.line(L, T, L, T + PH, "black", 1.0);
    for e in ymin as i32..=ymax as i32 {
        let y = py(e as f64);
        svg.line(L - 4.0, y, L + PW, y, "#dddddd", 0.5);
        svg.text(L - 8.0, y + 4.0, "end", &format!("1e{e}"));
    }
    for e in xmin as i32..=xmax as i32 {
        let x = px(e as f64);
        svg.line(x, T, x, T + PH + 4.0, "#eeeeee", 0.5);
        svg.line(x, T + PH, x, T + PH + 5.0, "black", 1.0);
        svg.text(x, T + PH + 18.0, "middle", &format!("1e{e}"));
    }
    svg.text(L + PW / 2.0, h - 10.0, "middle", p.xlabel);
    svg.vtext(18.0, T + PH / 2.0, p.ylabel);
    if let Some(b) = &p.band {
        let mut poly: Vec<(f64, f64)> = b.xs.iter().zip(&b.hi).map(|(&x, &y)| (px(x), py(y))).collect();
        poly.extend(b.xs.iter().zip(&b.lo).rev().map(|(&x, &y)| (px(x), py(y))));
        svg.polygon(&poly, "#555555", 0.15);
        let mid: Vec<(f64, f64)> = b.xs.iter().zip(&b.mid).map(|(&x, &y)| (px(x), py(y))).collect();
        svg.polyline(&mid, "#222222", 1.8);
    }
    if let Some((c, m, _)) = &p.reference
        && let Some([(x0, y0), (x1, y1)]) = clip_line(*c, *m, [xmin, xmax], [ymin, ymax])
    {
        svg.dashed_line(px(x0), py(y0), px(x1), py(y1), "#d62728", 1.5);
    }
    if let Some((c, m, [a, b], _)) = &p.part
        && let Some([(x0, y0), (x1, y1)]) = clip_line(*c, *m, [a.max(xmin), b.min(xmax)], [ymin, ymax])
    {
        svg.dashed_line(px(x0), py(y0), px(x1), py(y1), "#222222", 1.5);
    }
    for q in p.points {
        let col = PALETTE[q.color % PALETTE.len()];
        let (x, y) = (px(q.x), py(q.y));
        svg.line(px(q.x_ci[0]), y, px(q.x_ci[1]), y, col, 1.2);
        match q.y_ci {
            Some([lo, hi]) => {
                svg.line(x, py(lo), x, py(hi), col, 1.2);
                svg.circle(x, y, 3.5, col);
            }
            None => {
                svg.line(x, y - 4.0, x, y - ARROW, col, 1.5);
                svg.polygon(&[(x - 4.0, y - ARROW + 6.0), (x + 4.0, y - ARROW + 6.0), (x, y - ARROW - 2.0)], col, 1.0);
                svg.ring(x, y, 4.0, col);
            }
        }
    }
    let lx = L + PW + 16.0;
    let mut entries: Vec<(&str, &str)> =
        p.groups.iter().map(|(c, n)| (PALETTE[c % PALETTE.len()], n.as_str())).collect();
    if let Some(n) = line_name {
        entries.push(("#222222", n));
    }
    legend(&mut svg, lx, T, &entries);
    let mut ly = T + 16.0 + 18.0 * entries.len() as f64;
    if let Some(n) = ref_name {
        svg.dashed_line(lx, ly - 4.0, lx + 20.0, ly - 4.0, "#d62728", 1.5);
        svg.text(lx + 26.0, ly, "start", n);
        ly += 18.0;
    }
    if let Some(n) = part_name {
        svg.dashed_line(lx, ly - 4.0, lx + 20.0, ly - 4.0, "#222222", 1.5);
        svg.text(lx + 26.0, ly, "start", n);
        ly += 18.0;
    }
    let by = ly + 16.0;
    svg.line(lx + 10.0, by - 8.0, lx + 10.0, by - 20.0, "#555555", 1.5);
    svg.polygon(&[(lx + 6.0, by - 18.0), (lx + 14.0, by - 18.0), (lx + 10.0, by - 25.0)], "#555555", 1.0);
    svg.ring(lx + 10.0, by - 4.0, 4.0, "#555555");
    svg.text(lx + 26.0, by, "start", p.bound_note);
    svg.finish()
}

/// One (instance, method) of a [`hazard_plot`].
pub(crate) struct HazardCurve {
    pub name: String,
    /// `(work, cumulative hazard -ln S)` of the Kaplan-Meier estimate at each solve where
    /// `S > 0`.
    pub points: Vec<(f64, f64)>,
    /// The fitted Weibull law `(shape k, scale lambda)`: `H(t) = (t / lambda)^k`, a line of
    /// slope `k` on these axes.
    pub fit: Option<(f64, f64)>,
}

/// The Weibull plot of run lengths: the Kaplan-Meier cumulative hazard `-ln S(t)` against the
/// work `t`, both on log10 axes, one colour per curve, each with its fitted Weibull line
/// (solid) and the exponential law of the same median (dashed, slope 1). A constant hazard is
/// a line of slope 1; a curve that bends below it is a hazard that falls along the trial.
pub(crate) fn hazard_plot(title: &str, xlabel: &str, curves: &[HazardCurve]) -> String {
    let lw = legend_width(curves.iter().map(|c| c.name.as_str()));
    let (mut svg, w, h) = canvas(title, lw);
    let pts: Vec<(f64, f64)> = curves
        .iter()
        .flat_map(|c| c.points.iter().copied())
        .filter(|p| p.0 > 0.0 && p.1 > 0.0 && p.0.is_finite() && p.1.is_finite())
        .collect();
    if pts.is_empty() {
        svg.text(w / 2.0, h / 2.0, "middle", "no solved runs");
        return svg.finish();
    }
    let decades = |v: &mut dyn Iterator<Item = f64>| {
        let (lo, hi) = v.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| (a.min(x.log10()), b.max(x.log10())));
        (lo.floor(), hi.ceil().max(lo.floor() + 1.0))
    };
    let (xmin, xmax) = decades(&mut pts.iter().map(|p| p.0));
    let (ymin, ymax) = decades(&mut pts.iter().map(|p| p.1));
    let px = |t: f64| L + (t.log10().clamp(xmin, xmax) - xmin) / (xmax - xmin) * PW;
    let py = |v: f64| T + PH - (v.log10().clamp(ymin, ymax) - ymin) / (ymax - ymin) * PH;
    svg.line(L, T + PH, L + PW, T + PH, "black", 1.0);
    svg.line(L, T, L, T + PH, "black", 1.0);
    for e in ymin as i32..=ymax as i32 {
        let y = py(10f64.powi(e));
        svg.line(L - 4.0, y, L + PW, y, "#dddddd", 0.5);
        svg.text(L - 8.0, y + 4.0, "end", &format!("1e{e}"));
    }
    for e in xmin as i32..=xmax as i32 {
        let x = px(10f64.powi(e));
        svg.line(x, T, x, T + PH + 4.0, "#eeeeee", 0.5);
        svg.text(x, T + PH + 18.0, "middle", &format!("1e{e}"));
    }
    svg.text(L + PW / 2.0, h - 10.0, "middle", xlabel);
    svg.vtext(18.0, T + PH / 2.0, "cumulative hazard -ln S (log)");
    // A law H(t) = (t / lambda)^k drawn across the x range, clipped to the y range.
    let law = |svg: &mut Svg, k: f64, lambda: f64, col: &str, dashed: bool| {
        let (t0, t1) = (10f64.powf(xmin), 10f64.powf(xmax));
        // The part of the x range where ymin <= H <= ymax.
        let at = |hv: f64| lambda * hv.powf(1.0 / k);
        let a = t0.max(at(10f64.powf(ymin)));
        let b = t1.min(at(10f64.powf(ymax)));
        if a < b {
            let (x1, y1, x2, y2) = (px(a), py((a / lambda).powf(k)), px(b), py((b / lambda).powf(k)));
            if dashed {
                svg.dashed_line(x1, y1, x2, y2, col, 1.0);
            } else {
                svg.line(x1, y1, x2, y2, col, 1.5);
            }
        }
    };
    let mut entries = Vec::new();
    for (i, c) in curves.iter().enumerate() {
        let col = PALETTE[i % PALETTE.len()];
        for &(t, hv) in c.points.iter().filter(|p| p.0 > 0.0 && p.1 > 0.0 && p.1.is_finite()) {
            svg.circle(px(t), py(hv), 2.5, col);
        }
        if let Some((k, lambda)) = c.fit {
            law(&mut svg, k, lambda, col, false);
            // The exponential law through the fitted median, H = ln 2 there.
            let median = lambda * std::f64::consts::LN_2.powf(1.0 / k);
            law(&mut svg, 1.0, median / std::f64::consts::LN_2, col, true);
        }
        entries.push((col, c.name.as_str()));
    }
    legend(&mut svg, L + PW + 16.0, T, &entries);
    svg.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_clipped_to_the_box() {
        let [(x0, y0), (x1, y1)] = clip_line(0.0, 1.0, [0.0, 10.0], [2.0, 5.0]).unwrap();
        assert_eq!((x0, y0, x1, y1), (2.0, 2.0, 5.0, 5.0));
        assert_eq!(clip_line(20.0, 1.0, [0.0, 10.0], [2.0, 5.0]), None);
        assert_eq!(clip_line(3.0, 0.0, [0.0, 10.0], [2.0, 5.0]), Some([(0.0, 3.0), (10.0, 3.0)]));
    }

    #[test]
    fn a_scatter_draws_bars_bounds_the_band_and_the_reference() {
        let pts = [
            ErrorPoint { x: 3.0, x_ci: [2.9, 3.1], y: 2.0, y_ci: Some([1.8, 2.2]), color: 0 },
            ErrorPoint { x: 6.0, x_ci: [5.9, 6.1], y: 5.0, y_ci: None, color: 1 },
        ];
        let groups = [(0, "5x5".to_string()), (1, "8x7".to_string())];
        let band = ScatterBand {
            name: "fit".into(),
            xs: vec![3.0, 6.0],
            mid: vec![2.0, 4.0],
            lo: vec![1.9, 3.8],
            hi: vec![2.1, 4.2],
        };
        let svg = scatter_plot(&ScatterPlot {
            title: "t",
            xlabel: "x",
            ylabel: "y",
            points: &pts,
            groups: &groups,
            band: Some(band),
            reference: Some((-1.0, 1.0, "equal".into())),
            part: Some((0.0, 1.5, [2.0, 3.0], "steeper part".into())),
            bound_note: "none found",
        });
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        // One ring for the bound and one in the legend.
        assert_eq!(svg.matches(r##"fill="white" stroke="#ff7f0e""##).count(), 1);
        assert_eq!(svg.matches(r##"fill="white" stroke="#555555""##).count(), 1);
        assert!(svg.contains(">1e2<") && svg.contains(">1e6<") && svg.contains("stroke-dasharray"));
        assert!(svg.contains(">equal<") && svg.contains(">none found<") && svg.contains(">8x7<"));
        // The part's line, dashed dark, and its legend entry.
        assert_eq!(svg.matches(r##"stroke="#222222" stroke-width="1.5" stroke-dasharray"##).count(), 2, "{svg}");
        assert!(svg.contains(">steeper part<"));
    }
}
