//! Every WGSL file parses and validates (naga, no GPU needed), and declares the entry points
//! the backend looks up.
use std::path::Path;

/// Shader files that use subgroup operations (validated with naga's SUBGROUP capability;
/// the backend builds them only on a device that has it).
const SUBGROUP_FILES: &[&str] = &["jv_sg.wgsl"];

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

#[cfg(feature = "gpu")]
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

fn validate(path: &Path) -> Validated {
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

#[cfg(feature = "gpu")]
/// The lines below an insertion-point declaration at the top of a WGSL source (the whole
/// source without one): what the host's text goes into.
fn body(src: &str) -> &str {
    let mut at = 0;
    let mut declaring = false;
    for line in src.split_inclusive('\n') {
        let l = line.trim_end();
        if l.starts_with("// Insertion points") {
            declaring = true;
        } else if declaring && (l == "//" || !l.starts_with("//")) {
            return &src[at..];
        }
        at += line.len();
    }
    src
}

/// The fused pass of F1 (`f1_step.wgsl`) validates appended to `f1.wgsl`, as the backend
/// builds it, with its workgroup arrays sized by pipeline-overridable constants: at the
/// sizes of boards from 3x3 to 16x16 and at the file's defaults.
#[cfg(feature = "gpu")]
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
#[cfg(feature = "gpu")]
#[test]
fn the_jv_kernels_with_subgroup_operations_validate() {
    use concur::backend::gpu::jv;
    let src = jv::source(true);
    assert!(src.contains("subgroupMin") && !body(&src).contains("//SUBGROUP") && !body(&src).contains("REDUCE_MIN"));
    validate_source("jv (subgroups)", &src, true);
    for lanes in [4u32, 8, 16, 32, 64, 128] {
        let src = jv::sg_source(lanes);
        let slots = 64u32.div_ceil(lanes);
        assert!(src.contains(&format!("const MAXC: u32 = {slots}u;")), "{lanes} lanes");
        let module = validate_source(&format!("jv_sg ({lanes} lanes)"), &src, true);
        specialise(&format!("jv_sg ({lanes} lanes)"), &module, "jv_sg", &jv::sg_constants(None));
        let staged = jv::sg_source_staged(lanes, true);
        assert!(body(&staged).contains("subgroupBarrier()") && !body(&staged).contains("//STAGE_COPY"));
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
#[cfg(feature = "gpu")]
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

/// Where the host still writes WGSL text, the file declares the insertion points at its top,
/// each appears on one line below, and the host fills exactly those; the other files declare
/// none.
#[cfg(feature = "gpu")]
#[test]
fn every_insertion_point_is_declared_at_the_top_of_its_file() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
    let filled = concur::backend::gpu::insertion_points();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "wgsl") {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let src = std::fs::read_to_string(&path).unwrap();
        let head = &src[..src.len() - body(&src).len()];
        let points = filled.iter().find(|(f, _)| *f == name).map_or(&[][..], |(_, p)| *p);
        assert_eq!(head.is_empty(), points.is_empty(), "{name}: a declaration without points, or points without one");
        for p in points {
            assert!(head.contains(p), "{name}: {p} is not declared at the top");
            assert_eq!(body(&src).lines().filter(|l| l.contains(p)).count(), 1, "{name}: {p} is not on one line");
        }
        // Every marker the declaration names is one the host fills.
        let declared = head.split(|c: char| !(c.is_ascii_uppercase() || c == '_' || c == '/')).filter(|w| {
            w.starts_with("//") && w.len() > 2 && w[2..].chars().all(|c| c.is_ascii_uppercase() || c == '_')
        });
        for d in declared {
            assert!(points.contains(&d), "{name}: {d} is declared but the host does not fill it");
        }
    }
}

/// Every uniform struct the host uploads has, field by field, the offsets and sizes naga gives
/// the struct its shader binds it as, and the same size; every uniform of every shader has a
/// host struct checked here.
#[cfg(feature = "gpu")]
#[test]
fn every_uniform_struct_the_host_uploads_matches_its_shader() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
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
