//! INCLUDE lines: `INCLUDE 'name'` is replaced by the logical statements of
//! the named file before the statements are parsed.
//!
//! The file is looked for relative to the directory of the including file,
//! then (for nested INCLUDEs) relative to the directory of the top-level
//! source file, where gfortran looks, then in each include directory in
//! order (gfortran's `-I`). Included files
//! are added to the [`SourceMap`] so that their statements keep their own
//! locations, are read in the including file's source form, and may include
//! further files (to a bounded depth, which also stops circular inclusion).

use super::super::diag::{decode, Diagnostic, SourceMap};
use super::super::lexer::string_value;
use super::super::source::{logical_statements, LogicalStmt, SourceForm};
use std::path::{Path, PathBuf};

/// How deeply INCLUDE lines may nest (a cycle reaches it quickly).
const MAX_DEPTH: usize = 16;

/// Replaces the INCLUDE lines among `stmts` by the statements of the files
/// they name, recursively; a file that cannot be found or read is a
/// diagnostic at the file name, and the line is dropped.
pub(super) fn expand(
    map: &mut SourceMap,
    stmts: Vec<LogicalStmt>,
    form: SourceForm,
    include_dirs: &[PathBuf],
    diags: &mut Vec<Diagnostic>,
) -> Vec<LogicalStmt> {
    let Some(first) = stmts.first() else {
        return stmts;
    };
    let top = parent_dir(Path::new(map.name(first.span_at(0).file)));
    let mut dirs = vec![top];
    dirs.extend(include_dirs.iter().cloned());
    expand_at(map, stmts, form, &dirs, diags, 0)
}

fn expand_at(
    map: &mut SourceMap,
    stmts: Vec<LogicalStmt>,
    form: SourceForm,
    include_dirs: &[PathBuf],
    diags: &mut Vec<Diagnostic>,
    depth: usize,
) -> Vec<LogicalStmt> {
    let mut out = Vec::with_capacity(stmts.len());
    for stmt in stmts {
        let Some((name, offset)) = include_target(&stmt.text) else {
            out.push(stmt);
            continue;
        };
        let span = stmt.span_at(offset);
        if depth >= MAX_DEPTH {
            diags.push(Diagnostic::error(
                span,
                format!(
                    "INCLUDE lines nest more than {MAX_DEPTH} deep (does `{name}` include itself?)"
                ),
            ));
            continue;
        }
        let including = PathBuf::from(map.name(span.file));
        let Some(path) = find(&name, &including, include_dirs) else {
            let mut searched = vec![parent_dir(&including).display().to_string()];
            for d in include_dirs {
                let d = d.display().to_string();
                if !searched.contains(&d) {
                    searched.push(d);
                }
            }
            diags.push(Diagnostic::error(
                span,
                format!(
                    "cannot find the INCLUDE file `{name}` (searched: {})",
                    searched.join(", ")
                ),
            ));
            continue;
        };
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) => {
                diags.push(Diagnostic::error(
                    span,
                    format!("cannot read the INCLUDE file `{}`: {e}", path.display()),
                ));
                continue;
            }
        };
        let id = map.add(path.display().to_string(), decode(&bytes));
        let (inner, inner_diags) = logical_statements(map.text(id), id, form);
        diags.extend(inner_diags);
        out.extend(expand_at(map, inner, form, include_dirs, diags, depth + 1));
    }
    out
}

/// The file name of an INCLUDE line and the offset of its literal in the
/// statement text; `None` for any other statement.
fn include_target(text: &str) -> Option<(String, usize)> {
    let trimmed = text.trim_start();
    let rest = trimmed.strip_prefix("include")?;
    let literal = rest.trim();
    let quote = literal.chars().next()?;
    if !(quote == '\'' || quote == '"') || literal.len() < 2 || !literal.ends_with(quote) {
        return None;
    }
    let offset =
        text.len() - trimmed.len() + "include".len() + (rest.len() - rest.trim_start().len());
    Some((string_value(literal), offset))
}

/// The directory holding a file (`.` for a bare name).
fn parent_dir(file: &Path) -> PathBuf {
    match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Where an included file is: next to the including file, then in the
/// search directories in order.
fn find(name: &str, including: &Path, include_dirs: &[PathBuf]) -> Option<PathBuf> {
    let direct = Path::new(name);
    if direct.is_absolute() {
        return direct.is_file().then(|| direct.to_path_buf());
    }
    let own = parent_dir(including);
    std::iter::once(own.clone())
        .chain(include_dirs.iter().filter(|d| **d != own).cloned())
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_include_lines_only() {
        assert_eq!(
            include_target("include 'fcn.h'"),
            Some(("fcn.h".to_string(), 8))
        );
        assert_eq!(
            include_target("  include\"it''s.inc\""),
            Some(("it''s.inc".to_string(), 9))
        );
        assert_eq!(include_target("include = 'x'"), None);
        assert_eq!(include_target("includex = 1"), None);
        assert_eq!(include_target("call include('a')"), None);
    }
}
