//! The layout's rules, checked on the source text: no file imports from a
//! layer above it, and no two sibling modules import each other (directly or
//! around a circle).
//!
//! Layers, bottom up (ARCHITECTURE.md): `ir/` (crate `adjit-ir`), beside
//! each other above it `jit/` (crate `adjit-jit`) and `fortran/` (crate
//! `adjit-fortran`, the Fortran source back end; neither knows the other), then in the `adjit` crate `src/front/` and `src/ad/`
//! (each knows the IR only, not the other), `src/engine/` (everything), and
//! `src/cli/` (the public API of `adjit` only). Crate dependencies already
//! keep `ir` below `jit` below `adjit`; this test adds the rules inside the
//! `adjit` crate and the import-circle rule everywhere.
//!
//! What counts as an import: every `crate::a::b` and `super::a` path in a
//! file's non-test code (comments and everything from the first
//! `#[cfg(test)]` on are skipped, and so are `tests.rs` files), plus the
//! names of other crates. Method calls through a shared type (a `Lowerer`
//! method defined in another file) are not imports: the grammar is
//! recursive, the imports need not be.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A crate's source root and its layer rules: path prefixes (relative to the
/// root, `""` for every file) and the paths their files must not name.
struct Root {
    dir: &'static str,
    rules: &'static [(&'static str, &'static [&'static str])],
}

const ROOTS: &[Root] = &[
    Root {
        dir: "ir/src",
        rules: &[("", &["adjit_jit", "adjit::", "cranelift"])],
    },
    Root {
        dir: "jit/src",
        rules: &[("", &["adjit::", "adjit_fortran"])],
    },
    Root {
        dir: "fortran/src",
        rules: &[("", &["adjit::", "adjit_jit", "cranelift"])],
    },
    Root {
        dir: "src",
        rules: &[
            (
                "front/",
                &[
                    "crate::ad",
                    "crate::engine",
                    "crate::jit",
                    "crate::timing",
                    "adjit_jit",
                ],
            ),
            (
                "ad/",
                &[
                    "crate::front",
                    "crate::engine",
                    "crate::jit",
                    "crate::timing",
                    "adjit_jit",
                ],
            ),
            ("cli/", &["adjit_ir", "adjit_jit", "adjit_fortran"]),
        ],
    },
    Root {
        dir: "tests/oracle/src",
        rules: &[("lib.rs", &["adjit::"])],
    },
];

/// A file's non-test code without comments.
fn code_of(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("#[cfg(test)]") {
            break;
        }
        out.push_str(line.split("//").next().unwrap_or(""));
        out.push('\n');
    }
    out
}

/// Every `.rs` file under `dir`, sorted, as paths relative to `dir`.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
        let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(base, &path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path.strip_prefix(base).unwrap().to_path_buf());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// The module path of a file relative to its crate root (`front/sema/mod.rs`
/// is `["front", "sema"]`, `lib.rs` and `main.rs` are `[]`).
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") {
        parts.push(stem.to_string());
    }
    parts
}

/// The identifiers that follow each occurrence of `prefix` (`crate::a::b`
/// gives `["a", "b"]`), stopping at the first non-identifier segment.
fn paths_after(code: &str, prefix: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find(prefix) {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + prefix.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let mut segments = Vec::new();
        let mut tail = rest;
        loop {
            let len = tail
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(tail.len());
            if len == 0 {
                break;
            }
            segments.push(tail[..len].to_string());
            match tail[len..].strip_prefix("::") {
                Some(t) => tail = t,
                None => break,
            }
        }
        out.push(segments);
    }
    out
}

/// The modules a file (at `module`) names, as module paths from the crate
/// root: `crate::` paths as written, `super::` paths from the parent.
fn named_modules(module: &[String], code: &str) -> Vec<Vec<String>> {
    // `super` of `a/b.rs` and of `a/b/mod.rs` is module `a`.
    let parent: Vec<String> = module[..module.len().saturating_sub(1)].to_vec();
    let mut out = paths_after(code, "crate::");
    for segments in paths_after(code, "super::") {
        let mut base = parent.clone();
        let mut segs = segments.as_slice();
        while segs.first().is_some_and(|s| s == "super") {
            base.pop();
            segs = &segs[1..];
        }
        base.extend(segs.iter().cloned());
        out.push(base);
    }
    out
}

