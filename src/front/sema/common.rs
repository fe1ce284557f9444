//! Storage association: COMMON blocks between program units and
//! EQUIVALENCE inside one unit.
//!
//! Every unit lists a COMMON block's members in storage order, with names,
//! types and shapes of its own. The members are laid out by byte offset (as
//! gfortran does: a LOGICAL or INTEGER or REAL takes 4 bytes, a DOUBLE
//! PRECISION 8, a character its length). EQUIVALENCE sets place more
//! variables relative to those (extending a block past its end, never
//! before its start) or, when none of a set's variables is in COMMON, in a
//! storage sequence of their own (one per unit and group of associated
//! variables).
//!
//! A block (COMMON or EQUIVALENCE) is then cut into the runs of members
//! whose bytes overlap: each run becomes one IR global that every member
//! in it views from its own element offset ([`adjit_ir::Storage::Global`]),
//! with its own shape, so `x(6)` in one unit and `y(2,3)` or `p, q(5)` in
//! another share a global, and a store through one name is seen through
//! every other (in the primal, and in the tangent and adjoint globals,
//! which mirror the layout). A run whose members all cover the same bytes
//! keeps the first member's shape and name. Members of one run with
//! different types (a reinterpretation of bits, as in the integer patterns
//! of old machine-constant routines) or lying between element boundaries
//! are rejected with a located error rather than run differently from
//! gfortran; so are CHARACTER variables in EQUIVALENCE.
//!
//! It runs once every unit's scope is built and before any unit is lowered,
//! setting [`VarDecl::global`](super::scope::VarDecl) and its element offset
//! for each member; from then on members are lowered like module variables.

use super::super::ast::{ArgValue, Expr, ExprKind, Span};
use super::super::diag::Diagnostic;
use super::consts::fold;
use super::lowerer::{global_for, Out};
use super::scope::{equivalence_name, Scope};
use super::Program;
use adjit_ir::{Const, Global, GlobalId, Type};
use std::collections::{BTreeMap, HashMap};

/// The bytes one element of a type takes in COMMON storage (gfortran's
/// default kinds: LOGICAL takes a numeric storage unit).
fn storage_bytes(ty: Type) -> i64 {
    match ty {
        Type::Bool => 4,
        other => other.size() as i64,
    }
}

