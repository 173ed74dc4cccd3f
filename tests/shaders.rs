//! Every WGSL file parses and validates (naga, no GPU needed), and declares the entry points
//! the backend looks up.
use std::path::Path;

/// Shader files that use subgroup operations (validated with naga's SUBGROUP capability;
/// the backend builds them only on a device that has it).
const SUBGROUP_FILES: &[&str] = &["jv_sg.wgsl"];

fn validate_source(what: &str, src: &str, subgroups: bool) -> naga::Module {
    validate_with(what, src, subgroups, naga::valid::Capabilities::SUBGROUP)
}

fn validate_with(what: &str, src: &str, subgroups: bool, caps: naga::valid::Capabilities) -> naga::Module {
    let module = naga::front::wgsl::parse_str(src).unwrap_or_else(|e| panic!("{what}: {}", e.emit_to_string(src)));
    let mut v = if subgroups {
        let mut v = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), caps);
        v.subgroup_stages(naga::valid::ShaderStages::COMPUTE)
            .subgroup_operations(naga::valid::SubgroupOperationSet::all());
        v
    } else {
        naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::default())
    };
    v.validate(&module).unwrap_or_else(|e| panic!("{what}: {}", e.emit_to_string(src)));
    module
}

fn validate(path: &Path) -> naga::Module {
    let src = std::fs::read_to_string(path).unwrap();
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    validate_source(&path.display().to_string(), &src, SUBGROUP_FILES.contains(&name.as_str()))
}

#[test]
fn every_wgsl_file_parses_and_validates() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
    let mut seen = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        // The fused pass is a part of f1.wgsl, validated appended to it (below).
        if path.extension().is_some_and(|e| e == "wgsl") && !path.ends_with("f1_step.wgsl") {
            let module = validate(&path);
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            let entries: Vec<String> = module.entry_points.iter().map(|e| e.name.clone()).collect();
            seen.push((name, entries));
        }
    }
    seen.sort();
    let want: &[(&str, &[&str])] = &[
        ("assign.wgsl", &["auction", "settle"]),
        ("dc.wgsl", &["concur", "divide", "adapt", "argmax", "readout"]),
        ("f1.wgsl", &["edges", "weights", "update", "mix", "score", "track"]),
        ("hash.wgsl", &["fingerprint"]),
        ("jv.wgsl", &["jv"]),
        ("jv_sg.wgsl", &["jv_sg"]),
        ("layout.wgsl", &["scatter", "gather"]),
        ("pick.wgsl", &["pick"]),
    ];
    assert_eq!(seen.len(), want.len(), "shader files: {seen:?}");
    for ((name, entries), (want_name, want_entries)) in seen.iter().zip(want) {
        assert_eq!(name, want_name);
        for e in *want_entries {
            assert!(entries.iter().any(|x| x == e), "{name} lacks entry point {e}");
        }
    }
}

/// The fused pass of F1 (`f1_step.wgsl`) validates appended to `f1.wgsl`, as the backend
/// builds it.
#[cfg(feature = "gpu")]
#[test]
fn the_fused_f1_pass_validates_appended_to_f1() {
    let src = concur::backend::gpu::f1::step_source(3072, 64);
    assert!(src.contains("const XS: u32 = 3072u;") && src.contains("fn step("));
    let module = validate_source("f1 + f1_step", &src, false);
    assert!(module.entry_points.iter().any(|e| e.name == "step"));
}

/// The JV kernel's subgroup variant (built from jv.wgsl at run time) validates too, and so
/// does the subgroup kernel at every register-slot count the backend builds it with.
#[cfg(feature = "gpu")]
#[test]
fn the_jv_kernels_with_subgroup_operations_validate() {
    let src = concur::backend::gpu::jv::source(true);
    assert!(src.contains("subgroupMin") && !src.contains("SUBGROUP_ARGS"));
    validate_source("jv (subgroups)", &src, true);
    for lanes in [4u32, 8, 16, 32, 64, 128] {
        let src = concur::backend::gpu::jv::sg_source(lanes);
        let slots = 64u32.div_ceil(lanes);
        assert!(src.contains(&format!("const MAXC: u32 = {slots}u;")), "{lanes} lanes");
        validate_source(&format!("jv_sg ({lanes} lanes)"), &src, true);
        let staged = concur::backend::gpu::jv::sg_source_staged(lanes, Some((36, 2)));
        assert!(staged.contains("const STAGE: u32 = 1u;") && staged.contains("const BLK: u32 = 2592u;"));
        let caps = naga::valid::Capabilities::SUBGROUP | naga::valid::Capabilities::SUBGROUP_BARRIER;
        validate_with(&format!("jv_sg staged ({lanes} lanes)"), &staged, true, caps);
    }
}
