//! The map against instance hardness: synthetic campaigns with a known exponent, fitted from
//! their records as the report does (`concur_lab::ladder::hardness`).
use concur_lab::ladder::choice::{self, ChoiceOptions, Family};
use concur_lab::ladder::curve::Shape;
use concur_lab::ladder::fit;
use concur_lab::ladder::hardness::{self, Inputs, Options};
use concur_lab::ladder::poisson_lognormal::{self as pln, Count};
use concur_lab::ladder::{Record, report};
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::path::PathBuf;

/// Core-seconds per unit of the synthetic machine: a map trial-iteration and a scan node.
const C_MAP: f64 = 1.0 / 65_000.0;
const C_SCAN: f64 = 1.0 / 4.0e7;
const C_AC4: f64 = 1.0 / 3.0e5;

/// A campaign's truth and design.
#[derive(Clone, Copy, Debug)]
struct Truth {
    /// `log10 W = a + b log10 H + e`, `e ~ N(0, s^2)`.
    a: f64,
    b: f64,
    s: f64,
    instances: usize,
    /// `log10 H` spread evenly over `[x0, x0 + decades]`.
    x0: f64,
    decades: f64,
    /// The map's stop: a target of solutions or a cap of trial-iterations, in runs of `chunk`.
    map_target: u64,
    map_cap: f64,
    chunk: f64,
    /// The scan's stop: a target of solutions (one per run) or a cap of nodes.
    scan_target: u64,
    scan_cap: f64,
    scan_run_cap: f64,
    /// A slope that changes at a hardness: `(x_k, b2)`, the line going on from `x_k` with
    /// slope `b2`.
    kink: Option<(f64, f64)>,
}

impl Default for Truth {
    /// Like the campaign `examples/ladder-hardness.toml`: 65 instances over 5 decades, the map
    /// in runs of 8 x 200,000 trial-iterations to 8 solutions or 1.6e7, the scan to 10
    /// solutions or 1e10 nodes (1e9 a run).
    fn default() -> Self {
        Truth {
            a: 2.1,
            b: 0.7,
            s: 0.3,
            instances: 65,
            x0: 3.0,
            decades: 5.0,
            map_target: 8,
            map_cap: 1.6e7,
            chunk: 1.6e6,
            scan_target: 10,
            scan_cap: 1e10,
            scan_run_cap: 1e9,
            kink: None,
        }
    }
}

fn record(instance: &str, cells: usize, label: &str, run: u64, work: f64, solutions: u64, rate_mode: bool) -> Record {
    let (w, h) = (cells / 7, 7);
    let (method, unit, cost) = match label {
        "rrr" => ("rrr", "iterations", C_MAP),
        "scan" => ("scan", "nodes", C_SCAN),
        _ => ("backtrack", "nodes", C_AC4),
    };
    Record {
        instance: instance.into(),
        width: w,
        height: h,
        colors: 3 + cells % 5,
        method: method.parse().unwrap(),
        label: label.into(),
        params: serde_json::json!({}),
        run,
        seed: run,
        backend: "cpu".into(),
        solved: solutions > 0,
        mechanism: (solutions > 0).then(|| method.into()),
        work: work.round() as u64,
        work_unit: unit.into(),
        wall_s: work.round() * cost,
        best_score: 0,
        max_score: 1,
        version: "0".into(),
        trace: Vec::new(),
        solutions: rate_mode.then_some(solutions),
        distinct_solutions: None,
        trials: None,
        device: None,
        ..Record::default()
    }
}

fn exp(rng: &mut Xoshiro256PlusPlus, mean: f64) -> f64 {
    -mean * (1.0 - rng.random::<f64>()).ln()
}

