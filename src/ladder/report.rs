//! `concur report`: merge ladder results, tabulate success and work per method and size,
//! plot work-to-solution against board area, and fit a growth rate per method.

use super::svg::{Series, log_plot};
use super::{Record, read_records};
use crate::{Error, Result};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// One (method, size) cell of the table.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Row {
    pub label: String,
    pub width: usize,
    pub height: usize,
    pub area: usize,
    pub runs: usize,
    pub solved: usize,
    /// Of the solved runs by the map alone / with completion (maps only).
    pub solved_by_map_ac: usize,
    pub work_unit: String,
    /// Quartiles (q1, median, q3) of work to solution over the solved runs.
    pub work: Option<[f64; 3]>,
    pub seconds: Option<[f64; 3]>,
}

/// A log-linear fit `log10(median work) = a + b * area` over the sizes a method solved in
/// at least half its runs.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Fit {
    pub label: String,
    /// b: decades of work per extra cell.
    pub slope: f64,
    pub intercept: f64,
    /// 10^b: the factor of work per extra cell.
    pub growth_per_cell: f64,
    pub area_min: usize,
    pub area_max: usize,
    pub points: usize,
}

/// Quartiles by linear interpolation.
pub fn quartiles(v: &mut [f64]) -> Option<[f64; 3]> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let q = |f: f64| {
        let pos = f * (v.len() - 1) as f64;
        let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
        v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
    };
    Some([q(0.25), q(0.5), q(0.75)])
}

/// Merges the `*.jsonl` files of the given folders (or files). The same run appearing twice
/// with different results is an error; exact duplicates are merged.
pub fn merge(inputs: &[PathBuf]) -> Result<Vec<Record>> {
    let mut files = Vec::new();
    for p in inputs {
        if p.is_dir() {
            let mut fs: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(|e| Error::invalid(format!("cannot read {}: {e}", p.display())))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.extension().is_some_and(|x| x == "jsonl"))
                .collect();
            fs.sort();
            files.extend(fs);
        } else if p.exists() {
            files.push(p.clone());
        } else {
            return Err(Error::invalid(format!("{} does not exist", p.display())));
        }
    }
    let mut by_key: BTreeMap<(String, String, u64), Record> = BTreeMap::new();
    for f in files {
        for r in read_records(&f)? {
            match by_key.get(&r.key()) {
                Some(old) if *old != r && (old.solved, old.work) != (r.solved, r.work) => {
                    return Err(Error::invalid(format!("run {:?} appears twice with different results", r.key())));
                }
                Some(_) => {}
                None => {
                    by_key.insert(r.key(), r);
                }
            }
        }
    }
    Ok(by_key.into_values().collect())
}

/// Groups records by method label and board size.
pub fn summarize(records: &[Record]) -> Vec<Row> {
    let mut groups: BTreeMap<(String, usize, usize), Vec<&Record>> = BTreeMap::new();
    for r in records {
        groups.entry((r.label.clone(), r.width * r.height, r.width)).or_default().push(r);
    }
    groups
        .into_iter()
        .map(|((label, area, width), rs)| {
            let solved: Vec<&&Record> = rs.iter().filter(|r| r.solved).collect();
            let mut work: Vec<f64> = solved.iter().map(|r| r.work as f64).collect();
            let mut secs: Vec<f64> = solved.iter().map(|r| r.wall_s).collect();
            Row {
                label,
                width,
                height: area / width,
                area,
                runs: rs.len(),
                solved: solved.len(),
                solved_by_map_ac: solved.iter().filter(|r| r.mechanism.as_deref() == Some("map+ac")).count(),
                work_unit: rs[0].work_unit.clone(),
                work: quartiles(&mut work),
                seconds: quartiles(&mut secs),
            }
        })
        .collect()
}

/// Least-squares fit of log10(median work) against area, per method.
pub fn fit(rows: &[Row]) -> Vec<Fit> {
    let mut by: BTreeMap<&str, Vec<(f64, f64, usize)>> = BTreeMap::new();
    for r in rows {
        if let Some(w) = r.work {
            if 2 * r.solved >= r.runs {
                by.entry(&r.label).or_default().push((r.area as f64, w[1].max(1.0).log10(), r.area));
            }
        }
    }
    by.into_iter()
        .filter(|(_, pts)| pts.iter().map(|p| p.2).collect::<std::collections::HashSet<_>>().len() >= 2)
        .map(|(label, pts)| {
            let n = pts.len() as f64;
            let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
            let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
            let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
            let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
            let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
            Fit {
                label: label.to_string(),
                slope,
                intercept: my - slope * mx,
                growth_per_cell: 10f64.powf(slope),
                area_min: pts.iter().map(|p| p.2).min().unwrap_or(0),
                area_max: pts.iter().map(|p| p.2).max().unwrap_or(0),
                points: pts.len(),
            }
        })
        .collect()
}

