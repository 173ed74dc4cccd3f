//! The ladder: lines written, resume after a crash, shards, and the report reading its own output.
use concur::cancel::Cancel;
use concur_lab::ladder::{self, Record, Shard, report};
use std::path::{Path, PathBuf};

const CONFIG: &str = r#"
runs = 3
seed = 5

[[instances]]
generate = { width = 3, height = 3, seed = 1 }

[[instances]]
generate = { width = 4, height = 4, seed = 2 }

[[methods]]
method = "rrr"
max_iters = 20000

[[methods]]
method = "backtrack"
label = "bt-ac3"
ac = "ac3"
max_nodes = 100000
"#;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("concur-ladder-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Records without their timings and provenance, sorted: what must agree between runs.
fn canon(mut v: Vec<Record>) -> Vec<Record> {
    for r in &mut v {
        r.wall_s = 0.0;
        r.provenance = None;
        r.trace.iter_mut().for_each(|t| t.0 = 0.0);
    }
    v.sort_by_key(|r| r.key());
    v
}

/// A fresh run of the whole of `cfg` into `out` (no shard, no resume, no part), uncancelled,
/// puzzles from the working directory.
fn fresh(cfg: &ladder::Config, out: &Path) -> concur::Result<Vec<Record>> {
    ladder::run(
        cfg,
        Path::new("."),
        out,
        ladder::Where { shard: None, resume: false, part: &ladder::Part::default(), wait_lock: None },
        &Cancel::new(),
        |_, _| {},
    )
}

fn run(dir: &Path, shard: Option<Shard>, resume: bool) -> Vec<Record> {
    let cfg = ladder::parse_config(CONFIG).unwrap();
    ladder::run(
        &cfg,
        Path::new("."),
        dir,
        ladder::Where { shard, resume, part: &ladder::Part::default(), wait_lock: None },
        &Cancel::new(),
        |_, _| {},
    )
    .unwrap()
}

#[test]
fn a_tiny_ladder_writes_one_line_per_run() {
    let dir = tmp("tiny");
    let recs = run(&dir, None, false);
    assert_eq!(recs.len(), 2 * 2 * 3);
    let on_file = ladder::read_records(&ladder::results_path(&dir, None)).unwrap();
    assert_eq!(canon(on_file), canon(recs.clone()));
    for r in &recs {
        assert!(r.solved, "{r:?}");
        assert_eq!(r.best_score, r.max_score);
        assert_eq!(r.backend, "cpu");
        assert!(["iterations", "nodes"].contains(&r.work_unit.as_str()));
    }
    // Running again without --resume refuses to touch the file.
    let cfg = ladder::parse_config(CONFIG).unwrap();
    assert!(fresh(&cfg, &dir).is_err());
    // A shard built by hand outside 1 <= K <= N is refused before anything runs.
    for shard in [Shard { k: 0, n: 0 }, Shard { k: 3, n: 2 }] {
        let at = ladder::Where { shard: Some(shard), resume: true, part: &ladder::Part::default(), wait_lock: None };
        let err = ladder::run(&cfg, Path::new("."), &dir, at, &Cancel::new(), |_, _| {}).unwrap_err();
        assert!(matches!(err, concur::Error::Config { .. }), "{err}");
    }
}

#[test]
fn a_request_is_checked_before_any_run_and_runs_as_asked() {
    let dir = tmp("request");
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("ladder.toml");
    std::fs::write(&config, CONFIG).unwrap();
    let out = dir.join("out");
    let request = ladder::Request { config: config.clone(), out: out.clone(), ..Default::default() };
    let refused = |r: ladder::Request| r.check().map(|_| ()).unwrap_err().to_string();
    let deadline = ladder::Request { deadline: Some(f64::NAN), ..request.clone() };
    assert_eq!(refused(deadline), "--deadline NaN: need a positive number of seconds");
    assert_eq!(refused(ladder::Request { threads: Some(0), ..request.clone() }), "--threads must be at least 1");
    let many = concur::limits::cores() + 1;
    assert!(
        refused(ladder::Request { threads: Some(many), ..request.clone() }).starts_with(&format!("--threads {many} "))
    );
    let missing = ladder::Request { config: dir.join("none.toml"), ..request.clone() };
    assert_eq!(refused(missing), format!("cannot read {}", dir.join("none.toml").display()));
    assert!(!out.exists(), "a refused request made its results folder");
    // A checked request runs the part it asked for, on its threads, into its folder.
    let ladder =
        ladder::Request { methods: vec!["bt-ac3".into()], runs: Some(1), threads: Some(1), ..request }.check().unwrap();
    assert_eq!(ladder.part.methods, ["bt-ac3"]);
    let recs = ladder.run(&Cancel::new(), |_, _| {}).unwrap();
    assert_eq!(recs.len(), 2, "one run of one method on each instance");
    assert!(recs.iter().all(|r| r.label == "bt-ac3" && r.run == 0));
    assert_eq!(ladder::read_records(&ladder.results_path()).unwrap().len(), 2);
    let line = recs[0].to_string();
    assert!(line.starts_with(&format!("{} bt-ac3 run 0: solved ", recs[0].instance)) && line.ends_with(" s"), "{line}");
}

#[test]
fn a_crashed_ladder_resumes_to_the_same_union() {
    let full_dir = tmp("full");
    let full = run(&full_dir, None, false);
    let dir = tmp("crashed");
    std::fs::create_dir_all(&dir).unwrap();
    // Simulate a crash: five finished lines, then half of the sixth.
    let text = std::fs::read_to_string(ladder::results_path(&full_dir, None)).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut partial = lines[..5].join("\n") + "\n";
    partial.push_str(&lines[5][..lines[5].len() / 2]);
    std::fs::write(ladder::results_path(&dir, None), partial).unwrap();
    let added = run(&dir, None, true);
    assert_eq!(added.len(), full.len() - 5);
    let on_file = ladder::read_records(&ladder::results_path(&dir, None)).unwrap();
    assert_eq!(canon(on_file), canon(full));
    // Resuming a finished ladder does nothing.
    assert!(run(&dir, None, true).is_empty());
}

