//! Every WGSL file parses and validates (naga, no GPU needed), and declares the entry points
//! the backend looks up. The shader sources the host assembles, and so every test here, come
//! with the `gpu` feature; without it the file is empty.
#![cfg(feature = "gpu")]

use std::path::Path;

/// A parsed and validated module with its validation info.
type Validated = (naga::Module, naga::valid::ModuleInfo);

fn validate_source(what: &str, src: &str, subgroups: bool) -> Validated {
    validate_with(what, src, subgroups, naga::valid::Capabilities::SUBGROUP)
}

fn validate_with(what: &str, src: &str, subgroups: bool, caps: naga::valid::Capabilities) -> Validated {
    let module = naga::front::wgsl::parse_str(src).unwrap_or_else(|e| panic!("{what}: {}", e.emit_to_string(src)));
    let mut v = if subgroups {
        let mut v = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), caps);
        v.subgroup_stages(naga::valid::ShaderStages::COMPUTE)
            .subgroup_operations(naga::valid::SubgroupOperationSet::all());
        v
    } else {
        naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::default())
    };
    let info = v.validate(&module).unwrap_or_else(|e| panic!("{what}: {}", e.emit_to_string(src)));
    (module, info)
}

/// One specialisation of a module's pipeline-overridable constants for one entry point,
/// validated as wgpu does when it builds the pipeline (naga's `process_overrides` sets the
/// constants, resolves the override-sized arrays and the workgroup size, and validates the
/// result again).
fn specialise(what: &str, (module, info): &Validated, entry: &str, constants: &[(&str, f64)]) {
    let constants: naga::back::PipelineConstants = constants.iter().map(|&(k, v)| (k.to_string(), v)).collect();
    let stage = Some((naga::ShaderStage::Compute, entry));
    if let Err(e) = naga::back::pipeline_constants::process_overrides(module, info, stage, &constants) {
        panic!("{what}, {entry} with {constants:?}: {e}");
    }
}

/// A shader file validated: alone, or where it is a part of a source the host assembles by
/// concatenation (`backend::gpu::assembled_sources`), the first such source that holds it.
fn validate(path: &Path) -> Validated {
    let src = std::fs::read_to_string(path).unwrap();
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    let (parts, sources) = concur::backend::gpu::assembled_sources();
    if parts.contains(&name.as_str()) {
        let (what, whole, subgroups) = sources
            .iter()
            .find(|(_, whole, _)| whole.contains(src.as_str()))
            .unwrap_or_else(|| panic!("{name}: a part of no assembled source"));
        let caps = naga::valid::Capabilities::SUBGROUP | naga::valid::Capabilities::SUBGROUP_BARRIER;
        return validate_with(&format!("{what} (for {name})"), whole, *subgroups, caps);
    }
    validate_source(&path.display().to_string(), &src, false)
}

