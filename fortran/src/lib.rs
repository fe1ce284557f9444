//! `adjit-fortran`: writes the derivative procedures of an IR module as
//! free-form Fortran 2008 that gfortran compiles (`adjit emit --format
//! fortran`).
//!
//! This crate knows the IR ([`adjit_ir`]) and nothing above it: it prints
//! the code lists the tangent and adjoint transforms produce, the same ones
//! the JIT compiles. It owns the naming contract of the emitted file:
//!
//! * every generated procedure keeps its IR name (`foo_d`, `foo_b`,
//!   `foo_fwd`, `foo_rev`) and its IR parameters in order (each active
//!   argument `x` followed by `x_d` / `x_b`; a FUNCTION's result and its
//!   derivative last), as a SUBROUTINE;
//! * a procedure derived from a procedure of Fortran module `m` lives in
//!   module `m_d` (tangent) or `m_b` (adjoint), which `use`s `m` for the
//!   original procedures and variables it needs; the others are external,
//!   except those (not entries) taking ALLOCATABLE dummies, which callers
//!   must see through an explicit interface: they live in module
//!   `adjit_procs_d` / `adjit_procs_b`;
//! * storage the original program cannot provide (derivatives of globals,
//!   the emitted copies of SAVE / DATA locals) lives in module
//!   `adjit_globals_d` / `adjit_globals_b`, named `<unit>_<name>`;
//! * the file starts with module `adjit_support` (growable value, integer
//!   and control stacks; float FLOOR / CEILING), so it is self-contained;
//! * an entry's assumed-size dummy whose extent the derivative needs gets
//!   its element count from a variable of module `adjit_sizes_d` /
//!   `adjit_sizes_b` that the caller sets ([`EntrySize`]).
//!
//! Original procedures the derivatives call are not emitted: the user
//! compiles the original source beside the emitted file.
//!
//! Control flow is structured ([`structure`]): IF / ELSE IF / ELSE, SELECT
//! CASE, DO and DO WHILE, EXIT and CYCLE, and a named BLOCK construct left
//! by EXIT where a jump goes forward to a point several paths reach.
//! Counted DO loops are written as `do i = start, end, step` ([`counted`]),
//! reverse sweeps' loops as the same DO run backwards. A loop entered at
//! several points is made single-entry by copying blocks ([`split`]); only
//! a graph that would need too many copies is written block by block with
//! statement labels and `GO TO`s (see [`proc`]).

mod component_path;
mod counted;
mod expr;
mod first_def;
mod naming;
mod proc;
mod split;
mod structure;
mod whole;

use adjit_ir::{Global, Module, ProcId, Span, Storage};
use std::collections::{BTreeMap, HashSet};
use std::fmt;

/// Which derivative the emitted file holds (it names the modules).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Tangent procedures, modules suffixed `_d`.
    Tangent,
    /// Adjoint procedures, modules suffixed `_b`.
    Adjoint,
}

impl Mode {
    /// The module-name suffix, `_d` or `_b`.
    pub fn suffix(self) -> &'static str {
        match self {
            Mode::Tangent => "_d",
            Mode::Adjoint => "_b",
        }
    }
}

/// What to emit: a derivative module and where its generated part starts.
#[derive(Clone, Debug)]
pub struct Request<'a> {
    /// The derivative module (the input procedures and globals first, the
    /// generated ones after them).
    pub module: &'a Module,
    /// How many of `module.procs` are the input program's procedures.
    pub primal_procs: usize,
    /// How many of `module.globals` are the input program's globals.
    pub primal_globals: usize,
    /// The generated procedures asked for; with every generated procedure
    /// they call, they are the emitted ones.
    pub roots: Vec<ProcId>,
    /// Tangent or adjoint.
    pub mode: Mode,
    /// The source text of each file of `module.files` (empty when unknown):
    /// the line of a statement is printed as a comment above its code.
    pub sources: Vec<String>,
}

/// Why a procedure could not be written as Fortran.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmitError {
    /// The procedure being emitted.
    pub proc: String,
    /// What cannot be expressed.
    pub what: String,
    /// Where it came from in the source (line 0: unknown).
    pub span: Span,
}

impl fmt::Display for EmitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "in `{}`", self.proc)?;
        if self.span.line > 0 {
            write!(f, " (line {})", self.span.line)?;
        }
        write!(f, ": cannot emit Fortran for {}", self.what)
    }
}

impl std::error::Error for EmitError {}

/// The support module that starts every emitted file. Its kept-record
/// parts stand between `!@keep` and `!@end-keep` lines: see
/// [`support_module`].
pub const SUPPORT_MODULE: &str = include_str!("support.f90");