/// The sibling-module import edges of one crate: module -> modules it names
/// that share its parent (a module's own children and parent are not
/// siblings).
fn sibling_edges(files: &[(Vec<String>, String)]) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let modules: BTreeSet<&Vec<String>> = files.iter().map(|(m, _)| m).collect();
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (module, code) in files {
        if module.is_empty() {
            continue;
        }
        for named in named_modules(module, code) {
            let Some(target) = (1..=named.len())
                .rev()
                .map(|n| named[..n].to_vec())
                .find(|p| modules.contains(p))
            else {
                continue;
            };
            if &target != module && target[..target.len() - 1] == module[..module.len() - 1] {
                edges.entry(module.clone()).or_default().insert(target);
            }
        }
    }
    edges
}

/// Every import circle among the edges, each as the modules around it.
fn circles(edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<String>> {
    fn visit(
        node: &Vec<String>,
        edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        stack: &mut Vec<Vec<String>>,
        done: &mut BTreeSet<Vec<String>>,
        found: &mut Vec<Vec<String>>,
    ) {
        if let Some(at) = stack.iter().position(|n| n == node) {
            let mut circle: Vec<String> = stack[at..].iter().map(|m| m.join("::")).collect();
            circle.push(node.join("::"));
            found.push(circle);
            return;
        }
        if !done.insert(node.clone()) {
            return;
        }
        stack.push(node.clone());
        for next in edges.get(node).into_iter().flatten() {
            visit(next, edges, stack, done, found);
        }
        stack.pop();
    }
    let mut found = Vec::new();
    let mut done = BTreeSet::new();
    for node in edges.keys() {
        visit(node, edges, &mut Vec::new(), &mut done, &mut found);
    }
    found
}

/// The non-test files of a crate root: (file, module path, code).
fn crate_files(dir: &Path) -> Vec<(PathBuf, Vec<String>, String)> {
    rust_files(dir)
        .into_iter()
        .filter(|rel| rel.file_name().is_some_and(|n| n != "tests.rs"))
        .map(|rel| {
            let text = std::fs::read_to_string(dir.join(&rel)).unwrap();
            (rel.clone(), module_path(&rel), code_of(&text))
        })
        .collect()
}

#[test]
fn no_file_imports_from_a_layer_above_it() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut problems = Vec::new();
    for root in ROOTS {
        for (rel, _, code) in crate_files(&workspace.join(root.dir)) {
            let rel_text = rel.to_string_lossy().replace('\\', "/");
            for (prefix, forbidden) in root.rules {
                if !rel_text.starts_with(prefix) {
                    continue;
                }
                for name in *forbidden {
                    if code.contains(name) {
                        problems.push(format!("{}/{rel_text} names `{name}`", root.dir));
                    }
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "upward imports:\n{}",
        problems.join("\n")
    );
}

#[test]
fn no_import_circles_between_sibling_modules() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut problems = Vec::new();
    for root in ROOTS {
        let files: Vec<_> = crate_files(&workspace.join(root.dir))
            .into_iter()
            .map(|(_, module, code)| (module, code))
            .collect();
        for circle in circles(&sibling_edges(&files)) {
            problems.push(format!("{}: {}", root.dir, circle.join(" -> ")));
        }
    }
    assert!(
        problems.is_empty(),
        "import circles:\n{}",
        problems.join("\n")
    );
}

/// The checker itself finds a circle and ignores parent / child and test
/// references (so that the two tests above can fail).
#[test]
fn the_checker_sees_circles_and_only_them() {
    let file = |path: &str, code: &str| {
        let rel = Path::new(path);
        (module_path(rel), code_of(code))
    };
    let circular = [
        file("front/sema/expr.rs", "use super::intrinsics::is_x;\n"),
        file("front/sema/intrinsics.rs", "use super::expr::Operand;\n"),
        file(
            "front/sema/mod.rs",
            "mod expr; mod intrinsics;\nuse expr::Operand;\n",
        ),
    ];
    assert_eq!(
        circles(&sibling_edges(&circular)),
        vec![vec![
            "front::sema::expr".to_string(),
            "front::sema::intrinsics".to_string(),
            "front::sema::expr".to_string(),
        ]]
    );
    let fine = [
        file(
            "front/sema/expr.rs",
            "use super::lowerer::Operand; // super::intrinsics\n",
        ),
        file(
            "front/sema/intrinsics.rs",
            "use crate::front::sema::lowerer::Operand;\n#[cfg(test)]\nuse super::expr::X;\n",
        ),
        file("front/sema/lowerer.rs", "use super::{Program, Unit};\n"),
        file("front/sema/mod.rs", "use lowerer::Lowerer;\n"),
    ];
    assert!(circles(&sibling_edges(&fine)).is_empty());
    assert_eq!(
        paths_after("a::crate::x; crate::ad::tangent::f(); crate::y", "crate::"),
        vec![
            vec!["ad".to_string(), "tangent".to_string(), "f".to_string()],
            vec!["y".to_string()]
        ]
    );
}