#[test]
fn shards_are_disjoint_and_their_union_is_the_whole() {
    let whole = run(&tmp("whole"), None, false);
    let a = run(&tmp("s1"), Some("1/2".parse().unwrap()), false);
    let b = run(&tmp("s2"), Some("2/2".parse().unwrap()), false);
    let ka: std::collections::HashSet<_> = a.iter().map(Record::key).collect();
    assert!(b.iter().all(|r| !ka.contains(&r.key())), "shards overlap");
    assert_eq!(canon([a, b].concat()), canon(whole));
    assert!("0/2".parse::<Shard>().is_err() && "3/2".parse::<Shard>().is_err() && "x".parse::<Shard>().is_err());
}

#[test]
fn a_part_of_the_methods_or_runs_goes_first_and_resume_runs_the_rest() {
    let full = run(&tmp("whole3"), None, false);
    let dir = tmp("methods-part");
    let cfg = ladder::parse_config(CONFIG).unwrap();
    let only = |m: &str| ladder::Part { methods: vec![m.to_string()], ..Default::default() };
    let bt = ladder::run(
        &cfg,
        Path::new("."),
        &dir,
        ladder::Where { shard: None, resume: false, part: &only("bt-ac3"), wait_lock: None },
        &Cancel::new(),
        |_, _| {},
    )
    .unwrap();
    assert_eq!(bt.len(), 2 * 3);
    assert!(bt.iter().all(|r| r.label == "bt-ac3"));
    // A label that no method has is an error, and writes nothing.
    let err = ladder::run(
        &cfg,
        Path::new("."),
        &dir,
        ladder::Where { shard: None, resume: true, part: &only("bt-ac4"), wait_lock: None },
        &Cancel::new(),
        |_, _| {},
    )
    .unwrap_err();
    assert!(err.to_string().contains("bt-ac4") && err.to_string().contains("rrr"), "{err}");
    // A shallow pass: the first run of each method and instance, then the rest.
    let shallow = ladder::Part { runs: Some(1), ..Default::default() };
    let first = ladder::run(
        &cfg,
        Path::new("."),
        &dir,
        ladder::Where { shard: None, resume: true, part: &shallow, wait_lock: None },
        &Cancel::new(),
        |_, _| {},
    )
    .unwrap();
    assert!(first.iter().all(|r| r.label == "rrr" && r.run == 0) && first.len() == 2, "{first:?}");
    let rest = run(&dir, None, true);
    assert!(rest.iter().all(|r| r.label == "rrr" && r.run > 0) && rest.len() == 2 * 2);
    assert_eq!(canon(report::merge(std::slice::from_ref(&dir)).unwrap()), canon(full));
}

#[test]
fn shards_resume_a_ladder_begun_whole_without_running_a_run_twice() {
    let full = run(&tmp("whole2"), None, false);
    let dir = tmp("begun-whole");
    let cfg = ladder::parse_config(CONFIG).unwrap();
    // A part: only the 3x3 instance, unsharded.
    let part = ladder::run(
        &cfg,
        Path::new("."),
        &dir,
        ladder::Where {
            shard: None,
            resume: false,
            part: &ladder::Part { max_cells: Some(9), ..Default::default() },
            wait_lock: None,
        },
        &Cancel::new(),
        |_, _| {},
    )
    .unwrap();
    assert_eq!(part.len(), 2 * 3);
    assert!(part.iter().all(|r| (r.width, r.height) == (3, 3)));
    // The rest in two shards: each skips what any file in the folder holds.
    let a = run(&dir, Some("1/2".parse().unwrap()), true);
    let b = run(&dir, Some("2/2".parse().unwrap()), true);
    assert_eq!(a.len() + b.len(), full.len() - part.len());
    assert!([&a, &b].iter().all(|v| v.iter().all(|r| (r.width, r.height) == (4, 4))));
    let merged = report::merge(std::slice::from_ref(&dir)).unwrap();
    assert_eq!(merged.len(), full.len(), "a run is missing or on file twice");
    assert_eq!(canon(merged), canon(full));
    assert!(run(&dir, Some("1/2".parse().unwrap()), true).is_empty());
}

#[test]
fn methods_can_stop_at_a_size_and_budgets_can_set_their_runs() {
    let text = CONFIG.replacen("max_iters = 20000", "max_iters = 20000\nmax_cells = 9", 1)
        + "\n[[budgets]]\nmax_cells = 9\ntime_limit = 5\n\n[[budgets]]\nmax_cells = 16\ntime_limit = 5\nruns = 2\n";
    let cfg = ladder::parse_config(&text).unwrap();
    let recs = fresh(&cfg, &tmp("plan")).unwrap();
    let count = |label: &str, w: usize| recs.iter().filter(|r| r.label == label && r.width == w).count();
    // rrr stops at 3x3 (9 cells); the backtracker runs 3 times at 3x3 and the budget's 2 at 4x4.
    assert_eq!((count("rrr", 3), count("rrr", 4)), (3, 0));
    assert_eq!((count("bt-ac3", 3), count("bt-ac3", 4)), (3, 2));
    assert!(recs.iter().all(|r| r.params.get("max_cells").is_none()), "max_cells is not a run parameter");
    let bad = text.replacen("runs = 2", "runs = 0", 1);
    assert!(ladder::parse_config(&bad).is_err());
}