/// The records of one synthetic campaign: per instance, scan runs to a first solution each
/// (exponential nodes of mean `H`, censored at the run's cap) and map runs in rate mode
/// (Poisson solutions in each run's work, mean work per solution `W`), each method until its
/// target or its cap, as the ladder's per-instance stops do.
fn campaign(t: &Truth, seed: u64) -> Vec<Record> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut rs = Vec::new();
    for i in 0..t.instances {
        let x = t.x0 + t.decades * (i as f64 + rng.random::<f64>()) / t.instances as f64;
        let hard = 10f64.powf(x);
        let line = match t.kink {
            Some((xk, b2)) if x > xk => t.a + t.b * xk + b2 * (x - xk),
            _ => t.a + t.b * x,
        };
        let work = 10f64.powf(line + t.s * fit::normal(&mut rng));
        // Board sizes 35, 42, 49, 56 cells (only the costs and the figure's colours see them).
        let cells = 35 + 7 * (i % 4);
        let name = format!("i{i:03}");
        let (mut spent, mut found, mut run) = (0.0, 0, 0);
        while found < t.scan_target && spent < t.scan_cap {
            let n = exp(&mut rng, hard);
            let solved = n <= t.scan_run_cap;
            let w = n.min(t.scan_run_cap);
            rs.push(record(&name, cells, "scan", run, w.max(1.0), u64::from(solved), false));
            (spent, found, run) = (spent + w, found + u64::from(solved), run + 1);
        }
        let (mut spent, mut found, mut run) = (0.0, 0, 0);
        while found < t.map_target && spent < t.map_cap {
            let d = fit::poisson(&mut rng, t.chunk / work);
            rs.push(record(&name, cells, "rrr", run, t.chunk, d, true));
            (spent, found, run) = (spent + t.chunk, found + d, run + 1);
        }
        if i % 3 == 0 {
            // AC-4 on some instances, 20x the scan's nodes per solution.
            rs.push(record(&name, cells, "backtrack ac4", 0, exp(&mut rng, 20.0 * hard), 1, false));
        }
    }
    rs
}

fn fit_of(rs: &[Record], resamples: usize, seed: u64, censor_factor: f64) -> hardness::Hardness {
    let opt = Options { resamples, seed, censor_factor, simulations: 0, curve_resamples: 0 };
    hardness::analyse(rs, Inputs::default(), &opt).expect("map and scan on every instance")
}

#[test]
fn a_known_exponent_is_recovered() {
    let t = Truth::default();
    let h = fit_of(&campaign(&t, 1), 400, 1, fit::CENSOR_FACTOR);
    let s = &h.summary;
    let (b, [lo, hi]) = (s.exponent.unwrap(), s.exponent_ci.unwrap());
    assert!((b - t.b).abs() < 0.08, "b = {b} [{lo}, {hi}]");
    assert!(lo < b && b < hi && hi - lo < 0.3, "[{lo}, {hi}]");
    assert!((s.residual_spread.unwrap() - t.s).abs() < 0.1, "{s:?}");
    assert_eq!((s.instances, s.n + s.n_left_out), (65, 65));
    assert!(s.n_censored > 0, "the cap leaves some map points without a solution: {s:?}");
    assert!(s.reliability.unwrap() > 0.98);
    assert_eq!((s.failed_resamples, s.resamples), (0, 400));
    // The costs come from the records at the largest size (8x7, 56 cells).
    let c = s.costs.as_ref().unwrap();
    assert_eq!((c.width, c.height, c.source.as_str()), (8, 7, "records"));
    assert!((c.map / C_MAP - 1.0).abs() < 1e-3 && (c.scan / C_SCAN - 1.0).abs() < 1e-3, "{c:?}");
    // b < 1 with an interval below 1: the map is the cheaper above H*, where
    // log10 H* = (log10(c_map / c_scan) + a) / (1 - b).
    let x = s.crossing.as_ref().expect("b's interval lies below 1");
    let expect = ((C_MAP / C_SCAN).log10() + s.intercept.unwrap()) / (1.0 - b);
    assert!((x.hardness.log10() - expect).abs() < 1e-9 && x.map_cheaper == "above", "{x:?}");
    assert!(s.cheaper.as_ref().unwrap().contains("harder than H*"), "{:?}", s.cheaper);
}

