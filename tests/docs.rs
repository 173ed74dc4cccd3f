//! The docs cannot drift: every relative link and its anchor resolves, every § reference names a
//! section of ARCHITECTURE.md, every repository path in backticks exists, every folder under
//! `benches/results` is in its index with a README, every shader file is named in
//! ARCHITECTURE.md, every `concur ...` command in the docs parses with the real command
//! line (`concur_cli::Cli`; module `commands`), and every table the code generates (what runs
//! where, `solve`'s options, ALNS's operators) is the one the code writes now.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The Markdown files under `dir`, recursively, skipping build output and hidden folders.
fn markdown_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if name.starts_with('.') || name == "target" {
            continue;
        }
        if p.is_dir() {
            markdown_under(&p, out);
        } else if name.ends_with(".md") {
            out.push(p);
        }
    }
}

/// Every Markdown file of the repository: the front page, the topic pages, the design and
/// benchmark documents, and the READMEs beside code and data.
fn pages() -> Vec<PathBuf> {
    let mut v = Vec::new();
    markdown_under(root(), &mut v);
    assert!(v.len() >= 10, "found only {} Markdown files", v.len());
    v
}

/// The text outside fenced code blocks, line by line (blocks blanked, so line numbers hold),
/// with inline code spans kept.
fn prose(text: &str) -> Vec<String> {
    let mut inside = false;
    text.lines()
        .map(|l| {
            if l.trim_start().starts_with("```") {
                inside = !inside;
                return String::new();
            }
            if inside { String::new() } else { l.to_string() }
        })
        .collect()
}

/// GitHub's anchor for a heading: lower case, spaces to hyphens, punctuation other than `-`
/// and `_` dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .chars()
        .filter_map(|c| {
            if c == ' ' {
                Some('-')
            } else if c.is_alphanumeric() || c == '-' || c == '_' {
                Some(c.to_lowercase().next().unwrap())
            } else {
                None
            }
        })
        .collect()
}

/// The anchors a page defines: its headings' slugs (the n-th repeat gets `-n`) and explicit
/// `<a id="...">` / `<a name="...">` targets.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut seen: std::collections::BTreeMap<String, usize> = Default::default();
    for l in prose(text) {
        let t = l.trim_start();
        if t.starts_with('#') {
            let h = t.trim_start_matches('#');
            if h.starts_with(' ') {
                let s = slug(h);
                let n = seen.entry(s.clone()).or_insert(0);
                out.insert(if *n == 0 { s.clone() } else { format!("{s}-{n}") });
                *n += 1;
            }
        }
        for key in ["<a id=\"", "<a name=\""] {
            let mut rest = l.as_str();
            while let Some(i) = rest.find(key) {
                rest = &rest[i + key.len()..];
                if let Some(j) = rest.find('"') {
                    out.insert(rest[..j].to_string());
                }
            }
        }
    }
    out
}

/// The targets of the Markdown links and images on a line: `[text](target)`.
fn link_targets(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        let Some(j) = rest.find(')') else { break };
        let t = rest[..j].split_whitespace().next().unwrap_or("").trim_matches(['<', '>']);
        out.push(t.to_string());
        rest = &rest[j..];
    }
    out
}

/// Relative links (files and anchors) resolve, from every page.
#[test]
fn every_relative_link_and_anchor_in_the_docs_resolves() {
    let mut bad = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = read(&page);
        for (n, line) in prose(&text).iter().enumerate() {
            for t in link_targets(line) {
                if t.is_empty() || t.contains("://") || t.starts_with("mailto:") {
                    continue;
                }
                checked += 1;
                let (file, anchor) = match t.split_once('#') {
                    Some((f, a)) => (f, Some(a)),
                    None => (t.as_str(), None),
                };
                let target = if file.is_empty() { page.clone() } else { page.parent().unwrap().join(file) };
                let at = format!("{}:{}: ({t})", page.strip_prefix(root()).unwrap().display(), n + 1);
                if !target.exists() {
                    bad.push(format!("{at}: no such file"));
                    continue;
                }
                if let Some(a) = anchor {
                    if target.is_dir() || target.extension().is_none_or(|e| e != "md") {
                        bad.push(format!("{at}: an anchor into a file that is not Markdown"));
                    } else if !anchors(&read(&target)).contains(a) {
                        bad.push(format!("{at}: no heading or anchor `{a}` there"));
                    }
                }
            }
        }
    }
    assert!(bad.is_empty(), "links that do not resolve:\n{}", bad.join("\n"));
    assert!(checked >= 50, "only {checked} relative links found");
}

/// The numbered sections of ARCHITECTURE.md (`## N. Title`).
fn architecture_sections() -> BTreeSet<u32> {
    read(&root().join("ARCHITECTURE.md"))
        .lines()
        .filter_map(|l| l.strip_prefix("## "))
        .filter_map(|h| h.split('.').next()?.trim().parse().ok())
        .collect()
}

/// The files that cite ARCHITECTURE.md by section: the docs and the source comments.
fn citing_files() -> Vec<PathBuf> {
    let mut v = pages();
    fn rs_under(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for p in entries.filter_map(|e| e.ok()).map(|e| e.path()) {
            if p.is_dir() {
                rs_under(&p, out);
            } else if p.extension().is_some_and(|e| e == "rs" || e == "wgsl" || e == "toml") {
                out.push(p);
            }
        }
    }
    for d in ["src", "lab", "cli", "tests", "benches", "examples", "shaders"] {
        rs_under(&root().join(d), &mut v);
    }
    v
}

/// Every `§N` (and `§N-M`, `§§N, M`) names a section of ARCHITECTURE.md, the one document
/// cited by section.
#[test]
fn every_section_reference_names_a_section_of_the_architecture() {
    let sections = architecture_sections();
    assert!(sections.len() >= 8, "ARCHITECTURE.md's numbered sections: {sections:?}");
    let mut bad = Vec::new();
    let mut checked = 0;
    for f in citing_files() {
        let text = read(&f);
        for (n, line) in text.lines().enumerate() {
            let mut rest = line;
            while let Some(i) = rest.find('§') {
                rest = &rest[i + '§'.len_utf8()..];
                let refs: String = rest
                    .trim_start_matches('§')
                    .chars()
                    .take_while(|c| c.is_ascii_digit() || ", -–".contains(*c))
                    .collect();
                let nums: Vec<u32> = refs.split(|c: char| !c.is_ascii_digit()).filter_map(|s| s.parse().ok()).collect();
                for s in nums {
                    checked += 1;
                    if !sections.contains(&s) {
                        bad.push(format!(
                            "{}:{}: §{s} is not a section of ARCHITECTURE.md",
                            f.strip_prefix(root()).unwrap().display(),
                            n + 1
                        ));
                    }
                }
            }
        }
    }
    assert!(bad.is_empty(), "section references that do not resolve:\n{}", bad.join("\n"));
    assert!(checked >= 20, "only {checked} section references found");
}

/// Folders and files of the repository that a backticked path may start with.
const TOP: [&str; 9] =
    ["src/", "tests/", "benches/", "scripts/", "examples/", "shaders/", "docs/", ".ci/", "README.md"];

