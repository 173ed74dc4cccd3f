//! Module layering: kernels below algorithms below drivers. Lower modules must not import
//! the ones built on them (an import circle makes either side impossible to change alone).
//!
//! Kernels: `rng`, `interrupt`, `hash`, `puzzle`, `assign`, `verify`, the projections
//! (`f1::project`, `dc::project`, `dc::layout`). Algorithms: the searches
//! (`search::backtrack`, `scan`, `hill`, `alns`), the batch core (`batch`), the map drivers
//! (`f1::map`, `dc`), then the map-guided search (`search::guided`, built on F1). Drivers:
//! `backend`, `solve`, `ladder`, the binary.

/// The `crate::` paths a source file names.
fn imports(path: &str) -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

#[test]
fn low_modules_do_not_import_the_ones_above_them() {
    // The driver layer: no algorithm or kernel names it.
    const DRIVERS: [&str; 3] = ["crate::backend", "crate::ladder", "crate::solve"];
    // (file, paths it must not name)
    let rules: &[(&str, &[&str])] = &[
        ("src/rng.rs", &["crate::"]),
        ("src/interrupt.rs", &["crate::"]),
        ("src/hash.rs", &["crate::"]),
        ("src/assign.rs", &["crate::f1", "crate::dc", "crate::batch", "crate::search"]),
        ("src/verify/network.rs", &["crate::f1", "crate::dc", "crate::batch", "crate::search"]),
        // The searches other than the map-guided one never use the maps.
        ("src/search/backtrack.rs", &["crate::f1", "crate::dc", "crate::batch", "crate::search::guided"]),
        ("src/search/scan/mod.rs", &["crate::f1", "crate::dc", "crate::batch", "crate::search::guided"]),
        ("src/search/scan/tables.rs", &["crate::f1", "crate::dc", "crate::batch", "crate::search::guided"]),
        ("src/search/scan/walk.rs", &["crate::f1", "crate::dc", "crate::batch", "crate::search::guided"]),
        ("src/search/scan/count.rs", &["crate::f1", "crate::dc", "crate::batch", "crate::search::guided"]),
        ("src/search/scan/solve.rs", &["crate::f1", "crate::dc", "crate::batch", "crate::search::guided"]),
        ("src/search/hill.rs", &["crate::f1", "crate::dc", "crate::batch", "crate::search::guided"]),
        ("src/search/alns.rs", &["crate::f1", "crate::dc", "crate::batch", "crate::search::guided"]),
        // The batch core is below both formulations' drivers.
        ("src/batch.rs", &["crate::f1", "crate::dc", "crate::search::guided"]),
        // The projections are below their drivers and the batch core.
        ("src/f1/project.rs", &["crate::f1::map", "super::map", "crate::batch", "crate::dc", "crate::search"]),
        ("src/dc/project.rs", &["crate::batch", "crate::f1", "crate::search"]),
        ("src/dc/layout.rs", &["super::project", "dc::project", "crate::batch", "crate::f1"]),
        // The two formulations do not import each other; what they share is in the batch core.
        ("src/f1/map.rs", &["crate::dc", "crate::search::guided"]),
        ("src/dc/mod.rs", &["crate::f1", "crate::search::guided"]),
        ("src/dc/prune.rs", &["crate::f1", "crate::search::guided"]),
        // The map-guided search sits on F1 and under the drivers.
        ("src/search/guided.rs", &["crate::dc"]),
    ];
    for (file, banned) in rules {
        let text = imports(file);
        // Every file here is below the drivers.
        for b in banned.iter().chain(&DRIVERS) {
            assert!(!text.contains(b), "{file} names {b}: an import from a module above it");
        }
    }
}
