//! The map's work per solution against instance hardness: the report's section "Work per
//! solution against hardness", from a campaign that runs the map and the row scan (and
//! optionally the AC-4 backtracker) on many instances of different hardness.
//!
//! Per instance, every run of a method is pooled ([`stats::pooled_counts`](crate::ladder::report::stats::pooled_counts): total work over
//! the solutions found in it, with the exact 95% interval, or the one-sided bound `T / ln 20`
//! without a solution). The instance's **hardness** is the scan's pooled nodes per solution;
//! the map's cost is its pooled trial-iterations per solution. The exponent of the map against
//! hardness is the slope `b` of the censored normal regression (Tobin 1958, [`fit::tobit`](crate::ladder::report::fit::tobit))
//!
//! ```text
//! log10(map trial-iterations per solution) = a + b log10(scan nodes per solution) + e,  e ~ N(0, s^2)
//! ```
//!
//! over the instances, where an instance on which the map found no solution is censored: its
//! true value lies above `log10(T e^gamma)` ([`fit::CENSOR_FACTOR`](crate::ladder::report::fit::CENSOR_FACTOR)), and an instance on which
//! the scan found none is left out (it cannot be placed on the hardness axis) and counted.
//! The 95% intervals of `b` and `a` come from Efron's percentile bootstrap over instances, each
//! with its counts as observed ([`fit::regress_counts`](crate::ladder::report::fit::regress_counts)).
//!
//! One line may not hold from the easy end to the hard one. The line, a quadratic and a broken
//! stick are fitted both censored and by the Poisson-lognormal likelihood of the counts, each
//! tested against the line by a parametric bootstrap, and one chosen by a stated rule
//! ([`choice`](crate::ladder::report::choice)); the answer is then the chosen curve's slope at
//! the hard end (above the knot), and the crossing below is computed from that segment
//! ([`curve_crossing`]).
//!
//! In core-seconds, with `c_map` core-seconds per map trial-iteration and `c_scan` per scan
//! node, the map's line is `c_map 10^a H^b` and the scan's `c_scan H`; they meet at
//! `log10 H* = (log10(c_map / c_scan) + a) / (1 - b)`. For `b < 1` the map is the cheaper above
//! `H*`, for `b > 1` below it; when `b`'s interval reaches 1 there is no crossing to state. The
//! interval of `H*` is the percentile interval of the bootstrap's `H*`, a resample on the other
//! side of `b = 1` counting as an unbounded end. The costs are taken as known. They come from
//! a table of per-core rates (`hardness-inputs/core-rates.jsonl`, the output of
//! `scripts/core-rates.sh`, measured on an idle machine) when given, else from the records
//! themselves (total wall seconds / total work of one-core CPU runs per method and size, which
//! carry the machine's load), at the campaign's largest board size (the costs per unit grow
//! with the board, and the hardest instances, which the crossing is about, are the largest).
//!
//! Optional inputs, read from a folder `hardness-inputs/` inside any results folder given to
//! the report (a subfolder, because the ladder and the report read every `*.jsonl` of a results
//! folder itself as run records):
//! - `counts.jsonl`: exact solution counts, lines `{"instance": ..., "solutions": N,
//!   "complete": true, ...}` (a line with `complete` false is skipped). With three or more
//!   counted instances, the map's work per solution is also fitted against `log10 N`: if the map
//!   found solutions as if drawn at random, the slope would be -1.
//! - `core-rates.jsonl`: per-core rates, lines `{"puzzle": "set1-08x07", "method": "rrr" |
//!   "scan" | "ac4", "rate": R, ...}` (units per second of one core; several lines of one
//!   method and size are averaged).
//! - `points.json`: `[{"name": ..., "scan_nodes_per_solution": H, "size": "WxH"}, ...]`,
//!   instances beyond the campaign (set 1's 8x8, 10x10, the 16x16) placed on the fitted line
//!   ([`place`]); with a `size` the core-rates table has, in that size's core-seconds.

mod analysis;
mod inputs;
mod presentation;

pub use analysis::*;
pub use inputs::*;
pub use presentation::*;

#[cfg(test)]
mod tests {
    use super::analysis::*;
    use super::inputs::*;
    use crate::ladder::report::fit::{self, CountRegression};
    use std::collections::BTreeMap;

    #[test]
    fn numbers_keep_three_significant_figures() {
        let v: Vec<String> = [0.5, 12.345, 345.7, 9999.0, 12307.69, 6.4e10, 0.001].into_iter().map(sci).collect();
        assert_eq!(v, ["0.500", "12.3", "346", "9999", "1.23e4", "6.40e10", "1.00e-3"]);
        assert_eq!(sci(f64::INFINITY), "unbounded");
    }