/// Every repository path named in backticks in the docs' prose (`src/solve.rs`,
/// `benches/results/count/`) exists. Paths with placeholders (`WxH`, `*`, `<...>`, `K-of-N`)
/// and files that a command writes when run (`results/...`, not under the repository's
/// folders) are not paths to check.
#[test]
fn every_repository_path_in_backticks_exists() {
    let mut bad = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = read(&page);
        for (n, line) in prose(&text).iter().enumerate() {
            for (k, span) in line.split('`').enumerate() {
                if k % 2 == 0 {
                    continue;
                }
                let p = span.trim().trim_end_matches([',', '.', ':']);
                let p = p.split("::").next().unwrap();
                if p.contains(char::is_whitespace)
                    || !TOP.iter().any(|t| p.starts_with(t))
                    || p.contains(['*', '<', '>', '{', '[', '$', '?'])
                    || ["WxH", "WWxHH", "K-of-N", "NAME", "FILE", "/N", "..."].iter().any(|x| p.contains(x))
                {
                    continue;
                }
                checked += 1;
                // A path relative to the repository root, or, in a README inside a folder, to it.
                let here = page.parent().unwrap().join(p);
                if !root().join(p).exists() && !here.exists() {
                    bad.push(format!("{}:{}: `{p}`", page.strip_prefix(root()).unwrap().display(), n + 1));
                }
            }
        }
    }
    assert!(bad.is_empty(), "paths in the docs that do not exist:\n{}", bad.join("\n"));
    assert!(checked >= 50, "only {checked} paths found");
}