#[test]
fn runs_start_with_the_smallest_board() {
    // The 4x4 instance listed first still runs after the 3x3 one (one worker: plan order).
    let cfg = ladder::parse_config(
        &CONFIG.replacen("width = 3, height = 3, seed = 1", "width = 4, height = 4, seed = 3", 1).replacen(
            "width = 4, height = 4, seed = 2",
            "width = 3, height = 3, seed = 2",
            1,
        ),
    )
    .unwrap();
    let dir = tmp("order");
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let recs = pool.install(|| fresh(&cfg, &dir).unwrap());
    let on_file = ladder::read_records(&ladder::results_path(&dir, None)).unwrap();
    let sizes: Vec<usize> = on_file.iter().map(|r| r.width).collect();
    assert_eq!(sizes, [vec![3; 6], vec![4; 6]].concat(), "{sizes:?}");
    assert_eq!(recs.len(), 12);
}

#[test]
fn the_report_reads_its_own_output() {
    let dir = tmp("report");
    let recs = run(&dir, None, false);
    let out = dir.join("rep");
    let w = report::write(std::slice::from_ref(&dir), &out).unwrap();
    assert_eq!(w.records, recs.len());
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("| rrr | 4x4 | 3 | 3/3 = 1.00 ") && md.contains("| bt-ac3 | 3x3 | 3 | 3/3 = 1.00 "), "{md}");
    // All solved: every Kaplan-Meier median exists and both methods get fits of seconds and work.
    assert!(w.rows.iter().all(|r| r.seconds.median().is_some() && r.work.median().is_some()));
    assert_eq!(w.fits.len(), 4);
    for f in ["work.svg", "seconds.svg", "rtd-3x3.svg", "rtd-4x4.svg"] {
        let svg = std::fs::read_to_string(out.join(f)).unwrap();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    }
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["records"], recs.len());
    assert!(summary["rows"][0]["seconds"]["median_ci"].is_array(), "{summary}");
    // Merging the same folder twice changes nothing; the report's own JSON is not a result file.
    let again = report::write(&[dir.clone(), dir.join("results.jsonl")], &dir.join("rep2")).unwrap();
    assert_eq!(again.records, recs.len());
    assert_eq!(again.rows.len(), w.rows.len());
}

/// The shipped ladders use the row-scan search as the tree-search control and keep the AC-4
/// backtracker as the second control; a scan run is one thread, verified and reproducible.
#[test]
fn the_example_ladders_use_scan_and_ac4_as_controls() {
    // Every example config parses.
    for e in std::fs::read_dir(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join("examples")).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "toml") {
            ladder::parse_config(&std::fs::read_to_string(&path).unwrap()).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        }
    }
    for name in ["ladder-small.toml", "ladder-set1.toml", "ladder-answer.toml", "campaign-8x8.toml"] {
        let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join("examples").join(name);
        let cfg = ladder::parse_config(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let methods: Vec<_> = cfg.methods.iter().map(|m| &m.spec.method).collect();
        assert!(methods.iter().any(|m| m.name() == concur::MethodName::Scan), "{name}: {methods:?}");
        assert!(
            methods
                .iter()
                .any(|m| matches!(m, concur::Method::Backtrack(o) if o.ac == concur::verify::Consistency::Ac4)),
            "{name}: {methods:?}"
        );
    }
    let cfg = ladder::parse_config(
        "runs = 2\nseed = 3\n[[instances]]\ngenerate = { width = 5, height = 4, seed = 7 }\n[[methods]]\nmethod = \"scan\"\nmax_nodes = 100000000\n",
    )
    .unwrap();
    let dir = tmp("scan");
    let a = fresh(&cfg, &dir).unwrap();
    let dir2 = tmp("scan2");
    let b = fresh(&cfg, &dir2).unwrap();
    assert_eq!(a.len(), 2);
    assert!(a.iter().all(|r| r.solved && r.method == concur::MethodName::Scan && r.work > 0), "{a:?}");
    assert_eq!(canon(a), canon(b));
}

/// Budgets that grow with the board replace the methods' time limits by size, and the runs'
/// records carry the limit they ran under (the report censors at it).
#[test]
fn budgets_set_the_time_limit_by_board_size() {
    let cfg = ladder::parse_config(
        "runs = 1\nseed = 1\n[[instances]]\ngenerate = { width = 3, height = 3, seed = 1 }\n\
         [[instances]]\ngenerate = { width = 5, height = 4, seed = 2 }\n\
         [[instances]]\ngenerate = { width = 6, height = 6, seed = 3 }\n\
         [[methods]]\nmethod = \"scan\"\ntime_limit = 7\n\
         [[budgets]]\nmax_cells = 9\ntime_limit = 2\n[[budgets]]\nmax_cells = 20\ntime_limit = 3\n",
    )
    .unwrap();
    let m = &cfg.methods[0];
    assert_eq!(cfg.method_for(m, 9).spec.run.time_limit, Some(2.0));
    assert_eq!(cfg.method_for(m, 16).spec.run.time_limit, Some(3.0));
    assert_eq!(
        cfg.method_for(m, 36).spec.run.time_limit,
        Some(7.0),
        "past the last budget the method's own limit holds"
    );
    let dir = tmp("budgets");
    let recs = fresh(&cfg, &dir).unwrap();
    let mut limits: Vec<(usize, f64)> =
        recs.iter().map(|r| (r.width * r.height, r.params["time_limit"].as_f64().unwrap())).collect();
    limits.sort_by_key(|l| l.0);
    assert_eq!(limits, vec![(9, 2.0), (20, 3.0), (36, 7.0)]);
    assert!(
        ladder::parse_config(
            "[[instances]]\npath = \"x\"\n[[methods]]\nmethod = \"scan\"\n[[budgets]]\nmax_cells = 9\ntime_limit = 0\n"
        )
        .is_err()
    );
}

/// A campaign: many planned runs of a small puzzle, stopped by its rules.
fn campaign(extra: &str) -> ladder::Config {
    ladder::parse_config(&format!(
        r#"
runs = 20
seed = 9
{extra}

[[instances]]
generate = {{ width = 3, height = 3, seed = 1 }}

[[instances]]
generate = {{ width = 3, height = 3, seed = 2 }}

[[methods]]
method = "rrr"
time_limit = 5
"#
    ))
    .unwrap()
}