#[test]
fn the_parts_of_a_campaign_are_fitted_apart_and_find_a_slope_that_steepens() {
    let part = |h: &hardness::Hardness, name: &str| {
        h.summary
            .subsets
            .iter()
            .find(|p| p.name == name)
            .unwrap_or_else(|| panic!("{name}: {:?}", h.summary.subsets))
            .clone()
    };
    // One exponent throughout: every part's interval holds it.
    let t = Truth { s: 0.2, ..Truth::default() };
    let h = fit_of(&campaign(&t, 3), 300, 3, fit::CENSOR_FACTOR);
    let names: Vec<&str> = h.summary.subsets.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["the easier half", "the harder half", "5x7 only", "6x7 only", "7x7 only", "8x7 only"]);
    // Six 95% intervals: all six cover the truth in about 74% of campaigns, five or more in 97%.
    let mut covered = 0;
    for p in &h.summary.subsets {
        let (b, [lo, hi]) = (p.exponent.unwrap(), p.exponent_ci.unwrap());
        covered += usize::from(lo <= t.b && t.b <= hi);
        assert!((b - t.b).abs() < 0.25, "{p:?}");
        assert!(p.n >= hardness::MIN_SUBSET && p.range[0] < p.range[1], "{p:?}");
    }
    assert!(covered >= 5, "{:?}", h.summary.subsets);
    let (e, d) = (part(&h, "the easier half"), part(&h, "the harder half"));
    assert_eq!(e.n + d.n, h.summary.n);
    assert!(e.range[1] <= d.range[0], "{e:?} {d:?}");
    // A slope of 0.4 that steepens to 1.3 at the middle: the whole line lies between, the
    // halves find each its own, and the harder half's interval excludes a crossing above.
    let t = Truth { b: 0.4, a: 1.3, s: 0.15, kink: Some((5.5, 1.3)), ..Truth::default() };
    let h = fit_of(&campaign(&t, 4), 300, 4, fit::CENSOR_FACTOR);
    let whole = h.summary.exponent.unwrap();
    let (e, d) = (part(&h, "the easier half"), part(&h, "the harder half"));
    let (be, bd) = (e.exponent.unwrap(), d.exponent.unwrap());
    assert!((be - 0.4).abs() < 0.15 && (bd - 1.3).abs() < 0.3, "easier {e:?} harder {d:?}");
    assert!(be < whole && whole < bd, "{be} {whole} {bd}");
    let md = hardness::markdown(&h);
    assert!(md.contains("**Does one exponent hold?**") && md.contains("| the harder half |"), "{md}");
    // The whole line's interval lies below 1 (a crossing above), the harder half's above 1:
    // the report says the crossing rests on the easier instances.
    assert!(h.summary.exponent_ci.unwrap()[1] < 1.0 && d.exponent_ci.unwrap()[0] > 1.0, "{:?} {d:?}", h.summary);
    assert!(md.contains("rests on the easier instances") && md.contains("its interval above 1"), "{md}");
    assert!(md.contains("grows faster than the scan's nodes") && !md.contains("or slower or faster"), "{md}");
}

/// Runs `campaigns` synthetic campaigns; the fraction whose 95% interval of b covers the truth,
/// and the mean of b.
fn coverage(t: &Truth, campaigns: u64, resamples: usize, censor_factor: f64) -> (f64, f64, f64) {
    let (mut covered, mut sum, mut censored) = (0, 0.0, 0.0);
    for c in 0..campaigns {
        let s = fit_of(&campaign(t, 1000 + c), resamples, c, censor_factor).summary;
        let [lo, hi] = s.exponent_ci.unwrap();
        covered += usize::from(lo <= t.b && t.b <= hi);
        sum += s.exponent.unwrap();
        censored += s.n_censored as f64 / s.n as f64;
    }
    let n = campaigns as f64;
    (covered as f64 / n, sum / n, censored / n)
}

#[test]
#[cfg_attr(not(full_tier), ignore = "full tier (CONCUR_TESTS=full)")]
fn the_exponents_interval_covers_the_truth_about_95_percent_of_the_time() {
    let (rate, mean, censored) = coverage(&Truth::default(), 200, 200, fit::CENSOR_FACTOR);
    println!("coverage {rate:.3}, mean b {mean:.4}, censored {censored:.3}");
    assert!((0.88..=0.99).contains(&rate), "coverage {rate}, mean b {mean}");
    assert!((mean - 0.7).abs() < 0.03, "mean b {mean}");
}