    #[test]
    fn sizes_come_from_the_ends_of_names() {
        assert_eq!(size_of("set1-08x07"), Some((8, 7)));
        assert_eq!(size_of("brendan_owen/pieces_set_1/pieces_10x10.txt"), Some((10, 10)));
        assert_eq!(size_of("generated"), None);
    }

    #[test]
    fn core_rates_parse_into_costs_and_average_repeats() {
        let t = r#"{"puzzle": "set1-07x07", "method": "rrr", "rate": 100.0, "unit": "iterations/s"}
{"puzzle": "set1-07x07", "method": "rrr", "rate": 300.0}
{"puzzle": "set1-07x07", "method": "scan", "rate": 1e7}
{"puzzle": "set1-08x08", "method": "alns", "rate": 5.0}
"#;
        let c = parse_core_rates(t, "f").unwrap();
        assert_eq!(c.len(), 1);
        assert_eq!((c[0].width, c[0].height, c[0].cells), (7, 7, 49));
        assert_eq!(c[0].map, Some(1.0 / 200.0));
        assert_eq!(c[0].scan, Some(1e-7));
        assert_eq!(c[0].ac4, None);
        let e = parse_core_rates("{\"puzzle\": \"x\", \"method\": \"rrr\", \"rate\": 1}", "f").unwrap_err();
        assert!(e.to_string().contains("line 1"), "{e}");
        assert!(parse_core_rates("{\"puzzle\": \"a-5x5\", \"method\": \"rrr\", \"rate\": -1}", "f").is_err());
    }

    #[test]
    fn counts_skip_incomplete_lines_and_refuse_clashes() {
        let mut m = BTreeMap::new();
        let t = "{\"instance\": \"a\", \"solutions\": 4, \"complete\": true}\n\
                 {\"instance\": \"b\", \"solutions\": 9, \"complete\": false}\n\n\
                 {\"instance\": \"a\", \"solutions\": 4, \"complete\": true, \"nodes\": 7}\n";
        parse_counts(t, "c", &mut m).unwrap();
        assert_eq!(m.into_iter().collect::<Vec<_>>(), vec![("a".to_string(), 4)]);
        let mut m = BTreeMap::new();
        let clash = "{\"instance\": \"a\", \"solutions\": 4, \"complete\": true}\n{\"instance\": \"a\", \"solutions\": 5, \"complete\": true}";
        assert!(matches!(parse_counts(clash, "c", &mut m), Err(HardnessError::CountClash { .. })));
        assert!(parse_counts("nope", "c", &mut BTreeMap::new()).is_err());
    }