fn one_thread<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap().install(f)
}

#[test]
fn a_campaign_stops_a_group_at_its_target_pooled_over_the_sizes_instances() {
    let cfg = campaign("[[stops]]\nmethods = [\"rrr\"]\ncells = [9]\ntarget_solutions = 3");
    let dir = tmp("stop-target");
    let recs = one_thread(|| fresh(&cfg, &dir)).unwrap();
    // Every 3x3 run solves: the third solution stops the group, whichever instance had it,
    // and the runs went run by run across the two instances.
    assert_eq!(recs.len(), 3, "{recs:?}");
    let order: Vec<(u64, &str)> = recs.iter().map(|r| (r.run, r.instance.as_str())).collect();
    assert_eq!(order, [(0, "generated:3x3:seed1"), (0, "generated:3x3:seed2"), (1, "generated:3x3:seed1")]);
    // Resuming a stopped group starts nothing.
    let more = one_thread(|| {
        ladder::run(
            &cfg,
            Path::new("."),
            &dir,
            ladder::Where { shard: None, resume: true, part: &ladder::Part::default(), wait_lock: None },
            &Cancel::new(),
            |_, _| {},
        )
    });
    assert!(more.unwrap().is_empty());
}

#[test]
fn generated_instances_with_their_own_colour_counts_have_names_of_their_own() {
    let cfg = ladder::parse_config(
        "[[instances]]\ngenerate = { width = 4, height = 4, seed = 1 }\n\
         [[instances]]\ngenerate = { width = 4, height = 4, seed = 1, inner_colors = 5 }\n\
         [[instances]]\ngenerate = { width = 4, height = 4, seed = 1, frame_colors = 2, inner_colors = 5 }\n\
         [[methods]]\nmethod = \"scan\"\n",
    )
    .unwrap();
    let names: Vec<String> =
        ladder::load_instances(&cfg, Path::new(".")).unwrap().into_iter().map(|i| i.name).collect();
    assert_eq!(names, ["generated:4x4:seed1", "generated:4x4:seed1:inner5", "generated:4x4:seed1:frame2:inner5"]);
}

#[test]
fn a_per_instance_stop_counts_each_instance_apart_and_caps_work() {
    // Every 3x3 run solves: a target of 2 per instance gives each of the two instances two
    // runs (a rule per size would stop both after two runs in all).
    let cfg = campaign("[[stops]]\nper_instance = true\ntarget_solutions = 2");
    let recs = one_thread(|| fresh(&cfg, &tmp("stop-instance"))).unwrap();
    let per = |name: &str| recs.iter().filter(|r| r.instance == name).count();
    assert_eq!((per("generated:3x3:seed1"), per("generated:3x3:seed2")), (2, 2), "{recs:?}");
    // A cap of work: one iteration is spent by the first run of each instance.
    let cfg = campaign("[[stops]]\nper_instance = true\ncap_work = 1");
    let recs = one_thread(|| fresh(&cfg, &tmp("stop-work"))).unwrap();
    assert_eq!(recs.len(), 2, "{recs:?}");
    assert!(
        ladder::parse_config(
            "runs = 1\n[[stops]]\ncap_work = 0\n[[instances]]\npath = \"x\"\n[[methods]]\nmethod = \"rrr\"\n"
        )
        .is_err()
    );
}

#[test]
fn a_campaign_counts_pooled_folders_and_its_cap_and_numbers_its_runs_past_them() {
    // Two solutions on file in an earlier ladder's folder count towards the target of 3.
    let earlier = tmp("pool-earlier");
    let cfg0 = campaign("");
    let part = ladder::Part { runs: Some(1), ..Default::default() };
    let first = ladder::run(
        &cfg0,
        Path::new("."),
        &earlier,
        ladder::Where { shard: None, resume: false, part: &part, wait_lock: None },
        &Cancel::new(),
        |_, _| {},
    )
    .unwrap();
    assert_eq!(first.len(), 2);
    let pool =
        format!("pool = [{:?}]\nfirst_run = 1000\n[[stops]]\ntarget_solutions = 3", earlier.display().to_string());
    let cfg = campaign(&pool);
    let dir = tmp("pool-campaign");
    let recs = one_thread(|| fresh(&cfg, &dir)).unwrap();
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].run, 1000, "campaign runs are numbered past the pooled ladder's");
    assert_ne!(recs[0].seed, first[0].seed);
    // The merged report keeps both without a clash.
    assert_eq!(report::merge(&[earlier.clone(), dir.clone()]).unwrap().len(), 3);
    // A cap of core-hours: the first run spends more than a nanosecond-hour.
    let cfg = campaign("[[stops]]\ncap_core_hours = 1e-12");
    let capped = one_thread(|| fresh(&cfg, &tmp("cap"))).unwrap();
    assert_eq!(capped.len(), 1);
    // Bad rules are refused.
    for bad in ["[[stops]]\ntarget_solutions = 0", "[[stops]]\ncap_core_hours = -1", "[[stops]]\nmethods = [\"x\"]"] {
        let text = format!("runs = 1\n{bad}\n[[instances]]\npath = \"x\"\n[[methods]]\nmethod = \"rrr\"\n");
        assert!(ladder::parse_config(&text).is_err(), "{bad}");
    }
}

