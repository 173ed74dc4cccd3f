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
        ("assign.wgsl", &["auction", "pick", "settle"]),
        ("dc.wgsl", &["concur", "divide", "adapt", "argmax", "readout"]),
        ("f1.wgsl", &["edges", "weights", "update", "mix", "score", "track"]),
        ("hash.wgsl", &["fingerprint"]),
        ("jv.wgsl", &["jv", "pick"]),
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

/// The JV kernel's subgroup variant (built from jv.wgsl at run time) validates too.
#[cfg(feature = "gpu")]
#[test]
fn the_jv_kernel_with_subgroup_operations_validates() {
    let src = concur::backend::gpu::jv::source(true);
    assert!(src.contains("subgroupMin") && !src.contains("SUBGROUP_ARGS"));
    let module = naga::front::wgsl::parse_str(&src).unwrap_or_else(|e| panic!("{}", e.emit_to_string(&src)));
    naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::SUBGROUP)
        .subgroup_stages(naga::valid::ShaderStages::COMPUTE)
        .subgroup_operations(naga::valid::SubgroupOperationSet::all())
        .validate(&module)
        .unwrap_or_else(|e| panic!("{}", e.emit_to_string(&src)));
}