fn fmt_q(q: Option<[f64; 3]>, secs: bool) -> String {
    match q {
        None => "-".into(),
        Some([a, m, b]) if secs => {
            let f = |v: f64| if v >= 0.1 { format!("{v:.2}") } else { format!("{v:.1e}") };
            format!("{} ({}-{})", f(m), f(a), f(b))
        }
        Some([a, m, b]) => format!("{m:.0} ({a:.0}-{b:.0})"),
    }
}

/// The Markdown table and the fits.
pub fn markdown(rows: &[Row], fits: &[Fit]) -> String {
    let mut s = String::from(
        "| method | size | solved | work to solution: median (q1-q3) | unit | seconds: median (q1-q3) |\n|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let ac = if r.solved_by_map_ac > 0 { format!(" ({} by map+ac)", r.solved_by_map_ac) } else { String::new() };
        s.push_str(&format!(
            "| {} | {}x{} | {}/{}{} | {} | {} | {} |\n",
            r.label,
            r.width,
            r.height,
            r.solved,
            r.runs,
            ac,
            fmt_q(r.work, false),
            r.work_unit,
            fmt_q(r.seconds, true)
        ));
    }
    if !fits.is_empty() {
        s.push_str("\n| method | growth of median work per extra cell | log10 work = a + b * area | fitted over areas | sizes |\n|---|---|---|---|---|\n");
        for f in fits {
            s.push_str(&format!(
                "| {} | x{:.3} | a = {:.2}, b = {:.4} | {}-{} | {} |\n",
                f.label, f.growth_per_cell, f.intercept, f.slope, f.area_min, f.area_max, f.points
            ));
        }
    }
    s
}

/// What `concur report` wrote.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Written {
    pub records: usize,
    pub rows: Vec<Row>,
    pub fits: Vec<Fit>,
    pub files: Vec<PathBuf>,
}

/// Merges `inputs` and writes `report.md`, `work.svg`, `seconds.svg` and `summary.json`
/// into `out`.
pub fn write(inputs: &[PathBuf], out: &Path) -> Result<Written> {
    let records = merge(inputs)?;
    if records.is_empty() {
        return Err(Error::invalid("no result lines found"));
    }
    let rows = summarize(&records);
    let fits = fit(&rows);
    std::fs::create_dir_all(out).map_err(|e| Error::invalid(format!("cannot create {}: {e}", out.display())))?;
    let mut units: HashMap<&str, &str> = HashMap::new();
    for r in &rows {
        units.insert(&r.label, &r.work_unit);
    }
    let series = |secs: bool| -> Vec<Series> {
        let mut by: BTreeMap<&str, Vec<(f64, f64, f64, f64)>> = BTreeMap::new();
        for r in &rows {
            if let Some(q) = if secs { r.seconds.map(|q| q.map(|v| v * 1e6)) } else { r.work } {
                by.entry(&r.label).or_default().push((r.area as f64, q[1], q[0], q[2]));
            }
        }
        by.into_iter()
            .map(|(l, points)| Series { name: format!("{l} ({})", if secs { "us" } else { units[l] }), points })
            .collect()
    };
    let md = markdown(&rows, &fits);
    let files = vec![out.join("report.md"), out.join("work.svg"), out.join("seconds.svg"), out.join("summary.json")];
    let w = |p: &Path, s: String| {
        std::fs::write(p, s).map_err(|e| Error::invalid(format!("cannot write {}: {e}", p.display())))
    };
    w(&files[0], md)?;
    w(
        &files[1],
        log_plot(
            "Work to solution (median, quartile band) vs board area",
            "board area (cells)",
            "work",
            &series(false),
        ),
    )?;
    w(
        &files[2],
        log_plot(
            "Time to solution (median, quartile band) vs board area",
            "board area (cells)",
            "microseconds",
            &series(true),
        ),
    )?;
    let written = Written { records: records.len(), rows, fits, files };
    w(&written.files[3], serde_json::to_string_pretty(&written).expect("plain data"))?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quartiles_interpolate() {
        assert_eq!(quartiles(&mut [4.0, 1.0, 3.0, 2.0, 5.0]), Some([2.0, 3.0, 4.0]));
        assert_eq!(quartiles(&mut []), None);
    }

    #[test]
    fn fit_recovers_a_planted_exponential() {
        let rows: Vec<Row> = [9usize, 16, 25, 36]
            .iter()
            .map(|&a| Row {
                label: "m".into(),
                width: 1,
                height: a,
                area: a,
                runs: 4,
                solved: 4,
                solved_by_map_ac: 0,
                work_unit: "iterations".into(),
                work: Some([1.0, 10f64.powf(0.5 + 0.1 * a as f64), 1.0]),
                seconds: None,
            })
            .collect();
        let f = &fit(&rows)[0];
        assert!((f.slope - 0.1).abs() < 1e-9 && (f.intercept - 0.5).abs() < 1e-9);
        assert_eq!((f.area_min, f.area_max, f.points), (9, 36, 4));
    }
}