#[test]
fn a_deadline_cuts_runs_to_end_by_it_and_starts_none_after_it() {
    let cfg = campaign("");
    let past = ladder::Part { deadline: Some(std::time::Instant::now()), ..Default::default() };
    assert!(
        ladder::run(
            &cfg,
            Path::new("."),
            &tmp("deadline-past"),
            ladder::Where { shard: None, resume: false, part: &past, wait_lock: None },
            &Cancel::new(),
            |_, _| {}
        )
        .unwrap()
        .is_empty()
    );
    // 90 s left and a budget of 5 s: the runs keep their budget.
    let soon = ladder::Part {
        deadline: Some(std::time::Instant::now() + std::time::Duration::from_secs(90)),
        runs: Some(1),
        ..Default::default()
    };
    let recs = ladder::run(
        &cfg,
        Path::new("."),
        &tmp("deadline-soon"),
        ladder::Where { shard: None, resume: false, part: &soon, wait_lock: None },
        &Cancel::new(),
        |_, _| {},
    )
    .unwrap();
    assert_eq!(recs.len(), 2);
    assert!(recs.iter().all(|r| r.params["time_limit"] == 5.0), "{recs:?}");
    // A budget longer than what is left is cut to it.
    let long = campaign("[[budgets]]\nmax_cells = 9\ntime_limit = 100000");
    let recs = ladder::run(
        &long,
        Path::new("."),
        &tmp("deadline-cut"),
        ladder::Where { shard: None, resume: false, part: &soon, wait_lock: None },
        &Cancel::new(),
        |_, _| {},
    )
    .unwrap();
    assert!(recs.iter().all(|r| r.params["time_limit"].as_f64().unwrap() <= 90.0), "{recs:?}");
}

#[test]
fn runs_trace_their_best_score_against_time() {
    let cfg = ladder::parse_config(
        r#"
runs = 1
seed = 4
[[instances]]
generate = { width = 6, height = 6, seed = 5 }
[[methods]]
method = "rrr"
max_iters = 3000
[[methods]]
method = "alns"
max_iters = 300
[[methods]]
method = "hill"
max_iters = 100000
[[methods]]
method = "dc"
max_iters = 500
[[methods]]
method = "scan"
max_nodes = 1000
"#,
    )
    .unwrap();
    let dir = tmp("trace");
    let recs = fresh(&cfg, &dir).unwrap();
    assert_eq!(recs.len(), 5);
    for r in &recs {
        if r.method == concur::MethodName::Scan {
            assert!(r.trace.is_empty(), "{r:?}");
            continue;
        }
        assert!(!r.trace.is_empty(), "{}: no trace", r.label);
        assert!(r.trace.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 < w[1].1), "{}: {:?}", r.label, r.trace);
        assert_eq!(r.trace.last().unwrap().1, r.best_score, "{}: the trace ends at the best score", r.label);
        assert!(r.trace.last().unwrap().0 <= r.wall_s + 1e-3);
    }
    // It survives the file: read back, the same traces.
    let back = ladder::read_records(&ladder::results_path(&dir, None)).unwrap();
    assert_eq!(back.iter().map(|r| r.trace.len()).sum::<usize>(), recs.iter().map(|r| r.trace.len()).sum::<usize>());
}

/// One spec, two doors: a ladder entry and the same options on `concur solve`'s command line
/// run the same run for the same seed (the library's one entry point, one set of defaults).
#[test]
fn the_command_line_and_the_ladder_give_the_same_run_for_the_same_spec() {
    let dir = tmp("same-run");
    std::fs::create_dir_all(&dir).unwrap();
    let (p, _) = crate::common::generated(5, 5, 4);
    let puzzle = dir.join("p.txt");
    std::fs::write(&puzzle, concur::puzzle::format::write_puzzle(&p)).unwrap();
    // (ladder entry, the same on the command line, the JSON field that holds the work)
    let methods: &[(&str, &str, &str)] = &[
        (
            "method = \"rrr\"\nmax_iters = 3000\njoin_weights = [1, 2, 4]",
            "--method rrr --max-iters 3000 --join-weights 1,2,4",
            "trial_iterations",
        ),
        (
            "method = \"dm\"\nmax_iters = 2000\nbeta = 0.6",
            "--method dm --max-iters 2000 --beta 0.6",
            "trial_iterations",
        ),
        ("method = \"dc\"\nmax_iters = 1500", "--method dc --max-iters 1500", "trial_iterations"),
        (
            "method = \"dc\"\nlabel = \"dc plain\"\nhybrid = false\nmax_iters = 1500",
            "--method dc --layout plain --max-iters 1500",
            "trial_iterations",
        ),
        ("method = \"backtrack\"\nmax_nodes = 100000", "--method backtrack --max-nodes 100000", "nodes"),
        ("method = \"backtrack\"\nlabel = \"bt4\"\nac = \"ac4\"", "--method backtrack --ac ac4", "nodes"),
        ("method = \"scan\"", "--method scan", "nodes"),
        ("method = \"hill\"\nmax_iters = 50000", "--method hill --max-iters 50000", "moves"),
        ("method = \"alns\"\nmax_iters = 1000", "--method alns --max-iters 1000", "iterations"),
    ];
    let mut cfg = format!("runs = 2\nseed = 9\n[[instances]]\npath = {:?}\n", puzzle.display().to_string());
    for (entry, _, _) in methods {
        cfg += &format!("[[methods]]\n{entry}\n");
    }
    let cfg = ladder::parse_config(&cfg).unwrap();
    let recs = fresh(&cfg, &dir.join("out")).unwrap();
    assert_eq!(recs.len(), methods.len() * 2);
    for r in &recs {
        let i = cfg.methods.iter().position(|m| m.label() == r.label).unwrap();
        let (_, args, field) = methods[i];
        let seed = r.seed.to_string();
        let mut argv = vec!["solve", puzzle.to_str().unwrap(), "--seed", &seed, "--threads", "1"];
        // A map's batch is one trial in a ladder unless its entry says otherwise.
        if r.method.is_map() {
            argv.extend(["--trials", "1"]);
        }
        argv.extend(args.split_whitespace());
        argv.extend(["--backend", "cpu", "--json"]);
        let out = crate::common::concur_env(&argv, &[]);
        let j: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{args}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
        let what = format!("{} run {} ({args})", r.label, r.run);
        assert_eq!(j["solved"].as_bool(), Some(r.solved), "{what}");
        assert_eq!(j["best_score"].as_u64(), Some(r.best_score as u64), "{what}");
        assert_eq!(j[field].as_u64(), Some(r.work), "{what}: the work");
        if r.solved && r.mechanism.as_deref().is_some_and(|m| m.starts_with("map")) {
            assert_eq!(j["mechanism"].as_str(), r.mechanism.as_deref(), "{what}");
        }
    }
}