/// Every folder under `benches/results` has a README and a row in the index.
#[test]
fn every_results_folder_is_in_the_index_with_a_readme() {
    let dir = root().join("benches/results");
    let index = read(&dir.join("README.md"));
    let mut folders: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    folders.sort();
    assert!(folders.len() >= 10, "{folders:?}");
    let mut bad = Vec::new();
    for f in &folders {
        if !dir.join(f).join("README.md").exists() {
            bad.push(format!("{f}/ has no README.md"));
        }
        if !index.contains(&format!("]({f}/README.md)")) {
            bad.push(format!("{f}/ has no row linking ({f}/README.md) in benches/results/README.md"));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// scripts/README.md has a row for every script under scripts/ (`slurm/up.sh` for the
/// folder's), and every row names a script that exists: under scripts/, or, for a one-off
/// kept beside its results, at the path its usage gives.
#[test]
fn every_script_has_a_row_and_every_row_a_script() {
    let readme = read(&root().join("scripts/README.md"));
    let rows: Vec<(String, String)> = readme
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let name = l.split('`').nth(1).unwrap_or("").to_string();
            (name, l.to_string())
        })
        .collect();
    let mut scripts = Vec::new();
    for dir in ["", "slurm/"] {
        for e in std::fs::read_dir(root().join("scripts").join(dir)).unwrap().filter_map(|e| e.ok()) {
            let name = e.file_name().to_string_lossy().to_string();
            if e.path().is_file() && name != "README.md" {
                scripts.push(format!("{dir}{name}"));
            }
        }
    }
    assert!(scripts.len() >= 10, "{scripts:?}");
    let mut bad = Vec::new();
    for s in &scripts {
        if !rows.iter().any(|(n, _)| n == s) {
            bad.push(format!("scripts/{s}: no row in scripts/README.md"));
        }
    }
    for (name, line) in &rows {
        let here = root().join("scripts").join(name).is_file();
        let beside = line.split('`').skip(1).step_by(2).any(|t| {
            let path = t.split_whitespace().find(|w| w.ends_with(name.as_str())).unwrap_or("");
            !path.is_empty() && root().join(path).is_file()
        });
        if !here && !beside {
            bad.push(format!("scripts/README.md: {name} is neither under scripts/ nor where its usage says"));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// ARCHITECTURE.md stays the design, the maths and the conventions, in at most 4,000 words;
/// the detail lives in docs/internals.md.
#[test]
fn the_architecture_stays_short() {
    let words = read(&root().join("ARCHITECTURE.md")).split_whitespace().count();
    assert!((1000..=4000).contains(&words), "ARCHITECTURE.md has {words} words (at most 4,000)");
}

/// Every shader file is named in the module map (docs/internals.md), in its list of kernel
/// families, and again where its engine is described.
#[test]
fn every_shader_file_is_named_in_the_internals() {
    let arch = read(&root().join("docs/internals.md"));
    let families = arch
        .lines()
        .find(|l| l.starts_with("| `shaders/*.wgsl` |"))
        .expect("docs/internals.md's module map has a `shaders/*.wgsl` row");
    let mut shaders: Vec<String> = std::fs::read_dir(root().join("shaders"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(".wgsl"))
        .collect();
    shaders.sort();
    assert!(shaders.len() >= 5, "{shaders:?}");
    let mut bad = Vec::new();
    for s in &shaders {
        let stem = s.trim_end_matches(".wgsl");
        if !families.contains(&format!("`{stem}`")) {
            bad.push(format!("{s}: not in the module map's families: {families}"));
        }
        if !arch.contains(&format!("`{s}`")) && !arch.contains(&format!("shaders/{s}")) {
            bad.push(format!("{s}: docs/internals.md never names the file"));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The module map names what exists: each row's module is the file it gives (`a::b` is
/// `a/b.rs` or `a/b/mod.rs` under its crate's `src/`), and every identifier in backticks
/// (a name or a path, its last segment taken) occurs as a word in the crates' code.
#[test]
fn the_module_map_names_modules_and_identifiers_that_exist() {
    let text = read(&root().join("docs/internals.md"));
    let map = &text[text.find("## Module map").expect("docs/internals.md has a module map")..];
    let map = &map[..map[3..].find("\n## ").map_or(map.len(), |i| i + 3)];
    // Every word of the crates' code (the Rust sources, the shaders, the Python package).
    let mut words = BTreeSet::new();
    fn walk(dir: &Path, words: &mut BTreeSet<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for p in entries.filter_map(|e| e.ok()).map(|e| e.path()) {
            if p.is_dir() {
                walk(&p, words);
            } else if p.extension().is_some_and(|e| e == "rs" || e == "wgsl" || e == "py" || e == "pyi") {
                let t = std::fs::read_to_string(&p).unwrap_or_default();
                for w in t.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
                    if !w.is_empty() {
                        words.insert(w.to_string());
                    }
                }
            }
        }
    }
    for d in ["src", "lab/src", "cli/src", "python/src", "python/concur", "shaders"] {
        walk(&root().join(d), &mut words);
    }
    let ident = |t: &str| {
        let t = t.trim_end_matches("()").split('<').next().unwrap_or("");
        let ok = !t.is_empty()
            && t.split("::").all(|seg| {
                seg.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
                    && seg.chars().all(|c| c.is_alphanumeric() || c == '_')
            });
        ok.then(|| t.rsplit("::").next().unwrap().to_string())
    };
    let mut bad = Vec::new();
    let mut checked = 0;
    let mut rows = 0;
    for line in map.lines().filter(|l| l.starts_with("| `")) {
        rows += 1;
        let cells: Vec<&str> = line.split(" | ").collect();
        // The module and its file: `a::b` (`src/a/b.rs`).
        let first = cells[0].trim_start_matches("| ");
        let ticked: Vec<&str> = first.split('`').skip(1).step_by(2).collect();
        if let [module, file, ..] = ticked[..]
            && file.ends_with(".rs")
            && !module.contains('/')
        {
            let segs: Vec<&str> = module.split("::").skip_while(|s| s.starts_with("concur")).collect();
            let tail = segs.join("/");
            let rel = file.rsplit_once("src/").map_or(file.trim_start_matches(".../"), |(_, t)| t);
            let rel = rel.trim_end_matches(".rs");
            let rel = rel.strip_suffix("/mod").unwrap_or(rel);
            let rel = if rel == "lib" || rel == "mod" { "" } else { rel };
            if !(tail == rel || file.starts_with("...") && tail.ends_with(rel)) {
                bad.push(format!("{module}: not the module of {file}"));
            }
        }
        for cell in &cells {
            for t in cell.split('`').skip(1).step_by(2) {
                if let Some(w) = ident(t) {
                    checked += 1;
                    if !words.contains(&w) {
                        bad.push(format!("`{t}`: no such name in the crates"));
                    }
                }
            }
        }
    }
    assert!(rows >= 80 && checked >= 300, "the map's rows were not read: {rows} rows, {checked} names");
    assert!(bad.is_empty(), "the module map names what does not exist:\n{}", bad.join("\n"));
}

#[test]
fn the_checkers_read_what_they_should() {
    assert_eq!(slug("The 8x8 question: pooled rates (2026-12-03)"), "the-8x8-question-pooled-rates-2026-12-03");
    assert_eq!(slug("`--assign gpu`, on the device"), "--assign-gpu-on-the-device");
    let a = anchors("# A b\n## A b\n```\n# not a heading\n```\n<a id=\"sec-6\"></a>\n");
    assert_eq!(a, ["a-b", "a-b-1", "sec-6"].into_iter().map(String::from).collect());
    assert_eq!(link_targets("see [x](a.md#b) and ![p](c/d.svg \"t\")"), ["a.md#b", "c/d.svg"]);
}

/// The docs' commands against the real command line: every `concur ...` line in the code
/// blocks of README.md and docs/*.md parses with [`Cli`](concur_cli::Cli) (clap's `try_parse_from`, which runs
/// nothing), so a command copied from the docs runs as written.
mod commands {
    use clap::Parser;
    use concur_cli::Cli;
    use std::path::{Path, PathBuf};

    /// README.md and every Markdown page under docs/.
    fn pages() -> Vec<PathBuf> {
        let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
        let mut v = vec![root.join("README.md")];
        let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "md"))
                    .collect()
            })
            .unwrap_or_default();
        docs.sort();
        v.extend(docs);
        v
    }

    /// The lines inside fenced code blocks, `(line number, text)`, with backslash
    /// continuations joined onto their first line.
    fn code_lines(text: &str) -> Vec<(usize, String)> {
        let mut out: Vec<(usize, String)> = Vec::new();
        let (mut inside, mut open) = (false, false);
        for (i, line) in text.lines().enumerate() {
            let t = line.trim_start();
            if t.starts_with("```") {
                inside = !inside;
                open = false;
                continue;
            }
            if !inside {
                continue;
            }
            let (body, cont) = match t.trim_end().strip_suffix('\\') {
                Some(b) => (b.to_string(), true),
                None => (t.trim_end().to_string(), false),
            };
            match out.last_mut() {
                Some(last) if open => {
                    last.1.push(' ');
                    last.1.push_str(&body);
                }
                _ => out.push((i + 1, body)),
            }
            open = cont;
        }
        out
    }

    /// Shell words of a line, split into commands at `|`, `||`, `&&` and `;`: quotes removed,
    /// a `#` word ends the line, shell expansions (`$X`, `${X}`, `$((...))`) read as `1`.
    fn commands(line: &str) -> Vec<Vec<String>> {
        let mut cmds = vec![Vec::new()];
        let mut word: Option<String> = None;
        let mut chars = line.chars().peekable();
        let mut quote: Option<char> = None;
        while let Some(c) = chars.next() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some('"') | None, '$') => {
                    // An expansion: `$((...))`, `${...}` or `$NAME`, read as 1.
                    let w = word.get_or_insert_with(String::new);
                    w.push('1');
                    match chars.peek() {
                        Some('(') | Some('{') => {
                            let mut depth = 0;
                            for d in chars.by_ref() {
                                match d {
                                    '(' | '{' => depth += 1,
                                    ')' | '}' => depth -= 1,
                                    _ => {}
                                }
                                if depth == 0 {
                                    break;
                                }
                            }
                        }
                        _ => {
                            while chars.peek().is_some_and(|d| d.is_ascii_alphanumeric() || *d == '_') {
                                chars.next();
                            }
                        }
                    }
                }
                (Some(_), c) => word.get_or_insert_with(String::new).push(c),
                (None, '"' | '\'') => {
                    quote = Some(c);
                    word.get_or_insert_with(String::new);
                }
                (None, '#') if word.is_none() => break,
                (None, c) if c.is_whitespace() => {
                    if let Some(w) = word.take() {
                        cmds.last_mut().unwrap().push(w);
                    }
                }
                (None, '|' | ';' | '&') => {
                    if let Some(w) = word.take() {
                        cmds.last_mut().unwrap().push(w);
                    }
                    if matches!(chars.peek(), Some('|' | '&')) {
                        chars.next();
                    }
                    cmds.push(Vec::new());
                }
                (None, c) => word.get_or_insert_with(String::new).push(c),
            }
        }
        if let Some(w) = word {
            cmds.last_mut().unwrap().push(w);
        }
        cmds.retain(|c| !c.is_empty());
        cmds
    }

    /// The arguments of a `concur` invocation (`concur ...`, `target/release/concur ...`,
    /// `cargo run --release -- ...`), with `concur` first and redirections dropped; `None`
    /// for any other command.
    fn concur_args(words: &[String]) -> Option<Vec<String>> {
        let mut w: Vec<&str> = words.iter().map(String::as_str).collect();
        while w.first().is_some_and(|x| x.contains('=') && !x.starts_with('-') || ["time", "nohup", "env"].contains(x))
        {
            w.remove(0);
        }
        let rest: Vec<&str> = match w.first() {
            Some(&("concur" | "target/release/concur" | "./target/release/concur")) => w[1..].to_vec(),
            Some(&"cargo") if w.get(1) == Some(&"run") => {
                w.iter().position(|x| *x == "--").map_or(Vec::new(), |i| w[i + 1..].to_vec())
            }
            _ => return None,
        };
        let mut args = vec!["concur".to_string()];
        let mut skip = false;
        for a in rest {
            if skip {
                skip = false;
            } else if [">", ">>", "<", "2>", "2>>"].contains(&a) {
                skip = true;
            } else if !(a.starts_with('>') || a.starts_with("2>") || a.starts_with('<')) {
                args.push(a.to_string());
            }
        }
        Some(args)
    }

    #[test]
    fn every_concur_command_in_the_docs_parses() {
        let mut failures = Vec::new();
        let mut parsed = 0;
        for page in pages() {
            let text = std::fs::read_to_string(&page).expect("readable page");
            for (n, line) in code_lines(&text) {
                for cmd in commands(&line) {
                    let Some(args) = concur_args(&cmd) else { continue };
                    match Cli::try_parse_from(&args) {
                        Ok(_) => parsed += 1,
                        Err(e) => {
                            let why = e.render().to_string();
                            let why = why.lines().find(|l| !l.trim().is_empty()).unwrap_or("").to_string();
                            failures.push(format!("{}:{n}: `{}`: {why}", page.display(), args.join(" ")));
                        }
                    }
                }
            }
        }
        assert!(failures.is_empty(), "commands in the docs that do not parse:\n{}", failures.join("\n"));
        // The front page's and the command pages' commands were found, not skipped.
        assert!(parsed >= 30, "only {parsed} concur commands found in README.md and docs/");
    }

    /// Where a command of the docs writes: the target of a redirection (`>`, `>>`), the
    /// destination of `cp` or `mv`, and a `concur` command's `--out` or `-o`.
    fn writes(cmd: &[String]) -> Vec<String> {
        let mut out = Vec::new();
        for (i, w) in cmd.iter().enumerate() {
            if w == ">" || w == ">>" {
                out.extend(cmd.get(i + 1).cloned());
            } else if let Some(t) = w.strip_prefix(">>").or_else(|| w.strip_prefix('>'))
                && !t.is_empty()
                && !t.starts_with('&')
            {
                out.push(t.to_string());
            }
        }
        if matches!(cmd.first().map(String::as_str), Some("cp" | "mv")) {
            out.extend(cmd.iter().filter(|w| !w.starts_with('>')).take_while(|w| *w != ">").last().cloned());
        }
        if let Some(args) = concur_args(cmd) {
            for (i, a) in args.iter().enumerate() {
                if a == "--out" || a == "-o" {
                    out.extend(args.get(i + 1).cloned());
                } else if let Some(v) = a.strip_prefix("--out=") {
                    out.push(v.to_string());
                }
            }
        }
        out
    }

    /// Every rerun command is safe to run: nothing a command in README.md, docs/, BENCHMARKS.md,
    /// scripts/README.md or a results folder's page writes (a redirection, a copy, a `concur`
    /// command's `--out` or `-o`) is a file or folder committed here, so a reader who copies it neither overwrites a committed result nor
    /// resumes into a finished one (which would run nothing). Paths are taken from the
    /// repository's root, or from the folder of a `cd` earlier in the same block.
    #[test]
    fn no_command_in_the_docs_writes_into_a_committed_path() {
        let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
        let mut failures = Vec::new();
        let mut checked = 0;
        // The user pages, and the notebook and the results folders' pages, whose commands
        // made what is committed beside them.
        let mut all = pages();
        all.push(root.join("BENCHMARKS.md"));
        all.push(root.join("scripts/README.md"));
        let mut dirs = vec![root.join("benches/results")];
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    dirs.push(p);
                } else if p.extension().is_some_and(|x| x == "md") {
                    all.push(p);
                }
            }
        }
        for page in all {
            let text = std::fs::read_to_string(&page).expect("readable page");
            let folder = page.parent().unwrap().to_path_buf();
            let mut cwd = root.to_path_buf();
            let mut last_block_line = 0;
            for (n, line) in code_lines(&text) {
                // A new block starts again from the root.
                if n > last_block_line + 1 && text.lines().nth(n - 2).is_some_and(|l| l.trim_start().starts_with("```"))
                {
                    cwd = root.to_path_buf();
                }
                last_block_line = n;
                for cmd in commands(&line) {
                    if cmd.first().map(String::as_str) == Some("cd") {
                        if let Some(d) = cmd.get(1) {
                            cwd = cwd.join(d);
                        }
                        continue;
                    }
                    for target in writes(&cmd) {
                        checked += 1;
                        let t = target.trim_end_matches('/');
                        if t.starts_with('/') || t.starts_with('1') || t.starts_with('~') || t.is_empty() {
                            continue;
                        }
                        // From the root, a `cd`'s folder, or the page's own folder (a results
                        // page's commands may run where it lies).
                        if cwd.join(t).exists() || (folder.join(t).exists() && !t.contains('/')) {
                            failures
                                .push(format!("{}:{n}: writes into `{target}`, which is committed", page.display()));
                        }
                    }
                }
            }
        }
        assert!(failures.is_empty(), "commands in the docs that write into committed paths:\n{}", failures.join("\n"));
        assert!(checked >= 20, "only {checked} written paths found in README.md and docs/");
    }

    #[test]
    fn the_writes_reader_finds_redirections_copies_and_outputs() {
        let w = |line: &str| commands(line).iter().flat_map(|c| writes(c)).collect::<Vec<_>>();
        assert_eq!(w("concur ladder a.toml --out runs/x --resume > log.txt 2>&1"), ["log.txt", "runs/x"]);
        assert_eq!(w("cp /tmp/a b/c.jsonl && concur report r -o rep"), ["b/c.jsonl", "rep"]);
        assert_eq!(w("scripts/x.py a >>all.jsonl"), ["all.jsonl"]);
        assert!(w("concur verify p.txt board.sol").is_empty());
    }

    #[test]
    fn the_front_page_gives_the_two_commands() {
        let text =
            std::fs::read_to_string(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join("README.md")).unwrap();
        let lines: Vec<String> = code_lines(&text).into_iter().map(|l| l.1).collect();
        for want in ["cargo run --release -- demo", "cargo test --release"] {
            assert!(
                lines.iter().any(|l| l.split('#').next().unwrap().trim() == want),
                "README.md's code blocks lack `{want}`"
            );
        }
    }

    #[test]
    fn the_line_reader_joins_continuations_and_splits_commands() {
        let text = "x\n```sh\nconcur solve p.txt \\\n  --json   # a comment\nA=1 concur count \"$P/a b.txt\" | head && cargo run --release -- demo > out.txt\n```\nconcur not-in-a-block\n";
        let lines = code_lines(text);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].0, 3);
        let c0 = commands(&lines[0].1);
        assert_eq!(c0, [["concur", "solve", "p.txt", "--json"]]);
        let c1 = commands(&lines[1].1);
        assert_eq!(c1.len(), 3);
        assert_eq!(concur_args(&c1[0]).unwrap(), ["concur", "count", "1/a b.txt"]);
        assert_eq!(concur_args(&c1[1]), None);
        assert_eq!(concur_args(&c1[2]).unwrap(), ["concur", "demo"]);
        // A command that is wrong is refused: the test can fail.
        assert!(Cli::try_parse_from(["concur", "solve", "p.txt", "--no-such-flag"]).is_err());
        assert!(Cli::try_parse_from(["concur", "solve", "p.txt", "--method", "rrr"]).is_ok());
    }
}

