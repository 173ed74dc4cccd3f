//! Module layering, read from the `use` paths: kernels below algorithms below drivers, and no
//! import circle. Lower modules must not import the ones built on them (an import circle makes
//! either side impossible to change alone).
//!
//! Kernels: `rng`, `cancel`, `meter`, `error`, `options`, `hash`, `puzzle`, `assign`, `verify`,
//! `limits`, the projections (`f1::project`, `dc::project`, `dc::layout`). Algorithms: the
//! searches (`search::backtrack`, `scan`, `hill`, `alns`), the batch core (`batch`), the map
//! drivers (`f1::map`, `dc`), then the map-guided search (`guided`, built on F1 and the
//! backtracker), and the typed method (`method`, one options type per method, over them all).
//! The arrows run one way: the maps use the searches, never the reverse. Drivers: `backend`,
//! `solve`, `report`, `certify`. Above the engine, crates of their own (cargo forbids the
//! engine to import them): the lab (`lab/`: `ladder`, `bench`, `diagnose`), the command line
//! (`cli/`) and the Python extension (`python/`), each read for circles.
//!
//! Every source file of a crate's library is read: its comments and its unit tests
//! (`#[cfg(test)] mod tests`) are left out, every path it names (`use` trees expanded,
//! `crate::`, `super::` and `self::` paths in code) is resolved to the module it names (the
//! longest prefix that is a module), and the imports between modules are checked.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|e| e == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The module a file of `src/` is: `src/lib.rs` is `crate`, `src/a/mod.rs` and `src/a.rs` are
/// `crate::a`, `src/a/b.rs` is `crate::a::b`. None for the binary.
fn module_of(rel: &Path) -> Option<String> {
    let parts: Vec<String> = rel.iter().map(|s| s.to_string_lossy().into_owned()).collect();
    if parts.get(1).is_some_and(|p| p == "bin" || p == "main.rs") {
        return None;
    }
    let mut m = vec!["crate".to_string()];
    for (i, p) in parts.iter().enumerate().skip(1) {
        let last = i == parts.len() - 1;
        if last {
            let stem = p.trim_end_matches(".rs");
            if stem != "mod" && stem != "lib" {
                m.push(stem.to_string());
            }
        } else {
            m.push(p.clone());
        }
    }
    Some(m.join("::"))
}

/// The text of a source file without its comments and its unit tests.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .map(|l| match l.find("//") {
            // A `//` inside a string (a URL) is rare in these files; a comment is cut.
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A `use` tree (`a::{b, c::{d, e}}`) as the paths it names.
fn expand(tree: &str) -> Vec<String> {
    let tree = tree.split_whitespace().collect::<Vec<_>>().join(" ");
    let Some(open) = tree.find('{') else {
        return vec![tree.split(" as ").next().unwrap_or("").replace(' ', "")];
    };
    let prefix = tree[..open].replace(' ', "");
    let Some(close) = tree.rfind('}').filter(|&c| c > open) else { return Vec::new() };
    let inner = &tree[open + 1..close];
    let (mut items, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&inner[start..]);
    items
        .into_iter()
        .filter(|i| !i.trim().is_empty())
        .flat_map(|i| {
            let prefix = prefix.clone();
            expand(i).into_iter().map(move |p| {
                if p == "self" { prefix.trim_end_matches("::").to_string() } else { format!("{prefix}{p}") }
            })
        })
        .collect()
}

/// The paths a file's code names: its `use` trees expanded, and the `crate::`, `super::` and
/// `self::` paths written in its code.
fn paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("use ") {
        let before = rest[..i].chars().last();
        let after = &rest[i + 4..];
        if before.is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
            && let Some(end) = after.find(';')
        {
            out.extend(expand(&after[..end]));
        }
        rest = after;
    }
    let bytes = code.as_bytes();
    for start in ["crate::", "super::", "self::"] {
        let mut at = 0;
        while let Some(i) = code[at..].find(start) {
            let i = at + i;
            at = i + start.len();
            let prev = if i == 0 { b' ' } else { bytes[i - 1] };
            if prev.is_ascii_alphanumeric() || prev == b'_' || prev == b'$' || prev == b':' {
                continue;
            }
            let end =
                code[i..].find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).map_or(code.len(), |e| i + e);
            out.push(code[i..end].trim_end_matches(':').to_string());
        }
    }
    out
}