/// A map entry in rate mode with a batch: its work is every trial-iteration, its solutions
/// all it found; the machine is recorded; old records (without these fields) still read.
#[test]
fn a_rate_mode_entry_records_its_trials_solutions_and_machine() {
    let dir = tmp("rate-entry");
    let cfg = r#"
runs = 2
seed = 3
machine = "test machine"

[[instances]]
generate = { width = 4, height = 4, seed = 2 }

[[methods]]
method = "rrr"
label = "rrr rate"
trials = 3
keep_going = true
max_iters = 2000

[[methods]]
method = "rrr"
max_iters = 2000
"#;
    let cfg = ladder::parse_config(cfg).unwrap();
    let recs = fresh(&cfg, &dir).unwrap();
    assert_eq!(recs.len(), 4);
    for r in &recs {
        assert_eq!((r.backend.as_str(), r.device.as_deref()), ("cpu", Some("test machine")));
        if r.label == "rrr rate" {
            assert_eq!((r.trials, r.work), (Some(3), 6000), "{r:?}");
            let n = r.solutions.expect("rate mode counts its solutions");
            assert!(n >= 2 && r.solved && r.solution_count() == n, "{r:?}");
            assert!(r.distinct_solutions.is_some_and(|d| d >= 1 && d <= n));
        } else {
            assert_eq!((r.trials, r.solutions), (None, None));
            assert_eq!(r.solution_count(), u64::from(r.solved));
        }
    }
    let line = r#"{"instance":"a","width":4,"height":4,"colors":4,"method":"rrr","label":"rrr","params":{},"run":0,"seed":1,"backend":"cpu","solved":true,"mechanism":"map","work":10,"work_unit":"iterations","wall_s":0.1,"best_score":24,"max_score":24,"version":"0.1.0"}"#;
    let old: Record = serde_json::from_str(line).unwrap();
    assert_eq!(
        (old.solutions, old.device.as_deref(), old.machine().as_str(), old.solution_count()),
        (None, None, "cpu", 1)
    );
    assert_eq!(serde_json::to_string(&old).unwrap(), line, "an old record writes back the same");
    // Entries that cannot run are refused when the config is read.
    for bad in [
        "method = \"scan\"\nbackend = \"gpu\"",
        "method = \"rrr\"\nbackend = \"tpu\"",
        "method = \"rrr\"\nassign = \"gpu-jv\"",
        "method = \"scan\"\nkeep_going = true",
        "method = \"rrr\"\nall_trials = true",
    ] {
        let text = format!("[[instances]]\ngenerate = {{ width = 3, height = 3 }}\n[[methods]]\n{bad}\n");
        assert!(ladder::parse_config(&text).is_err(), "{bad}");
    }
    let gpu = "[[instances]]\ngenerate = { width = 3, height = 3 }\n[[methods]]\nmethod = \"rrr\"\nbackend = \"gpu\"\ntrials = 64\nkeep_going = true\n";
    let m = &ladder::parse_config(gpu).unwrap().methods[0];
    assert_eq!(
        (m.spec.run.backend, m.spec.run.trials, m.spec.method.keep_going()),
        (concur::backend::BackendChoice::Gpu, 64, true)
    );
}

mod devices {
    use concur_lab::ladder::devices;
    use concur_lab::ladder::{Record, report};
    use rand::{RngExt, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// A record of a run on `device` (a GPU when `gpu`) that spent `work` at `rate` per
    /// second and found `solutions` (rate mode when `rate_mode`).
    fn rec(label: &str, run: u64, gpu: bool, work: f64, rate: f64, solutions: u64, rate_mode: bool) -> Record {
        Record {
            instance: "i".into(),
            width: 8,
            height: 7,
            colors: 10,
            method: concur::MethodName::Rrr,
            label: label.into(),
            params: serde_json::json!({}),
            run,
            seed: run,
            backend: if gpu { "gpu: H200".into() } else { "cpu".into() },
            solved: solutions > 0,
            mechanism: (solutions > 0).then(|| "map".into()),
            work: work.round() as u64,
            work_unit: "iterations".into(),
            wall_s: work.round() / rate,
            best_score: 0,
            max_score: 97,
            version: "0".into(),
            trace: Vec::new(),
            solutions: rate_mode.then_some(solutions),
            distinct_solutions: None,
            trials: gpu.then_some(4096),
            device: Some(if gpu { "H200".into() } else { "dev VM".into() }),
            ..Record::default()
        }
    }

    fn exp(rng: &mut Xoshiro256PlusPlus, mean: f64) -> f64 {
        -mean * (1.0 - rng.random::<f64>()).ln()
    }

    /// Synthetic campaigns with known rates: CPU runs of one trial to their first solution or
    /// a budget, at 1e5 iterations/s per core; device runs in rate mode, at 4e6 iterations/s,
    /// whose solutions are the renewals of memoryless run lengths in their work. Work per
    /// solution `cpu_mean` on the CPU and `gpu_mean` on the device.
    fn campaign(seed: u64, cpu_mean: f64, gpu_mean: f64) -> Vec<Record> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut rs = Vec::new();
        for run in 0..12 {
            let budget = 2.0e6;
            let x = exp(&mut rng, cpu_mean);
            rs.push(if x <= budget {
                rec("m", run, false, x, 1e5, 1, false)
            } else {
                rec("m", run, false, budget, 1e5, 0, false)
            });
        }
        for run in 100..104 {
            let w = 1.0e7;
            let (mut t, mut n) = (exp(&mut rng, gpu_mean), 0);
            while t <= w {
                n += 1;
                t += exp(&mut rng, gpu_mean);
            }
            rs.push(rec("m", run, true, w, 4e6, n, true));
        }
        rs
    }