/// [`SUPPORT_MODULE`] without its marker lines, and without the kept-record
/// parts unless `with_kept_records` (the emitted procedures keep or
/// restore records).
pub fn support_module(with_kept_records: bool) -> String {
    let mut out = String::new();
    let mut inside = false;
    for line in SUPPORT_MODULE.lines() {
        match line {
            "!@keep" => inside = true,
            "!@end-keep" => inside = false,
            _ if inside && !with_kept_records => {}
            _ => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

/// An element count the caller of an entry sets before calling it: an
/// assumed-size dummy (`a(*)`, `a(ld, *)`) of an entry whose extent the
/// derivative needs (the entry keeps the original's arguments, so it cannot
/// take the count as an argument). The emitted file declares `variable` in
/// module `module` (`adjit_sizes_d` / `adjit_sizes_b`), initialised to -1;
/// the caller sets it to the number of elements the actual hands over (its
/// SIZE, or the count from the element passed to the end of its array).
/// The entry stops with an `error stop` naming the variable while it is
/// negative.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntrySize {
    /// The entry (one of the request's roots).
    pub entry: ProcId,
    /// Its assumed-size dummy.
    pub dummy: adjit_ir::VarId,
    /// The module that declares the variable.
    pub module: String,
    /// The variable, `<entry>_<dummy>_size` (`columns_b_a_size`).
    pub variable: String,
}

/// The element counts the caller of `request`'s entries sets before the
/// call (see [`EntrySize`]), in entry and dummy order.
pub fn entry_sizes(request: &Request<'_>) -> Vec<EntrySize> {
    let ctx = Context::new(request);
    ctx.entry_sizes
        .iter()
        .map(|(&(entry, dummy), variable)| EntrySize {
            entry,
            dummy,
            module: ctx.sizes_module.clone(),
            variable: variable.clone(),
        })
        .collect()
}

/// Writes the Fortran file for `request` (see the crate documentation).
pub fn emit(request: &Request<'_>) -> Result<String, EmitError> {
    let ctx = Context::new(request);
    let procs = ctx.reachable();
    let mut bodies: BTreeMap<Option<String>, Vec<(ProcId, proc::Printed)>> = BTreeMap::new();
    for &id in &procs {
        let printed = proc::print(&ctx, id)?;
        bodies
            .entry(ctx.fortran_module(id))
            .or_default()
            .push((id, printed));
    }
    let mut out = String::new();
    out.push_str(&format!(
        "! Generated by adjit (adjit emit --format fortran): {} procedures.\n\n",
        match request.mode {
            Mode::Tangent => "tangent",
            Mode::Adjoint => "adjoint",
        }
    ));
    let header = out.len();
    ctx.write_sizes_module(&mut out);
    ctx.write_globals_module(&procs, &mut out);
    let aliases = merge_module_circles(&mut bodies);
    // Modules in an order where each comes after those it uses.
    let mut done: HashSet<String> = HashSet::new();
    let names: Vec<String> = bodies.keys().flatten().cloned().collect();
    while done.len() < names.len() {
        let before = done.len();
        for m in &names {
            if done.contains(m) {
                continue;
            }
            let ready = bodies[&Some(m.clone())].iter().all(|(_, p)| {
                p.uses_modules
                    .iter()
                    .all(|u| u == m || done.contains(u) || !names.contains(u))
            });
            if ready || done.len() == before && names.iter().all(|n| done.contains(n) || n == m) {
                write_module(m, &bodies[&Some(m.clone())], &mut out);
                write_aliases(m, &aliases, &mut out);
                done.insert(m.clone());
            }
        }
        if done.len() == before {
            // A circle of module uses (the original modules had none): write
            // the rest in name order and let the compiler report it.
            for m in &names {
                if done.insert(m.clone()) {
                    write_module(m, &bodies[&Some(m.clone())], &mut out);
                    write_aliases(m, &aliases, &mut out);
                }
            }
        }
    }
    if let Some(external) = bodies.get(&None) {
        for (_, p) in external {
            out.push_str(&p.text);
            out.push('\n');
        }
    }
    let kept = ["adjit_keep_", "adjit_restore_", "adjit_kept_"]
        .iter()
        .any(|name| out[header..].contains(name));
    out.insert_str(header, &(support_module(kept) + "\n"));
    Ok(wrap_text(&out))
}

/// Emitted modules that use each other in a circle (a procedure with a
/// dummy procedure, specialised for an actual of the module that calls it,
/// lives in its own module and calls back into the caller's) become one:
/// the procedures move into the first module of the circle by name, their
/// `use` lines naming the circle's modules go, and each other module of
/// the circle is written as an alias that re-exports it (so drivers and
/// later modules `use` any of the names). A `use` line that renames
/// (`a => b`) keeps its circle, reported by the compiler. Returns the
/// aliases: (alias, the module it re-exports).
fn merge_module_circles(
    bodies: &mut BTreeMap<Option<String>, Vec<(ProcId, proc::Printed)>>,
) -> Vec<(String, String)> {
    let names: Vec<String> = bodies.keys().flatten().cloned().collect();
    let uses = |m: &String| -> Vec<String> {
        let mut u: Vec<String> = bodies[&Some(m.clone())]
            .iter()
            .flat_map(|(_, p)| p.uses_modules.iter().cloned())
            .filter(|u| u != m && names.contains(u))
            .collect();
        u.sort();
        u.dedup();
        u
    };
    let edges: BTreeMap<&String, Vec<String>> = names.iter().map(|m| (m, uses(m))).collect();
    let reaches = |from: &String| -> HashSet<String> {
        let mut seen = HashSet::new();
        let mut work = vec![from.clone()];
        while let Some(m) = work.pop() {
            for u in &edges[&m] {
                if seen.insert(u.clone()) {
                    work.push(u.clone());
                }
            }
        }
        seen
    };
    let reach: BTreeMap<&String, HashSet<String>> = names.iter().map(|m| (m, reaches(m))).collect();
    let mut aliases = Vec::new();
    let mut merged: HashSet<String> = HashSet::new();
    for m in &names {
        if merged.contains(m) {
            continue;
        }
        let circle: Vec<&String> = names
            .iter()
            .filter(|n| *n != m && reach[m].contains(*n) && reach[*n].contains(m))
            .collect();
        let renames = |n: &String| {
            bodies[&Some(n.clone())].iter().any(|(_, p)| {
                p.text.lines().any(|l| {
                    let l = l.trim_start();
                    l.contains("=>")
                        && (l.starts_with(&format!("use {m},"))
                            || circle.iter().any(|c| l.starts_with(&format!("use {c},"))))
                })
            })
        };
        if circle.is_empty() || renames(m) || circle.iter().any(|n| renames(n)) {
            continue;
        }
        let mut moved = Vec::new();
        for n in &circle {
            moved.extend(bodies.remove(&Some((*n).clone())).unwrap_or_default());
            merged.insert((*n).clone());
            aliases.push(((*n).clone(), m.clone()));
        }
        let target = bodies.entry(Some(m.clone())).or_default();
        target.extend(moved);
        let inside: Vec<String> = std::iter::once(m.clone())
            .chain(circle.iter().map(|n| (*n).clone()))
            .collect();
        for (_, p) in target.iter_mut() {
            p.text = p
                .text
                .lines()
                .filter(|l| {
                    let l = l.trim_start();
                    !inside.iter().any(|n| l.starts_with(&format!("use {n},")))
                })
                .map(|l| format!("{l}\n"))
                .collect();
            p.uses_modules.retain(|u| !inside.contains(u));
        }
    }
    // Later modules wait for the module an alias re-exports.
    for procs in bodies.values_mut() {
        for (_, p) in procs.iter_mut() {
            for u in p.uses_modules.iter_mut() {
                if let Some((_, to)) = aliases.iter().find(|(a, _)| a == u) {
                    *u = to.clone();
                }
            }
        }
    }
    aliases
}

/// The alias modules of `module` (see [`merge_module_circles`]).
fn write_aliases(module: &str, aliases: &[(String, String)], out: &mut String) {
    for (alias, _) in aliases.iter().filter(|(_, to)| to == module) {
        out.push_str(&format!(
            "module {alias}\n  use {module}\n  implicit none\nend module {alias}\n\n"
        ));
    }
}

fn write_module(name: &str, procs: &[(ProcId, proc::Printed)], out: &mut String) {
    out.push_str(&format!("module {name}\n  implicit none\ncontains\n\n"));
    for (_, p) in procs {
        for line in p.text.lines() {
            if line.is_empty() {
                out.push('\n');
            } else {
                out.push_str("  ");
                out.push_str(line);
                out.push('\n');
            }
        }
        out.push('\n');
    }
    out.push_str(&format!("end module {name}\n\n"));
}

/// The Fortran module an emitted procedure lives in (`m_d` / `m_b` for one
/// derived from a procedure of module `m`, `None` for an external one).
/// Drivers `use` it to call the procedure.
pub fn fortran_module(
    module: &Module,
    primal_procs: usize,
    proc: ProcId,
    mode: Mode,
) -> Option<String> {
    let original = original_of(module, primal_procs, proc)?;
    let m = module.proc(original).module.as_ref()?;
    Some(format!("{}{}", ident(m), mode.suffix()))
}

/// The input procedure a generated one derives from, by the transforms'
/// naming (`foo_d`, `foo_dv`, `foo_b`, `foo_fwd`, `foo_rev`, with a `_2` /
/// `2` for further activity patterns).
fn original_of(module: &Module, primal_procs: usize, proc: ProcId) -> Option<ProcId> {
    if proc.index() < primal_procs {
        return Some(proc);
    }
    let name = &module.proc(proc).name;
    module.procs[..primal_procs.min(module.procs.len())]
        .iter()
        .enumerate()
        .filter(|(_, p)| {
            name.strip_prefix(p.name.as_str())
                .and_then(|rest| rest.strip_prefix('_'))
                .is_some_and(is_derivative_suffix)
        })
        .max_by_key(|(_, p)| p.name.len())
        .map(|(i, _)| ProcId(i as u32))
}

fn is_derivative_suffix(rest: &str) -> bool {
    ["dv", "d", "b", "fwd", "rev"].iter().any(|s| {
        rest.strip_prefix(s).is_some_and(|n| {
            let n = n.strip_prefix('_').unwrap_or(n);
            n.chars().all(|c| c.is_ascii_digit())
        })
    })
}

/// A valid Fortran name for an IR name: lower case, letters, digits and
/// underscores, starting with a letter (`_t` becomes `t_t`, `a.b` `a_b`,
/// `m::x` `m_x`).
pub fn ident(name: &str) -> String {
    let mut s: String = name
        .replace("::", "_")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    if !s.starts_with(|c: char| c.is_ascii_alphabetic()) {
        s.insert(0, 't');
    }
    s
}

/// Where the Fortran code finds a global.
#[derive(Clone, Debug, PartialEq, Eq)]
enum GlobalHome {
    /// A variable of an original Fortran module: (module, variable name).
    Original(String, String),
    /// A variable of the emitted globals module, by its name there.
    Emitted(String),
}

/// What every procedure printer shares.
struct Context<'a> {
    request: &'a Request<'a>,
    /// The emitted globals module's name.
    globals_module: String,
    /// Array dummies declared assumed-shape (`x(:)`): see
    /// [`Context::assumed_shape_params`].
    assumed_shape: HashSet<(ProcId, adjit_ir::VarId)>,
    /// Assumed-size dummies of generated procedures that take the number
    /// of elements of their actual as a hidden trailing argument: see
    /// [`Context::sized_params`].
    hidden_sizes: HashSet<(ProcId, adjit_ir::VarId)>,
    /// The entries' assumed-size dummies whose element count the code
    /// needs, with the variable of the sizes module that holds it: see
    /// [`entry_sizes`].
    entry_sizes: BTreeMap<(ProcId, adjit_ir::VarId), String>,
    /// The sizes module's name (`adjit_sizes_d` / `adjit_sizes_b`).
    sizes_module: String,
    /// The names of pushed values, which their pops take.
    pushed: naming::PushedNames,
    /// Procedures of the input that the emitted code calls and cannot call
    /// as the original source declares them: see [`Context::copied_procs`].
    copies: HashSet<ProcId>,
}

impl<'a> Context<'a> {
    fn new(request: &'a Request<'a>) -> Context<'a> {
        let mut ctx = Context {
            request,
            globals_module: format!("adjit_globals{}", request.mode.suffix()),
            assumed_shape: HashSet::new(),
            hidden_sizes: HashSet::new(),
            entry_sizes: BTreeMap::new(),
            sizes_module: format!("adjit_sizes{}", request.mode.suffix()),
            pushed: naming::PushedNames::new(request.module),
            copies: HashSet::new(),
        };
        ctx.copies = ctx.copied_procs();
        ctx.assumed_shape = ctx.assumed_shape_params();
        let (entries, hidden) = ctx
            .sized_params()
            .into_iter()
            .partition(|(p, _)| request.roots.contains(p));
        ctx.hidden_sizes = hidden;
        let module = ctx.module();
        ctx.entry_sizes = entries
            .into_iter()
            .map(|(p, x)| {
                let proc = module.proc(p);
                let name = format!("{}_{}_size", ident(&proc.name), ident(&proc.var(x).name));
                ((p, x), name)
            })
            .collect();
        ctx
    }

    /// True when dummy `x` of `p` has an assumed last extent that Fortran
    /// cannot ask for (`x(*)`, not declared assumed-shape).
    fn is_assumed_size(&self, p: ProcId, x: adjit_ir::VarId) -> bool {
        let var = self.module().proc(p).var(x);
        matches!(var.storage, Storage::Param(_))
            && var.dims.last().is_some_and(|d| d.upper.is_none())
            && !self.assumed_shape.contains(&(p, x))
    }

    /// The assumed-size dummies of generated procedures whose last extent
    /// the code asks for (the JIT gets it from the length of the actual's
    /// buffer), and those passed on to such a dummy. A non-entry procedure
    /// takes the element count of the actual (from the given element to
    /// the end of its array) as an `integer(8)` argument after the IR's
    /// ones, named `<dummy>_size` (`hidden_sizes`), and declares the dummy
    /// with that extent. The roots keep the IR's parameters (the users'
    /// contract): they read the count from the sizes module, which the
    /// caller sets (`entry_sizes`).
    fn sized_params(&self) -> HashSet<(ProcId, adjit_ir::VarId)> {
        let module = self.module();
        // Derivatives and the copies of input procedures (see
        // [`Context::copied_procs`]) alike.
        let generated: Vec<ProcId> = (0..module.procs.len())
            .map(|i| ProcId(i as u32))
            .filter(|&p| self.is_generated(p))
            .collect();
        let mut set = HashSet::new();
        for &p in &generated {
            for inst in &module.proc(p).insts {
                if let adjit_ir::Inst::DimExtent(x, d) = inst.kind {
                    if self.is_assumed_size(p, x)
                        && d as usize + 1 == module.proc(p).var(x).dims.len()
                    {
                        set.insert((p, x));
                    }
                }
                // A derivative element passed through a zeroed array
                // covering the rest of its array (see
                // `proc::derivatives_may_overlap`; subscripts compared by
                // value, which may ask for more counts, never fewer).
                if let adjit_ir::Inst::Call(c, args) = &inst.kind {
                    let same = |a: &[adjit_ir::Value], b: &[adjit_ir::Value]| a == b;
                    let callee = module.proc(*c);
                    if let Some((_, j)) = proc::derivatives_may_overlap(module, args, callee, same)
                    {
                        if let adjit_ir::CallArg::Elem(y, _) = &args[j] {
                            if self.is_assumed_size(p, *y) {
                                set.insert((p, *y));
                            }
                        }
                    }
                }
            }
        }
        loop {
            let before = set.len();
            for &p in &generated {
                for inst in &module.proc(p).insts {
                    let adjit_ir::Inst::Call(c, args) = &inst.kind else {
                        continue;
                    };
                    for (a, &dummy) in args.iter().zip(&module.proc(*c).params) {
                        if let adjit_ir::CallArg::Var(y) | adjit_ir::CallArg::Elem(y, _) = a {
                            if set.contains(&(*c, dummy)) && self.is_assumed_size(p, *y) {
                                set.insert((p, *y));
                            }
                        }
                    }
                }
            }
            if set.len() == before {
                break;
            }
        }
        set
    }

    /// Writes the module of the entries' element counts (see
    /// [`entry_sizes`]), if any entry needs one.
    fn write_sizes_module(&self, out: &mut String) {
        if self.entry_sizes.is_empty() {
            return;
        }
        out.push_str(&format!(
            "! Element counts of the entries' assumed-size dummies whose extent the\n\
             ! derivative needs: the caller sets each (to SIZE of the actual, or\n\
             ! the count from the element passed to the end of its array) before\n\
             ! the call; a negative count stops the program.\nmodule {}\n  implicit none\n",
            self.sizes_module
        ));
        for name in self.entry_sizes.values() {
            out.push_str(&format!("  integer(8) :: {name} = -1\n"));
        }
        out.push_str(&format!("end module {}\n\n", self.sizes_module));
    }

    /// The dummies of module procedures whose assumed last extent the code
    /// asks for (SIZE of an assumed-shape dummy reaches the IR as the
    /// extent of an assumed-size one), and those passed whole to such a
    /// dummy: declared assumed-shape, which a module procedure's explicit
    /// interface allows.
    fn assumed_shape_params(&self) -> HashSet<(ProcId, adjit_ir::VarId)> {
        // A dummy some call gives an actual of another rank (or an element)
        // stays assumed-size: Fortran passes those by sequence association
        // only. Leaving one out can leave out dummies passed on to it.
        let mut excluded = HashSet::new();
        loop {
            let set = self.assumed_shape_candidates(&excluded);
            let module = self.module();
            let mut bad = HashSet::new();
            for (p, proc) in module.procs.iter().enumerate() {
                for inst in &proc.insts {
                    let adjit_ir::Inst::Call(c, args) = &inst.kind else {
                        continue;
                    };
                    let callee = module.proc(*c);
                    for (a, &dummy) in args.iter().zip(&callee.params) {
                        if !set.contains(&(*c, dummy)) {
                            continue;
                        }
                        let rank = callee.var(dummy).dims.len();
                        let caller = &module.procs[p];
                        let conforms = match a {
                            // An assumed-size dummy of the caller left out
                            // of the set is printed `x(*)`, which an
                            // assumed-shape dummy cannot take.
                            adjit_ir::CallArg::Var(x) => {
                                caller.var(*x).dims.len() == rank
                                    && (!assumed_last(caller, *x)
                                        || set.contains(&(ProcId(p as u32), *x)))
                            }
                            // Printed as the section it stands for.
                            adjit_ir::CallArg::Slice(x, _, _) => caller.var(*x).dims.len() >= rank,
                            _ => false,
                        };
                        if !conforms {
                            bad.insert((*c, dummy));
                        }
                    }
                }
            }
            if bad.is_empty() {
                return set;
            }
            excluded.extend(bad);
        }
    }

    /// [`Context::assumed_shape_params`] before checking the actual
    /// arguments, leaving out `excluded`.
    fn assumed_shape_candidates(
        &self,
        excluded: &HashSet<(ProcId, adjit_ir::VarId)>,
    ) -> HashSet<(ProcId, adjit_ir::VarId)> {
        let module = self.module();
        let mut set = HashSet::new();
        let homed: Vec<ProcId> = (0..module.procs.len())
            .map(|i| ProcId(i as u32))
            .filter(|&p| self.fortran_module(p).is_some())
            .collect();
        for &p in &homed {
            let proc = module.proc(p);
            for inst in &proc.insts {
                if let adjit_ir::Inst::DimExtent(x, d) = inst.kind {
                    if assumed_last(proc, x)
                        && d as usize + 1 == proc.var(x).dims.len()
                        && !excluded.contains(&(p, x))
                    {
                        set.insert((p, x));
                    }
                }
            }
        }
        loop {
            let before = set.len();
            for &p in &homed {
                let proc = module.proc(p);
                for inst in &proc.insts {
                    let adjit_ir::Inst::Call(c, args) = &inst.kind else {
                        continue;
                    };
                    let callee = module.proc(*c);
                    for (a, &dummy) in args.iter().zip(&callee.params) {
                        if let adjit_ir::CallArg::Var(x) = a {
                            if set.contains(&(*c, dummy))
                                && assumed_last(proc, *x)
                                && !excluded.contains(&(p, *x))
                            {
                                set.insert((p, *x));
                            }
                        }
                    }
                }
            }
            if set.len() == before {
                return set;
            }
        }
    }

    fn module(&self) -> &Module {
        self.request.module
    }

    /// Whether procedure `p` is emitted: a generated one, or a procedure
    /// of the input that emitted code calls and cannot reach in the
    /// original (see [`Context::copied_procs`]), which gets an emitted copy
    /// (a SUBROUTINE whose last argument is a FUNCTION's result, as every
    /// emitted procedure).
    fn is_generated(&self, p: ProcId) -> bool {
        p.index() >= self.request.primal_procs || self.copies.contains(&p)
    }

    /// Whether input procedure `p` cannot be called as the original source
    /// declares it: an internal procedure (`host.inner`, not accessible
    /// outside its host), a PRIVATE module procedure (not accessible
    /// outside its module), or one taking parameters its source does not
    /// declare (the ALLOCATABLE module arrays its callers pass it, the
    /// extents of its assumed-shape dummies of rank 2 or more, the presence
    /// flags of its OPTIONAL dummies: [`adjit_ir::Proc::hidden_params`]), or one
    /// with an ALLOCATABLE CHARACTER array dummy: the IR's form of a
    /// deferred-length string (`character(len=:), allocatable :: s`),
    /// which emitted code holds as an array of one-character elements, or
    /// one taking or returning structures, which the IR passes as their
    /// components (`g%n`, `g%dx`: a structure-valued function is a
    /// subroutine with its result's components as the last parameters).
    fn needs_copy(&self, p: ProcId) -> bool {
        let proc = self.module().proc(p);
        let string_dummy = proc.params.iter().any(|&x| {
            let var = proc.var(x);
            var.ty == adjit_ir::Type::Char && var.is_array() && var.storage.is_allocatable()
        });
        let structure_dummy = proc.params.iter().any(|&x| proc.var(x).name.contains('%'));
        proc.name.contains('.')
            || proc.private
            || proc.hidden_params
            || string_dummy
            || structure_dummy
    }

    /// The input procedures the emitted code calls that [`needs_copy`]
    /// says it cannot call in the original, found from the generated
    /// procedures through calls (a copy's callees too).
    ///
    /// [`needs_copy`]: Context::needs_copy
    fn copied_procs(&self) -> HashSet<ProcId> {
        let module = self.module();
        let mut copies = HashSet::new();
        let mut work: Vec<ProcId> = (self.request.primal_procs..module.procs.len())
            .map(|i| ProcId(i as u32))
            .collect();
        while let Some(p) = work.pop() {
            for inst in &module.proc(p).insts {
                if let adjit_ir::Inst::Call(c, _) = inst.kind {
                    if c.index() < self.request.primal_procs
                        && self.needs_copy(c)
                        && copies.insert(c)
                    {
                        work.push(c);
                    }
                }
            }
        }
        copies
    }

    /// The Fortran name of procedure `p` in the emitted file: its IR name;
    /// for the copy of a procedure of the input that is not an internal
    /// one, with `_copy` appended (the original keeps its name).
    fn proc_name(&self, p: ProcId) -> String {
        let proc = self.module().proc(p);
        let name = ident(&proc.name);
        if p.index() < self.request.primal_procs
            && self.copies.contains(&p)
            && !proc.name.contains('.')
        {
            format!("{name}_copy")
        } else {
            name
        }
    }

    /// The Fortran module procedure `p` lives in: see [`fortran_module`];
    /// an emitted procedure that would be external but takes an
    /// ALLOCATABLE dummy (the hidden module arrays its callers pass it),
    /// which every caller must see through an explicit interface, lives in
    /// the module `adjit_procs_d` / `adjit_procs_b` instead (never a root:
    /// drivers call those as the original is called).
    fn fortran_module(&self, p: ProcId) -> Option<String> {
        if self.is_generated(p) {
            fortran_module(
                self.module(),
                self.request.primal_procs,
                p,
                self.request.mode,
            )
            .or_else(|| {
                let proc = self.module().proc(p);
                let allocatable_dummy = proc
                    .params
                    .iter()
                    .any(|&x| proc.var(x).storage.is_allocatable());
                (allocatable_dummy && !self.request.roots.contains(&p))
                    .then(|| format!("adjit_procs{}", self.request.mode.suffix()))
            })
        } else {
            self.module().proc(p).module.as_deref().map(ident)
        }
    }

    /// The generated procedures to emit: the roots and every generated
    /// procedure they call, roots first.
    fn reachable(&self) -> Vec<ProcId> {
        let mut out: Vec<ProcId> = Vec::new();
        let mut seen = HashSet::new();
        let mut work: Vec<ProcId> = self.request.roots.iter().rev().copied().collect();
        while let Some(p) = work.pop() {
            if !self.is_generated(p) || !seen.insert(p) {
                continue;
            }
            out.push(p);
            let proc = self.module().proc(p);
            let mut callees = Vec::new();
            for inst in &proc.insts {
                if let adjit_ir::Inst::Call(c, _) = inst.kind {
                    callees.push(c);
                }
            }
            work.extend(callees.into_iter().rev());
        }
        out
    }

    /// Where a global lives for the Fortran code.
    fn global_home(&self, g: adjit_ir::GlobalId) -> GlobalHome {
        let global = &self.module().globals[g.index()];
        // A PRIVATE module entity cannot be USEd: the emitted code keeps
        // its own copy (initialised alike).
        if g.index() < self.request.primal_globals && !self.module().private_globals.contains(&g) {
            if let Some((unit, name)) = global.name.split_once("::") {
                let is_proc = self
                    .module()
                    .procs
                    .iter()
                    // Instances of a procedure taking dummy procedures
                    // (`tally[f=addx]`) share its SAVE variables.
                    .any(|p| {
                        let base = p.name.split('[').next().unwrap_or(&p.name);
                        base.eq_ignore_ascii_case(unit)
                    });
                if !is_proc
                    && !unit.contains('.')
                    && !is_component_storage(name)
                    && !self.is_alloc_scalar_part(unit, name)
                {
                    return GlobalHome::Original(ident(unit), ident(name));
                }
            }
        }
        GlobalHome::Emitted(ident(&global.name))
    }

    /// Whether the module global `unit::name` is part of an ALLOCATABLE
    /// scalar (`real(8), allocatable :: t` in a module, or such a component
    /// of a module structure): its hidden allocation status `t.alloc`, or
    /// its value or a leaf of it (a global `unit::<prefix>.alloc` exists for
    /// `name` or a `%`-prefix of it). The original module holds the scalar
    /// as an allocatable whose status has no name of its own, so the
    /// emitted code keeps its own copy of the value and the status.
    fn is_alloc_scalar_part(&self, unit: &str, name: &str) -> bool {
        if name.ends_with(".alloc") {
            return true;
        }
        let globals = &self.module().globals;
        name.match_indices('%')
            .map(|(i, _)| &name[..i])
            .chain([name])
            .any(|prefix| {
                let status = format!("{unit}::{prefix}.alloc");
                globals.iter().any(|g| g.name == status)
            })
    }

    /// The name of the emitted view of global `g` that `var` sees from
    /// element `at` with its own (constant) shape or type, when that is not
    /// the global itself (EQUIVALENCE): `<global>_as_<var>`, declared in
    /// the emitted globals module and equivalenced there to the element.
    fn view(&self, var: &adjit_ir::Var, g: adjit_ir::GlobalId, at: i64) -> Option<String> {
        let global = &self.module().globals[g.index()];
        if at == 0 && same_shape(var, global) {
            return None;
        }
        Some(format!("{}_as_{}", ident(&global.name), ident(&var.name)))
    }

    /// The COMMON block (its name, empty for blank COMMON) an input
    /// program's global belongs to.
    fn common_block(&self, g: adjit_ir::GlobalId) -> Option<String> {
        if g.index() >= self.request.primal_globals {
            return None;
        }
        let name = &self.module().globals[g.index()].name;
        let rest = name.strip_prefix('/')?;
        let (block, _) = rest.split_once("/::")?;
        Some(block.to_string())
    }

    /// Writes the module of emitted globals the procedures name, if any,
    /// with the views of them that EQUIVALENCE gave other shapes.
    fn write_globals_module(&self, procs: &[ProcId], out: &mut String) {
        let mut globals = Vec::new();
        let mut views = BTreeMap::new();
        for &p in procs {
            for var in &self.module().proc(p).vars {
                if let Storage::Global(g, at) = var.storage {
                    if let GlobalHome::Emitted(name) = self.global_home(g) {
                        if !globals.iter().any(|(n, _)| *n == name) {
                            globals.push((name.clone(), g));
                        }
                        if let Some(view) = self.view(var, g, at) {
                            let global = &self.module().globals[g.index()];
                            views.insert(
                                view,
                                (
                                    var_declaration(var),
                                    format!("{name}{}", element_subscript(global, at)),
                                ),
                            );
                        }
                    }
                }
            }
        }
        if globals.is_empty() {
            return;
        }
        globals.sort();
        out.push_str(&format!(
            "! Derivatives of globals, and the emitted procedures' own copies of\n\
             ! SAVE / DATA variables.\nmodule {}\n  implicit none\n",
            self.globals_module
        ));
        for (name, g) in globals {
            out.push_str(&format!(
                "  {}\n",
                global_declaration(&name, &self.module().globals[g.index()])
            ));
        }
        for (view, (declaration, element)) in views {
            out.push_str(&format!(
                "  {}\n  equivalence ({element}, {view})\n",
                declaration.replacen("{}", &view, 1)
            ));
        }
        out.push_str(&format!("end module {}\n\n", self.globals_module));
    }
}