    #[test]
    fn points_parse_and_refuse_nonsense() {
        let p = parse_points(r#"[{"name": "set 1 8x8", "scan_nodes_per_solution": 6.4e10}]"#, "p").unwrap();
        assert_eq!(p[0].name, "set 1 8x8");
        assert!(parse_points(r#"[{"name": "x", "scan_nodes_per_solution": 0}]"#, "p").is_err());
        assert!(parse_points(r#"{"name": "x"}"#, "p").is_err());
        let p = parse_points(r#"[{"name": "b", "scan_nodes_per_solution": 1e17, "size": "10x10"}]"#, "p").unwrap();
        assert_eq!(p[0].size.as_deref(), Some("10x10"));
        for bad in ["10", "0x10", "axb", "10x"] {
            let t = format!(r#"[{{"name": "b", "scan_nodes_per_solution": 1e17, "size": "{bad}"}}]"#);
            assert!(parse_points(&t, "p").is_err(), "{bad}");
        }
    }

    /// The line `y = 1 + 0.5 x` with three replicates (slopes 0.5, 0.4, 0.6) and costs whose
    /// ratio is 1000: the lines meet at `x* = (3 + 1) / (1 - 0.5) = 8`.
    fn line_and_costs() -> (CountRegression, CostsUsed) {
        let line = fit::Line {
            intercept: 1.0,
            slope: 0.5,
            sigma: 0.1,
            log_likelihood: 0.0,
            points: 10,
            censored: 0,
            iterations: 3,
        };
        let reg = CountRegression {
            line,
            units: 10,
            left_out: 0,
            slope_ci: [0.4, 0.6],
            intercept_ci: [0.5, 1.5],
            resamples: 3,
            failed: 0,
            reliability: 1.0,
            replicates: vec![[1.0, 0.5, 0.1], [1.0, 0.4, 0.1], [1.0, 0.6, 0.1]],
        };
        let costs =
            CostsUsed { map: 1e-4, scan: 1e-7, width: 8, height: 7, source: "records".into(), note: String::new() };
        (reg, costs)
    }

    #[test]
    fn placed_boards_use_their_own_size_costs_where_the_table_has_them() {
        let (reg, costs) = line_and_costs();
        let rates = vec![SizeCosts { width: 10, height: 10, cells: 100, map: Some(1e-3), scan: Some(1e-6), ac4: None }];
        let pt = |name: &str, size: Option<&str>| NamedPoint {
            name: name.into(),
            scan_nodes_per_solution: 1e8,
            size: size.map(Into::into),
            note: None,
        };
        let p = place(
            &reg,
            Some(&costs),
            &rates,
            &[pt("own", Some("10x10")), pt("other", Some("9x9")), pt("none", None)],
            [2.0, 9.0],
            1,
        );
        // The line at x = 8: 10^5 iterations per solution.
        assert!((p[0].map_work.log10() - 5.0).abs() < 1e-9);
        assert!(
            (p[0].map_core_seconds.unwrap() - 1e2).abs() < 1e-6 && (p[0].scan_core_seconds.unwrap() - 1e2).abs() < 1e-6
        );
        assert_eq!(p[0].costs_at.as_deref(), Some("10x10, core-rates file"));
        for q in &p[1..] {
            assert!(
                (q.map_core_seconds.unwrap() - 10.0).abs() < 1e-6 && (q.scan_core_seconds.unwrap() - 10.0).abs() < 1e-6
            );
            assert_eq!(q.costs_at.as_deref(), Some("8x7, records"));
        }
        assert_eq!(place(&reg, None, &rates, &[pt("none", None)], [2.0, 9.0], 1)[0].costs_at, None);
    }

    #[test]
    fn the_costs_come_from_the_table_at_the_largest_size_or_nearest_else_from_the_records() {
        let sc = |w: usize, h: usize, m: f64| SizeCosts {
            width: w,
            height: h,
            cells: w * h,
            map: Some(m),
            scan: Some(m / 1000.0),
            ac4: None,
        };
        let recs = vec![sc(7, 7, 1.0), sc(8, 7, 2.0)];
        let file = vec![sc(7, 7, 3.0), sc(8, 8, 4.0)];
        // 49 cells lie nearer 56 than 64 do; at 64 the table has the size itself.
        let c = pick_costs(&recs, &file, (56, 8, 7)).unwrap();
        assert_eq!((c.map, c.width, c.height, c.source.as_str()), (3.0, 7, 7, "core-rates file"));
        assert!(c.note.contains("nearest"), "{}", c.note);
        let c = pick_costs(&recs, &file, (64, 8, 8)).unwrap();
        assert_eq!((c.map, c.width, c.height), (4.0, 8, 8));
        // Equally near: the larger.
        let c = pick_costs(&recs, &[sc(7, 7, 3.0), sc(9, 7, 5.0)], (56, 8, 7)).unwrap();
        assert_eq!(c.map, 5.0);
        let c = pick_costs(&recs, &[], (56, 8, 7)).unwrap();
        assert_eq!((c.map, c.source.as_str()), (2.0, "records"));
        let c = pick_costs(&recs, &[], (64, 8, 8)).unwrap();
        assert_eq!((c.map, c.width), (2.0, 8));
        assert!(c.note.contains("largest size where both"), "{}", c.note);
        assert_eq!(pick_costs(&[], &[], (64, 8, 8)), None);
    }

    #[test]
    fn the_crossing_is_where_the_core_second_lines_meet() {
        // y = 1 + 0.5 x; c_map / c_scan = 1000: map cost 10^(4 + 0.5 x) vs 10^x: x* = 8.
        let (mut reg, costs) = line_and_costs();
        let c = crossing(&reg, &costs).unwrap();
        assert!((c.hardness.log10() - 8.0).abs() < 1e-9 && c.map_cheaper == "above", "{c:?}");
        // x* = 4 / 0.6 and 4 / 0.4 at the other two.
        assert!((c.ci[0].unwrap().log10() - 4.0 / 0.6).abs() < 1e-9 && (c.ci[1].unwrap().log10() - 10.0).abs() < 1e-9);
        // A replicate beyond b = 1 makes that end unbounded.
        reg.replicates[2] = [1.0, 1.2, 0.1];
        assert_eq!(crossing(&reg, &costs).unwrap().ci[1], None);
        // b's interval reaching 1: no crossing.
        reg.slope_ci = [0.4, 1.1];
        assert_eq!(crossing(&reg, &costs), None);
        // Placing a board at x = 8: the line's value, its costs, and an extrapolation.
        reg.slope_ci = [0.4, 0.6];
        let p = place(
            &reg,
            Some(&costs),
            &[],
            &[NamedPoint { name: "b".into(), scan_nodes_per_solution: 1e8, size: None, note: None }],
            [3.0, 7.0],
            1,
        );
        assert!((p[0].map_work.log10() - 5.0).abs() < 1e-9 && p[0].extrapolated);
        assert!((p[0].map_core_seconds.unwrap() / p[0].scan_core_seconds.unwrap() - 1.0).abs() < 1e-9);
    }
}