/// The module a path names, from the file's module `here` (`is_dir`: the file is a `mod.rs` or
/// `lib.rs`, so that `super` is its parent): the longest prefix that is a module. None for a
/// path outside the crate.
fn resolve(path: &str, here: &str, is_dir: bool, modules: &BTreeSet<String>) -> Option<String> {
    let mut segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let mut base: Vec<String> = here.split("::").map(String::from).collect();
    match segs.first().copied()? {
        "crate" => {
            base = vec!["crate".into()];
            segs.remove(0);
        }
        "self" => {
            segs.remove(0);
        }
        "super" => {
            // A file `a/b.rs` (module crate::a::b) and a file `a/b/mod.rs` (the same module)
            // both have crate::a as `super`.
            let _ = is_dir;
            while segs.first() == Some(&"super") {
                segs.remove(0);
                base.pop();
            }
        }
        _ => return None,
    }
    let mut best = base.join("::");
    let mut cur = base;
    for s in segs {
        cur.push(s.to_string());
        let m = cur.join("::");
        if modules.contains(&m) {
            best = m;
        } else {
            break;
        }
    }
    Some(best)
}

/// The repository's root.
fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// Each module of the engine's library and the modules its file imports (itself left out).
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    graph_of(root())
}

/// [`graph`] of the crate at `root` (its `src/`).
fn graph_of(root: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let src = root.join("src");
    let mut texts = BTreeMap::new();
    for f in files(&src) {
        let rel = f.strip_prefix(root).unwrap().to_path_buf();
        if let Some(m) = module_of(&rel) {
            let is_dir = rel.file_name().is_some_and(|n| n == "mod.rs" || n == "lib.rs");
            texts.insert(m, (is_dir, code(&std::fs::read_to_string(&f).unwrap())));
        }
    }
    let modules: BTreeSet<String> = texts.keys().cloned().collect();
    let mut g = BTreeMap::new();
    for (m, (is_dir, text)) in &texts {
        let mut to = BTreeSet::new();
        for p in paths(text) {
            if let Some(t) = resolve(&p, m, *is_dir, &modules)
                && t != *m
            {
                to.insert(t);
            }
        }
        g.insert(m.clone(), to);
    }
    g
}

/// The layer of a module: 0 kernels, 1 algorithms, 2 drivers.
fn layer(m: &str) -> u8 {
    const DRIVERS: [&str; 5] = ["crate::backend", "crate::solve", "crate::report", "crate::certify", "crate"];
    const ALGORITHMS: [&str; 6] =
        ["crate::search", "crate::batch", "crate::f1", "crate::dc", "crate::guided", "crate::method"];
    const KERNEL_PARTS: [&str; 3] = ["crate::f1::project", "crate::dc::project", "crate::dc::layout"];
    let under = |p: &str| m == p || m.starts_with(&format!("{p}::"));
    if KERNEL_PARTS.iter().any(|p| under(p)) {
        0
    } else if m == "crate" || DRIVERS[..4].iter().any(|p| under(p)) {
        2
    } else if ALGORITHMS.iter().any(|p| under(p)) {
        1
    } else {
        0
    }
}

#[test]
fn the_path_reader_resolves_what_files_name() {
    let modules: BTreeSet<String> =
        ["crate", "crate::a", "crate::a::b", "crate::a::c", "crate::d"].into_iter().map(String::from).collect();
    assert_eq!(expand("super::{b::X, c::{Y, Z}}"), ["super::b::X", "super::c::Y", "super::c::Z"]);
    assert_eq!(expand("crate::a::{self, b}"), ["crate::a", "crate::a::b"]);
    let text = "use super::b::X;\nuse crate::{d::Q, Result};\nfn f() { crate::a::c::g(); } // crate::d::no";
    let ps = paths(&code(text));
    let got: BTreeSet<String> = ps.iter().filter_map(|p| resolve(p, "crate::a::c", false, &modules)).collect();
    assert_eq!(got, ["crate", "crate::a::b", "crate::a::c", "crate::d"].into_iter().map(String::from).collect());
    // A mod.rs's `super` is its parent too.
    assert_eq!(resolve("super::d", "crate::a", true, &modules).as_deref(), Some("crate::d"));
}