/// True when a module entity's name is the storage the front end made for
/// an ALLOCATABLE component of an array of structures (`a(:)%u.data`,
/// `a(:)%u.bounds`, see the front end's `ragged` module): the original
/// module has the component itself, not this storage, so the emitted
/// procedures keep their own copy.
fn is_component_storage(name: &str) -> bool {
    name.rsplit('%')
        .next()
        .is_some_and(|leaf| leaf.ends_with(".data") || leaf.ends_with(".bounds"))
}

/// The constant shape of `var` as `(lower, upper)` pairs (`None` when a
/// bound is not constant).
fn const_dims(var: &adjit_ir::Var) -> Option<Vec<(i64, i64)>> {
    var.dims
        .iter()
        .map(|d| Some((d.lower.as_const()?, d.upper.as_ref()?.as_const()?)))
        .collect()
}

/// Whether `var` sees global `g` with the global's own type and shape.
/// True for a dummy array of assumed last extent (`x(*)`, or assumed shape
/// as the IR has it).
fn assumed_last(proc: &adjit_ir::Proc, x: adjit_ir::VarId) -> bool {
    let var = proc.var(x);
    matches!(var.storage, Storage::Param(_)) && var.dims.last().is_some_and(|d| d.upper.is_none())
}

fn same_shape(var: &adjit_ir::Var, g: &Global) -> bool {
    let len_ok = var.ty != adjit_ir::Type::Char
        || var
            .char_len
            .as_ref()
            .and_then(adjit_ir::Bound::as_const)
            .unwrap_or(1)
            == g.char_len;
    var.ty == g.ty && const_dims(var).as_deref() == Some(g.dims.as_slice()) && len_ok
}