/// The blocks the code writes, by name: what runs where (the capability table), and with the
/// command line `solve`'s options with their defaults and methods.
fn generated(name: &str) -> Option<String> {
    match name {
        "what-runs-where" => Some(concur::backend::capability::markdown()),
        "solve-options" => Some(concur_cli::solve::options_markdown()),
        "e2-side-by-side" => Some(side_by_side_table()),
        "finding" => Some(finding()),
        "found-map" => Some(found_map()),
        "e2-curve" => Some(curve_table()),
        "e2-breaks" => Some(breaks_table()),
        "e2-peers" => Some(peers_table()),
        "consistency-ladder" => Some(consistency_table()),
        "ac3-side" => Some(ac3_side_table()),
        "rotation-table" => Some(rotation_table()),
        "root-work" => Some(root_work_table()),
        "alns-operators" => Some(
            concur::search::alns::Destroy::ALL.iter().map(|d| format!("`{}`", d.name())).collect::<Vec<_>>().join(", ")
                + "\n",
        ),
        _ => None,
    }
}

/// The README's finding in short, its figures read from the committed summaries they come
/// from: the hardness curve's slope above its knot (the pooled hardness campaign's report),
/// the map's core-seconds per solution over the scan's at the sizes both solved (the pooled
/// 8x8 table, docs/scaling.md), and the two strongest engines' means on the official puzzle
/// (the side-by-side runs).
fn finding() -> String {
    let (slope, lo, hi) = slope_above_knot(&summary(HARDNESS));
    let pooled = summary(POOLED);
    let mean = |label: &str, area: u64| pooled_row(&pooled, label, area)["pooled_seconds"]["mean"].as_f64();
    let mut ratios = Vec::new();
    let mut unsolved = None;
    for area in [49, 56, 63, 64] {
        match (mean("rrr", area), mean("scan", area)) {
            (Some(m), Some(s)) => ratios.push((area, m / s)),
            (None, Some(_)) => unsolved = Some(area),
            _ => {}
        }
    }
    let (first, last) = (ratios.first().unwrap(), ratios.last().unwrap());
    let (lo_r, hi_r) = span(ratios.iter().map(|r| r.1));
    let scores = e2_means();
    let (ours, theirs) = (scores["concur"], scores["producer"]);
    format!(
        "**The finding, in short.** As instances get harder, the map's work per solution grows about\n\
         as the best tree search's nodes do: as their power {slope:.2} [{lo:.2}, {hi:.2}] (95 %) above a knot\n\
         ([docs/scaling.md](docs/scaling.md#against-instance-hardness)). So on one core the map stays\n\
         behind the row scan, {lo_r:.0}-{hi_r:.0}x its core-seconds per solution from {} to {} cells, and\n\
         found nothing at {} cells\n\
         ([docs/scaling.md](docs/scaling.md#the-8x8-question-pooled-rates-and-the-long-budget-campaign-2026-12-03)).\n\
         On the official 16x16 puzzle, concur's beam builder with ALNS polish averages {ours:.1} of 480\n\
         joins at 60 s on one core, and eternity2.dev's beam producer, the strongest engine of its\n\
         single-core benchmark, {theirs:.1}, run beside it here ([docs/real-puzzle.md](docs/real-puzzle.md)).\n",
        first.0,
        last.0,
        unsolved.expect("an area where the scan solved and the map did not"),
    )
}

