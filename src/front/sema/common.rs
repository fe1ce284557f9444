//! COMMON blocks: storage association between program units.
//!
//! Every unit lists a block's members in storage order, with names, types
//! and shapes of its own. The members are laid out by byte offset (as
//! gfortran does: a LOGICAL or INTEGER or REAL takes 4 bytes, a DOUBLE
//! PRECISION 8, a character its length); the offsets where any unit starts
//! or ends a member cut the block into pieces, and each piece becomes one
//! IR global that every member lying exactly on it views (with its own
//! shape, so `x(6)` in one unit and `y(2,3)` in another share a global).
//! Members that straddle a cut made by another unit (`a(2)` against `p, q`)
//! and pieces seen with different types (a bit reinterpretation) are
//! rejected with a located error rather than run differently from
//! gfortran.
//!
//! It runs once every unit's scope is built and before any unit is lowered,
//! setting [`VarDecl::global`](super::scope::VarDecl) of each member; from
//! then on members are lowered like module variables.

use super::super::ast::Span;
use super::super::diag::Diagnostic;
use super::lowerer::{global_for, Out};
use super::Program;
use adjit_ir::{Global, GlobalId, Type};
use std::collections::{BTreeMap, BTreeSet};

/// The bytes one element of a type takes in COMMON storage (gfortran's
/// default kinds: LOGICAL takes a numeric storage unit).
fn storage_bytes(ty: Type) -> i64 {
    match ty {
        Type::Bool => 4,
        other => other.size() as i64,
    }
}

/// One member of one unit's view of a block.
struct Member {
    unit: usize,
    name: String,
    span: Span,
    start: i64,
    end: i64,
    global: Global,
}

/// The printed name of a block.
fn block_label(block: &str) -> String {
    if block.is_empty() {
        "blank COMMON".to_string()
    } else {
        format!("COMMON /{block}/")
    }
}

/// Lays out every COMMON block of the program and gives each member the
/// global it lives in; errors go to `out.diags`.
pub(super) fn lay_out(prog: &mut Program, out: &mut Out) {
    // Block name ("" for blank COMMON) -> members of every unit.
    let mut blocks: BTreeMap<String, Vec<Member>> = BTreeMap::new();
    for (u, unit) in prog.units.iter().enumerate() {
        for (block, names) in &unit.scope.commons {
            let key = block.as_ref().map_or(String::new(), |b| b.text.clone());
            let mut offset = 0;
            for n in names {
                let d = unit
                    .scope
                    .var(&n.text)
                    .expect("COMMON members are variables");
                if d.arg.is_some() {
                    out.diags.push(Diagnostic::error(
                        n.span,
                        format!("dummy argument `{}` cannot be in COMMON", n.text),
                    ));
                    continue;
                }
                let gname = format!("/{key}/::{}", n.text);
                let Some(global) = global_for(&unit.scope, &n.text, gname, &mut out.diags) else {
                    continue;
                };
                if !global.init.is_empty() {
                    out.diags.push(Diagnostic::error(
                        n.span,
                        format!(
                            "COMMON member `{}` has an initial value: use DATA in BLOCK DATA",
                            n.text
                        ),
                    ));
                }
                let bytes = global.len().max(1) * storage_bytes(global.ty) * global.char_len;
                blocks.entry(key.clone()).or_default().push(Member {
                    unit: u,
                    name: n.text.clone(),
                    span: n.span,
                    start: offset,
                    end: offset + bytes,
                    global,
                });
                offset += bytes;
            }
        }
    }
    for (block, members) in blocks {
        let cuts: BTreeSet<i64> = members.iter().flat_map(|m| [m.start, m.end]).collect();
        // Piece (start, end) -> the global and the member that made it.
        let mut pieces: BTreeMap<(i64, i64), (GlobalId, usize)> = BTreeMap::new();
        for (i, m) in members.iter().enumerate() {
            if let Some(cut) = cuts.range(m.start + 1..m.end).next() {
                let other = members
                    .iter()
                    .find(|o| o.unit != m.unit && (o.start == *cut || o.end == *cut))
                    .map_or(String::new(), |o| {
                        format!(" `{}` in `{}`", o.name, prog.units[o.unit].ast.name.text)
                    });
                out.diags.push(Diagnostic::error(
                    m.span,
                    format!(
                        "unsupported Fortran: `{}` in {} spans bytes {}..{}, which{} splits \
                         at byte {cut}; storage association of members partitioned \
                         differently in different units is not supported",
                        m.name,
                        block_label(&block),
                        m.start,
                        m.end,
                        if other.is_empty() {
                            " another unit".to_string()
                        } else {
                            other
                        },
                    ),
                ));
                continue;
            }
            let (g, first) = *pieces.entry((m.start, m.end)).or_insert_with(|| {
                out.globals.push(m.global.clone());
                (GlobalId(out.globals.len() as u32 - 1), i)
            });
            let f = &members[first];
            if (f.global.ty, f.global.char_len) != (m.global.ty, m.global.char_len) {
                out.diags.push(Diagnostic::error(
                    m.span,
                    format!(
                        "unsupported Fortran: `{}` in {} has type {} but shares its storage with \
                         `{}` of type {} in `{}` (reinterpreting bits is not supported)",
                        m.name,
                        block_label(&block),
                        type_label(m.global.ty, m.global.char_len),
                        f.name,
                        type_label(f.global.ty, f.global.char_len),
                        prog.units[f.unit].ast.name.text
                    ),
                ));
                continue;
            }
            prog.units[m.unit].scope.set_global(&m.name, g);
        }
    }
}

/// A type for messages.
fn type_label(ty: Type, char_len: i64) -> String {
    if ty == Type::Char {
        format!("character*{char_len}")
    } else {
        super::consts::type_name(ty).to_string()
    }
}