    #[test]
    fn rates_stay_apart_and_seconds_per_solution_are_pooled_work_over_each_rate() {
        let rs = campaign(1, 1e6, 1e6);
        let p = &devices::pool(&rs)[0];
        assert!(p.disagree.is_empty(), "{p:?}");
        let pooled = p.pooled.expect("agreeing machines pool");
        let total: f64 = rs.iter().map(|r| r.work as f64).sum();
        let sols: u64 = rs.iter().map(|r| r.solution_count()).sum();
        assert_eq!((pooled.total, pooled.solutions as u64), (total, sols));
        let (gpu, cpu) = (&p.machines[0], &p.machines[1]);
        assert_eq!(
            (gpu.name.as_str(), gpu.per.as_str(), cpu.name.as_str(), cpu.per.as_str()),
            ("H200", "device", "dev VM", "core")
        );
        assert!((gpu.rate.unwrap() / 4e6 - 1.0).abs() < 1e-9 && (cpu.rate.unwrap() / 1e5 - 1.0).abs() < 1e-9);
        for (m, rate) in [(gpu, 4e6), (cpu, 1e5)] {
            assert!(m.from_pooled);
            let [mean, lo, hi] = m.seconds;
            assert!((mean.unwrap() - pooled.mean.unwrap() / rate).abs() < 1e-9 * mean.unwrap());
            assert!((lo.unwrap() - pooled.ci[0].unwrap() / rate).abs() < 1e-9 * lo.unwrap());
            assert!((hi.unwrap() - pooled.ci[1].unwrap() / rate).abs() < 1e-9 * hi.unwrap());
        }
        let md = devices::markdown(&devices::pool(&rs));
        assert!(
            md.contains("## Work per solution by machine") && md.contains("| m | 8x7 | H200 | device | 4 |"),
            "{md}"
        );
        assert!(md.contains("*all machines, pooled*") && !md.contains("**flag**:"), "{md}");
        // The report's pooled rates count every solution of a rate-mode run.
        let rows = report::summarize(&rs);
        assert_eq!(rows[0].pooled_work.solutions as u64, sols);
    }

    #[test]
    fn the_seconds_interval_covers_the_true_seconds_per_solution_95_percent_of_the_time() {
        // True: 1e6 iterations per solution, so 0.25 s on the device and 10 s on a core.
        let (mut covered, mut tried) = ([0; 2], 0);
        for seed in 0..300 {
            let p = &devices::pool(&campaign(seed, 1e6, 1e6))[0];
            if p.pooled.is_none() {
                continue;
            }
            tried += 1;
            for (i, truth) in [0.25, 10.0].into_iter().enumerate() {
                let [_, lo, hi] = p.machines[i].seconds;
                covered[i] += usize::from(lo.unwrap() <= truth && truth <= hi.unwrap());
            }
        }
        // Agreeing machines pool: a real difference is rare when there is none.
        assert!(tried >= 285, "{tried} of 300 campaigns pooled");
        for c in covered {
            let rate = c as f64 / tried as f64;
            assert!((0.92..=0.99).contains(&rate), "coverage {rate}");
        }
    }

    #[test]
    fn a_device_that_disagrees_is_flagged_and_not_pooled() {
        // The device's search needs ten times the work per solution: not the same search.
        let rs = campaign(2, 1e6, 1e7);
        let p = &devices::pool(&rs)[0];
        assert_eq!(p.disagree, vec![["H200".to_string(), "dev VM".to_string()]]);
        assert!(p.pooled.is_none());
        for m in &p.machines {
            assert!(!m.from_pooled);
            let own = m.work.mean.unwrap() / m.rate.unwrap();
            assert!((m.seconds[0].unwrap() - own).abs() < 1e-9 * own, "{m:?}");
        }
        let md = devices::markdown(&devices::pool(&rs));
        assert!(
            md.contains(
                "**flag**: H200 and dev VM disagree on the iterations per solution on the instance both ran (p = "
            ),
            "{md}"
        );
        // A machine with no solution: a lower bound, which agrees with anything above it.
        let mut none = campaign(3, 1e6, 1e6);
        none.retain(|r| !r.on_device());
        none.push(rec("m", 200, true, 1e5, 4e6, 0, true));
        let p = &devices::pool(&none)[0];
        assert!(p.disagree.is_empty() && p.pooled.is_some());
        assert_eq!(p.machines[0].work.mean, None);
    }

