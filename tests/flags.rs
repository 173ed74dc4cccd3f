//! The command line's flags: every flag of `concur solve` walked against every method (a flag
//! is either used by the run, which it changes, or refused with a line that names it: never
//! silently ignored), clap's own consistency check of the whole command, and help text of its
//! own for every flag of every subcommand.
use concur::MethodName;
use concur::backend::CpuBackend;
use concur_cli::{self as cli, Cmd};

/// A value for each of `solve`'s run flags that differs from every default (None: a switch),
/// and the flags that must come with it for it to have an effect.
fn sample(id: &str) -> Option<(Option<&'static str>, &'static [&'static str])> {
    let v = |s| Some((Some(s), &[][..]));
    let switch = Some((None, &[][..]));
    match id {
        "seed" => v("3"),
        "time_limit" => v("5"),
        "max_iters" => v("77"),
        "max_nodes" => v("77"),
        "threads" => v("2"),
        "trials" => v("3"),
        "beta" => v("0.5"),
        "no_cycle_restart" | "all_trials" | "keep_going" | "cold_assign" | "no_restarts" | "row_chain"
        | "no_exact_repair" | "fused_passes" | "hybrid" | "sac" | "pc" | "blocks" => switch,
        "edge" => v("one-color"),
        "restart_stall" => v("5"),
        "kick" => v("0.5"),
        "join_weights" => v("1,2,3"),
        "adapt" => v("0.1,0.01,4"),
        "reduced_costs" => v("f32"),
        "complete" => v("4"),
        "complete_radius" => Some((Some("2"), &["--complete", "4"][..])),
        "complete_nodes" => Some((Some("9"), &["--complete", "4"][..])),
        "complete_stall" => Some((Some("9"), &["--complete", "4"][..])),
        "dc_map" => v("dm"),
        "weights" => v("adaptive"),
        "gamma" => Some((Some("0.3"), &["--weights", "adaptive"][..])),
        "layout" => v("plain"),
        "readout" => v("assignment"),
        "propagate" => v("0.5"),
        "ac" => v("ac4"),
        "order" => v("scan"),
        "alldiff" => v("regin"),
        "restart_base" => v("9"),
        "tree" => v("random"),
        "probes" => v("9"),
        "scan_walker" => v("table"),
        "plateau" => v("9"),
        "destroy_min" => v("5"),
        "destroy_max" => v("9"),
        "operators" => v("ring"),
        "restart_after" => v("9"),
        "temperature" => v("2"),
        "start" => v("board.txt"),
        "width" => v("9"),
        "fill_order" => v("row-major"),
        "teeth" => v("3"),
        "children" => v("3"),
        "polish" => v("0.2"),
        "rounds" => v("2"),
        "breaks" => v("3,5"),
        "backend" => v("gpu"),
        "adapter" => v("xyz"),
        "assign" => v("cpu"),
        "solutions" => Some((Some("s.jsonl"), &["--keep-going"][..])),
        _ => None,
    }
}

/// `solve`'s flags that are not run options: the puzzle, the method itself, the outputs the
/// binary writes, help.
const NOT_RUN_OPTIONS: &[&str] = &["puzzle", "method", "dump_state", "dump_all", "output", "json", "help"];

#[test]
fn every_solve_flag_is_used_by_the_method_or_refused_naming_it() {
    let cmd = cli::command();
    let solve = cmd.find_subcommand("solve").expect("solve");
    let keys = cli::solve::key_methods();
    let mut walked = 0;
    for arg in solve.get_arguments() {
        let id = arg.get_id().as_str();
        if NOT_RUN_OPTIONS.contains(&id) {
            continue;
        }
        let (value, with) = sample(id).unwrap_or_else(|| panic!("--{id}: give it a sample value in tests/flags.rs"));
        let flag = format!("--{}", arg.get_long().expect("long flags"));
        let users = &keys.iter().find(|(k, _)| k == id).unwrap_or_else(|| panic!("--{id} is no run key")).1;
        let mut taken_by = Vec::new();
        for m in MethodName::ALL {
            let mut base = vec!["concur", "solve", "p.txt", "--method", m.name()];
            base.extend(with.iter().filter(|_| users.contains(&m)));
            let mut argv = base.clone();
            argv.push(&flag);
            argv.extend(value);
            let (parsed, _) = cli::parse_from(&argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
            let Cmd::Solve(a) = parsed.cmd else { panic!("solve") };
            let got = a.spec();
            match got {
                Ok(spec) => {
                    // Taken: the run differs from the one without the flag.
                    let (without, _) = cli::parse_from(&base).unwrap();
                    let Cmd::Solve(b) = without.cmd else { panic!("solve") };
                    let plain = b.spec().unwrap();
                    let same = serde_json::to_value(&spec).unwrap() == serde_json::to_value(&plain).unwrap();
                    assert!(!same || id == "hybrid", "{argv:?}: taken but the run is the same without it");
                    assert!(users.contains(&m), "{argv:?}: taken by a method the help does not name");
                    // Where it runs: the CPU backend runs it, or refuses it naming the flag.
                    if let Err(e) = spec.supported_by(&CpuBackend) {
                        assert!(e.to_string().contains(&flag), "{argv:?}: refused on the cpu without naming it: {e}");
                    }
                    taken_by.push(m);
                }
                Err(e) => {
                    let named = e.key() == Some(id) || e.to_string().contains(&flag);
                    assert!(named, "{argv:?}: refused without naming {flag}: {e}");
                }
            }
            walked += 1;
        }
        assert!(!taken_by.is_empty(), "{flag}: no method takes it");
    }
    assert!(walked >= 40 * MethodName::ALL.len(), "only {walked} flag-method pairs walked");
}

#[test]
fn the_whole_command_passes_clap_s_own_check() {
    cli::command().debug_assert();
}

#[test]
fn every_flag_of_every_subcommand_has_help_of_its_own() {
    let cmd = cli::command();
    let mut missing = Vec::new();
    for sub in cmd.get_subcommands() {
        for a in sub.get_arguments() {
            let id = a.get_id().as_str();
            if id == "help" || id == "version" {
                continue;
            }
            if a.get_help().is_none_or(|h| h.to_string().trim().is_empty()) {
                missing.push(format!("{} {id}", sub.get_name()));
            }
        }
    }
    assert!(missing.is_empty(), "flags without help: {missing:?}");
}

#[test]
fn solve_s_help_groups_its_flags_under_headings_with_defaults_and_methods() {
    let cmd = cli::command();
    let solve = cmd.find_subcommand("solve").unwrap();
    for heading in cli::solve::HEADINGS {
        assert!(solve.get_arguments().any(|a| a.get_help_heading() == Some(heading)), "no flag under {heading:?}");
    }
    let ungrouped: Vec<&str> = solve
        .get_arguments()
        .filter(|a| a.get_help_heading().is_none() && !["help", "puzzle"].contains(&a.get_id().as_str()))
        .map(|a| a.get_id().as_str())
        .collect();
    assert!(ungrouped.is_empty(), "flags under no heading: {ungrouped:?}");
    let help = |id: &str| {
        solve.get_arguments().find(|a| a.get_id() == id).unwrap().get_help().map(|h| h.to_string()).unwrap_or_default()
    };
    assert!(help("beta").contains("default: 0.7") && help("beta").contains("methods: rrr, dm, dc"), "{}", help("beta"));
    assert!(help("restart_base").contains("256 (backtrack)"), "{}", help("restart_base"));
    assert!(help("seed").contains("all methods"), "{}", help("seed"));
}