/// The bytes one element of a global takes.
fn element_bytes(global: &Global) -> i64 {
    storage_bytes(global.ty) * global.char_len.max(1)
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

/// A storage sequence: a COMMON block, or associated local variables.
#[derive(Default)]
struct Block {
    /// How messages name it.
    label: String,
    /// Members of every unit.
    members: Vec<Member>,
}

/// The printed name of a COMMON block.
fn block_label(block: &str) -> String {
    if block.is_empty() {
        "blank COMMON".to_string()
    } else {
        format!("COMMON /{block}/")
    }
}

/// Lays out every COMMON block and EQUIVALENCE group of the program and
/// gives each member the global (and element) it lives in; errors go to
/// `out.diags`.
pub(super) fn lay_out(prog: &mut Program, out: &mut Out) {
    // Key (COMMON block name, "" for blank COMMON, or a key of its own for
    // an EQUIVALENCE group outside COMMON) -> members of every unit.
    let mut blocks: BTreeMap<String, Block> = BTreeMap::new();
    for (u, unit) in prog.units.iter().enumerate() {
        let scope = &unit.scope;
        // Where this unit's COMMON members start: name -> (block, byte).
        let mut placed: HashMap<String, (String, i64)> = HashMap::new();
        for (block, names) in &scope.commons {
            let key = block.as_ref().map_or(String::new(), |b| b.text.clone());
            let mut offset = 0;
            for n in names {
                let Some(global) = member_global(scope, &n.text, n.span, &key, &mut out.diags)
                else {
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
                let bytes = global.len().max(1) * element_bytes(&global);
                let entry = blocks.entry(key.clone()).or_insert_with(|| Block {
                    label: block_label(&key),
                    members: Vec::new(),
                });
                entry.members.push(Member {
                    unit: u,
                    name: n.text.clone(),
                    span: n.span,
                    start: offset,
                    end: offset + bytes,
                    global,
                });
                placed.insert(n.text.clone(), (key.clone(), offset));
                offset += bytes;
            }
        }
        for (k, group) in equivalence_groups(scope, &mut out.diags)
            .into_iter()
            .enumerate()
        {
            place_group(
                u,
                k,
                &unit.ast.name.text,
                scope,
                group,
                &placed,
                &mut blocks,
                out,
            );
        }
    }
    for block in blocks.into_values() {
        assign_globals(prog, out, block);
    }
}

/// The global describing one variable's own storage, or a located error.
fn member_global(
    scope: &Scope,
    name: &str,
    span: Span,
    key: &str,
    diags: &mut Vec<Diagnostic>,
) -> Option<Global> {
    let Some(d) = scope.var(name) else {
        diags.push(Diagnostic::error(
            span,
            format!("`{name}` is not a variable and cannot share storage"),
        ));
        return None;
    };
    if d.arg.is_some() {
        diags.push(Diagnostic::error(
            span,
            format!("dummy argument `{name}` cannot be in COMMON or EQUIVALENCE"),
        ));
        return None;
    }
    global_for(scope, &[], name, format!("/{key}/::{name}"), diags)
}

/// One group of variables associated by EQUIVALENCE: each variable with the
/// byte offset of its start relative to the group's first variable, and
/// where it was named.
type Group = Vec<(String, i64, Span)>;

/// Joins the EQUIVALENCE sets of a unit into groups of associated
/// variables (sets sharing a variable join), checking that the offsets
/// they imply agree.
fn equivalence_groups(scope: &Scope, diags: &mut Vec<Diagnostic>) -> Vec<Group> {
    // Each set as (variable, byte offset of the associated unit in it).
    let mut sets: Vec<Vec<(String, i64, Span)>> = Vec::new();
    for set in &scope.equivalences {
        let mut objects = Vec::new();
        for object in set {
            match object_offset(scope, object) {
                Ok(o) => objects.push(o),
                Err(d) => diags.push(d),
            }
        }
        if objects.len() == set.len() {
            sets.push(objects);
        }
    }
    // Position of each variable's start relative to its group's first
    // variable, found by propagating along the sets until nothing changes.
    let mut groups: Vec<Group> = Vec::new();
    let mut done = vec![false; sets.len()];
    for first in 0..sets.len() {
        if done[first] {
            continue;
        }
        let mut pos: Vec<(String, i64, Span)> = Vec::new();
        let mut at: HashMap<String, i64> = HashMap::new();
        let (n0, o0, s0) = sets[first][0].clone();
        at.insert(n0.clone(), -o0);
        pos.push((n0, -o0, s0));
        let mut changed = true;
        while changed {
            changed = false;
            for (i, set) in sets.iter().enumerate() {
                if done[i] {
                    continue;
                }
                let Some(anchor) = set.iter().find_map(|(n, o, _)| at.get(n).map(|p| p + o)) else {
                    continue;
                };
                done[i] = true;
                changed = true;
                for (n, o, span) in set {
                    let start = anchor - o;
                    match at.get(n) {
                        Some(&p) if p != start => diags.push(Diagnostic::error(
                            *span,
                            format!(
                                "EQUIVALENCE places `{n}` at two different offsets \
                                 (bytes {p} and {start} from the group's start)"
                            ),
                        )),
                        Some(_) => {}
                        None => {
                            at.insert(n.clone(), start);
                            pos.push((n.clone(), start, *span));
                        }
                    }
                }
            }
        }
        groups.push(pos);
    }
    groups
}

/// A variable named in an EQUIVALENCE set and the byte offset of the
/// object within it (`a(3)` of a real array: 8; `x`: 0).
fn object_offset(scope: &Scope, object: &Expr) -> Result<(String, i64, Span), Diagnostic> {
    let Some(name) = equivalence_name(object) else {
        return Err(Diagnostic::error(
            object.span,
            "EQUIVALENCE objects are variables or array elements",
        ));
    };
    let mut sink = Vec::new();
    let Some(global) = member_global(scope, &name.text, name.span, "", &mut sink) else {
        return Err(sink.pop().unwrap_or_else(|| {
            Diagnostic::error(
                name.span,
                format!("`{}` cannot be in EQUIVALENCE", name.text),
            )
        }));
    };
    if global.ty == Type::Char {
        return Err(Diagnostic::error(
            object.span,
            format!(
                "unsupported Fortran: CHARACTER variable `{}` in EQUIVALENCE",
                name.text
            ),
        ));
    }
    let args = match &object.kind {
        ExprKind::Name(_) => return Ok((name.text.clone(), 0, object.span)),
        ExprKind::Apply { args, .. } => args,
        _ => {
            return Err(Diagnostic::error(
                object.span,
                "EQUIVALENCE objects are variables or array elements",
            ))
        }
    };
    if args.len() != global.dims.len() {
        return Err(Diagnostic::error(
            object.span,
            format!(
                "`{}` has {} dimensions but {} subscripts in EQUIVALENCE",
                name.text,
                global.dims.len(),
                args.len()
            ),
        ));
    }
    let lookup = |n: &str| scope.constant(n);
    let (mut offset, mut stride) = (0, 1);
    for (a, &(lo, hi)) in args.iter().zip(&global.dims) {
        let ArgValue::Expr(e) = &a.value else {
            return Err(Diagnostic::error(
                object.span,
                "EQUIVALENCE objects are variables or array elements, not sections",
            ));
        };
        let i = match fold(e, &lookup).map(|c| c.as_int()) {
            Ok(Some(i)) => i,
            _ => {
                return Err(Diagnostic::error(
                    e.span,
                    "an EQUIVALENCE subscript must be an integer constant",
                ))
            }
        };
        if i < lo || i > hi {
            return Err(Diagnostic::error(
                e.span,
                format!("EQUIVALENCE subscript {i} outside {lo}:{hi}"),
            ));
        }
        offset += (i - lo) * stride;
        stride *= hi - lo + 1;
    }
    Ok((
        name.text.clone(),
        offset * element_bytes(&global),
        object.span,
    ))
}

/// Adds the variables of one EQUIVALENCE group of unit `u` to the block
/// they belong to: the COMMON block of its members in COMMON, else a block
/// of its own.
#[allow(clippy::too_many_arguments)]
fn place_group(
    u: usize,
    k: usize,
    unit_name: &str,
    scope: &Scope,
    group: Group,
    placed: &HashMap<String, (String, i64)>,
    blocks: &mut BTreeMap<String, Block>,
    out: &mut Out,
) {
    // The COMMON member that fixes the group's position, if any.
    let anchor = group
        .iter()
        .find_map(|(n, rel, _)| placed.get(n).map(|(key, start)| (key.clone(), start - rel)));
    let (key, base) = match anchor {
        Some(a) => a,
        None => {
            let lowest = group.iter().map(|g| g.1).min().unwrap_or(0);
            let key = format!("{LOCAL_KEY}{u}#{k}");
            blocks.entry(key.clone()).or_insert_with(|| Block {
                label: format!("EQUIVALENCE in `{unit_name}`"),
                members: Vec::new(),
            });
            (key, -lowest)
        }
    };
    for (name, rel, span) in group {
        let start = base + rel;
        if let Some((k2, s2)) = placed.get(&name) {
            if *k2 != key || *s2 != start {
                out.diags.push(Diagnostic::error(
                    span,
                    format!(
                        "EQUIVALENCE moves `{name}`, which COMMON already places \
                         (at byte {s2} of {})",
                        block_label(k2)
                    ),
                ));
            }
            continue;
        }
        if start < 0 {
            out.diags.push(Diagnostic::error(
                span,
                format!(
                    "EQUIVALENCE would extend {} before its start (`{name}` at byte {start})",
                    block_label(&key)
                ),
            ));
            continue;
        }
        let gname = if anchor_key_is_local(&key) {
            format!("{unit_name}::{name}")
        } else {
            format!("/{key}/::{name}")
        };
        let Some(global) = global_for(scope, &[], &name, gname, &mut out.diags) else {
            continue;
        };
        if !global.init.is_empty() && !anchor_key_is_local(&key) {
            out.diags.push(Diagnostic::error(
                span,
                format!("`{name}` is in COMMON by EQUIVALENCE and has an initial value"),
            ));
        }
        let end = start + global.len().max(1) * element_bytes(&global);
        if let Some(b) = blocks.get_mut(&key) {
            b.members.push(Member {
                unit: u,
                name,
                span,
                start,
                end,
                global,
            });
        }
    }
}

/// The first character of the key of an EQUIVALENCE group outside COMMON
/// (no COMMON block name starts with it).
const LOCAL_KEY: char = '\u{1}';

/// True for the key of an EQUIVALENCE group outside COMMON.
fn anchor_key_is_local(key: &str) -> bool {
    key.starts_with(LOCAL_KEY)
}

/// Cuts a block into runs of overlapping members and gives every member
/// the global of its run and its element offset in it.
fn assign_globals(prog: &mut Program, out: &mut Out, block: Block) {
    let mut members = block.members;
    members.sort_by_key(|m| (m.start, std::cmp::Reverse(m.end)));
    let mut i = 0;
    while i < members.len() {
        // The run: members overlapping the bytes covered so far.
        let (start, mut end) = (members[i].start, members[i].end);
        let mut j = i + 1;
        while j < members.len() && members[j].start < end {
            end = end.max(members[j].end);
            j += 1;
        }
        let run = &members[i..j];
        let first = &run[0];
        let mut ok = true;
        for m in run {
            let step = element_bytes(&first.global);
            if (m.global.ty, m.global.char_len) != (first.global.ty, first.global.char_len) {
                out.diags.push(Diagnostic::error(
                    m.span,
                    format!(
                        "unsupported Fortran: `{}` in {} has type {} but shares its storage with \
                         `{}` of type {} in `{}` (reinterpreting bits is not supported)",
                        m.name,
                        block.label,
                        type_label(m.global.ty, m.global.char_len),
                        first.name,
                        type_label(first.global.ty, first.global.char_len),
                        prog.units[first.unit].ast.name.text
                    ),
                ));
                ok = false;
            } else if (m.start - start) % step != 0 {
                out.diags.push(Diagnostic::error(
                    m.span,
                    format!(
                        "unsupported Fortran: `{}` in {} starts at byte {}, inside an element \
                         of `{}`",
                        m.name, block.label, m.start, first.name
                    ),
                ));
                ok = false;
            }
        }
        if ok {
            let g = run_global(run, start, end);
            out.globals.push(g);
            let id = GlobalId(out.globals.len() as u32 - 1);
            for m in run {
                let at = (m.start - start) / element_bytes(&m.global);
                prog.units[m.unit].scope.set_global(&m.name, id, at);
            }
        }
        i = j;
    }
}

/// The global of a run of members covering bytes `start..end`: the first
/// member's own when every member covers the same bytes, else a
/// one-dimensional global of the run's elements, with each member's
/// initial values at its place.
fn run_global(run: &[Member], start: i64, end: i64) -> Global {
    let first = &run[0];
    if run.iter().all(|m| (m.start, m.end) == (start, end)) {
        return first.global.clone();
    }
    let step = element_bytes(&first.global);
    let mut init: Vec<Const> = Vec::new();
    for m in run.iter().filter(|m| !m.global.init.is_empty()) {
        let at = ((m.start - start) / step) as usize;
        let zero = match first.global.ty {
            Type::F32 | Type::F64 => Const::Float(0.0),
            Type::Bool => Const::Bool(false),
            _ => Const::Int(0),
        };
        if init.len() < at + m.global.init.len() {
            init.resize(at + m.global.init.len(), zero);
        }
        init[at..at + m.global.init.len()].copy_from_slice(&m.global.init);
    }
    Global {
        name: first.global.name.clone(),
        ty: first.global.ty,
        dims: vec![(1, (end - start) / step)],
        char_len: first.global.char_len,
        init,
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