    /// Two machines are compared instance by instance. Here both run the same search at the
    /// same rate on each instance, but one runs mostly the hard instance and the other mostly
    /// the easy one, so their work per solution over the size differs a hundredfold: they
    /// agree, and pool. Machines with no instance in common are not compared and not pooled.
    #[test]
    fn machines_are_compared_on_the_instances_both_ran() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(4);
        let on = |inst: &str, r: Record| Record { instance: inst.into(), ..r };
        let mut rs = Vec::new();
        // Rate mode: runs of 1e7 iterations; the easy instance's solutions come every 1e5,
        // the hard one's every 1e7.
        let mut run = 0;
        for (inst, mean, gpu_runs, cpu_runs) in [("easy", 1e5, 1, 20), ("hard", 1e7, 40, 10)] {
            for (gpu, n) in [(true, gpu_runs), (false, cpu_runs)] {
                for _ in 0..n {
                    let (mut t, mut k) = (exp(&mut rng, mean), 0);
                    while t <= 1e7 {
                        k += 1;
                        t += exp(&mut rng, mean);
                    }
                    run += 1;
                    rs.push(on(inst, rec("m", run, gpu, 1e7, if gpu { 4e6 } else { 1e5 }, k, true)));
                }
            }
        }
        let p = &devices::pool(&rs)[0];
        let (gpu, cpu) = (&p.machines[0], &p.machines[1]);
        assert!(cpu.work.ci[1].unwrap() * 10.0 < gpu.work.ci[0].unwrap(), "the mixes differ: {p:?}");
        assert_eq!(p.compared.len(), 1);
        assert_eq!(p.compared[0].instances, 2);
        assert!(p.compared[0].p.unwrap() > devices::DISAGREE_AT, "{p:?}");
        assert!(p.disagree.is_empty() && p.apart.is_empty() && p.pooled.is_some(), "{p:?}");
        // The same runs with the device at a tenth of the rate on both instances (a tenth of
        // the easy instance's solutions, and nine in ten of the hard one's runs finding
        // nothing): flagged.
        let slow: Vec<Record> = rs
            .iter()
            .map(|r| match (r.on_device(), r.instance.as_str()) {
                (true, "easy") => Record { solutions: r.solutions.map(|k| k / 10), ..r.clone() },
                (true, "hard") if r.run % 10 != 0 => Record { solutions: Some(0), solved: false, ..r.clone() },
                _ => r.clone(),
            })
            .collect();
        let p = &devices::pool(&slow)[0];
        assert_eq!(p.disagree, vec![["H200".to_string(), "dev VM".to_string()]]);
        let md = devices::markdown(&devices::pool(&slow));
        assert!(
            md.contains(
                "**flag**: H200 and dev VM disagree on the iterations per solution on the 2 instances both ran (p = "
            ),
            "{md}"
        );
        // No instance in common.
        let apart: Vec<Record> = rs.iter().filter(|r| (r.instance == "hard") == r.on_device()).cloned().collect();
        let p = &devices::pool(&apart)[0];
        assert_eq!((p.compared[0].instances, p.compared[0].p), (0, None));
        assert_eq!(p.apart, vec![["H200".to_string(), "dev VM".to_string()]]);
        assert!(p.disagree.is_empty() && p.pooled.is_none());
        let md = devices::markdown(&devices::pool(&apart));
        assert!(
            md.contains("**flag**: H200 and dev VM ran no instance in common and are not compared; not pooled"),
            "{md}"
        );
    }
}

/// A stop in the middle of rate-mode map runs writes each as its part 1; `--resume` restores
/// the batch each saved and runs it on as part 2: the parts' work sums to the budget, and the
/// solutions are the uninterrupted run's, at the same iterations.
#[test]
fn a_map_run_stopped_and_resumed_is_the_run_never_stopped() {
    let cfg = ladder::parse_config(
        "runs = 2\nseed = 9\n[[instances]]\ngenerate = { width = 5, height = 5, seed = 4 }\n[[methods]]\nmethod = \"rrr\"\nkeep_going = true\ntrials = 2\nmax_iters = 150000\n",
    )
    .unwrap();
    let whole_dir = tmp("restore-whole");
    let whole = one_thread(|| fresh(&cfg, &whole_dir)).unwrap();
    let dir = tmp("restore-parts");
    let stop = Cancel::new();
    let stopper = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(300));
            stop.cancel_because("SIGTERM");
        })
    };
    let whole_part = ladder::Part::default();
    let at = |resume| ladder::Where { shard: None, resume, part: &whole_part, wait_lock: None };
    let first = one_thread(|| ladder::run(&cfg, Path::new("."), &dir, at(false), &stop, |_, _| {})).unwrap();
    stopper.join().unwrap();
    assert_eq!(first.len(), 1, "one run in flight at the stop: {first:?}");
    assert_eq!((first[0].part, first[0].interrupted.as_deref()), (Some(1), Some("SIGTERM")));
    assert!(ladder::state_path(&dir, &first[0].key(), 1).exists(), "the batch was saved at the stop");
    let rest = one_thread(|| ladder::run(&cfg, Path::new("."), &dir, at(true), &Cancel::new(), |_, _| {})).unwrap();
    assert_eq!(rest.len(), 2, "{rest:?}");
    assert_eq!((rest[0].part, rest[0].continued.as_deref()), (Some(2), Some("restored")), "{rest:?}");
    assert!(!ladder::state_path(&dir, &first[0].key(), 1).exists(), "a saved batch that has served is removed");
    let on_file = ladder::join_parts(ladder::read_folder(&dir).unwrap());
    for w in &whole {
        let got = on_file.iter().find(|r| r.key() == w.key()).unwrap();
        assert_eq!(got.work, w.work, "{:?}", w.key());
        assert_eq!(got.solutions, w.solutions, "{:?}", w.key());
        assert_eq!(got.found, w.found, "{:?}: the same solutions at the same iterations", w.key());
        assert!(got.is_whole());
    }
}

/// Every ladder record committed under `benches/results` reads back as a typed record (its
/// method a known method): a file whose first line is a ladder record (it has `instance`,
/// `label` and `work_unit`) must read whole.
#[test]
fn every_committed_ladder_record_reads_back_typed() {
    fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, files);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                files.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(&Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join("benches/results"), &mut files);
    let (mut ladder_files, mut records) = (0, 0);
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let Some(first) = text.lines().next().and_then(|l| serde_json::from_str::<serde_json::Value>(l).ok()) else {
            continue;
        };
        if !["instance", "label", "work_unit"].iter().all(|k| first.get(k).is_some()) {
            continue;
        }
        let rs = ladder::read_records(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert!(rs.iter().all(|r| concur::MethodName::ALL.contains(&r.method)));
        ladder_files += 1;
        records += rs.len();
    }
    assert!(ladder_files >= 10 && records >= 1000, "{ladder_files} files, {records} records: the walk found too few");
}