/// `TYPE :: {}(dims)` for a variable of constant shape (`{}` stands for
/// the name).
fn var_declaration(var: &adjit_ir::Var) -> String {
    let dims: Vec<String> = const_dims(var)
        .unwrap_or_default()
        .iter()
        .map(|&(l, u)| dim_text(l, u))
        .collect();
    let ty = expr::type_name(var.ty);
    if dims.is_empty() {
        format!("{ty} :: {{}}")
    } else {
        format!("{ty} :: {{}}({})", dims.join(", "))
    }
}

/// `(i, j)`: the subscripts of the element `at` elements (column-major)
/// from the start of global `g` (empty for a scalar).
fn element_subscript(g: &Global, at: i64) -> String {
    if g.dims.is_empty() {
        return String::new();
    }
    let mut rest = at;
    let subs: Vec<String> = g
        .dims
        .iter()
        .map(|&(l, u)| {
            let extent = (u - l + 1).max(1);
            let sub = l + rest % extent;
            rest /= extent;
            sub.to_string()
        })
        .collect();
    format!("({})", subs.join(", "))
}

/// The type and shape of global `g`: `TYPE :: name(dims)`.
fn member_declaration(name: &str, g: &Global) -> String {
    let ty = match g.ty {
        adjit_ir::Type::Char => format!("character(len={})", g.char_len.max(1)),
        t => expr::type_name(t).to_string(),
    };
    let dims: Vec<String> = g.dims.iter().map(|&(l, u)| dim_text(l, u)).collect();
    if dims.is_empty() {
        format!("{ty} :: {name}")
    } else {
        format!("{ty} :: {name}({})", dims.join(", "))
    }
}