#[test]
fn low_modules_do_not_import_the_ones_above_them() {
    let g = graph();
    assert!(g.len() > 80, "the library's files were not found: {}", g.len());
    // The reader finds what files import (so that the rules below can fail).
    assert!(g["crate::f1::map"].contains("crate::batch"), "{:?}", g["crate::f1::map"]);
    assert!(g["crate::solve"].contains("crate::method"));
    let mut wrong = Vec::new();
    for (m, to) in &g {
        for t in to {
            if layer(t) > layer(m) {
                wrong.push(format!("{m} (layer {}) imports {t} (layer {})", layer(m), layer(t)));
            }
        }
    }
    // Finer rules inside the layers, as (module prefix, prefixes it must not import).
    let rules: &[(&str, &[&str])] = &[
        ("crate::rng", &["crate::"]),
        ("crate::cancel", &["crate::"]),
        ("crate::error", &["crate::"]),
        ("crate::hash", &["crate::"]),
        ("crate::meter", &["crate::f1", "crate::dc", "crate::batch", "crate::search", "crate::puzzle"]),
        ("crate::options", &["crate::f1", "crate::dc", "crate::batch", "crate::search", "crate::puzzle"]),
        // The searches never use the maps nor what is built on them.
        ("crate::search", &["crate::f1", "crate::dc", "crate::batch", "crate::guided", "crate::method"]),
        // The batch core is below both formulations' drivers.
        ("crate::batch", &["crate::f1", "crate::dc", "crate::guided", "crate::method"]),
        // The projections are below their drivers and the batch core.
        ("crate::f1::project", &["crate::f1::map", "crate::batch", "crate::dc", "crate::search", "crate::guided"]),
        ("crate::dc::project", &["crate::batch", "crate::f1", "crate::search", "crate::guided"]),
        ("crate::dc::layout", &["crate::dc::project", "crate::batch", "crate::f1", "crate::guided"]),
        // The two formulations do not import each other; what they share is in the batch core.
        ("crate::f1", &["crate::dc", "crate::guided", "crate::method"]),
        ("crate::dc", &["crate::f1", "crate::guided", "crate::method"]),
        ("crate::guided", &["crate::dc", "crate::method"]),
    ];
    for (m, to) in &g {
        for (prefix, banned) in rules {
            if !(m == prefix || m.starts_with(&format!("{prefix}::"))) {
                continue;
            }
            for t in to {
                if banned.iter().any(|b| *b == "crate::" || t == b || t.starts_with(&format!("{b}::"))) {
                    wrong.push(format!("{m} imports {t}"));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "imports from a layer above:\n{}", wrong.join("\n"));
}

#[test]
fn no_module_imports_its_own_ancestor_and_no_imports_form_a_circle() {
    let mut wrong = circles(&graph());
    // The crates built on the engine too: the lab, the command line, the Python package.
    let lab = graph_of(&root().join("lab"));
    assert!(lab.len() >= 25, "the lab's files were not found: {}", lab.len());
    // The reader finds what the lab's files import (so that the check can fail).
    assert!(lab["crate::ladder::report::hardness::analysis"].contains("crate::ladder::report::fit"));
    for (name, g, least) in
        [("lab", lab, 25), ("cli", graph_of(&root().join("cli")), 2), ("python", graph_of(&root().join("python")), 6)]
    {
        assert!(g.len() >= least, "the {name} crate's files were not found: {}", g.len());
        wrong.extend(circles(&g).into_iter().map(|w| format!("{name}: {w}")));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// What is wrong with an import graph: a module that imports the crate root's re-exports, and
/// every circle.
fn circles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut wrong = Vec::new();
    // The crate root re-exports for users; inside the crate a file names the defining module.
    for (m, to) in g {
        if m != "crate" && to.contains("crate") {
            wrong.push(format!("{m} imports the crate root's re-exports"));
        }
    }
    // Circles: Tarjan's strongly connected components of the import graph.
    let names: Vec<&String> = g.keys().collect();
    let index_of: BTreeMap<&String, usize> = names.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let n = names.len();
    let adj: Vec<Vec<usize>> =
        names.iter().map(|m| g[*m].iter().filter_map(|t| index_of.get(t).copied()).collect()).collect();
    let (mut index, mut low, mut on, mut stack, mut next) =
        (vec![usize::MAX; n], vec![0; n], vec![false; n], vec![], 0);
    let mut circles = Vec::new();
    fn strong(
        v: usize,
        adj: &[Vec<usize>],
        st: &mut (&mut Vec<usize>, &mut Vec<usize>, &mut Vec<bool>, &mut Vec<usize>, &mut usize),
        circles: &mut Vec<Vec<usize>>,
    ) {
        st.0[v] = *st.4;
        st.1[v] = *st.4;
        *st.4 += 1;
        st.3.push(v);
        st.2[v] = true;
        for &w in &adj[v] {
            if st.0[w] == usize::MAX {
                strong(w, adj, st, circles);
                st.1[v] = st.1[v].min(st.1[w]);
            } else if st.2[w] {
                st.1[v] = st.1[v].min(st.0[w]);
            }
        }
        if st.1[v] == st.0[v] {
            let mut comp = Vec::new();
            while let Some(w) = st.3.pop() {
                st.2[w] = false;
                comp.push(w);
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                circles.push(comp);
            }
        }
    }
    for v in 0..n {
        if index[v] == usize::MAX {
            strong(v, &adj, &mut (&mut index, &mut low, &mut on, &mut stack, &mut next), &mut circles);
        }
    }
    for c in circles {
        let mut ms: Vec<&str> = c.iter().map(|&i| names[i].as_str()).collect();
        ms.sort();
        wrong.push(format!("an import circle: {}", ms.join(", ")));
    }
    wrong
}

/// The README's two commands share their build: `cargo run --release` (the binary's build)
/// and `cargo test --release` (the workspace's test build) resolve every crate they share with
/// the same features, so the tests reuse the binary's build of the engine and the GPU stack
/// instead of compiling them again (`cli/Cargo.toml` turns on what the dev-dependencies would
/// otherwise add). Read from cargo's unit graphs, which build nothing. Where the test binary
/// runs without cargo (a staged binary on a device machine) it says SKIPPED.
#[test]
fn the_binary_and_the_tests_build_the_shared_crates_alike() {
    let Some(cargo) = std::env::var_os("CARGO") else {
        eprintln!("SKIPPED the_binary_and_the_tests_build_the_shared_crates_alike: not run by cargo");
        return;
    };
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let scratch = std::env::temp_dir().join(format!("concur-unit-graph-{}", std::process::id()));
    let graph = |args: &[&str]| -> BTreeMap<String, BTreeSet<String>> {
        let out = std::process::Command::new(&cargo)
            .args(args)
            .args(["--release", "--offline", "-Z", "unstable-options", "--unit-graph"])
            .current_dir(root)
            .env("RUSTC_BOOTSTRAP", "1")
            .env("CARGO_TARGET_DIR", &scratch)
            .output()
            .expect("run cargo");
        assert!(out.status.success(), "cargo {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        let g: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a unit graph");
        let mut by: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for u in g["units"].as_array().expect("units") {
            let features = u["features"].as_array().unwrap().iter().map(|f| f.as_str().unwrap().to_string());
            by.entry(u["pkg_id"].as_str().unwrap().to_string()).or_default().extend(features);
        }
        by
    };
    let run = graph(&["build", "-p", "concur-cli", "--bin", "concur"]);
    let test = graph(&["test", "--no-run"]);
    let _ = std::fs::remove_dir_all(&scratch);
    let differ: Vec<String> = run
        .iter()
        .filter(|(pkg, f)| test.get(*pkg).is_some_and(|g| g != *f))
        .map(|(pkg, f)| format!("{pkg}: {f:?} in the binary's build, {:?} in the tests'", test[pkg]))
        .collect();
    assert!(run.len() > 50 && test.len() > run.len(), "unit graphs of {} and {} crates", run.len(), test.len());
    assert!(differ.is_empty(), "crates the two builds compile apart:\n{}", differ.join("\n"));
}