/// The README's two bullets on the map ("What it found"), from the same summaries as
/// [`finding`], and the per-core rates docs/scaling.md gives (the map's iteration against the
/// scan's node at 7x7 to 8x8).
fn found_map() -> String {
    let hard = summary(HARDNESS);
    let (slope, lo, hi) = slope_above_knot(&hard);
    let knot = 10f64.powf(hard["hardness_fit"]["curve"]["fit"]["knot"].as_f64().unwrap());
    let inst = hard["hardness_instances"].as_array().unwrap();
    let h: Vec<f64> = inst.iter().filter_map(|i| i["scan"]["mean"].as_f64()).collect();
    let (hmin, hmax) = span(h.iter().copied());
    let widths: Vec<u64> = inst.iter().map(|i| i["width"].as_u64().unwrap()).collect();
    let (wmin, wmax) = (widths.iter().min().unwrap(), widths.iter().max().unwrap());
    let pooled = summary(POOLED);
    let row = |label: &str, area: u64| pooled_row(&pooled, label, area);
    let mean = |label: &str, area: u64| row(label, area)["pooled_seconds"]["mean"].as_f64();
    let ratios = [49, 56, 63].map(|a| mean("rrr", a).unwrap() / mean("scan", a).unwrap());
    let (lo_r, hi_r) = span(ratios.into_iter());
    let scan64 = &row("scan", 64)["pooled_seconds"];
    let map64 = &row("rrr", 64)["pooled_seconds"];
    assert_eq!(map64["solutions"], 0, "the bullet says the map solved none at 64 cells");
    // The iteration's price in scan nodes: the rates' means over their rounds, 7x7 to 8x8.
    let mut rates: std::collections::BTreeMap<(String, String), Vec<f64>> = Default::default();
    for line in read(&root().join("benches/results/hardness/hardness-inputs/core-rates.jsonl")).lines() {
        let r: serde_json::Value = serde_json::from_str(line).unwrap();
        let key = (r["method"].as_str().unwrap().to_string(), r["puzzle"].as_str().unwrap().to_string());
        rates.entry(key).or_default().push(r["rate"].as_f64().unwrap());
    }
    let rate = |m: &str, p: &str| {
        let v = &rates[&(m.to_string(), p.to_string())];
        v.iter().sum::<f64>() / v.len() as f64
    };
    let price: Vec<f64> =
        ["set1-07x07", "set1-08x07", "set1-08x08"].iter().map(|p| rate("scan", p) / rate("rrr", p)).collect();
    let (lo_p, hi_p) = span(price.iter().copied());
    let round10 = |x: f64| (x / 10.0).round() * 10.0;
    let sci = |x: f64| {
        let e = x.log10().floor();
        format!("{:.1}e{}", x / 10f64.powf(e), e as i32)
    };
    format!(
        "- **The map's work grows as the tree's.** On {n} instances from {wmin}x{wmin} to {wmax}x{wmax}, ranked by their\n\
         \x20 own hardness (the row scan's nodes per solution, {hmin:.0} to {}), the map's work per solution\n\
         \x20 is nearly flat over the easy ones and, above a knot at about {} scan nodes per solution,\n\
         \x20 grows as that hardness to the power **{:.2} [{:.2}, {:.2}]** (95 %)\n\
         \x20 ([docs/scaling.md](docs/scaling.md#against-instance-hardness)).\n\
         - **Per core it stays behind the best tree search.** Pooled over {} one-core runs, the\n\
         \x20 map's core-seconds per solution run {lo_r:.0}-{hi_r:.0}x the row scan's from 49 to 63 cells; on three\n\
         \x20 8x8s the scan found {} solutions ({} s each), the map none (over {} s each). An\n\
         \x20 iteration costs {:.0}-{:.0}x a scan node ([docs/scaling.md](docs/scaling.md#the-8x8-question-pooled-rates-and-the-long-budget-campaign-2026-12-03)).\n",
        sci(hmax),
        sci(knot),
        slope,
        lo,
        hi,
        thousands(pooled["records"].as_u64().unwrap() as f64),
        scan64["solutions"],
        thousands(scan64["mean"].as_f64().unwrap()),
        thousands(map64["ci"][0].as_f64().unwrap()),
        round10(lo_p),
        round10(hi_p),
        n = inst.len(),
    )
}