/// Nearly two instances in five without a map solution: the censored fit stays near the truth;
/// dropping the censored points, or censoring at the 95% bound `T / ln 20` instead of where the
/// likelihood of finding none has its step, pulls the exponent down.
#[test]
fn heavy_censoring_leaves_the_censored_fit_near_the_truth_and_biases_the_naive_one_down() {
    let t = Truth { a: 3.2, ..Truth::default() };
    let (mut tobit, mut bound, mut naive, mut frac) = (0.0, 0.0, 0.0, 0.0);
    let reps = 40;
    for r in 0..reps {
        let rs = campaign(&t, 500 + r);
        let h = fit_of(&rs, 0, r, fit::CENSOR_FACTOR);
        tobit += h.summary.exponent.unwrap();
        frac += h.summary.n_censored as f64 / h.summary.n as f64;
        bound += fit_of(&rs, 0, r, 1.0 / 20f64.ln()).summary.exponent.unwrap();
        let seen: Vec<fit::Point> = fit::points(&hardness::units(&h.instances), fit::CENSOR_FACTOR)
            .0
            .into_iter()
            .filter(|p| !p.censored)
            .collect();
        naive += fit::tobit(&seen).unwrap().slope;
    }
    let n = reps as f64;
    let (tobit, bound, naive, frac) = (tobit / n, bound / n, naive / n, frac / n);
    println!("censored {frac:.2}: censored fit {tobit:.3}, censored at T / ln 20 {bound:.3}, dropped {naive:.3}");
    assert!(frac > 0.35, "{frac}");
    assert!((tobit - t.b).abs() < 0.05, "censored fit {tobit}");
    assert!(naive < t.b - 0.1, "dropping the censored points: {naive}");
    assert!(bound < tobit, "censored at the 95% bound: {bound}");
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("concur-hardness-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn the_report_writes_the_section_the_figure_and_the_summary() {
    let dir = tmp("report");
    let t = Truth { instances: 12, ..Truth::default() };
    let rs = campaign(&t, 7);
    let lines: Vec<String> = rs.iter().map(|r| serde_json::to_string(r).unwrap()).collect();
    std::fs::write(dir.join("results.jsonl"), lines.join("\n") + "\n").unwrap();
    // Optional inputs: exact counts of three instances (one line incomplete), per-core rates
    // at 8x7, and two boards to place.
    let inp = dir.join(hardness::INPUTS_DIR);
    std::fs::create_dir_all(&inp).unwrap();
    std::fs::write(
        inp.join("counts.jsonl"),
        "{\"instance\": \"i000\", \"solutions\": 40, \"complete\": true}\n\
         {\"instance\": \"i001\", \"solutions\": 4, \"complete\": true}\n\
         {\"instance\": \"i002\", \"solutions\": 2, \"complete\": true}\n\
         {\"instance\": \"i003\", \"solutions\": 1, \"complete\": false}\n",
    )
    .unwrap();
    std::fs::write(
        inp.join("core-rates.jsonl"),
        "{\"puzzle\": \"set1-08x07\", \"method\": \"rrr\", \"rate\": 50000}\n\
         {\"puzzle\": \"set1-08x07\", \"method\": \"scan\", \"rate\": 5e7}\n",
    )
    .unwrap();
    std::fs::write(
        inp.join("points.json"),
        r#"[{"name": "set 1 8x8", "scan_nodes_per_solution": 6.4e10}, {"name": "easy", "scan_nodes_per_solution": 1e5}]"#,
    )
    .unwrap();
    let out = dir.join("rep");
    let w = report::write(std::slice::from_ref(&dir), &out).unwrap();
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("## Work per solution against hardness"), "{md}");
    assert!(md.contains("| i000 | 7x7 (49) |") || md.contains("| i000 | 5x7 (35) |"), "{md}");
    assert!(md.contains("**exponent b = "), "{md}");
    assert!(md.contains("**Which curve?**") && md.contains("| Poisson-lognormal | line |"), "{md}");
    assert!(md.contains("![work per solution against hardness](hardness.svg)"), "{md}");
    assert!(md.contains("core-rates file, the campaign's largest size, 8x7"), "{md}");
    assert!(md.contains("| set 1 8x8 | 6.40e10 |") && md.contains("| yes |"), "{md}");
    assert!(md.contains("**Against the number of solutions.** Over the 3 instances"), "{md}");
    let svg = std::fs::read_to_string(out.join("hardness.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("equal core-seconds") && svg.contains("95% band"), "{svg}");
    assert!(w.files.iter().any(|f| f.ends_with("hardness.svg")));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let f = &summary["hardness_fit"];
    assert!(f["exponent"].as_f64().is_some() && f["exponent_ci"].as_array().unwrap().len() == 2, "{f}");
    assert_eq!(f["n"].as_u64().unwrap() + f["n_left_out"].as_u64().unwrap(), 12);
    assert!(f["intercept"].is_number() && f["residual_spread"].is_number() && f["n_censored"].is_number());
    assert_eq!(f["costs"]["map"].as_f64(), Some(1.0 / 50_000.0));
    assert_eq!(f["costs"]["source"], "core-rates file");
    assert!(f.get("crossing").is_some(), "present, null or not: {f}");
    let curve = &f["curve"];
    assert!(["line", "broken_stick"].contains(&curve["chosen"].as_str().unwrap()), "{curve}");
    assert!(curve["rule"].as_str().unwrap().contains("below 0.05") && curve["fit"]["sigma"].is_number(), "{curve}");
    assert_eq!(curve["poisson_lognormal"]["simulations"].as_u64(), Some(199));
    assert_eq!(f["points"].as_array().unwrap().len(), 2);
    // The boards placed on the chosen curve's segment at the hard end, at its slope above the
    // knot (the line's slope when the line is chosen).
    let on_curve = curve["points"].as_array().unwrap();
    assert_eq!(on_curve.len(), 2, "{curve}");
    assert!(md.contains("on the chosen curve's segment at the hard end"), "{md}");
    let slope = curve["fit"]["coef"][1].as_f64().unwrap() + curve["fit"]["coef"][2].as_f64().unwrap();
    let work = |p: &serde_json::Value| p["map_work"].as_f64().unwrap().log10();
    let x = |p: &serde_json::Value| p["scan_nodes_per_solution"].as_f64().unwrap().log10();
    if curve["chosen"] == "broken_stick" {
        let rise = (work(&on_curve[0]) - work(&on_curve[1])) / (x(&on_curve[0]) - x(&on_curve[1]));
        assert!(
            (rise - slope).abs() < 1e-9 || x(&on_curve[1]) < curve["fit"]["knot"].as_f64().unwrap(),
            "{rise} {slope}"
        );
    }
    // Twelve instances: two halves of six, each fitted; the boards placed on the harder half's
    // line too, and only there.
    let parts = f["subsets"].as_array().unwrap();
    let part = |n: &str| parts.iter().find(|p| p["name"] == n).unwrap_or_else(|| panic!("{n}: {parts:?}"));
    assert_eq!(part("the easier half")["n"].as_u64().unwrap() + part("the harder half")["n"].as_u64().unwrap(), 12);
    assert_eq!(part("the harder half")["points"].as_array().map(Vec::len), Some(2));
    assert!(part("the easier half").get("points").is_none());
    assert!(md.contains("**Does one exponent hold?**") && md.contains("on the harder half's line"), "{md}");
    assert_eq!(f["density"]["n"], 3);
    assert_eq!(summary["hardness_instances"].as_array().unwrap().len(), 12);
}

#[test]
fn without_a_map_and_the_scan_on_three_instances_the_report_has_no_section() {
    let dir = tmp("none");
    let t = Truth { instances: 2, ..Truth::default() };
    let rs = campaign(&t, 3);
    let lines: Vec<String> = rs.iter().map(|r| serde_json::to_string(r).unwrap()).collect();
    std::fs::write(dir.join("results.jsonl"), lines.join("\n") + "\n").unwrap();
    let out = dir.join("rep");
    report::write(std::slice::from_ref(&dir), &out).unwrap();
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(!md.contains("against hardness"), "{md}");
    assert!(!out.join("hardness.svg").exists());
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert!(summary.get("hardness_fit").is_none() && summary.get("hardness_instances").is_none(), "{summary}");
    // A bad optional input is an error that names its file.
    let inp = dir.join(hardness::INPUTS_DIR);
    std::fs::create_dir_all(&inp).unwrap();
    std::fs::write(inp.join("points.json"), "{").unwrap();
    let e = report::write(std::slice::from_ref(&dir), &out).unwrap_err().to_string();
    assert!(e.contains("points.json"), "{e}");
}

/// The coverage and the bias for both censoring points, at the campaign's design and with
/// heavy censoring (a measurement harness; prints its numbers).
#[test]
#[ignore = "measurement: cargo test --release --test main -- --ignored hardness::censoring_points --nocapture"]
fn censoring_points() {
    for (name, t) in [
        ("campaign", Truth::default()),
        ("heavy", Truth { a: 3.2, ..Truth::default() }),
        ("heavier", Truth { a: 3.5, ..Truth::default() }),
    ] {
        for (cname, f) in [("T e^gamma", fit::CENSOR_FACTOR), ("T / ln 20", 1.0 / 20f64.ln())] {
            let (rate, mean, cens) = coverage(&t, 400, 300, f);
            println!("{name}: censored {cens:.3}; censoring at {cname}: coverage {rate:.3}, mean b {mean:.4}");
        }
    }
}

/// A broken-stick truth and a campaign's design, for the curves' tests: the map's mean work per
/// solution `c` with `log10 c = at_knot + below (x - knot)` below the knot and `at_knot + above
/// (x - knot)` above it, plus `N(0, s^2)` scatter; hardness `x` evenly spread over `[x0, x1]`
/// (known exactly); the map run in chunks until `target` solutions or `cap` trial-iterations, its
/// solutions in a chunk Poisson.
#[derive(Clone, Copy, Debug)]
struct Stick {
    at_knot: f64,
    knot: f64,
    below: f64,
    above: f64,
    s: f64,
    instances: usize,
    x0: f64,
    x1: f64,
    target: u64,
    cap: f64,
    chunk: f64,
}

impl Default for Stick {
    /// Near what the hardness campaign shows: a knot at 10^5.6 scan nodes per solution, slopes
    /// 0.46 and 1.02, over 65 instances from 10^2.5 to 10^9, the map to 8 solutions or 1.6e7.
    fn default() -> Self {
        Stick {
            at_knot: 5.0,
            knot: 5.6,
            below: 0.46,
            above: 1.02,
            s: 0.35,
            instances: 65,
            x0: 2.5,
            x1: 9.0,
            target: 8,
            cap: 1.6e7,
            chunk: 1.6e6,
        }
    }
}

fn stick_counts(t: &Stick, seed: u64) -> Vec<Count> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    (0..t.instances)
        .map(|i| {
            let x = t.x0 + (t.x1 - t.x0) * (i as f64 + rng.random::<f64>()) / t.instances as f64;
            let slope = if x > t.knot { t.above } else { t.below };
            let c = 10f64.powf(t.at_knot + slope * (x - t.knot) + t.s * fit::normal(&mut rng));
            let (mut work, mut found) = (0.0, 0);
            while found < t.target && work < t.cap {
                found += fit::poisson(&mut rng, t.chunk / c);
                work += t.chunk;
            }
            Count { x, work, solutions: found }
        })
        .collect()
}

#[test]
fn a_known_knot_and_both_slopes_are_recovered_by_both_fits() {
    let t = Stick { instances: 400, ..Stick::default() };
    let counts = stick_counts(&t, 21);
    let zeros = counts.iter().filter(|c| c.solutions == 0).count();
    assert!(zeros >= 5, "some instances without a map solution: {zeros}");
    for family in [Family::PoissonLognormal, Family::Censored { factor: fit::CENSOR_FACTOR }] {
        let b = family.fit(&counts, Shape::BrokenStick).unwrap();
        let (k, lo, hi) = (b.knot.unwrap(), b.coef[1], b.slope_above());
        assert!((k - t.knot).abs() < 0.4, "{family:?}: {b:?}");
        assert!((lo - t.below).abs() < 0.1 && (hi - t.above).abs() < 0.15, "{family:?}: {b:?}");
        let line = family.fit(&counts, Shape::Line).unwrap();
        assert!(b.log_likelihood > line.log_likelihood + 10.0, "{family:?}: {b:?} {line:?}");
    }
    let b = pln::fit(&counts, Shape::BrokenStick).unwrap();
    assert!((b.sigma - t.s).abs() < 0.06, "{b:?}");
    // On the campaign's own design, the test rejects the line, the rule chooses the broken
    // stick, and the intervals cover the truth.
    let counts = stick_counts(&Stick::default(), 22);
    let started = std::time::Instant::now();
    let c = choice::choose(&counts, &ChoiceOptions { simulations: 39, resamples: 99, seed: 4, ..Default::default() })
        .unwrap();
    println!("choose, 39 simulations and 99 resamples: {:.1} s", started.elapsed().as_secs_f64());
    assert_eq!(c.chosen, Shape::BrokenStick, "{:?}", c.poisson_lognormal);
    assert!(c.poisson_lognormal.as_ref().unwrap().p_broken_stick.unwrap() <= 0.05);
    let [lo, hi] = c.intervals.slope_above.unwrap();
    assert!(lo < t.above && t.above < hi && hi - lo < 2.5, "[{lo}, {hi}]");
    let [lo, hi] = c.intervals.knot.unwrap();
    assert!(lo < t.knot && t.knot < hi, "[{lo}, {hi}]");
}

/// Over `campaigns` synthetic campaigns of `t`, the fraction whose 95% bootstrap interval of the
/// slope above the knot covers the truth, the mean slope, and the median width.
fn stick_coverage(t: &Stick, family: Family, campaigns: u64, resamples: usize) -> (f64, f64, f64) {
    let (mut covered, mut sum, mut widths, mut n) = (0, 0.0, Vec::new(), 0);
    for c in 0..campaigns {
        let counts = stick_counts(t, 7000 + c);
        let Ok(f) = family.fit(&counts, Shape::BrokenStick) else { continue };
        let iv = choice::bootstrap(family, &counts, Shape::BrokenStick, resamples, c);
        let [lo, hi] = iv.slope_above.expect("resamples");
        covered += usize::from(lo <= t.above && t.above <= hi);
        sum += f.slope_above();
        widths.push(hi - lo);
        n += 1;
    }
    assert!(n as u64 >= campaigns * 9 / 10, "{n} fits of {campaigns}");
    widths.sort_by(f64::total_cmp);
    let n = n as f64;
    (covered as f64 / n, sum / n, widths[widths.len() / 2])
}

/// The Poisson-lognormal fit, which the report's rule reads, on fewer campaigns than the
/// censored one below (its fits cost more); the full study of both, 200 campaigns each, is
/// `coverage_study` (results in `benches/results/hardness-coverage/`).
#[test]
#[cfg_attr(not(full_tier), ignore = "full tier (CONCUR_TESTS=full)")]
fn the_poisson_lognormal_slope_above_the_knot_is_covered() {
    let t = Stick::default();
    let started = std::time::Instant::now();
    let (rate, mean, width) = stick_coverage(&t, Family::PoissonLognormal, 40, 99);
    println!(
        "Poisson-lognormal: coverage {rate:.3}, mean slope above {mean:.3}, median width {width:.3} ({:.1} s)",
        started.elapsed().as_secs_f64()
    );
    assert!((0.85..=1.0).contains(&rate), "coverage {rate}, mean {mean}, width {width}");
    assert!((mean - t.above).abs() < 0.15, "mean {mean}");
}

/// The coverage study: 200 campaigns of the default design per family, 199 resamples each,
/// one JSON line per family appended to `benches/results/hardness-coverage/coverage.jsonl`.
#[test]
#[ignore = "measurement: cargo test --release --test main -- --ignored hardness::coverage_study --nocapture"]
fn coverage_study() {
    use std::io::Write;
    let t = Stick::default();
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join("benches/results/hardness-coverage");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, family) in
        [("poisson-lognormal", Family::PoissonLognormal), ("censored", Family::Censored { factor: fit::CENSOR_FACTOR })]
    {
        let started = std::time::Instant::now();
        let (campaigns, resamples) = (200, 199);
        let (rate, mean, width) = stick_coverage(&t, family, campaigns, resamples);
        let line = serde_json::json!({
            "family": name,
            "campaigns": campaigns,
            "resamples": resamples,
            "truth": {"knot": t.knot, "below": t.below, "above": t.above, "at_knot": t.at_knot, "s": t.s,
                      "instances": t.instances, "x": [t.x0, t.x1], "target": t.target, "cap": t.cap, "chunk": t.chunk},
            "coverage_slope_above": rate,
            "mean_slope_above": mean,
            "median_width": width,
            "seconds": started.elapsed().as_secs_f64(),
            "version": env!("CARGO_PKG_VERSION"),
        });
        println!("{line}");
        let mut f = std::fs::OpenOptions::new().create(true).append(true).open(dir.join("coverage.jsonl")).unwrap();
        writeln!(f, "{line}").unwrap();
    }
}

#[test]
#[cfg_attr(not(full_tier), ignore = "full tier (CONCUR_TESTS=full)")]
fn the_slope_above_the_knot_is_covered_about_95_percent_of_the_time() {
    let t = Stick::default();
    let started = std::time::Instant::now();
    let (rate, mean, width) = stick_coverage(&t, Family::Censored { factor: fit::CENSOR_FACTOR }, 200, 199);
    println!(
        "censored: coverage {rate:.3}, mean slope above {mean:.3}, median width {width:.3} ({:.1} s)",
        started.elapsed().as_secs_f64()
    );
    assert!((0.91..=0.99).contains(&rate), "coverage {rate}, mean {mean}, width {width}");
    assert!((mean - t.above).abs() < 0.1, "mean {mean}");
}
