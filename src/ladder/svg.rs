//! A small SVG writer: line plots with quartile bands, run-time distributions, and boards.

use crate::puzzle::{Board, DOWN, LEFT, Puzzle, RIGHT, UP};
use std::fmt::Write;

/// An SVG document under construction.
pub struct Svg {
    buf: String,
}

impl Svg {
    pub fn new(width: f64, height: f64) -> Self {
        let mut buf = String::new();
        let _ = writeln!(
            buf,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">"#
        );
        let _ = writeln!(buf, r#"<rect width="100%" height="100%" fill="white"/>"#);
        Svg { buf }
    }
    pub fn line(&mut self, x1: f64, y1: f64, x2: f64, y2: f64, stroke: &str, width: f64) {
        let _ = writeln!(
            self.buf,
            r#"<line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{stroke}" stroke-width="{width}"/>"#
        );
    }
    pub fn dashed_line(&mut self, x1: f64, y1: f64, x2: f64, y2: f64, stroke: &str, width: f64) {
        let _ = writeln!(
            self.buf,
            r#"<line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{stroke}" stroke-width="{width}" stroke-dasharray="6 4"/>"#
        );
    }
    pub fn polyline(&mut self, pts: &[(f64, f64)], stroke: &str, width: f64) {
        let p: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
        let _ = writeln!(
            self.buf,
            r#"<polyline points="{}" fill="none" stroke="{stroke}" stroke-width="{width}"/>"#,
            p.join(" ")
        );
    }
    pub fn polygon(&mut self, pts: &[(f64, f64)], fill: &str, opacity: f64) {
        let p: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
        let _ = writeln!(
            self.buf,
            r#"<polygon points="{}" fill="{fill}" fill-opacity="{opacity}" stroke="none"/>"#,
            p.join(" ")
        );
    }
    pub fn circle(&mut self, x: f64, y: f64, r: f64, fill: &str) {
        let _ = writeln!(self.buf, r#"<circle cx="{x:.1}" cy="{y:.1}" r="{r}" fill="{fill}"/>"#);
    }
    pub fn text(&mut self, x: f64, y: f64, anchor: &str, s: &str) {
        let s = s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
        let _ = writeln!(self.buf, r#"<text x="{x:.1}" y="{y:.1}" text-anchor="{anchor}">{s}</text>"#);
    }
    /// Text turned a quarter anticlockwise (for a y-axis label).
    pub fn vtext(&mut self, x: f64, y: f64, s: &str) {
        let s = s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
        let _ = writeln!(
            self.buf,
            r#"<text x="{x:.1}" y="{y:.1}" text-anchor="middle" transform="rotate(-90 {x:.1} {y:.1})">{s}</text>"#
        );
    }
    pub fn finish(mut self) -> String {
        self.buf.push_str("</svg>\n");
        self.buf
    }
}

/// Distinct colours for plot series and puzzle colours.
pub const PALETTE: [&str; 24] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
    "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d", "#31a354", "#756bb1", "#636363",
    "#6baed6", "#fd8d3c", "#74c476", "#9e9ac8",
];

/// One series of a plot: points (x, median, q1, q3); a q3 of `+inf` leaves the band open
/// to the top of the plot (the quartile lies beyond the budget).
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64, f64, f64)>,
}

/// A conservative estimate of the width in pixels of `s` at the 12 px sans-serif of these
/// plots (wider than DejaVu Sans and Helvetica/Arial), so that legends stay inside the canvas.
pub fn text_width(s: &str) -> f64 {
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
pub fn log_plot(title: &str, xlabel: &str, ylabel: &str, series: &[Series]) -> String {
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
pub struct Curve {
    pub name: String,
    /// Index into [`PALETTE`], so that a method keeps its colour across plots.
    pub color: usize,
    /// `(time, fraction solved just after)` at each solve, increasing in time.
    pub steps: Vec<(f64, f64)>,
    /// Times at which unsolved runs stopped (marked with a tick).
    pub censored: Vec<f64>,
    /// The largest observation: the curve is drawn up to here.
    pub end: f64,
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
/// seconds, log x axis, one step curve per method, ticks where unsolved runs stopped, and the
/// budget as a dashed line.
pub fn rtd_plot(title: &str, curves: &[Curve], budget: Option<f64>) -> String {
    step_plot(title, curves, budget, &YAxis { lo: 0.0, hi: 1.0, label: "fraction of runs solved", decimals: 2 })
}

/// The y axis of a [`step_plot`].
pub struct YAxis<'a> {
    pub lo: f64,
    pub hi: f64,
    pub label: &'a str,
    /// Decimals of the tick labels.
    pub decimals: usize,
}

/// Step curves against seconds on a log x axis (run-time distributions, scores reached).
pub fn step_plot(title: &str, curves: &[Curve], budget: Option<f64>, y: &YAxis) -> String {
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
        let mut pts = vec![(px(0.0), py(y.lo))];
        let mut level = y.lo;
        for &(t, f) in &c.steps {
            pts.push((px(t), py(level)));
            pts.push((px(t), py(f)));
            level = f;
        }
        pts.push((px(c.end), py(level)));
        svg.polyline(&pts, col, 2.0);
        for &t in &c.censored {
            let lv = c.steps.iter().take_while(|s| s.0 <= t).last().map_or(y.lo, |s| s.1);
            svg.line(px(t), py(lv) - 5.0, px(t), py(lv) + 5.0, col, 1.5);
        }
        entries.push((col, c.name.as_str()));
    }
    legend(&mut svg, L + PW + 16.0, T, &entries);
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