/// The pooled hardness campaign's report, and the pooled 8x8 table (docs/scaling.md).
const HARDNESS: &str = "benches/results/hardness-new/report/summary.json";
const POOLED: &str = "benches/results/cpu-speed/summary-fused-2026-12-06.json";

/// A committed summary, read as JSON.
fn summary(rel: &str) -> serde_json::Value {
    serde_json::from_str(&read(&root().join(rel))).expect("a summary")
}

/// The chosen hardness curve's slope above its knot and its 95 % interval; the finding reads
/// the broken stick's.
fn slope_above_knot(hard: &serde_json::Value) -> (f64, f64, f64) {
    let curve = &hard["hardness_fit"]["curve"];
    assert_eq!(curve["chosen"], "broken_stick", "the finding's sentence reads the broken stick's slope");
    let coef: Vec<f64> = curve["fit"]["coef"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    let ci = &curve["intervals"]["slope_above"];
    (coef[1] + coef[2], ci[0].as_f64().unwrap(), ci[1].as_f64().unwrap())
}

/// The pooled table's row of a method and a board's cells.
fn pooled_row<'a>(pooled: &'a serde_json::Value, label: &str, area: u64) -> &'a serde_json::Value {
    pooled["rows"].as_array().unwrap().iter().find(|r| r["label"] == label && r["area"] == area).expect("a row")
}

/// The smallest and the largest of some values.
fn span(v: impl Iterator<Item = f64>) -> (f64, f64) {
    v.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)))
}

/// `x` rounded, with thousands separated by commas.
fn thousands(x: f64) -> String {
    let digits = format!("{:.0}", x.round());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Each engine's mean verified score over the side-by-side runs (all instances and seeds).
fn e2_means() -> std::collections::BTreeMap<String, f64> {
    let path = root().join("benches/results/e2-side-by-side-2026-12-07/results.jsonl");
    let mut by: std::collections::BTreeMap<String, Vec<f64>> = Default::default();
    for line in read(&path).lines().filter(|l| !l.trim().is_empty()) {
        let r: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        by.entry(r["engine"].as_str().unwrap().to_string()).or_default().push(r["score"].as_f64().unwrap());
    }
    by.into_iter().map(|(e, v)| (e, v.iter().sum::<f64>() / v.len() as f64)).collect()
}

/// The side-by-side table on the official puzzle (docs/real-puzzle.md, the README) from the
/// runs' records: per engine, each instance's mean verified score over its seeds, the mean and
/// the best over all its runs, and the runs.
fn side_by_side_table() -> String {
    let path = root().join("benches/results/e2-side-by-side-2026-12-07/results.jsonl");
    let mut by: std::collections::BTreeMap<String, std::collections::BTreeMap<String, Vec<f64>>> = Default::default();
    for line in read(&path).lines().filter(|l| !l.trim().is_empty()) {
        let r: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        let engine = r["engine"].as_str().expect("engine").to_string();
        let instance = r["instance"].as_str().expect("instance").to_string();
        by.entry(engine).or_default().entry(instance).or_default().push(r["score"].as_f64().expect("score"));
    }
    let instances: BTreeSet<String> = by.values().flat_map(|m| m.keys().cloned()).collect();
    let mut out = String::from("| engine (60 s, one core) |");
    for i in &instances {
        out.push_str(&format!(" {i} |"));
    }
    out.push_str(" mean | best | runs |\n|---|");
    out.push_str(&"---|".repeat(instances.len() + 3));
    out.push('\n');
    // Highest mean first.
    let mut rows: Vec<(f64, String)> = by
        .iter()
        .map(|(engine, m)| {
            let all: Vec<f64> = m.values().flatten().copied().collect();
            (all.iter().sum::<f64>() / all.len() as f64, engine.clone())
        })
        .collect();
    rows.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (mean, engine) in rows {
        let m = &by[&engine];
        out.push_str(&format!("| {engine} |"));
        for i in &instances {
            match m.get(i) {
                Some(v) => out.push_str(&format!(" {:.1} |", v.iter().sum::<f64>() / v.len() as f64)),
                None => out.push_str(" - |"),
            }
        }
        let all: Vec<f64> = m.values().flatten().copied().collect();
        let best = all.iter().copied().fold(0.0, f64::max);
        out.push_str(&format!(" **{mean:.1}** | {best:.0} | {} |\n", all.len()));
    }
    out
}

/// The best score against the budget on the official puzzle (docs/real-puzzle.md): the runs
/// of `curve.jsonl` and the 60 s runs of seed 1 on the same instances, one row an engine and
/// budget (concur's time limit, the producer's width), with the mean wall seconds and each
/// instance's verified score.
fn curve_table() -> String {
    let dir = root().join("benches/results/e2-side-by-side-2026-12-07");
    // The hour's rows (best of many runs) are in curve-hour.jsonl, as their instances end.
    let hour = dir.join("curve-hour.jsonl");
    let hour = if hour.exists() { read(&hour) } else { String::new() };
    let curve: Vec<serde_json::Value> = read(&dir.join("curve.jsonl"))
        .lines()
        .chain(hour.lines())
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let instances: BTreeSet<String> = curve.iter().map(|r| r["instance"].as_str().unwrap().to_string()).collect();
    let results = read(&dir.join("results.jsonl"));
    let sixty = results
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|r| r["seed"] == 1 && instances.contains(r["instance"].as_str().unwrap()))
        .map(|mut r| {
            let name = match r["engine"].as_str().unwrap() {
                "producer" => "producer (width 80000)".to_string(),
                e => format!("{e} (60 s)"),
            };
            r["engine"] = serde_json::Value::String(name);
            r
        });
    // Rows by engine, then by mean wall time.
    let mut rows: std::collections::BTreeMap<String, Vec<serde_json::Value>> = Default::default();
    for r in curve.into_iter().chain(sixty) {
        rows.entry(r["engine"].as_str().unwrap().to_string()).or_default().push(r);
    }
    let mut order: Vec<(String, f64, String)> = rows
        .iter()
        .map(|(name, rs)| {
            let wall = rs.iter().map(|r| r["wall_s"].as_f64().unwrap()).sum::<f64>() / rs.len() as f64;
            let family = name.split(' ').next().unwrap().to_string();
            (family, wall, name.clone())
        })
        .collect();
    order.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let mut out = String::from("| engine (budget) | mean wall s |");
    for i in &instances {
        out.push_str(&format!(" {i} |"));
    }
    out.push_str(" mean |\n|---|---|");
    out.push_str(&"---|".repeat(instances.len() + 1));
    out.push('\n');
    for (_, wall, name) in order {
        let rs = &rows[&name];
        out.push_str(&format!("| {name} | {wall:.1} |"));
        let (mut sum, mut seen) = (0.0, 0);
        for i in &instances {
            let v: Vec<f64> =
                rs.iter().filter(|r| r["instance"] == i.as_str()).map(|r| r["score"].as_f64().unwrap()).collect();
            match v.len() {
                0 => out.push_str(" - |"),
                _ => {
                    sum += v.iter().sum::<f64>() / v.len() as f64;
                    seen += 1;
                    out.push_str(&format!(" {:.0} |", v.iter().sum::<f64>() / v.len() as f64));
                }
            }
        }
        match seen {
            n if n == instances.len() => out.push_str(&format!(" {:.1} |\n", sum / n as f64)),
            n => out.push_str(&format!(" {:.1} ({n} of {}) |\n", sum / n.max(1) as f64, instances.len())),
        }
    }
    out
}