/// `TYPE, SAVE :: name(dims) = init` for a global of the emitted module.
fn global_declaration(name: &str, g: &Global) -> String {
    use adjit_ir::{Const, Type};
    let ty = match g.ty {
        Type::Char => format!("character(len={})", g.char_len.max(1)),
        t => expr::type_name(t).to_string(),
    };
    let dims: Vec<String> = g.dims.iter().map(|&(l, u)| dim_text(l, u)).collect();
    let shape = if dims.is_empty() {
        String::new()
    } else {
        format!("({})", dims.join(", "))
    };
    let mut text = format!("{ty}, save :: {name}{shape}");
    if g.init.is_empty() {
        return text;
    }
    let n = g.len().max(1) as usize;
    let values: Vec<String> = if g.ty == Type::Char {
        let len = g.char_len.max(1) as usize;
        (0..n)
            .map(|k| {
                let bytes: Vec<u8> = (0..len)
                    .map(|j| match g.init.get(k * len + j) {
                        Some(Const::Char(b)) => *b,
                        _ => b' ',
                    })
                    .collect();
                expr::string_literal(&bytes)
            })
            .collect()
    } else {
        (0..n)
            .map(|k| {
                let c = g.init.get(k).copied().unwrap_or(Const::Int(0));
                expr::literal(c, g.ty).text
            })
            .collect()
    };
    if dims.is_empty() {
        text.push_str(&format!(" = {}", values[0]));
    } else if dims.len() == 1 {
        text.push_str(&format!(" = [{}]", values.join(", ")));
    } else {
        let extents: Vec<String> = g
            .dims
            .iter()
            .map(|(l, u)| ((u - l + 1).max(0)).to_string())
            .collect();
        text.push_str(&format!(
            " = reshape([{}], [{}])",
            values.join(", "),
            extents.join(", ")
        ));
    }
    text
}

