//! Every WGSL file parses and validates (naga, no GPU needed), and declares the entry points
//! the backend looks up.
use std::path::Path;

fn validate(path: &Path) -> naga::Module {
    let src = std::fs::read_to_string(path).unwrap();
    let module =
        naga::front::wgsl::parse_str(&src).unwrap_or_else(|e| panic!("{}: {}", path.display(), e.emit_to_string(&src)));
    naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::default())
        .validate(&module)
        .unwrap_or_else(|e| panic!("{}: {}", path.display(), e.emit_to_string(&src)));
    module
}

#[test]
fn every_wgsl_file_parses_and_validates() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
    let mut seen = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "wgsl") {
            let module = validate(&path);
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            let entries: Vec<String> = module.entry_points.iter().map(|e| e.name.clone()).collect();
            seen.push((name, entries));
        }
    }
    seen.sort();
    let want: &[(&str, &[&str])] = &[
        ("assign.wgsl", &["auction", "pick"]),
        ("dc.wgsl", &["concur", "divide", "adapt", "argmax", "readout"]),
        ("f1.wgsl", &["edges", "weights", "update", "mix", "score"]),
        ("hash.wgsl", &["fingerprint"]),
        ("layout.wgsl", &["scatter", "gather"]),
    ];
    assert_eq!(seen.len(), want.len(), "shader files: {seen:?}");
    for ((name, entries), (want_name, want_entries)) in seen.iter().zip(want) {
        assert_eq!(name, want_name);
        for e in *want_entries {
            assert!(entries.iter().any(|x| x == e), "{name} lacks entry point {e}");
        }
    }
}