/// The break-budget scan against the exact scan on the official puzzle (docs/real-puzzle.md):
/// per schedule, in the order the file first names it, each instance's verified score, the
/// deepest partial board's cells and breaks, and the mean score.
fn breaks_table() -> String {
    let path = root().join("benches/results/e2-side-by-side-2026-12-07/breaks.jsonl");
    let runs: Vec<serde_json::Value> =
        read(&path).lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect();
    let instances: BTreeSet<String> = runs.iter().map(|r| r["instance"].as_str().unwrap().to_string()).collect();
    let mut names: Vec<String> = Vec::new();
    for r in &runs {
        let e = r["engine"].as_str().unwrap().to_string();
        if !names.contains(&e) {
            names.push(e);
        }
    }
    let mut out = String::from("| scan (60 s, one core) |");
    for i in &instances {
        out.push_str(&format!(" {i}: score (cells, breaks) |"));
    }
    out.push_str(" mean |\n|---|");
    out.push_str(&"---|".repeat(instances.len() + 1));
    out.push('\n');
    for name in names {
        out.push_str(&format!("| {name} |"));
        let mut scores = Vec::new();
        for i in &instances {
            match runs.iter().find(|r| r["engine"] == name.as_str() && r["instance"] == i.as_str()) {
                Some(r) => {
                    let score = r["score"].as_f64().unwrap();
                    scores.push(score);
                    let breaks = r["best_breaks"].as_u64().unwrap_or(0);
                    out.push_str(&format!(" {score:.0} ({}, {breaks}) |", r["best_depth"]));
                }
                None => out.push_str(" - |"),
            }
        }
        let mean = scores.iter().sum::<f64>() / scores.len().max(1) as f64;
        out.push_str(&format!(" {mean:.1} |\n"));
    }
    out
}

/// The eternity2.dev engines run here on three instances (docs/real-puzzle.md): per engine, in
/// the order the file first names it, each instance's verified score and the mean.
fn peers_table() -> String {
    let path = root().join("benches/results/e2-side-by-side-2026-12-07/peers.jsonl");
    let runs: Vec<serde_json::Value> =
        read(&path).lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect();
    let instances: BTreeSet<String> = runs.iter().map(|r| r["instance"].as_str().unwrap().to_string()).collect();
    let mut names: Vec<String> = Vec::new();
    for r in &runs {
        let e = r["engine"].as_str().unwrap().to_string();
        if !names.contains(&e) {
            names.push(e);
        }
    }
    let mut out = String::from("| eternity2.dev engine (60 s, one core, seed 1) |");
    for i in &instances {
        out.push_str(&format!(" {i} |"));
    }
    out.push_str(" mean |\n|---|");
    out.push_str(&"---|".repeat(instances.len() + 1));
    out.push('\n');
    for name in names {
        out.push_str(&format!("| {name} |"));
        let mut scores = Vec::new();
        for i in &instances {
            match runs.iter().find(|r| r["engine"] == name.as_str() && r["instance"] == i.as_str()) {
                Some(r) => {
                    let score = r["score"].as_f64().unwrap();
                    scores.push(score);
                    out.push_str(&format!(" {score:.0} |"));
                }
                None => out.push_str(" - |"),
            }
        }
        let mean = scores.iter().sum::<f64>() / scores.len().max(1) as f64;
        out.push_str(&format!(" {mean:.1} |\n"));
    }
    out
}

/// The seed's AC-3 engine figure side by side (docs/consistency.md): concur's backtracker with
/// AC-3 and eternity2.dev's `gacolor_ac3`, per instance the score of the best board completed
/// greedily, the mean, the nodes a second and the peer's own score of its partial board.
fn ac3_side_table() -> String {
    let path = root().join("benches/results/e2-side-by-side-2026-12-07/ac3.jsonl");
    let runs: Vec<serde_json::Value> =
        read(&path).lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect();
    let instances: BTreeSet<String> = runs.iter().map(|r| r["instance"].as_str().unwrap().to_string()).collect();
    let mut names: Vec<String> = Vec::new();
    for r in &runs {
        let e = r["engine"].as_str().unwrap().to_string();
        if !names.contains(&e) {
            names.push(e);
        }
    }
    let mut out = String::from("| engine (one core, seed 1; scores after the greedy completion) |");
    for i in &instances {
        out.push_str(&format!(" {i} |"));
    }
    out.push_str(" mean | nodes / s | its own score of the partial board |\n|---|");
    out.push_str(&"---|".repeat(instances.len() + 3));
    out.push('\n');
    for name in names {
        let rows: Vec<&serde_json::Value> = runs.iter().filter(|r| r["engine"] == name.as_str()).collect();
        out.push_str(&format!("| {name} |"));
        for i in &instances {
            match rows.iter().find(|r| r["instance"] == i.as_str()) {
                Some(r) => out.push_str(&format!(" {} |", r["score"])),
                None => out.push_str(" - |"),
            }
        }
        let mean = |k: &str| rows.iter().filter_map(|r| r[k].as_f64()).sum::<f64>() / rows.len().max(1) as f64;
        let own: Vec<String> = rows.iter().filter_map(|r| r["self_score"].as_u64()).map(|v| v.to_string()).collect();
        let own = if own.is_empty() { "-".to_string() } else { own.join(", ") };
        out.push_str(&format!(" {:.1} | {:.0} | {own} |\n", mean("score"), mean("nodes_per_s")));
    }
    out
}