/// `u` or `l:u`.
fn dim_text(l: i64, u: i64) -> String {
    if l == 1 {
        u.to_string()
    } else {
        format!("{l}:{u}")
    }
}

/// Column at which emitted lines are broken (gfortran's free-form limit is
/// 132; the margin leaves room for the enclosing module's indentation).
const WRAP_WIDTH: usize = 100;

/// Every line of `text` through [`wrap_line`]: the one place emitted
/// statements get their free-form continuations.
fn wrap_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 50);
    for line in text.lines() {
        wrap_line(line, &mut out);
    }
    out
}

/// Byte offsets in `line` after which a free-form line may be continued:
/// blanks and commas outside character literals and before any trailing
/// comment, never inside a token or a string. Each offset is the end of
/// the part kept on the current line.
fn break_points(line: &str) -> Vec<usize> {
    let bytes = line.as_bytes();
    let mut quote: Option<u8> = None;
    let mut out = Vec::new();
    for (i, &c) in bytes.iter().enumerate() {
        match quote {
            // A doubled quote inside a literal toggles twice: still inside.
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == b'\'' || c == b'"' => quote = Some(c),
            None if c == b'!' => break,
            None if c == b' ' => out.push(i),
            None if c == b',' => out.push(i + 1),
            None => {}
        }
    }
    out
}

