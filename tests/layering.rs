//! Module layering: kernels below algorithms below drivers. Lower modules must not import
//! the ones built on them (an import circle makes either side impossible to change alone).
//!
//! Kernels: `rng`, `cancel`, `meter`, `error`, `options`, `hash`, `puzzle`, `assign`, `verify`, the projections
//! (`f1::project`, `dc::project`, `dc::layout`). Algorithms: the searches
//! (`search::backtrack`, `scan`, `hill`, `alns`), the batch core (`batch`), the map drivers
//! (`f1::map`, `dc`), then the map-guided search (`guided`, built on F1 and the backtracker),
//! and the typed method (`method`, one options type per method, over them all).
//! The arrows run one way: the maps use the searches, never the reverse. Drivers:
//! `backend`, `solve`, `ladder`, `bench`, the command-line definition (`cli`), the binary.

/// The `crate::` paths a source file names.
fn imports(path: &str) -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

#[test]
fn low_modules_do_not_import_the_ones_above_them() {
    // The driver layer: no algorithm or kernel names it.
    const DRIVERS: [&str; 5] = ["crate::backend", "crate::bench", "crate::cli", "crate::ladder", "crate::solve"];
    // The searches never use the maps nor what is built on them.
    const ABOVE_SEARCH: &[&str] = &["crate::f1", "crate::dc", "crate::batch", "crate::guided"];
    // (file, paths it must not name)
    let mut rules: Vec<(String, &[&str])> = vec![
        ("src/rng.rs".into(), &["crate::"]),
        ("src/cancel.rs".into(), &["crate::"]),
        ("src/error.rs".into(), &["crate::"]),
        // A meter knows the token, and the options trait its errors; nothing else.
        ("src/meter.rs".into(), &["crate::f1", "crate::dc", "crate::batch", "crate::search", "crate::puzzle"]),
        ("src/options.rs".into(), &["crate::f1", "crate::dc", "crate::batch", "crate::search", "crate::puzzle"]),
        ("src/hash.rs".into(), &["crate::"]),
        // The checks before a run are below everything that runs: the engines name them, not
        // the reverse (each engine's memory estimate sits beside its buffers).
        ("src/limits/mod.rs".into(), &["crate::f1", "crate::dc", "crate::batch", "crate::search", "crate::guided"]),
        ("src/limits/outputs.rs".into(), &["crate::f1", "crate::dc", "crate::batch", "crate::search", "crate::guided"]),
        ("src/assign.rs".into(), &["crate::f1", "crate::dc", "crate::batch", "crate::search", "crate::guided"]),
        ("src/verify/network.rs".into(), &["crate::f1", "crate::dc", "crate::batch", "crate::search", "crate::guided"]),
        // The batch core is below both formulations' drivers.
        ("src/batch.rs".into(), &["crate::f1", "crate::dc", "crate::guided"]),
        // The projections are below their drivers and the batch core.
        (
            "src/f1/project.rs".into(),
            &["crate::f1::map", "super::map", "crate::batch", "crate::dc", "crate::search", "crate::guided"],
        ),
        ("src/dc/project.rs".into(), &["crate::batch", "crate::f1", "crate::search", "crate::guided"]),
        ("src/dc/layout.rs".into(), &["super::project", "dc::project", "crate::batch", "crate::f1", "crate::guided"]),
        // The two formulations do not import each other; what they share is in the batch core.
        ("src/f1/map.rs".into(), &["crate::dc", "crate::guided"]),
        ("src/dc/mod.rs".into(), &["crate::f1", "crate::guided"]),
        ("src/dc/prune.rs".into(), &["crate::f1", "crate::guided"]),
        // Each formulation's options sit beside its driver.
        ("src/f1/options.rs".into(), &["crate::dc", "crate::guided"]),
        ("src/dc/options.rs".into(), &["crate::f1", "crate::guided"]),
        // The map-guided search sits on F1 and under the drivers.
        ("src/guided.rs".into(), &["crate::dc"]),
        // The typed method is over every method's options and under the drivers.
        ("src/method.rs".into(), &["crate::guided"]),
    ];
    // Every file of the searches, the scan's folder included, found rather than listed.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs = vec![root.join("src/search")];
    let mut searches = Vec::new();
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                searches.push(path.strip_prefix(root).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    assert!(searches.len() >= 8, "the searches' files were not found: {searches:?}");
    rules.extend(searches.into_iter().map(|f| (f, ABOVE_SEARCH)));
    for (file, banned) in &rules {
        let text = imports(file);
        // Every file here is below the drivers.
        for b in banned.iter().chain(&DRIVERS) {
            assert!(!text.contains(b), "{file} names {b}: an import from a module above it");
        }
    }
}