/// The rotation table measured (docs/consistency.md): per puzzle and way of revising, the
/// nodes and revisions (the same for every way), the median nanoseconds a node over the timed
/// runs, and the instructions a node under cachegrind.
fn rotation_table() -> String {
    let path = root().join("benches/results/consistency-2026-12-07/rotation.jsonl");
    let runs: Vec<serde_json::Value> =
        read(&path).lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect();
    let mut out = String::from(
        "| puzzle | revision | nodes | revisions | ns / node (median of 3) | vs masks | instructions / node |\n|---|---|---|---|---|---|---|\n",
    );
    let mut puzzles: Vec<&str> = Vec::new();
    for r in &runs {
        let p = r["puzzle"].as_str().unwrap();
        if !puzzles.contains(&p) {
            puzzles.push(p);
        }
    }
    let timed = |p: &str, way: &str| -> Vec<&serde_json::Value> {
        runs.iter().filter(|r| r["puzzle"] == p && r["revise"] == way && r.get("ns_per_node").is_some()).collect()
    };
    let median = |rows: &[&serde_json::Value]| {
        let mut v: Vec<f64> = rows.iter().map(|r| r["ns_per_node"].as_f64().unwrap()).collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    for p in puzzles {
        let name = std::path::Path::new(p).file_stem().unwrap().to_string_lossy().to_string();
        let base = median(&timed(p, "masks"));
        for way in ["masks", "derive", "table"] {
            let rows = timed(p, way);
            let Some(first) = rows.first() else { continue };
            let ns = median(&rows);
            let nodes = first["nodes"].as_f64().unwrap();
            let ir = runs.iter().find(|r| r["puzzle"] == p && r["revise"] == way && r.get("instructions").is_some());
            let per = ir.map_or("-".to_string(), |r| {
                // A run under cachegrind stops at its own limit or where the timed run did (a
                // solution), whichever comes first: the same seed walks the same tree.
                let n =
                    r["cachegrind_nodes"].as_str().and_then(|n| n.parse::<f64>().ok()).map_or(nodes, |n| n.min(nodes));
                format!("{:.0}", r["instructions"].as_f64().unwrap() / n)
            });
            out.push_str(&format!(
                "| {name} | {way} | {nodes:.0} | {} | {ns:.0} | {:.2} | {per} |\n",
                first["revisions"],
                ns / base
            ));
        }
    }
    out
}

/// The consistency ladder measured (docs/consistency.md): per puzzle, target and level, the
/// solutions, the tree's nodes, the seconds of the count and whether it finished.
fn consistency_table() -> String {
    let path = root().join("benches/results/consistency-2026-12-07/runs.jsonl");
    let mut out = String::from(
        "| puzzle | target | level | solutions | nodes | seconds | root seconds | nodes vs ac3 | revisions / node | checks / node | removals / node |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let runs: Vec<serde_json::Value> =
        read(&path).lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect();
    let key =
        |r: &serde_json::Value| (r["size"].as_str().unwrap().to_string(), r["target"].as_str().unwrap().to_string());
    let levels = [
        "fc",
        "fc+regin",
        "ac3",
        "ac2001",
        "ac4",
        "ac3+regin",
        "ac3+sac",
        "ac3+sac+regin",
        "ac3+pc",
        "ac3+pc+regin",
        "ac3+blocks",
        "ac3+blocks+regin",
    ];
    // Set 1's puzzles by size ("06x06"), the generated ones as "gen-06x06-SEED-iCOLOURS".
    let label = |size: &str| {
        let dims = |d: &str| d.split('x').map(|t| t.trim_start_matches('0')).collect::<Vec<_>>().join("x");
        match size.strip_prefix("gen-").map(|g| g.split('-').collect::<Vec<_>>()).as_deref() {
            Some([d, seed, inner]) => {
                format!("generated {} (seed {seed}, {} inner colours)", dims(d), inner.trim_start_matches('i'))
            }
            _ => format!("set 1 {}", dims(size)),
        }
    };
    let groups: BTreeSet<(String, String)> = runs.iter().map(key).collect();
    for g in groups {
        // The newest run of each level (the file appends; a rerun replaces an older one).
        let base = runs.iter().rev().find(|r| key(r) == g && r["level"] == "ac3").and_then(|r| r["nodes"].as_f64());
        for level in levels {
            let Some(r) = runs.iter().rev().find(|r| key(r) == g && r["level"] == level) else { continue };
            let nodes = r["nodes"].as_f64().unwrap();
            let target = if g.1 == "all" { "every solution".to_string() } else { format!("first {}", g.1) };
            let wanted = g.1.parse::<u64>().ok();
            let found = r["solutions"].as_u64().unwrap_or(0);
            let done = if r["complete"] == true || wanted.is_some_and(|w| found >= w) { "" } else { " (capped)" };
            let ratio = base.map_or("-".to_string(), |b| format!("{:.2}", nodes / b));
            // The work counters per node (runs before 2026-12-07's counters have revisions only).
            let per = |k: &str| match (r.get("checks"), r[k].as_f64()) {
                (Some(_), Some(v)) if nodes > 0.0 => format!("{:.1}", v / nodes),
                _ => "-".to_string(),
            };
            out.push_str(&format!(
                "| {} | {target} | {level} | {}{done} | {nodes:.0} | {:.3} | {} | {ratio} | {} | {} | {} |\n",
                label(&g.0),
                r["solutions"],
                r["wall_s"].as_f64().unwrap(),
                // The preprocessing's part of the seconds (runs before it was recorded: -).
                r["root_s"].as_f64().map_or("-".to_string(), |s| format!("{s:.3}")),
                per("revisions"),
                per("checks"),
                per("removals"),
            ));
        }
    }
    out
}

/// The ladder's work on one position (docs/consistency.md): per puzzle and rung, the counters
/// of `concur count --root-work` from root-work.jsonl.
fn root_work_table() -> String {
    let path = root().join("benches/results/consistency-2026-12-07/root-work.jsonl");
    let mut out = String::from(
        "| puzzle | rung | revisions | checks | removals | candidates left | seconds |\n|---|---|---|---|---|---|---|\n",
    );
    for l in read(&path).lines().filter(|l| !l.trim().is_empty()) {
        let r: serde_json::Value = serde_json::from_str(l).unwrap();
        let left = if r["wiped_out"] == true { "wiped out".to_string() } else { r["left"].to_string() };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {left} | {:.4} |\n",
            r["puzzle"].as_str().unwrap(),
            r["level"].as_str().unwrap(),
            r["revisions"],
            r["checks"],
            r["removals"],
            r["seconds"].as_f64().unwrap()
        ));
    }
    out
}

/// Every block between `<!-- generated: NAME -->` and `<!-- /generated: NAME -->` in the docs
/// is what the code writes now; `CONCUR_BLESS=1 cargo test --release docs` rewrites them.
#[test]
fn every_generated_block_in_the_docs_is_current() {
    let bless = std::env::var("CONCUR_BLESS").as_deref() == Ok("1");
    let mut stale = Vec::new();
    let mut seen = BTreeSet::new();
    for page in pages() {
        let text = read(&page);
        let mut out = String::new();
        let mut rest = text.as_str();
        while let Some(i) = rest.find("<!-- generated: ") {
            let after = &rest[i..];
            let name_end = after.find(" -->").expect("a generated marker ends with -->");
            let name = &after["<!-- generated: ".len()..name_end];
            let open = &after[..name_end + 4];
            let close = format!("<!-- /generated: {name} -->");
            let body_start = i + open.len() + 1;
            let close_at = rest[body_start..].find(&close).unwrap_or_else(|| panic!("{}: no {close}", page.display()));
            let body = &rest[body_start..body_start + close_at];
            out.push_str(&rest[..body_start]);
            match generated(name) {
                Some(want) => {
                    seen.insert(name.to_string());
                    if body != want {
                        stale.push(format!("{}: {name}", page.display()));
                    }
                    out.push_str(&want);
                }
                None => panic!("{}: no generator named {name}", page.display()),
            }
            rest = &rest[body_start + close_at..];
        }
        out.push_str(rest);
        if bless && out != text {
            std::fs::write(&page, out).unwrap();
        }
    }
    if !bless {
        assert!(
            stale.is_empty(),
            "stale generated blocks (CONCUR_BLESS=1 cargo test --release docs rewrites them): {stale:?}"
        );
    }
    for name in ["what-runs-where", "alns-operators"] {
        assert!(seen.contains(name), "no page holds the generated block {name}");
    }
    assert!(seen.contains("solve-options"), "no page holds the generated block solve-options");
}