/// Writes `line` to `out`, broken into free-form continuation lines (`&`)
/// of at most [`WRAP_WIDTH`] columns where it is longer, at the
/// [`break_points`]; a comment line is cut at 130 columns instead.
fn wrap_line(line: &str, out: &mut String) {
    if line.len() <= WRAP_WIDTH || line.trim_start().starts_with('!') {
        let keep: String = line.chars().take(130).collect();
        out.push_str(&keep);
        out.push('\n');
        return;
    }
    let indent = line.len() - line.trim_start_matches(' ').len();
    let continuation = " ".repeat(indent + 4);
    // Breaking leaves the rest starting at the first non-blank after the
    // break; a rest that is blank or only the line's own `&` stays put.
    let rest_from = |at: usize| at + line[at..].len() - line[at..].trim_start_matches(' ').len();
    let usable = |at: usize| {
        let rest = line[at..].trim();
        at > indent && !rest.is_empty() && rest != "&"
    };
    let points: Vec<usize> = break_points(line)
        .into_iter()
        .filter(|&at| usable(at))
        .collect();
    let mut start = 0;
    let mut width = 0; // Columns before `start` on the current output line.
    let mut k = 0;
    while start < line.len() {
        if width + line.len() - start <= WRAP_WIDTH {
            break;
        }
        // The last break point that keeps this output line within the width,
        // else the first one after it (an over-long token stays whole).
        let mut chosen = None;
        while k < points.len() && points[k] <= start {
            k += 1;
        }
        while k < points.len() && width + points[k] - start + 2 <= WRAP_WIDTH {
            chosen = Some(points[k]);
            k += 1;
        }
        let Some(at) = chosen.or_else(|| points.get(k).copied()) else {
            break;
        };
        out.push_str(line[start..at].trim_end_matches(' '));
        out.push_str(" &\n");
        out.push_str(&continuation);
        width = continuation.len();
        start = rest_from(at);
    }
    out.push_str(&line[start..]);
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn component_storage_is_recognised() {
        assert!(is_component_storage("gp(:)%f.bounds"));
        assert!(is_component_storage("gp(:, :)%s%u.data"));
        assert!(!is_component_storage("gp(:)%f"));
        assert!(!is_component_storage("counter"));
    }

    #[test]
    fn identifiers_are_fortran_names() {
        assert_eq!(ident("_cnt3"), "t_cnt3");
        assert_eq!(ident("outer.inner"), "outer_inner");
        assert_eq!(ident("geometry::ncalls_b"), "geometry_ncalls_b");
        assert_eq!(ident("X"), "x");
    }

    #[test]
    fn derivative_names_map_back_to_their_original() {
        let mut m = Module::default();
        for name in ["f", "f_b", "foo", "foo_d", "foo_d_2", "foo_fwd1", "foo_bar"] {
            m.add_proc(adjit_ir::Proc::new(name));
        }
        let orig = |i: u32| original_of(&m, 3, ProcId(i)).map(|p| m.proc(p).name.clone());
        assert_eq!(orig(3).as_deref(), Some("foo"));
        assert_eq!(orig(4).as_deref(), Some("foo"));
        assert_eq!(orig(5).as_deref(), Some("foo"));
        assert_eq!(orig(6), None);
    }

    #[test]
    fn long_lines_wrap_outside_strings() {
        let long = format!("  x = {}", vec!["a + 'b c'"; 30].join(" + "));
        let out = wrap_text(&long);
        assert!(out.lines().count() > 1);
        assert!(out.lines().all(|l| l.len() <= WRAP_WIDTH));
        let joined: String = out.replace(" &\n      ", " ");
        assert_eq!(joined.trim_end(), long);
    }

    /// Joins continuation lines back into one statement.
    fn unwrap(text: &str) -> String {
        let mut joined = String::new();
        for l in text.lines() {
            match l.strip_suffix(" &") {
                Some(head) => {
                    joined.push_str(head);
                    joined.push(' ');
                }
                None => {
                    joined.push_str(l);
                    joined.push('\n');
                }
            }
        }
        // The continuation's indentation follows the joining blank.
        joined
            .split(' ')
            .filter(|p| !p.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn long_initialisers_wrap_between_values() {
        let values: Vec<String> = (0..40).map(|k| format!("{k}.25d-2")).collect();
        let long = format!("  real(8), save :: w(40) = [{}]", values.join(", "));
        let out = wrap_text(&long);
        assert!(out.lines().count() > 2);
        for l in out.lines() {
            assert!(l.len() <= WRAP_WIDTH, "{l}");
            // Every piece ends at a whole value.
            assert!(l.ends_with(", &") || l.ends_with(']'), "{l}");
        }
        assert_eq!(unwrap(&out), unwrap(&format!("{long}\n")));
    }

    #[test]
    fn lines_without_blanks_break_after_commas() {
        let values: Vec<String> = (0..60).map(|k| format!("{k}")).collect();
        let long = format!("  call f({})", values.join(","));
        let out = wrap_text(&long);
        assert!(out.lines().count() > 1);
        assert!(out.lines().all(|l| l.len() <= WRAP_WIDTH));
        assert_eq!(out.replace(" &\n      ", ""), format!("{long}\n"));
    }

    #[test]
    fn strings_comments_and_continued_lines_stay_whole() {
        // Blanks and commas inside a literal (either quote) are no break
        // points, nor is anything after a trailing comment.
        let text = "  s = 'a, b ''c'' d' // \"e, f\" ! g, h";
        let at: Vec<usize> = break_points(text);
        assert_eq!(at, vec![0, 1, 3, 5, 20, 23, 30]);
        // A line already ending in `&` keeps it on the last piece, never
        // alone on a line.
        let long = format!("  y = {} &", vec!["b"; 60].join(" + "));
        let out = wrap_text(&long);
        assert!(out.lines().all(|l| l.trim() != "&"));
        assert!(out.trim_end().ends_with("b &"));
        // A short line and a long comment are left as they are (the comment
        // is cut to the 132-column limit).
        assert_eq!(wrap_text("  x = 1"), "  x = 1\n");
        let comment = format!("! {}", "c".repeat(200));
        assert_eq!(wrap_text(&comment).trim_end().len(), 130);
    }
}