// The parts of the assembled sources validate only within them, which the GPU module builds.
#[test]
fn every_wgsl_file_parses_and_validates() {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join("shaders");
    let mut seen = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        // The fused pass is a part of f1.wgsl, validated appended to it (below).
        if path.extension().is_some_and(|e| e == "wgsl") && !path.ends_with("f1_step.wgsl") {
            let (module, _) = validate(&path);
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
        ("jv_sg_direct.wgsl", &["jv_sg"]),
        ("jv_sg_staged.wgsl", &["jv_sg"]),
        ("jv_subgroup.wgsl", &["jv"]),
        ("jv_workgroup.wgsl", &["jv"]),
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
/// builds it, with its workgroup arrays sized by pipeline-overridable constants: at the
/// sizes of boards from 3x3 to 16x16 and at the file's defaults.
#[test]
fn the_fused_f1_pass_validates_appended_to_f1_at_every_size() {
    use concur::backend::gpu::f1::{step_constants, step_source};
    let src = step_source();
    assert!(src.contains("override XS: u32") && src.contains("fn step("));
    let module = validate_source("f1 + f1_step", &src, false);
    assert!(module.0.entry_points.iter().any(|e| e.name == "step"));
    for (xs, cs) in [(64, 64), (3072, 64), (4096, 256), (30720, 256)] {
        specialise("f1 + f1_step", &module, "step", &step_constants(xs, cs));
    }
}

/// The JV kernel's subgroup variant (built from jv.wgsl at run time) validates too, and so
/// does the subgroup kernel at every register-slot count the backend builds it with, unstaged
/// and staged (its staging sizes pipeline-overridable constants).
#[test]
fn the_jv_kernels_with_subgroup_operations_validate() {
    use concur::backend::gpu::jv;
    let src = jv::source(true);
    assert!(src.contains("subgroupMin") && src.contains("@builtin(subgroup_id)"));
    assert!(!jv::source(false).contains("subgroupMin"), "the workgroup variant uses no subgroup operation");
    validate_source("jv (workgroup)", &jv::source(false), false);
    validate_source("jv (subgroups)", &src, true);
    for lanes in [4u32, 8, 16, 32, 64, 128] {
        let src = jv::sg_source(lanes);
        let slots = 64u32.div_ceil(lanes);
        assert!(src.contains(&format!("const MAXC: u32 = {slots}u;")), "{lanes} lanes");
        let module = validate_source(&format!("jv_sg ({lanes} lanes)"), &src, true);
        specialise(&format!("jv_sg ({lanes} lanes)"), &module, "jv_sg", &jv::sg_constants(None));
        let staged = jv::sg_source_staged(lanes, true);
        assert!(staged.contains("subgroupBarrier()") && !src.contains("subgroupBarrier()"));
        let caps = naga::valid::Capabilities::SUBGROUP | naga::valid::Capabilities::SUBGROUP_BARRIER;
        let module = validate_with(&format!("jv_sg staged ({lanes} lanes)"), &staged, true, caps);
        for stage in [(36, 2), (64, 1), (8, 16)] {
            let constants = jv::sg_constants(Some(stage));
            let blk = (stage.0 * stage.0) as f64 * f64::from(stage.1);
            assert!(constants.contains(&("STAGE", 1.0)) && constants.contains(&("BLK", blk)));
            specialise(&format!("jv_sg staged ({lanes} lanes)"), &module, "jv_sg", &constants);
        }
    }
}

/// The auction validates at every workgroup size the backend builds it with (its rows per
/// thread written in, its workgroup size a pipeline-overridable constant), and `settle`
/// from the same module.
#[test]
fn the_auction_validates_at_every_workgroup_size() {
    use concur::backend::gpu::assign::{auction_constants, auction_source};
    for wg in [32u32, 64, 128, 256] {
        let src = auction_source(wg);
        assert!(src.contains(&format!("const PER: u32 = {}u;", 512 / wg)), "{wg}");
        let module = validate_source(&format!("assign ({wg})"), &src, false);
        specialise(&format!("assign ({wg})"), &module, "auction", &auction_constants(wg));
        specialise(&format!("assign ({wg})"), &module, "settle", &[]);
    }
}

/// The host writes no WGSL text into a file: a variant is built by concatenation (a one-line
/// const prelude, a file, a variant file), so no shader holds an insertion marker, every part
/// is in some assembled source, and every assembled source validates.
#[test]
fn variants_are_built_by_concatenation_and_every_one_validates() {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join("shaders");
    let (parts, sources) = concur::backend::gpu::assembled_sources();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "wgsl") {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let src = std::fs::read_to_string(&path).unwrap();
        let marker = src.lines().find(|l| {
            let t = l.trim_start();
            t.starts_with("//")
                && t.len() > 2
                && t[2..]
                    .split_whitespace()
                    .next()
                    .is_some_and(|w| w.len() > 2 && w.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
                && !t.starts_with("// ")
        });
        assert!(marker.is_none(), "{name}: an insertion marker: {marker:?}");
        if parts.contains(&name.as_str()) {
            assert!(sources.iter().any(|(_, whole, _)| whole.contains(src.as_str())), "{name}: in no source");
        }
    }
    let caps = naga::valid::Capabilities::SUBGROUP | naga::valid::Capabilities::SUBGROUP_BARRIER;
    for (what, whole, subgroups) in &sources {
        validate_with(what, whole, *subgroups, caps);
    }
}

/// Every uniform struct the host uploads has, field by field, the offsets and sizes naga gives
/// the struct its shader binds it as, and the same size; every uniform of every shader has a
/// host struct checked here.
#[test]
fn every_uniform_struct_the_host_uploads_matches_its_shader() {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join("shaders");
    let layouts = concur::backend::gpu::uniform_layouts();
    for u in &layouts {
        let (module, _) = validate(&dir.join(u.shader));
        let what = format!("{} as {} in {}", u.host, u.binding, u.shader);
        let (_, var) = module
            .global_variables
            .iter()
            .find(|(_, v)| v.name.as_deref() == Some(u.binding) && v.space == naga::AddressSpace::Uniform)
            .unwrap_or_else(|| panic!("{what}: no such uniform"));
        let naga::TypeInner::Struct { members, span } = &module.types[var.ty].inner else {
            panic!("{what}: not a struct");
        };
        assert_eq!(*span as usize, u.size, "{what}: size");
        assert_eq!(members.len(), u.fields.len(), "{what}: fields {:?} against {members:?}", u.fields);
        for (m, &(name, offset, size)) in members.iter().zip(&u.fields) {
            let shader_name = m.name.as_deref().unwrap_or("?");
            assert_eq!(m.offset as usize, offset, "{what}: {name} (the shader's {shader_name}) offset");
            let shader_size = module.types[m.ty].inner.size(module.to_ctx()) as usize;
            assert_eq!(shader_size, size, "{what}: {name} (the shader's {shader_name}) size");
        }
    }
    // Every uniform a shader declares is one the host uploads through a struct checked above.
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.extension().is_none_or(|e| e != "wgsl") || name == "f1_step.wgsl" {
            continue;
        }
        // A variant file declares no uniform of its own (its source's is checked with it).
        if !std::fs::read_to_string(&path).unwrap().contains("var<uniform>") {
            continue;
        }
        let (module, _) = validate(&path);
        for (_, v) in module.global_variables.iter().filter(|(_, v)| v.space == naga::AddressSpace::Uniform) {
            let binding = v.name.as_deref().unwrap_or("?");
            assert!(
                layouts.iter().any(|u| u.shader == name && u.binding == binding),
                "{name}: uniform {binding} has no host struct checked"
            );
        }
    }
}
