//! A small SVG writer: line plots with quartile bands, and boards.

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

/// One series of a plot: points (x, median, q1, q3).
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64, f64, f64)>,
}

/// A plot with a linear x axis and a log10 y axis; quartile bands shaded.
pub fn log_plot(title: &str, xlabel: &str, ylabel: &str, series: &[Series]) -> String {
    let (w, h) = (720.0, 460.0);
    let (l, r, t, b) = (70.0, 170.0, 40.0, 50.0);
    let mut svg = Svg::new(w, h);
    svg.text(w / 2.0, 22.0, "middle", title);
    let all: Vec<&(f64, f64, f64, f64)> = series.iter().flat_map(|s| s.points.iter()).collect();
    if all.is_empty() {
        svg.text(w / 2.0, h / 2.0, "middle", "no solved runs");
        return svg.finish();
    }
    let xmin = all.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let xmax = all.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max).max(xmin + 1.0);
    let ymin = all.iter().map(|p| p.2.max(1.0).log10()).fold(f64::INFINITY, f64::min).floor();
    let ymax = all.iter().map(|p| p.3.max(1.0).log10()).fold(f64::NEG_INFINITY, f64::max).ceil().max(ymin + 1.0);
    let px = |x: f64| l + (x - xmin) / (xmax - xmin) * (w - l - r);
    let py = |y: f64| h - b - (y.max(1.0).log10() - ymin) / (ymax - ymin) * (h - t - b);
    svg.line(l, h - b, w - r, h - b, "black", 1.0);
    svg.line(l, t, l, h - b, "black", 1.0);
    let mut e = ymin as i32;
    while e as f64 <= ymax {
        let y = py(10f64.powi(e));
        svg.line(l - 4.0, y, w - r, y, "#dddddd", 0.5);
        svg.text(l - 8.0, y + 4.0, "end", &format!("1e{e}"));
        e += 1;
    }
    for i in 0..=5 {
        let x = xmin + (xmax - xmin) * i as f64 / 5.0;
        svg.line(px(x), h - b, px(x), h - b + 4.0, "black", 1.0);
        svg.text(px(x), h - b + 18.0, "middle", &format!("{x:.0}"));
    }
    svg.text((l + w - r) / 2.0, h - 10.0, "middle", xlabel);
    svg.vtext(18.0, (t + h - b) / 2.0, ylabel);
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
        let ly = t + 16.0 + 18.0 * i as f64;
        svg.line(w - r + 12.0, ly - 4.0, w - r + 32.0, ly - 4.0, col, 3.0);
        svg.text(w - r + 38.0, ly, "start", &s.name);
    }
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
        if let Some(m) = puzzle.neighbour(c, RIGHT) {
            if puzzle.color(board.cells[c], RIGHT) != puzzle.color(board.cells[m], LEFT) {
                svg.line(x0 + cell, y0, x0 + cell, y0 + cell, "red", 4.0);
            }
        }
        if let Some(m) = puzzle.neighbour(c, DOWN) {
            if puzzle.color(board.cells[c], DOWN) != puzzle.color(board.cells[m], UP) {
                svg.line(x0, y0 + cell, x0 + cell, y0 + cell, "red", 4.0);
            }
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
