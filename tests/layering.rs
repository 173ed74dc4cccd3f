//! Module layering: kernels below algorithms below drivers. Lower modules must not import
//! the ones built on them (an import circle makes either side impossible to change alone).

/// The `crate::` paths a source file names.
fn imports(path: &str) -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

#[test]
fn low_modules_do_not_import_the_ones_above_them() {
    // (file, paths it must not name)
    let rules: &[(&str, &[&str])] = &[
        ("src/rng.rs", &["crate::"]),
        ("src/interrupt.rs", &["crate::"]),
        ("src/hash.rs", &["crate::"]),
        ("src/search/backtrack.rs", &["crate::map", "crate::dc", "crate::backend", "crate::ladder"]),
        ("src/search/scan/mod.rs", &["crate::map", "crate::dc", "crate::backend", "crate::ladder"]),
        ("src/search/scan/tables.rs", &["crate::map", "crate::dc", "crate::backend", "crate::ladder"]),
        ("src/search/scan/walk.rs", &["crate::map", "crate::dc", "crate::backend", "crate::ladder"]),
        ("src/search/scan/count.rs", &["crate::map", "crate::dc", "crate::backend", "crate::ladder"]),
        ("src/search/scan/solve.rs", &["crate::map", "crate::dc", "crate::backend", "crate::ladder"]),
        ("src/verify/network.rs", &["crate::map", "crate::dc", "crate::search"]),
        ("src/assign.rs", &["crate::map", "crate::dc", "crate::search", "crate::project"]),
        ("src/dc/layout.rs", &["super::project", "dc::project", "crate::map"]),
    ];
    for (file, banned) in rules {
        let text = imports(file);
        for b in *banned {
            assert!(!text.contains(b), "{file} names {b}: an import from a module above it");
        }
    }
}
