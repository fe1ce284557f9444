//! One emitted procedure: names, declarations, statements and control flow.
//!
//! Every IR value becomes either part of a larger expression (a constant,
//! or a side-effect-free value used once, or a variable read used several
//! times, when no store or call separates it from its uses) or a named
//! temporary assigned where the IR computes it. Stores, calls, pushes and
//! pops are statements in IR order, so evaluation order is the IR's.
//!
//! Control flow is written from the structured tree of [`crate::structure`]
//! (see [`structured`]). When the graph is irreducible, blocks are written
//! in arena order instead (unreachable ones are left out); a block that is
//! the target of a jump other than a fall-through gets a statement label
//! (its index + 1).

use crate::component_path::ComponentPath;
use crate::counted::{self, Control, Counted};
use crate::expr::{self, binary_spelling, literal, relational, BinarySpelling, Expr};
use crate::{split, structure};

mod structured;
use crate::{dim_text, ident, Context, EmitError, GlobalHome};
use adjit_ir::special::Special;
use adjit_ir::{
    BlockId, Bound, CallArg, CharBase, CharRef, CmpOp, Const, Inst, IoOp, Module, Proc, ProcId,
    Rounding, RuntimeErrorKind, Span, StackKind, Storage, Terminator, Type, UnaryOp, Value, VarId,
};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// A printed procedure.
pub struct Printed {
    /// The Fortran text, from `subroutine` to `end subroutine`.
    pub text: String,
    /// The emitted modules it `use`s (for module ordering).
    pub uses_modules: Vec<String>,
}

/// How deep [`Printer::range`] follows operands.
const RANGE_DEPTH: u32 = 6;

/// The largest value [`Printer::range`] assumes of a counter (see
/// [`Printer::counts_up`]): more than any run executes statements, and
/// small enough that a counter times an INTEGER(4) constant or plus an
/// INTEGER(4) value stays well inside INTEGER(8).
const COUNTER_MAX: i64 = 1 << 53;

/// Prints generated procedure `id`.
pub fn print(ctx: &Context<'_>, id: ProcId) -> Result<Printed, EmitError> {
    let original = ctx.module().proc(id);
    // An irreducible graph is split into a reducible one where that stays
    // small; what remains irreducible is written with labels.
    let split = match structure::structure(original) {
        Some(_) => None,
        None => split::reducible(original),
    };
    let proc = split.as_ref().unwrap_or(original);
    let mut p = Printer::new(ctx, id, proc, true)?;
    match p.body() {
        Ok(()) if !p.counted_failed => return p.finish(),
        Err(e) if !p.counted_failed => return Err(e),
        _ => {}
    }
    // A counted loop the structure did not write as a DO: every loop in
    // its general form.
    let mut p = Printer::new(ctx, id, proc, false)?;
    p.body()?;
    p.finish()
}

struct Printer<'c, 'a> {
    ctx: &'c Context<'a>,
    /// The procedure being printed.
    id: ProcId,
    proc: &'c Proc,
    name: String,
    /// The Fortran module this procedure lives in.
    home: Option<String>,
    /// Fortran name of each variable.
    names: Vec<String>,
    /// Every name taken in the procedure's scope.
    taken: HashSet<String>,
    /// `use` lists: module -> (local name, module entity).
    uses: BTreeMap<String, BTreeSet<(String, String)>>,
    /// Local names of called procedures.
    callee_names: HashMap<ProcId, String>,
    /// External FUNCTIONs called: (name, type).
    external_functions: BTreeSet<(String, String)>,
    /// Temporaries: name -> type.
    temps: BTreeMap<String, Type>,
    /// Temporary names used in the current block.
    block_temps: HashSet<String>,
    /// Statement lines of the body (indented by the structure level).
    lines: Vec<String>,
    /// Last source line commented.
    last_line: Option<(u32, u32)>,
    /// Variables that something reads (locals among them are zeroed).
    read: HashSet<VarId>,
    /// Stores a later store overwrites unread: not written.
    overwritten: HashSet<Value>,
    /// The I/O steps that read or write kept records ([`kept_steps`]):
    /// printed; other I/O is dropped, or refused where its values are used
    /// or where it defines character data (an internal file, a character
    /// input item).
    kept_io: HashSet<Value>,
    /// Variables that something names.
    named: HashSet<VarId>,
    /// The procedure reaches itself through calls (printed RECURSIVE).
    recursive: bool,
    /// Nesting depth of the construct being written.
    indent: usize,
    /// COMMON blocks of the original program the procedure names: block
    /// name -> (global index -> local name of the member viewing it).
    commons: BTreeMap<String, BTreeMap<usize, String>>,
    /// Leaves of module structures through arrays of structures:
    /// variable -> its path, written `array(i)%component(j)`.
    struct_arrays: HashMap<VarId, ComponentPath>,
    /// Variables that see a COMMON member from an element or with another
    /// shape (EQUIVALENCE in the original program).
    common_views: Vec<VarId>,
    /// Counted DO loops written as `do i = start, end, step`.
    counted: Counted,
    /// The start and end of each counted loop (by header), set when its
    /// entry block is written.
    bounds: HashMap<BlockId, (Expr, Expr)>,
    /// A counted loop could not be written as one (print again without).
    counted_failed: bool,
    /// Named constants for the character literals the code takes
    /// substrings of.
    literal_names: BTreeMap<Vec<u8>, String>,
    /// One-element arrays standing for scalars passed to array dummies:
    /// array name -> (scalar name, type).
    one_element: BTreeMap<String, (String, Type)>,
    /// Allocatable arrays standing for derivative elements passed to
    /// dummies that may overlap (see [`derivatives_may_overlap`]).
    part_arrays: BTreeMap<String, Type>,
    /// Deferred-length character scalars standing for one-character-per-
    /// element buffers of run-time length that a callee writes:
    /// scalar name -> buffer name.
    char_scalars: BTreeMap<String, String>,
    /// The element count of each assumed-size dummy that has one (see
    /// `Context::sized_params`), by dummy: a hidden argument, or for an
    /// entry the local name of a sizes-module variable.
    sizes: BTreeMap<VarId, String>,
    /// The entry's sizes-module variables: (local name, variable, dummy's
    /// name).
    entry_sizes: Vec<(String, String, String)>,
}

/// True when procedure `id` of `module` calls itself, directly or through
/// other procedures.
fn reaches_itself(module: &adjit_ir::Module, id: ProcId) -> bool {
    let mut seen = HashSet::new();
    let mut todo = vec![id];
    while let Some(p) = todo.pop() {
        let Some(proc) = module.procs.get(p.index()) else {
            continue;
        };
        for inst in &proc.insts {
            if let Inst::Call(c, _) = &inst.kind {
                if *c == id {
                    return true;
                }
                if seen.insert(*c) {
                    todo.push(*c);
                }
            }
        }
    }
    false
}

impl<'c, 'a> Printer<'c, 'a> {
    fn new(
        ctx: &'c Context<'a>,
        id: ProcId,
        proc: &'c Proc,
        counted_loops: bool,
    ) -> Result<Printer<'c, 'a>, EmitError> {
        let module = ctx.module();
        let name = ctx.proc_name(id);
        let mut p = Printer {
            ctx,
            id,
            proc,
            name: name.clone(),
            home: ctx.fortran_module(id),
            names: Vec::new(),
            taken: expr::RESERVED.iter().map(|s| s.to_string()).collect(),
            uses: BTreeMap::new(),
            callee_names: HashMap::new(),
            external_functions: BTreeSet::new(),
            temps: BTreeMap::new(),
            block_temps: HashSet::new(),
            lines: Vec::new(),
            last_line: None,
            read: HashSet::new(),
            overwritten: HashSet::new(),
            kept_io: HashSet::new(),
            named: HashSet::new(),
            recursive: reaches_itself(module, id),
            indent: 0,
            commons: BTreeMap::new(),
            common_views: Vec::new(),
            struct_arrays: HashMap::new(),
            counted: if counted_loops {
                counted::analyse(proc)
            } else {
                Counted::default()
            },
            bounds: HashMap::new(),
            counted_failed: false,
            literal_names: BTreeMap::new(),
            sizes: BTreeMap::new(),
            entry_sizes: Vec::new(),
            one_element: BTreeMap::new(),
            part_arrays: BTreeMap::new(),
            char_scalars: BTreeMap::new(),
        };
        p.taken.insert(name);
        if let Some(m) = &p.home {
            p.taken.insert(m.clone());
        }
        // Procedures whose names cannot be renamed at a `use`: generated
        // ones (the contract) and external originals.
        let mut callees = Vec::new();
        for inst in &proc.insts {
            if let Inst::Call(c, _) = &inst.kind {
                callees.push(*c);
            }
        }
        for &c in &callees {
            if ctx.is_generated(c) || ctx.fortran_module(c).is_none() {
                p.taken.insert(ctx.proc_name(c));
            }
        }
        p.name_vars()?;
        p.name_literals();
        for &c in &callees {
            p.callee_name(c)?;
        }
        p.overwritten = crate::first_def::overwritten_stores(p.proc, &p.counted.dead);
        p.kept_io = kept_steps(p.proc);
        p.scan_reads();
        // Globals the code never names need no `use`.
        for (v, var) in proc.vars.iter().enumerate() {
            if matches!(var.storage, Storage::Global(..)) && !p.named.contains(&VarId(v as u32)) {
                let local = p.names[v].clone();
                for items in p.uses.values_mut() {
                    items.retain(|(l, _)| *l != local);
                }
            }
        }
        p.uses.retain(|_, items| !items.is_empty());
        Ok(p)
    }

    /// Names the character literals that substrings are taken of.
    fn name_literals(&mut self) {
        let mut literals: Vec<Vec<u8>> = Vec::new();
        for inst in &self.proc.insts {
            let refs: Vec<&CharRef> = match &inst.kind {
                Inst::CharAssign(a, b) | Inst::CharCompare(_, a, b) | Inst::CharIndex(a, b) => {
                    vec![a, b]
                }
                Inst::CharLen(a) => vec![a],
                _ => continue,
            };
            for r in refs {
                if let CharBase::Literal(bytes) = &r.base {
                    if (r.start.is_some() || r.end.is_some()) && !literals.contains(bytes) {
                        literals.push(bytes.clone());
                    }
                }
            }
        }
        for bytes in literals {
            let name = self.fresh("lit");
            self.literal_names.insert(bytes, name);
        }
    }

    fn err(&self, what: impl Into<String>, span: Span) -> EmitError {
        EmitError {
            proc: self.proc.name.clone(),
            what: what.into(),
            span,
        }
    }

    /// A fresh name based on `base`, taken from now on.
    fn fresh(&mut self, base: &str) -> String {
        let mut name = base.to_string();
        let mut n = 1;
        while self.taken.contains(&name) {
            n += 1;
            name = format!("{base}_{n}");
        }
        self.taken.insert(name.clone());
        name
    }

    fn name_vars(&mut self) -> Result<(), EmitError> {
        // Parameters first, so that they keep their names when they can.
        let mut order: Vec<VarId> = self.proc.params.clone();
        order.extend(
            (0..self.proc.vars.len())
                .map(|i| VarId(i as u32))
                .filter(|v| !self.proc.params.contains(v)),
        );
        self.names = vec![String::new(); self.proc.vars.len()];
        for v in order {
            let var = self.proc.var(v);
            let base = crate::naming::base_name(var);
            let base = if self.taken.contains(&base) {
                format!("{base}_v")
            } else {
                base
            };
            let local = self.fresh(&base);
            if let Storage::Global(g, at) = var.storage {
                let global = &self.ctx.module().globals[g.index()];
                if let (GlobalHome::Emitted(_), None, Some(view)) = (
                    self.ctx.global_home(g),
                    self.ctx.common_block(g),
                    self.ctx.view(var, g, at),
                ) {
                    // An EQUIVALENCE view of an emitted global: declared in
                    // the globals module (see `write_globals_module`).
                    if var.ty == Type::Char || crate::const_dims(var).is_none() {
                        return Err(self.err(
                            format!(
                                "variable `{}`, a view of global `{}` of CHARACTER type \
                                 or of a shape that is not constant",
                                var.name, global.name
                            ),
                            self.proc.span,
                        ));
                    }
                    self.uses
                        .entry(self.ctx.globals_module.clone())
                        .or_default()
                        .insert((local.clone(), view));
                    self.names[v.index()] = local;
                    continue;
                }
                if let Some(block) = self.ctx.common_block(g) {
                    // A member of the original program's COMMON block: the
                    // procedure declares the block (see `finish`), and
                    // EQUIVALENCEs a view of a member to its element.
                    let members = self.commons.entry(block).or_default();
                    if self.ctx.view(var, g, at).is_some() {
                        if var.ty == Type::Char {
                            return Err(self.err(
                                format!(
                                    "variable `{}`, a CHARACTER view of COMMON member `{}`",
                                    var.name, global.name
                                ),
                                self.proc.span,
                            ));
                        }
                        self.common_views.push(v);
                    } else {
                        members.insert(g.index(), local.clone());
                    }
                    self.names[v.index()] = local;
                    continue;
                }
                self.check_global_view(v, g, at)?;
                let (module, entity) = match self.ctx.global_home(g) {
                    GlobalHome::Original(m, n) => {
                        if self.ctx.module().protected_globals.contains(&g)
                            && self.proc.insts.iter().any(|d| may_write_inst(&d.kind, v))
                        {
                            return Err(self.err(
                                format!(
                                    "a definition of `{n}`, PROTECTED in module `{m}` (code outside its module may not define it)"
                                ),
                                self.proc.span,
                            ));
                        }
                        (m, n)
                    }
                    GlobalHome::Emitted(n) => (self.ctx.globals_module.clone(), n),
                };
                // A component of a derived-type module variable (`m::p%x`):
                // the variable is used whole and the component named.
                let raw = global.name.split_once("::").map_or("", |(_, n)| n);
                if let (true, Some(path)) =
                    (module != self.ctx.globals_module, ComponentPath::parse(raw))
                {
                    // A leaf through module arrays of structures
                    // (`m::a(:)%x`, `m::p%cells(:)%s%h`): its elements are
                    // `a(i)%x`, `p%cells(j)%s%h(k)`.
                    let base = path.base().to_string();
                    self.uses
                        .entry(module)
                        .or_default()
                        .insert((base.clone(), base));
                    self.names[v.index()] = path.plain();
                    self.struct_arrays.insert(v, path);
                    continue;
                }
                if module != self.ctx.globals_module && raw.contains('%') {
                    let path: Vec<String> = raw.split('%').map(ident).collect();
                    self.uses
                        .entry(module)
                        .or_default()
                        .insert((path[0].clone(), path[0].clone()));
                    self.names[v.index()] = path.join("%");
                    continue;
                }
                self.uses
                    .entry(module)
                    .or_default()
                    .insert((local.clone(), entity));
            }
            self.names[v.index()] = local;
        }
        for &p in &self.proc.params {
            if self.ctx.hidden_sizes.contains(&(self.id, p)) {
                let name = self.fresh(&format!("{}_size", self.names[p.index()]));
                self.sizes.insert(p, name);
            } else if let Some(entity) = self.ctx.entry_sizes.get(&(self.id, p)) {
                let local = self.fresh(entity);
                self.uses
                    .entry(self.ctx.sizes_module.clone())
                    .or_default()
                    .insert((local.clone(), entity.clone()));
                self.entry_sizes.push((
                    local.clone(),
                    entity.clone(),
                    self.names[p.index()].clone(),
                ));
                self.sizes.insert(p, local);
            }
        }
        Ok(())
    }

    /// A global must be seen with its own shape (the emitted code names the
    /// module variable itself).
    fn check_global_view(&self, v: VarId, g: adjit_ir::GlobalId, at: i64) -> Result<(), EmitError> {
        let var = self.proc.var(v);
        let global = &self.ctx.module().globals[g.index()];
        if at != 0 {
            return Err(self.err(
                format!(
                    "variable `{}`, a view of global `{}` from element {at} (EQUIVALENCE storage association is not emitted yet)",
                    var.name, global.name
                ),
                self.proc.span,
            ));
        }
        if !crate::same_shape(var, global) {
            return Err(self.err(
                format!(
                    "variable `{}`, a view of global `{}` with another shape",
                    var.name, global.name
                ),
                self.proc.span,
            ));
        }
        Ok(())
    }

    /// The local name of a called procedure (adding the `use` it needs).
    fn callee_name(&mut self, c: ProcId) -> Result<String, EmitError> {
        if let Some(n) = self.callee_names.get(&c) {
            return Ok(n.clone());
        }
        let callee = self.ctx.module().proc(c);
        let name = self.ctx.proc_name(c);
        let local = match self.ctx.fortran_module(c) {
            Some(m) if Some(&m) == self.home.as_ref() => name,
            Some(m) => {
                let local = if self.ctx.is_generated(c) || !self.taken.contains(&name) {
                    self.taken.insert(name.clone());
                    name.clone()
                } else {
                    self.fresh(&format!("{name}_f"))
                };
                self.uses
                    .entry(m)
                    .or_default()
                    .insert((local.clone(), name));
                local
            }
            None => {
                if !self.ctx.is_generated(c) {
                    if let Some(r) = callee.result {
                        let rv = callee.var(r);
                        let ty = match rv.ty {
                            // An external CHARACTER function is declared with
                            // its result length, which must be a constant
                            // here (the caller has no names for the
                            // callee's variables).
                            Type::Char => match rv.char_len.as_ref().and_then(|l| l.as_const()) {
                                Some(len) => format!("character(len={})", len.max(0)),
                                None => {
                                    return Err(self.err(
                                        format!(
                                            "a call of CHARACTER function `{}` whose result length is not a constant",
                                            callee.name
                                        ),
                                        callee.span,
                                    ))
                                }
                            },
                            t => expr::type_name(t).to_string(),
                        };
                        self.external_functions.insert((name.clone(), ty));
                    }
                }
                name
            }
        };
        self.callee_names.insert(c, local.clone());
        Ok(local)
    }

    /// Which variables are read (locals among them start at zero, as the
    /// IR's locals do) and which are named at all.
    fn scan_reads(&mut self) {
        let mut read = HashSet::new();
        let mut named = HashSet::new();
        let char_var = |r: &CharRef| match &r.base {
            CharBase::Var { var, .. } => Some(*var),
            CharBase::Literal(_) => None,
        };
        for (i, inst) in self.proc.insts.iter().enumerate() {
            if self.counted.dead.contains(&Value(i as u32)) {
                continue;
            }
            match &inst.kind {
                Inst::Load(v) | Inst::LoadElem(v, _) | Inst::DimLower(v, _) => {
                    read.insert(*v);
                }
                Inst::DimExtent(v, _) => {
                    read.insert(*v);
                }
                Inst::Store(v, _)
                | Inst::StoreElem(v, _, _)
                | Inst::Allocate(v, _)
                | Inst::Deallocate(v)
                | Inst::Allocated(v) => {
                    named.insert(*v);
                }
                Inst::Call(_, args) => {
                    for a in args {
                        if let CallArg::Var(v) | CallArg::Elem(v, _) | CallArg::Slice(v, _, _) = a {
                            read.insert(*v);
                        }
                    }
                }
                Inst::CharAssign(to, from) => {
                    named.extend(char_var(to));
                    read.extend(char_var(from));
                }
                Inst::CharCompare(_, a, b) => {
                    read.extend(char_var(a));
                    read.extend(char_var(b));
                }
                _ => {}
            }
        }
        // Variables in bounds are read at entry.
        for var in &self.proc.vars {
            for d in &var.dims {
                d.lower.for_each_var(&mut |v| {
                    read.insert(v);
                });
                if let Some(u) = &d.upper {
                    u.for_each_var(&mut |v| {
                        read.insert(v);
                    });
                }
            }
            if let Some(l) = &var.char_len {
                l.for_each_var(&mut |v| {
                    read.insert(v);
                });
            }
        }
        named.extend(read.iter().copied());
        named.extend(self.proc.params.iter().copied());
        // DO variables are named by their DO statements.
        named.extend(self.counted.loops.values().map(|l| l.var));
        self.read = read;
        self.named = named;
    }

    fn emit_line(&mut self, text: String) {
        self.lines
            .push(format!("{}{text}", "  ".repeat(self.indent)));
    }

    /// A comment with the source line of `span` when it starts a new line.
    fn comment(&mut self, span: Span) {
        if span.line == 0 {
            return;
        }
        let key = (span.file, span.line);
        if self.last_line == Some(key) {
            return;
        }
        self.last_line = Some(key);
        let text = self
            .ctx
            .request
            .sources
            .get(span.file as usize)
            .and_then(|s| s.lines().nth(span.line as usize - 1))
            .map(|l| l.trim().to_string())
            .unwrap_or_default();
        if text.is_empty() {
            self.emit_line(format!("! line {}", span.line));
        } else {
            self.emit_line(format!("! {}: {}", span.line, text));
        }
    }

    fn body(&mut self) -> Result<(), EmitError> {
        if let Some(tree) = structure::structure(self.proc) {
            return self.structured(&tree);
        }
        if !self.counted.loops.is_empty() {
            self.counted_failed = true;
            return Ok(());
        }
        self.labelled()
    }

    /// The body as labelled blocks and `go to`s (an irreducible graph).
    fn labelled(&mut self) -> Result<(), EmitError> {
        let order = self.layout();
        let mut targets: HashSet<BlockId> = HashSet::new();
        for (k, &b) in order.iter().enumerate() {
            let next = order.get(k + 1).copied();
            match &self.proc.block(b).term {
                Terminator::Jump(t) => {
                    if Some(*t) != next {
                        targets.insert(*t);
                    }
                }
                Terminator::Branch {
                    then_dest,
                    else_dest,
                    ..
                } => {
                    if Some(*then_dest) != next {
                        targets.insert(*then_dest);
                    }
                    if Some(*else_dest) != next {
                        targets.insert(*else_dest);
                    }
                }
                t => targets.extend(t.successors()),
            }
        }
        for (k, &b) in order.iter().enumerate() {
            if targets.contains(&b) {
                self.emit_line(format!("{} continue", b.index() + 1));
            }
            self.block(b, order.get(k + 1).copied(), k + 1 == order.len())?;
        }
        Ok(())
    }

    /// Reachable blocks in arena order.
    fn layout(&self) -> Vec<BlockId> {
        let n = self.proc.blocks.len();
        let mut seen = vec![false; n];
        let mut work = vec![Proc::ENTRY];
        seen[0] = true;
        while let Some(b) = work.pop() {
            for s in self.proc.successors(b) {
                if !seen[s.index()] {
                    seen[s.index()] = true;
                    work.push(s);
                }
            }
        }
        (0..n)
            .filter(|&i| seen[i])
            .map(|i| BlockId(i as u32))
            .collect()
    }

    /// Writes block `b` in the labelled layout: its statements, then its
    /// terminator as jumps (`next` is written right after it).
    fn block(&mut self, b: BlockId, next: Option<BlockId>, last: bool) -> Result<(), EmitError> {
        let exprs = self.block_code(b)?;
        let block = self.proc.block(b);
        self.terminator(&block.term, &exprs, next, last, block.term_span)
    }

    /// Writes block `b`'s statements; returns the expressions of its
    /// values (the terminator's operand among them).
    fn block_code(&mut self, b: BlockId) -> Result<HashMap<Value, Expr>, EmitError> {
        let block = self.proc.block(b);
        self.block_temps.clear();
        // Uses of each value: count and positions (terminator = len).
        let n = block.insts.len();
        let mut uses: HashMap<Value, Vec<usize>> = HashMap::new();
        // (positions of users; dead users are filtered out below)
        for (pos, &v) in block.insts.iter().enumerate() {
            self.proc
                .inst(v)
                .kind
                .for_each_operand(|o| uses.entry(o).or_default().push(pos));
        }
        if let Some(o) = block.term.operand() {
            uses.entry(o).or_default().push(n);
        }
        // The bounds of the counted DO loops this block enters are used
        // at its end, by the DO statement.
        let bound_uses = self.counted.bound_uses(b);
        for &v in &bound_uses {
            uses.entry(v).or_default().push(n);
        }
        // What each statement writes (`None`: anything, a call) and what
        // each value reads: a value moves to its use past statements that
        // write nothing it reads.
        let writes: Vec<(usize, Option<VarId>)> = block
            .insts
            .iter()
            .enumerate()
            .filter_map(|(i, &v)| match &self.proc.inst(v).kind {
                Inst::Store(x, _) | Inst::StoreElem(x, _, _) => Some((i, Some(*x))),
                Inst::CharAssign(to, _) => Some((
                    i,
                    match &to.base {
                        CharBase::Var { var, .. } => Some(*var),
                        CharBase::Literal(_) => None,
                    },
                )),
                Inst::Call(..) => Some((i, None)),
                Inst::Allocate(x, _) | Inst::Deallocate(x) => Some((i, Some(*x))),
                _ => None,
            })
            .collect();
        let stack_ops: Vec<usize> = block
            .insts
            .iter()
            .enumerate()
            .filter(|(_, &v)| matches!(self.proc.inst(v).kind, Inst::Push(..) | Inst::Pop(_)))
            .map(|(i, _)| i)
            .collect();
        let mut reads: HashMap<Value, Vec<VarId>> = HashMap::new();
        for &v in &block.insts {
            let kind = &self.proc.inst(v).kind;
            let mut r: Vec<VarId> = Vec::new();
            kind.for_each_operand(|o| r.extend(reads.get(&o).into_iter().flatten().copied()));
            match kind {
                Inst::Load(x)
                | Inst::LoadElem(x, _)
                | Inst::DimLower(x, _)
                | Inst::DimExtent(x, _)
                | Inst::Allocated(x) => r.push(*x),
                Inst::CharCompare(_, a, b) => {
                    for c in [a, b] {
                        if let CharBase::Var { var, .. } = &c.base {
                            r.push(*var);
                        }
                    }
                }
                _ => {}
            }
            reads.insert(v, r);
        }
        let clear = |v: Value, from: usize, to: usize| {
            let r = &reads[&v];
            !writes
                .iter()
                .any(|&(p, w)| p > from && p < to && w.is_none_or(|w| r.contains(&w)))
        };
        // Pure values only something live uses are dead code: left out.
        let mut live: HashSet<Value> = block.term.operand().into_iter().collect();
        live.extend(bound_uses.iter().copied());
        for &v in block.insts.iter().rev() {
            let kind = &self.proc.inst(v).kind;
            let effect = !self.counted.dead.contains(&v)
                && !self.overwritten.contains(&v)
                && matches!(
                    kind,
                    Inst::Store(..)
                        | Inst::StoreElem(..)
                        | Inst::Call(..)
                        | Inst::CharAssign(..)
                        | Inst::Push(..)
                        | Inst::Pop(_)
                        | Inst::Allocate(..)
                        | Inst::Deallocate(_)
                        // Internal files and character input define their
                        // data: refused below, never dropped as PRINT is.
                        | Inst::Io(IoOp::EndWriteTo(_) | IoOp::GetChar(_))
                )
                || self.kept_io.contains(&v);
            if effect || live.contains(&v) {
                live.insert(v);
                kind.for_each_operand(|o| {
                    live.insert(o);
                });
            }
        }
        let mut exprs: HashMap<Value, Expr> = HashMap::new();
        for (pos, &v) in block.insts.iter().enumerate() {
            if !live.contains(&v) {
                continue;
            }
            let data = self.proc.inst(v);
            self.comment(data.span);
            let ty = data.ty.unwrap_or(Type::I64);
            let value_uses: Vec<usize> = uses
                .get(&v)
                .into_iter()
                .flatten()
                .copied()
                .filter(|&p| p == n || live.contains(&block.insts[p]))
                .collect();
            let value_uses = value_uses.as_slice();
            let last_use = value_uses.iter().copied().max().unwrap_or(pos);
            let e = |x: &Value| exprs[x].clone();
            let computed: Option<Expr> = match &data.kind {
                Inst::Const(c) => {
                    exprs.insert(v, literal(*c, ty));
                    continue;
                }
                Inst::Load(x) => Some(Expr::primary(self.names[x.index()].clone())),
                Inst::LoadElem(x, idx) => Some(Expr::primary(self.element(*x, idx, &exprs))),
                Inst::Unary(op, a) => Some(unary(*op, &e(a))),
                // `a / 1`, `a * 1` and `1 * b` (extents and element counts
                // of sections of step 1) are `a` and `b`.
                Inst::Binary(adjit_ir::BinaryOp::Div | adjit_ir::BinaryOp::Mul, a, b)
                    if matches!(self.proc.inst(*b).kind, Inst::Const(Const::Int(1))) =>
                {
                    Some(e(a))
                }
                Inst::Binary(adjit_ir::BinaryOp::Mul, a, b)
                    if matches!(self.proc.inst(*a).kind, Inst::Const(Const::Int(1))) =>
                {
                    Some(e(b))
                }
                Inst::Binary(op, a, b) => Some(match self.sign_flip(*op, *b, ty) {
                    // `x + MIN` / `x - MIN` (the unsigned comparisons of DO
                    // loop trip counts) wrap: that is flipping the sign bit,
                    // which gfortran -O2 may not assume away.
                    Some(min) => Expr::primary(format!("ieor({}, {})", e(a).text, min.text)),
                    // INTEGER(8) sums, differences and products (the trip
                    // counters of loops) wrap as in the IR: computed in
                    // INTEGER(16), narrowed modulo 2**64 by gfortran.
                    None if ty == Type::I64
                        && (self.counts_up(*op, *a, *b)
                            || self.range(v, RANGE_DEPTH).is_some()) =>
                    {
                        binary(*op, &e(a), &e(b))
                    }
                    None if ty == Type::I64
                        && matches!(
                            op,
                            adjit_ir::BinaryOp::Add
                                | adjit_ir::BinaryOp::Sub
                                | adjit_ir::BinaryOp::Mul
                        ) =>
                    {
                        let wide = Expr::primary(format!("int({}, 16)", e(a).text));
                        Expr::primary(format!("int({}, 8)", binary(*op, &wide, &e(b)).text))
                    }
                    None => binary(*op, &e(a), &e(b)),
                }),
                Inst::Cmp(op, a, b) => {
                    let operand_ty = self.proc.value_type(*a).unwrap_or(Type::F64);
                    Some(compare(*op, &e(a), &e(b), operand_ty))
                }
                Inst::Convert(a, rounding) => {
                    let from = self.proc.value_type(*a).unwrap_or(ty);
                    Some(convert(&e(a), from, ty, *rounding))
                }
                Inst::Select(c, a, b) => Some(Expr::primary(format!(
                    "merge({}, {}, {})",
                    e(a).text,
                    e(b).text,
                    e(c).text
                ))),
                Inst::DimLower(x, d) | Inst::DimExtent(x, d)
                    if self.struct_arrays.contains_key(x) =>
                {
                    // Module arrays have constant bounds.
                    let dim = &self.proc.var(*x).dims[*d as usize];
                    let (lower, upper) = (
                        dim.lower.as_const(),
                        dim.upper.as_ref().and_then(Bound::as_const),
                    );
                    let value = match (&data.kind, lower, upper) {
                        (Inst::DimLower(..), Some(l), _) => l,
                        (_, Some(l), Some(u)) => (u - l + 1).max(0),
                        _ => {
                            return Err(self.err(
                                "a bound of a module array of structures that is not constant",
                                data.span,
                            ))
                        }
                    };
                    Some(literal(Const::Int(value), Type::I64))
                }
                Inst::DimLower(x, d) => Some(Expr::primary(format!(
                    "lbound({}, {}, kind=8)",
                    self.names[x.index()],
                    d + 1
                ))),
                Inst::DimExtent(x, d) => {
                    let var = self.proc.var(*x);
                    if var
                        .dims
                        .get(*d as usize)
                        .is_some_and(|dim| dim.upper.is_none())
                        && !self.ctx.assumed_shape.contains(&(self.id, *x))
                        && !self.sizes.contains_key(x)
                    {
                        return Err(self.err(
                            format!(
                                "the extent of `{}`'s assumed last dimension (SIZE of an \
                                 assumed-size dummy)",
                                var.name
                            ),
                            data.span,
                        ));
                    }
                    Some(Expr::primary(format!(
                        "size({}, {}, kind=8)",
                        self.names[x.index()],
                        d + 1
                    )))
                }
                Inst::CharCompare(op, a, b) => Some(Expr {
                    text: format!(
                        "{} {} {}",
                        self.char_ref(a, &exprs, data.span)?,
                        relational(*op),
                        self.char_ref(b, &exprs, data.span)?
                    ),
                    prec: expr::REL,
                }),
                Inst::CharLen(a) => Some(Expr::primary(format!(
                    "len({})",
                    self.char_ref(a, &exprs, data.span)?
                ))),
                Inst::CharIndex(a, b) => Some(Expr::primary(format!(
                    "index({}, {})",
                    self.char_ref(a, &exprs, data.span)?,
                    self.char_ref(b, &exprs, data.span)?
                ))),
                Inst::CharSearch(op, back, a, b) => Some(Expr::primary(format!(
                    "{}({}, {}{})",
                    op.name(),
                    self.char_ref(a, &exprs, data.span)?,
                    self.char_ref(b, &exprs, data.span)?,
                    if *back { ", back=.true." } else { "" }
                ))),
                Inst::Io(_) if !self.kept_io.contains(&v) => {
                    return Err(self.err(
                        "PRINT, WRITE or READ statement (I/O is not emitted yet)",
                        data.span,
                    ))
                }
                Inst::Io(op) => {
                    // Only the kept records of ALLOCATABLE module and SAVE
                    // arrays (`adjit_support`); the values of a READ
                    // statement are refused above (PRINT is dropped).
                    let kept_name = |name: &[u8]| String::from_utf8_lossy(name).replace('\'', "''");
                    let line = match op {
                        IoOp::BeginKeep(name) => {
                            format!("call adjit_keep_begin('{}')", kept_name(name))
                        }
                        IoOp::BeginRestore(name) => {
                            format!("call adjit_restore_begin('{}')", kept_name(name))
                        }
                        IoOp::Put(a) => format!("call adjit_keep_put({})", e(a).text),
                        IoOp::EndWrite => "call adjit_keep_end()".to_string(),
                        IoOp::EndRead => "call adjit_restore_end()".to_string(),
                        IoOp::Get => {
                            let got = match ty {
                                Type::Bool => Expr::primary("adjit_kept_get_l()"),
                                Type::F32 | Type::F64 => convert(
                                    &Expr::primary("adjit_kept_get_r8()"),
                                    Type::F64,
                                    ty,
                                    Rounding::Trunc,
                                ),
                                _ => convert(
                                    &Expr::primary("adjit_kept_get_i8()"),
                                    Type::I64,
                                    ty,
                                    Rounding::Trunc,
                                ),
                            };
                            let t = self.temp("kept", ty);
                            self.emit_line(format!("{t} = {}", got.text));
                            exprs.insert(v, Expr::primary(t));
                            continue;
                        }
                        IoOp::BeginWrite(_)
                        | IoOp::PutChar(_)
                        | IoOp::JoinChars(_)
                        | IoOp::BeginRead
                        | IoOp::GetChar(_)
                        | IoOp::EndWriteTo(_)
                        | IoOp::BeginReadFrom(..)
                        | IoOp::CatchErrors
                        | IoOp::Status => {
                            return Err(self.err(
                                "PRINT, WRITE or READ statement (I/O is not emitted yet)",
                                data.span,
                            ))
                        }
                    };
                    self.emit_line(line);
                    None
                }
                Inst::Pop(kind) => {
                    let call = match kind {
                        StackKind::Value => "adjit_pop_value()",
                        StackKind::Integer => "adjit_pop_int()",
                        StackKind::Control => "adjit_pop_control()",
                    };
                    let from = if *kind == StackKind::Value {
                        Type::F64
                    } else {
                        Type::I64
                    };
                    let popped = convert(&Expr::primary(call), from, ty, Rounding::Trunc);
                    // Straight into the variable that receives it, when
                    // nothing else touches the stacks or that statement's
                    // operands in between.
                    let into_store = value_uses.len() == 1
                        && block.insts.get(last_use).is_some_and(|&u| {
                            matches!(&self.proc.inst(u).kind,
                                Inst::Store(_, a) | Inst::StoreElem(_, _, a) if *a == v)
                        })
                        && !stack_ops.iter().any(|&p| p > pos && p < last_use)
                        && !writes.iter().any(|&(p, _)| p > pos && p < last_use);
                    if into_store {
                        exprs.insert(v, popped);
                        continue;
                    }
                    let hint = self.temp_hint(v, block, value_uses);
                    let t = self.temp(&hint, ty);
                    self.emit_line(format!("{t} = {}", popped.text));
                    exprs.insert(v, Expr::primary(t));
                    continue;
                }
                Inst::Store(x, a) => {
                    let target = self.names[x.index()].clone();
                    self.emit_line(format!("{target} = {}", e(a).text));
                    None
                }
                Inst::StoreElem(x, idx, a) => {
                    let target = self.element(*x, idx, &exprs);
                    self.emit_line(format!("{target} = {}", e(a).text));
                    None
                }
                Inst::Call(c, args) => {
                    self.call(*c, args, &exprs, data.span)?;
                    None
                }
                Inst::CharAssign(to, from) => {
                    let line = format!(
                        "{} = {}",
                        self.char_ref(to, &exprs, data.span)?,
                        self.char_ref(from, &exprs, data.span)?
                    );
                    self.emit_line(line);
                    None
                }
                Inst::Allocate(x, bounds) => {
                    let dims: Vec<String> = bounds
                        .iter()
                        .map(|(l, u)| format!("{}:{}", e(l).text, e(u).text))
                        .collect();
                    let name = self.names[x.index()].clone();
                    let zero = match self.proc.var(*x).ty {
                        Type::Bool => ".false.".to_string(),
                        Type::Char => "achar(0)".to_string(),
                        t => literal(Const::Int(0), t).text,
                    };
                    // The IR's fresh storage is zero-filled.
                    self.emit_line(format!("allocate({name}({}))", dims.join(", ")));
                    self.emit_line(format!("{name} = {zero}"));
                    None
                }
                Inst::Deallocate(x) => {
                    let name = self.names[x.index()].clone();
                    self.emit_line(format!("deallocate({name})"));
                    None
                }
                Inst::Allocated(x) => Some(Expr::primary(format!(
                    "allocated({})",
                    self.names[x.index()]
                ))),
                Inst::Push(kind, a) => {
                    let from = self.proc.value_type(*a).unwrap_or(Type::F64);
                    let (sub, to) = match kind {
                        StackKind::Value => ("adjit_push_value", Type::F64),
                        StackKind::Integer => ("adjit_push_int", Type::I64),
                        StackKind::Control => ("adjit_push_control", Type::I64),
                    };
                    let arg = convert(&e(a), from, to, Rounding::Trunc);
                    self.emit_line(format!("call {sub}({})", arg.text));
                    None
                }
            };
            let Some(computed) = computed else { continue };
            let single = value_uses.len() == 1;
            let reads_only = matches!(data.kind, Inst::Load(_))
                || matches!(data.kind, Inst::LoadElem(..)) && computed.text.len() <= 40;
            if (single || reads_only && !value_uses.is_empty()) && clear(v, pos, last_use) {
                exprs.insert(v, computed);
            } else if value_uses.is_empty() {
                // A value nothing uses (the transforms leave few): dropped.
            } else {
                let hint = self.temp_hint(v, block, value_uses);
                let t = self.temp(&hint, ty);
                self.emit_line(format!("{t} = {}", computed.text));
                exprs.insert(v, Expr::primary(t));
            }
        }
        if block.term.operand().is_some() {
            self.comment(block.term_span);
        }
        for (h, l) in &self.counted.loops {
            if let Control::Forward {
                entry, start, end, ..
            } = l.control
            {
                if entry == b {
                    self.bounds
                        .insert(*h, (exprs[&start].clone(), exprs[&end].clone()));
                }
            }
        }
        Ok(exprs)
    }

    /// Whether `a op b` is `x + 1` for a counter `x`: a local that is
    /// only ever set to a small non-negative constant or to itself plus one,
    /// so it stays below the number of statements run and its increment
    /// cannot wrap (written as plain INTEGER(8) arithmetic).
    fn counts_up(&self, op: adjit_ir::BinaryOp, a: Value, b: Value) -> bool {
        let one = |v: Value| matches!(self.proc.inst(v).kind, Inst::Const(Const::Int(1)));
        let counter = |v: Value| match self.proc.inst(v).kind {
            Inst::Load(x) => self.is_counter(x),
            _ => false,
        };
        op == adjit_ir::BinaryOp::Add && (counter(a) && one(b) || one(a) && counter(b))
    }

    /// The interval an integer value lies in, when it is known to fit in
    /// INTEGER(8) (so its arithmetic cannot wrap and is written plainly):
    /// constants, INTEGER(4) values widened, counters, and sums,
    /// differences and products of such (`int(n, 8) - 2_8 + 1_8`, `2_8 +
    /// k9`), following operands at most `depth` deep.
    fn range(&self, v: Value, depth: u32) -> Option<(i128, i128)> {
        if depth == 0 {
            return None;
        }
        let r = match self.proc.inst(v).kind {
            Inst::Const(Const::Int(c)) => (i128::from(c), i128::from(c)),
            // A counter stays below the number of statements run.
            Inst::Load(x) if self.is_counter(x) => (0, i128::from(COUNTER_MAX)),
            Inst::Convert(a, _) => match self.proc.value_type(a)? {
                Type::I32 => (i128::from(i32::MIN), i128::from(i32::MAX)),
                Type::Bool => (0, 1),
                Type::I64 => self.range(a, depth - 1)?,
                _ => return None,
            },
            Inst::Binary(op, a, b) => {
                let (a0, a1) = self.range(a, depth - 1)?;
                let (b0, b1) = self.range(b, depth - 1)?;
                match op {
                    adjit_ir::BinaryOp::Add => (a0 + b0, a1 + b1),
                    adjit_ir::BinaryOp::Sub => (a0 - b1, a1 - b0),
                    adjit_ir::BinaryOp::Mul => {
                        let p = [a0 * b0, a0 * b1, a1 * b0, a1 * b1];
                        (*p.iter().min()?, *p.iter().max()?)
                    }
                    _ => return None,
                }
            }
            _ => return None,
        };
        let fits = |x: i128| i64::try_from(x).is_ok();
        (fits(r.0) && fits(r.1)).then_some(r)
    }

    /// Whether local `x` is a counter (see [`Printer::counts_up`]).
    fn is_counter(&self, x: VarId) -> bool {
        let var = self.proc.var(x);
        if var.storage != Storage::Local || !var.dims.is_empty() {
            return false;
        }
        let loads_x = |v: Value| matches!(self.proc.inst(v).kind, Inst::Load(y) if y == x);
        let one = |v: Value| matches!(self.proc.inst(v).kind, Inst::Const(Const::Int(1)));
        self.proc.insts.iter().all(|data| match &data.kind {
            Inst::Store(y, s) if *y == x => match self.proc.inst(*s).kind {
                Inst::Const(Const::Int(c)) => (0..=i64::from(i32::MAX)).contains(&c),
                Inst::Binary(adjit_ir::BinaryOp::Add, p, q) => {
                    loads_x(p) && one(q) || one(p) && loads_x(q)
                }
                _ => false,
            },
            Inst::Store(..) => true,
            kind => !may_write_inst(kind, x),
        })
    }

    /// The most negative integer when `op b` adds or subtracts it.
    fn sign_flip(&self, op: adjit_ir::BinaryOp, b: Value, ty: Type) -> Option<Expr> {
        let min = match ty {
            Type::I32 => i64::from(i32::MIN),
            Type::I64 => i64::MIN,
            _ => return None,
        };
        let is_min = matches!(self.proc.inst(b).kind, Inst::Const(Const::Int(c)) if c == min);
        let adds = matches!(op, adjit_ir::BinaryOp::Add | adjit_ir::BinaryOp::Sub);
        (is_min && adds).then(|| literal(Const::Int(min), ty))
    }

    /// A temporary's name after what it holds.
    fn temp_hint(&self, v: Value, block: &adjit_ir::Block, uses: &[usize]) -> String {
        let kind = &self.proc.inst(v).kind;
        let stored_to = uses.first().and_then(|&p| {
            block
                .insts
                .get(p)
                .and_then(|&u| match &self.proc.inst(u).kind {
                    Inst::Store(x, a) | Inst::StoreElem(x, _, a) if *a == v => Some(*x),
                    _ => None,
                })
        });
        let namer = crate::naming::Namer {
            proc: self.proc,
            names: &self.names,
        };
        let first_use = uses.first().and_then(|&p| block.insts.get(p).copied());
        match kind {
            Inst::Load(_) | Inst::LoadElem(..) => namer.hint(v, first_use),
            Inst::Pop(StackKind::Control) => "branch".into(),
            Inst::Pop(stack) => match stored_to {
                Some(x) => format!("{}_saved", self.names[x.index()]),
                None => self.popped_hint(v, *stack, block),
            },
            Inst::Cmp(..) | Inst::CharCompare(..) => "cond".into(),
            _ => match stored_to {
                Some(x) => format!("{}_new", self.names[x.index()]),
                None => namer.hint(v, first_use),
            },
        }
    }

    /// A popped value's name: the name of the value the forward sweep
    /// pushed for the same statement, else `popped`.
    fn popped_hint(&self, v: Value, stack: StackKind, block: &adjit_ir::Block) -> String {
        let span = self.proc.inst(v).span;
        let pops: Vec<Value> = block
            .insts
            .iter()
            .copied()
            .filter(|&u| {
                let data = self.proc.inst(u);
                data.span == span && matches!(data.kind, Inst::Pop(s) if s == stack)
            })
            .collect();
        let k = pops.iter().position(|&u| u == v);
        k.filter(|_| stack == StackKind::Value)
            .and_then(|k| self.ctx.pushed.popped(span, k, pops.len()))
            .unwrap_or_else(|| "popped".into())
    }

    /// A temporary of type `ty` unused in the current block.
    fn temp(&mut self, hint: &str, ty: Type) -> String {
        let mut n = 1;
        loop {
            let name = if n == 1 {
                hint.to_string()
            } else {
                format!("{hint}{n}")
            };
            n += 1;
            if self.block_temps.contains(&name) {
                continue;
            }
            match self.temps.get(&name) {
                Some(&t) if t == ty => {}
                Some(_) => continue,
                None => {
                    if self.taken.contains(&name) {
                        continue;
                    }
                    self.taken.insert(name.clone());
                    self.temps.insert(name.clone(), ty);
                }
            }
            self.block_temps.insert(name.clone());
            return name;
        }
    }

    /// The one-element array `<name>_array` that scalar `name` is copied
    /// into to be passed to an array dummy.
    fn one_element_array(&mut self, name: &str, ty: Type) -> String {
        if let Some((array, _)) = self.one_element.iter().find(|(_, (n, _))| n == name) {
            return array.clone();
        }
        let array = self.fresh(&format!("{name}_array"));
        self.one_element
            .insert(array.clone(), (name.to_string(), ty));
        array
    }

    /// The allocatable array `<name>_part` that stands for a derivative
    /// element passed to a dummy that may overlap another written one.
    /// One array serves every call (each allocates and frees it).
    fn part_array(&mut self, name: &str, ty: Type) -> String {
        let base = format!("{name}_part");
        if self.part_arrays.contains_key(&base) {
            return base;
        }
        let array = self.fresh(&base);
        self.part_arrays.insert(array.clone(), ty);
        array
    }

    /// The deferred-length character scalar standing for the buffer
    /// `name` (one character per element) when a callee writes it.
    fn char_scalar(&mut self, name: &str) -> String {
        self.char_scalar_of(name, name)
    }

    /// The deferred-length character scalar standing for the characters
    /// `part` (a buffer or a section of one) of the buffer `name`.
    fn char_scalar_of(&mut self, part: &str, name: &str) -> String {
        if let Some((scalar, _)) = self.char_scalars.iter().find(|(_, b)| *b == part) {
            return scalar.clone();
        }
        let scalar = self.fresh(&format!("{name}_str"));
        self.char_scalars.insert(scalar.clone(), part.to_string());
        scalar
    }

    /// The `n` one-character elements from element `idx` of `x` along
    /// its first dimension, as an array section.
    fn char_slice(
        &self,
        x: VarId,
        idx: &[Value],
        n: Value,
        exprs: &HashMap<Value, Expr>,
    ) -> String {
        let mut subs: Vec<String> = idx.iter().map(|i| exprs[i].text.clone()).collect();
        if let Some(first) = subs.first_mut() {
            *first = format!("{first}:{first}+{}-1", exprs[&n].text);
        }
        format!("{}({})", self.names[x.index()], subs.join(", "))
    }

    fn element(&self, x: VarId, idx: &[Value], exprs: &HashMap<Value, Expr>) -> String {
        let subs: Vec<String> = idx.iter().map(|i| exprs[i].text.clone()).collect();
        if let Some(path) = self.struct_arrays.get(&x) {
            return path.element(&subs);
        }
        format!("{}({})", self.names[x.index()], subs.join(", "))
    }

    /// The actual argument for the explicit-shape array dummy `dummy` of
    /// the leaf `x` through module arrays of structures, given from element
    /// `idx` (an element of an array of structures passed to a structure
    /// dummy: `kept(2)` for `m` gives `m%layers%b` the leaf from `(1, 2)`).
    /// Fortran has no sequence association from an element of a component
    /// of an array of structures, so the elements the dummy covers are
    /// written as the section they are (`kept(2)%layers(:)%b`): the
    /// dummy's dimensions must be the leaf's leading ones, whole, and lie
    /// in one part of the path.
    fn component_sequence(
        &self,
        x: VarId,
        idx: &[Value],
        dummy: &adjit_ir::Var,
        exprs: &HashMap<Value, Expr>,
        span: Span,
    ) -> Result<String, EmitError> {
        let var = self.proc.var(x);
        let path = &self.struct_arrays[&x];
        let rank = dummy.dims.len();
        let whole_leading = rank <= idx.len()
            && (0..rank).all(|d| {
                let (lower, upper) = (
                    var.dims[d].lower.as_const(),
                    var.dims[d].upper.as_ref().and_then(Bound::as_const),
                );
                let dummy_extent = match (
                    dummy.dims[d].lower.as_const(),
                    dummy.dims[d].upper.as_ref().and_then(Bound::as_const),
                ) {
                    (Some(l), Some(u)) => Some(u - l + 1),
                    _ => None,
                };
                let at = match self.proc.inst(idx[d]).kind {
                    Inst::Const(Const::Int(k)) => Some(k),
                    _ => None,
                };
                matches!((lower, upper, dummy_extent, at),
                    (Some(l), Some(u), Some(n), Some(k)) if k == l && n == u - l + 1)
            });
        if !whole_leading || !path.leading_in_one_part(var.dims.len(), rank) {
            return Err(self.err(
                format!(
                    "the elements of `{}` from an element, passed to the array dummy `{}` \
                     (emitted Fortran does not support sequence association from an element \
                     of a component of a module array of structures other than a whole \
                     component array)",
                    var.name, dummy.name
                ),
                span,
            ));
        }
        let mut subs: Vec<String> = idx.iter().map(|i| exprs[i].text.clone()).collect();
        for s in subs.iter_mut().take(rank) {
            *s = ":".to_string();
        }
        Ok(path.element(&subs))
    }

    /// A [`CallArg::Slice`] of `n` elements from element `idx` of `x`
    /// given to an assumed-shape dummy of rank `rank` as the array section
    /// it stands for: full leading dimensions, the last of the section's
    /// dimensions running over its extent (`n` over the product of the
    /// leading extents), scalar subscripts after it.
    fn section(
        &self,
        x: VarId,
        idx: &[Value],
        n: Value,
        rank: usize,
        exprs: &HashMap<Value, Expr>,
    ) -> String {
        let name = &self.names[x.index()];
        let path = self.struct_arrays.get(&x);
        let rank = rank.clamp(1, idx.len().max(1));
        let mut extent = format!("({})", exprs[&n].text);
        for d in 1..rank {
            // A leaf through module arrays of structures has constant
            // bounds (and its name alone is no array of its shape).
            let dim = &self.proc.var(x).dims[d - 1];
            extent = match (
                path,
                dim.lower.as_const(),
                dim.upper.as_ref().and_then(Bound::as_const),
            ) {
                (Some(_), Some(lower), Some(upper)) => {
                    format!("{extent}/{}_8", (upper - lower + 1).max(1))
                }
                _ => format!("{extent}/size({name}, {d}, kind=8)"),
            };
        }
        let subs: Vec<String> = idx
            .iter()
            .enumerate()
            .map(|(d, i)| {
                let at = &exprs[i].text;
                match (d + 1).cmp(&rank) {
                    std::cmp::Ordering::Less => ":".to_string(),
                    std::cmp::Ordering::Equal => format!("{at}:({at})+{extent}-1"),
                    std::cmp::Ordering::Greater => at.clone(),
                }
            })
            .collect();
        match path {
            Some(path) => path.element(&subs),
            None => format!("{name}({})", subs.join(", ")),
        }
    }

    fn char_ref(
        &self,
        r: &CharRef,
        exprs: &HashMap<Value, Expr>,
        span: Span,
    ) -> Result<String, EmitError> {
        let base = match &r.base {
            CharBase::Var { var, index } if index.is_empty() => self.names[var.index()].clone(),
            CharBase::Var { var, index } => self.element(*var, index, exprs),
            CharBase::Literal(bytes) if r.start.is_some() || r.end.is_some() => {
                // A substring of a named constant (Fortran has none of a
                // literal).
                match self.literal_names.get(bytes) {
                    Some(name) => name.clone(),
                    None => return Err(self.err("a substring of a character literal", span)),
                }
            }
            CharBase::Literal(bytes) => return Ok(expr::string_literal(bytes)),
        };
        if r.start.is_none() && r.end.is_none() {
            return Ok(base);
        }
        let start = r.start.map(|s| exprs[&s].text.clone()).unwrap_or_default();
        let end = r.end.map(|s| exprs[&s].text.clone()).unwrap_or_default();
        Ok(format!("{base}({start}:{end})"))
    }

    fn call(
        &mut self,
        c: ProcId,
        args: &[CallArg],
        exprs: &HashMap<Value, Expr>,
        span: Span,
    ) -> Result<(), EmitError> {
        let name = self.callee_name(c)?;
        let callee = self.ctx.module().proc(c);
        let same_element = |a: &[Value], b: &[Value]| {
            a.len() == b.len() && a.iter().zip(b).all(|(u, v)| exprs[u].text == exprs[v].text)
        };
        // Lines before and after the call statement (copies in and out).
        let (mut before, mut after) = (Vec::new(), Vec::new());
        // Actuals replaced by a temporary, by argument index.
        let mut replaced: HashMap<usize, String> = HashMap::new();
        let module = self.ctx.module();
        for (i, j) in aliased_and_written(module, args, callee, same_element) {
            if replaced.contains_key(&j) {
                continue;
            }
            let accumulates = |k: usize| {
                let d = callee.params[k];
                callee.var(d).dims.is_empty()
                    && (!may_write(module, callee, d) || only_accumulates(callee, d))
            };
            let (CallArg::Var(x) | CallArg::Elem(x, _)) = &args[j] else {
                continue;
            };
            let scalar = matches!(&args[j], CallArg::Elem(..)) || self.proc.var(*x).dims.is_empty();
            if !(scalar && accumulates(i) && accumulates(j)) {
                return Err(self.err(
                    format!(
                        "`{}` passed to two dummies of `{}`, which writes one of them other \
                         than by accumulation (Fortran forbids the aliasing the IR allows)",
                        self.proc.var(*x).name,
                        callee.name
                    ),
                    span,
                ));
            }
            // Both dummies only accumulate: the second gets a zeroed
            // temporary, added to the actual after the call.
            let actual = match &args[j] {
                CallArg::Elem(x, idx) => self.element(*x, idx, exprs),
                _ => self.names[x.index()].clone(),
            };
            let var = self.proc.var(*x);
            let temp = self.temp(&format!("{}_part", ident(&var.name)), var.ty);
            before.push(format!("{temp} = {}", literal(Const::Int(0), var.ty).text));
            after.push(format!("{actual} = {actual} + {temp}"));
            replaced.insert(j, temp);
        }
        if let Some((_, j)) = derivatives_may_overlap(module, args, callee, same_element) {
            // The two written derivative elements may overlap: the second
            // goes through a zeroed array covering the elements from it to
            // the end of its array (all that the callee may touch), added
            // back element by element after the call.
            let CallArg::Elem(y, idx) = &args[j] else {
                unreachable!("derivatives_may_overlap pairs elements")
            };
            let ty = self.proc.var(*y).ty;
            let count = self.actual_size(&args[j], exprs, span)?;
            let actual = self.element(*y, idx, exprs);
            let part = self.part_array(&ident(&self.proc.var(*y).name), ty);
            before.push(format!("allocate({part}(max(0_8, {count})))"));
            before.push(format!("{part} = {}", literal(Const::Int(0), ty).text));
            after.push(format!(
                "call {}({actual}, {part}, size({part}, kind=8))",
                expr::add_elements_name(ty)
            ));
            after.push(format!("deallocate({part})"));
            replaced.insert(j, part);
        }
        let mut texts = Vec::new();
        for (i, a) in args.iter().enumerate() {
            if let Some(temp) = replaced.get(&i) {
                texts.push(temp.clone());
                continue;
            }
            let dummy = callee.params.get(i).map(|&p| callee.var(p));
            if let (CallArg::Var(x), Some(d)) = (a, dummy) {
                let var = self.proc.var(*x);
                if var.dims.is_empty() && !d.dims.is_empty() {
                    if var.ty == Type::Char {
                        return Err(self.err(
                            format!(
                                "CHARACTER scalar `{}` passed to the array dummy `{}` of `{}`",
                                var.name, d.name, callee.name
                            ),
                            span,
                        ));
                    }
                    // Sequence association of a scalar: a one-element
                    // array copied in, and out when the callee writes it.
                    let name = self.names[x.index()].clone();
                    let array = self.one_element_array(&name, var.ty);
                    before.push(format!("{array}(1) = {name}"));
                    if may_write(self.ctx.module(), callee, callee.params[i]) {
                        after.push(format!("{name} = {array}(1)"));
                    }
                    texts.push(array);
                    continue;
                }
            }
            if let CallArg::Var(x) = a {
                let rank = self.proc.var(*x).dims.len();
                if self
                    .struct_arrays
                    .get(x)
                    .is_some_and(|path| !path.whole_is_designator(rank))
                {
                    return Err(self.err(
                        format!(
                            "the whole array component `{}` of a module array of structures \
                             passed as an argument",
                            self.proc.var(*x).name
                        ),
                        span,
                    ));
                }
            }
            let chars_to_scalar = |x: &VarId| {
                dummy.is_some_and(|d| d.dims.is_empty() && d.ty == Type::Char)
                    && !self.proc.var(*x).dims.is_empty()
            };
            texts.push(match a {
                // Character data of run-time length built in an array of
                // one-character elements, passed to a scalar dummy: the
                // scalar of that length with the same characters.
                // Written by the callee (a function's result among them):
                // a character scalar copied in and out, as an expression
                // can neither be defined nor be assigned to.
                CallArg::Var(x)
                    if chars_to_scalar(x)
                        && may_write(self.ctx.module(), callee, callee.params[i]) =>
                {
                    let n = self.names[x.index()].clone();
                    let scalar = self.char_scalar(&n);
                    let result = callee.result == Some(callee.params[i]);
                    if self.ctx.is_generated(c) || !result {
                        before.push(format!("{scalar} = {}", chars_as_scalar(&n)));
                    }
                    after.push(format!("{n} = transfer({scalar}, {n})"));
                    scalar
                }
                CallArg::Var(x) if chars_to_scalar(x) => chars_as_scalar(&self.names[x.index()]),
                // One element of a CHARACTER array of longer elements (the
                // front end's slices of those are one element long): the
                // element itself.
                CallArg::Slice(x, idx, _)
                    if chars_to_scalar(x)
                        && !matches!(
                            self.proc.var(*x).char_len,
                            None | Some(adjit_ir::Bound::Const(1))
                        ) =>
                {
                    self.element(*x, idx, exprs)
                }
                // Characters stored one per element, passed in place to a
                // scalar dummy (an element of an array of deferred-length
                // strings): the scalar of those characters, copied in and
                // out through a scalar of the callee's writes.
                CallArg::Slice(x, idx, n) if chars_to_scalar(x) => {
                    let part = self.char_slice(*x, idx, *n, exprs);
                    let as_scalar =
                        format!("transfer({part}, repeat(' ', int({}, 8)))", exprs[n].text);
                    if may_write(self.ctx.module(), callee, callee.params[i]) {
                        let name = self.names[x.index()].clone();
                        let scalar = self.char_scalar_of(&part, &name);
                        before.push(format!("{scalar} = {as_scalar}"));
                        after.push(format!("{part} = transfer({scalar}, {part})"));
                        scalar
                    } else {
                        as_scalar
                    }
                }
                CallArg::Var(x) => self.names[x.index()].clone(),
                CallArg::Elem(x, idx) | CallArg::Slice(x, idx, _)
                    if self.struct_arrays.get(x).is_some_and(|path| {
                        let own = self.proc.var(*x).dims.len() - path.structure_rank();
                        dummy.is_some_and(|d| d.dims.len() > own)
                    }) && !callee
                        .params
                        .get(i)
                        .is_some_and(|&d| self.ctx.assumed_shape.contains(&(c, d))) =>
                {
                    let dummy = dummy.expect("an array dummy");
                    self.component_sequence(*x, idx, dummy, exprs, span)?
                }
                CallArg::Elem(x, idx) => self.element(*x, idx, exprs),
                CallArg::Slice(x, idx, n) => match callee.params.get(i) {
                    Some(&d) if self.ctx.assumed_shape.contains(&(c, d)) => {
                        self.section(*x, idx, *n, callee.var(d).dims.len(), exprs)
                    }
                    _ => self.element(*x, idx, exprs),
                },
                // A value is passed as an expression: writes to it are lost.
                CallArg::Value(v) => match self.proc.inst(*v).kind {
                    Inst::Const(_) => exprs[v].text.clone(),
                    _ => format!("({})", exprs[v].text),
                },
            });
        }
        for (a, &dummy) in args.iter().zip(&callee.params) {
            if self.ctx.hidden_sizes.contains(&(c, dummy)) {
                let size = self.actual_size(a, exprs, span)?;
                texts.push(match self.chars_per_element(a, callee.var(dummy)) {
                    Some(ratio) => format!("{size} * {ratio}_8"),
                    None => size,
                });
            }
        }
        // A function of the original is referenced as one (an array result
        // included), its result assigned to the last actual.
        if !self.ctx.is_generated(c) && (callee.result.is_some() || callee.array_result.is_some()) {
            let target = texts.pop().unwrap_or_default();
            if matches!(args.last(), Some(CallArg::Value(_)) | None) {
                return Err(self.err(
                    format!(
                        "a call of function `{}` whose result is dropped",
                        callee.name
                    ),
                    span,
                ));
            }
            for l in before {
                self.emit_line(l);
            }
            self.emit_line(format!("{target} = {name}({})", texts.join(", ")));
        } else {
            for l in before {
                self.emit_line(l);
            }
            self.emit_line(format!("call {name}({})", texts.join(", ")));
        }
        for l in after {
            self.emit_line(l);
        }
        Ok(())
    }

    /// How many of the elements of `dummy` one element of actual `a`
    /// holds, when that is not one: a CHARACTER array of constant length
    /// `L` handed by sequence association to a dummy of shorter constant
    /// length (the IR's one character per element of a `character(len=*)
    /// :: a(:)` dummy takes `L` of them per string).
    fn chars_per_element(&self, a: &CallArg, dummy: &adjit_ir::Var) -> Option<i64> {
        let (CallArg::Var(x) | CallArg::Elem(x, _)) = a else {
            return None;
        };
        let actual = self.proc.var(*x);
        if actual.ty != Type::Char || dummy.ty != Type::Char {
            return None;
        }
        let (Some(adjit_ir::Bound::Const(have)), Some(adjit_ir::Bound::Const(take))) =
            (&actual.char_len, &dummy.char_len)
        else {
            return None;
        };
        (*take > 0 && have != take && have % take == 0).then_some(have / take)
    }

    /// The number of elements actual `a` hands to an assumed-size dummy:
    /// its whole array, from its element to the end of its array, or the
    /// length of its slice.
    fn actual_size(
        &self,
        a: &CallArg,
        exprs: &HashMap<Value, Expr>,
        span: Span,
    ) -> Result<String, EmitError> {
        if let CallArg::Slice(_, _, n) = a {
            return Ok(format!("int({}, 8)", exprs[n].text));
        }
        let (CallArg::Var(x) | CallArg::Elem(x, _)) = a else {
            return Ok("1_8".to_string());
        };
        let name = &self.names[x.index()];
        if self.proc.var(*x).dims.is_empty() {
            return Ok("1_8".to_string());
        }
        let whole = match self.sizes.get(x) {
            Some(size) => size.clone(),
            None if self.ctx.is_assumed_size(self.id, *x) => {
                return Err(self.err(
                    format!(
                        "the size of `{}`, an assumed-size dummy of the entry passed on \
                         to a procedure that asks for its extent",
                        self.proc.var(*x).name
                    ),
                    span,
                ))
            }
            None => format!("size({name}, kind=8)"),
        };
        let CallArg::Elem(_, idx) = a else {
            return Ok(whole);
        };
        // Column-major offset of the element from the array's start.
        let mut terms = Vec::new();
        let mut stride = Vec::new();
        for (d, i) in idx.iter().enumerate() {
            let lower = format!("lbound({name}, {}, kind=8)", d + 1);
            let mut term = format!("({} - {lower})", exprs[i].text);
            if !stride.is_empty() {
                term = format!("{term} * {}", stride.join(" * "));
            }
            terms.push(term);
            stride.push(format!("size({name}, {}, kind=8)", d + 1));
        }
        Ok(format!("{whole} - {}", terms.join(" - ")))
    }

    fn terminator(
        &mut self,
        term: &Terminator,
        exprs: &HashMap<Value, Expr>,
        next: Option<BlockId>,
        last: bool,
        span: Span,
    ) -> Result<(), EmitError> {
        let label = |b: &BlockId| b.index() + 1;
        match term {
            Terminator::Jump(t) => {
                if Some(*t) != next {
                    self.emit_line(format!("go to {}", label(t)));
                }
            }
            Terminator::Branch {
                cond,
                then_dest,
                else_dest,
            } => {
                let c = &exprs[cond];
                if Some(*else_dest) == next {
                    self.emit_line(format!("if ({}) go to {}", c.text, label(then_dest)));
                } else if Some(*then_dest) == next {
                    self.emit_line(format!(
                        "if (.not. {}) go to {}",
                        c.at_least(expr::NOT + 1),
                        label(else_dest)
                    ));
                } else {
                    self.emit_line(format!("if ({}) go to {}", c.text, label(then_dest)));
                    self.emit_line(format!("go to {}", label(else_dest)));
                }
            }
            Terminator::Switch {
                value,
                cases,
                default,
            } => {
                self.emit_line(format!("select case ({})", exprs[value].text));
                let mut seen = HashSet::new();
                for (key, dest) in cases {
                    if seen.insert(*key) {
                        self.emit_line(format!("case ({key})"));
                        self.emit_line(format!("  go to {}", label(dest)));
                    }
                }
                self.emit_line("case default".into());
                self.emit_line(format!("  go to {}", label(default)));
                self.emit_line("end select".into());
            }
            Terminator::Return => {
                if !last {
                    self.emit_line("return".into());
                }
            }
            Terminator::Fail(kind) => {
                let _ = span;
                self.emit_line(match kind {
                    RuntimeErrorKind::Stop(None) => "stop".into(),
                    RuntimeErrorKind::Stop(Some(m)) => match m.trim().parse::<i64>() {
                        Ok(code) => format!("stop {code}"),
                        Err(_) => format!("stop {}", expr::string_literal(m.as_bytes())),
                    },
                    other => format!(
                        "error stop {}",
                        expr::string_literal(format!("adjit: {other}").as_bytes())
                    ),
                });
            }
        }
        Ok(())
    }

    fn bound(&self, b: &Bound) -> Result<String, EmitError> {
        let sub = |x: &Bound| -> Result<String, EmitError> {
            let t = self.bound(x)?;
            Ok(match x {
                Bound::Const(c) if *c >= 0 => t,
                Bound::Var(_) | Bound::Max(..) | Bound::Min(..) => t,
                _ => format!("({t})"),
            })
        };
        Ok(match b {
            Bound::Const(c) => c.to_string(),
            Bound::Var(v) => {
                let var = self.proc.var(*v);
                if var.storage == Storage::Local {
                    return Err(self.err(
                        format!("a bound that reads local variable `{}`", var.name),
                        self.proc.span,
                    ));
                }
                self.names[v.index()].clone()
            }
            Bound::Neg(a) => format!("-{}", sub(a)?),
            Bound::Add(a, c) => format!("{} + {}", sub(a)?, sub(c)?),
            Bound::Sub(a, c) => format!("{} - {}", sub(a)?, sub(c)?),
            Bound::Mul(a, c) => format!("{} * {}", sub(a)?, sub(c)?),
            Bound::Div(a, c) => format!("{} / {}", sub(a)?, sub(c)?),
            Bound::Max(a, c) => format!("max({}, {})", self.bound(a)?, self.bound(c)?),
            Bound::Min(a, c) => format!("min({}, {})", self.bound(a)?, self.bound(c)?),
        })
    }

    /// `TYPE :: name(dims)` for a parameter or local.
    fn declaration(&self, v: VarId) -> Result<String, EmitError> {
        let var = self.proc.var(v);
        let ty = match var.ty {
            Type::Char => match (&var.char_len, var.storage) {
                (Some(l), _) => format!("character(len={})", self.bound(l)?),
                (None, Storage::Param(_)) => "character(len=*)".to_string(),
                (None, _) => "character(len=1)".to_string(),
            },
            t => expr::type_name(t).to_string(),
        };
        if var.storage.is_allocatable() {
            let deferred = vec![":"; var.dims.len()].join(", ");
            return Ok(format!(
                "{ty}, allocatable :: {}({deferred})",
                self.names[v.index()]
            ));
        }
        let mut dims = Vec::new();
        if self.ctx.assumed_shape.contains(&(self.id, v)) {
            for d in &var.dims {
                let lower = self.bound(&d.lower)?;
                dims.push(if lower == "1" {
                    ":".to_string()
                } else {
                    format!("{lower}:")
                });
            }
            return Ok(format!(
                "{ty} :: {}({})",
                self.names[v.index()],
                dims.join(", ")
            ));
        }
        // The explicit extents before the last dimension (for an extent
        // from a hidden element count).
        let mut explicit = Vec::new();
        for d in &var.dims {
            let lower = self.bound(&d.lower)?;
            if let (None, Some(size)) = (&d.upper, self.sizes.get(&v)) {
                let extent = if explicit.is_empty() {
                    size.clone()
                } else {
                    format!("{size} / ({})", explicit.join(" * "))
                };
                dims.push(if lower == "1" {
                    extent
                } else {
                    format!("{lower}:{lower} + {extent} - 1")
                });
                continue;
            }
            if let Some(u) = &d.upper {
                let upper = self.bound(u)?;
                explicit.push(if lower == "1" {
                    upper
                } else {
                    format!("({upper} - ({lower}) + 1)")
                });
            }
            dims.push(match &d.upper {
                None if lower == "1" => "*".to_string(),
                None => format!("{lower}:*"),
                Some(u) => match (d.lower.as_const(), u.as_const()) {
                    (Some(l), Some(u)) => dim_text(l, u),
                    _ if lower == "1" => self.bound(u)?,
                    _ => format!("{lower}:{}", self.bound(u)?),
                },
            });
        }
        let shape = if dims.is_empty() {
            String::new()
        } else {
            format!("({})", dims.join(", "))
        };
        Ok(format!("{ty} :: {}{shape}", self.names[v.index()]))
    }

    /// The declarations of the COMMON blocks the procedure names: every
    /// member of the block in storage order (those the code does not name
    /// under a name of their own), then the COMMON statement.
    fn common_declarations(&mut self) -> Result<Vec<String>, EmitError> {
        let mut decls = Vec::new();
        let blocks: Vec<String> = self.commons.keys().cloned().collect();
        for block in blocks {
            let named = self.proc.vars.iter().enumerate().any(|(i, var)| {
                matches!(var.storage, Storage::Global(g, _)
                    if self.ctx.common_block(g).as_ref() == Some(&block))
                    && self.named.contains(&VarId(i as u32))
            });
            if !named {
                continue;
            }
            let mut members = Vec::new();
            let mut views = Vec::new();
            for (g, global) in self.ctx.module().globals.iter().enumerate() {
                if self.ctx.common_block(adjit_ir::GlobalId(g as u32)).as_ref() != Some(&block) {
                    continue;
                }
                let viewed = self.commons[&block].get(&g).cloned();
                let name = match viewed {
                    Some(local) => {
                        let v = (0..self.proc.vars.len())
                            .map(|i| VarId(i as u32))
                            .find(|&v| {
                                matches!(self.proc.var(v).storage, Storage::Global(vg, 0) if vg.index() == g)
                                    && self.names[v.index()] == local
                            });
                        match v {
                            Some(v) => decls.push(format!("  {}", self.declaration(v)?)),
                            None => decls
                                .push(format!("  {}", crate::member_declaration(&local, global))),
                        }
                        local
                    }
                    None => {
                        let raw = global.name.split_once("::").map_or("", |(_, n)| n);
                        let local = self.fresh(&ident(&format!(
                            "{}_{raw}",
                            if block.is_empty() { "blank" } else { &block }
                        )));
                        decls.push(format!("  {}", crate::member_declaration(&local, global)));
                        local
                    }
                };
                for &v in &self.common_views {
                    if let Storage::Global(vg, at) = self.proc.var(v).storage {
                        if vg.index() == g {
                            views.push((
                                v,
                                format!("{name}{}", crate::element_subscript(global, at)),
                            ));
                        }
                    }
                }
                members.push(name);
            }
            decls.push(format!("  common /{block}/ {}", members.join(", ")));
            for (v, element) in views {
                decls.push(format!("  {}", self.declaration(v)?));
                decls.push(format!(
                    "  equivalence ({element}, {})",
                    self.names[v.index()]
                ));
            }
        }
        Ok(decls)
    }

    /// The hidden element-count arguments, in the order of the dummies.
    fn hidden_sizes(&self) -> impl Iterator<Item = String> + '_ {
        self.sizes
            .iter()
            .filter(|(p, _)| self.ctx.hidden_sizes.contains(&(self.id, **p)))
            .map(|(_, n)| n.clone())
    }

    fn finish(mut self) -> Result<Printed, EmitError> {
        // Element loops over whole arrays as array assignments; their
        // counters are then not declared.
        let assumed_size: HashSet<String> = (0..self.proc.vars.len())
            .filter(|&i| {
                self.declaration(VarId(i as u32))
                    .is_ok_and(|d| d.contains("*)") || d.contains("*,"))
            })
            .map(|i| self.names[i].clone())
            .collect();
        let gone = crate::whole::collapse(&mut self.lines, &assumed_size);
        // A local the entry code assigns before reading needs no zero.
        let defined_first = crate::first_def::defined_first(self.proc, &self.counted.dead);
        let mut head = Vec::new();
        let params: Vec<String> = self
            .proc
            .params
            .iter()
            .map(|p| self.names[p.index()].clone())
            .chain(self.hidden_sizes())
            .collect();
        let prefix = if self.recursive { "recursive " } else { "" };
        head.push(format!(
            "{prefix}subroutine {}({})",
            self.name,
            params.join(", ")
        ));
        head.push("  use adjit_support".to_string());
        let mut uses_modules = Vec::new();
        for (m, items) in &self.uses {
            let list: Vec<String> = items
                .iter()
                .map(|(local, entity)| {
                    if local == entity {
                        local.clone()
                    } else {
                        format!("{local} => {entity}")
                    }
                })
                .collect();
            head.push(format!("  use {m}, only: {}", list.join(", ")));
            uses_modules.push(m.clone());
        }
        head.push("  implicit none".to_string());
        let mut decls: Vec<String> = self
            .hidden_sizes()
            .map(|n| format!("  integer(8), intent(in) :: {n}"))
            .collect();
        let mut inits = Vec::new();
        // Scalars first: array bounds may name them.
        let mut order: Vec<VarId> = (0..self.proc.vars.len()).map(|i| VarId(i as u32)).collect();
        order.sort_by_key(|v| self.proc.var(*v).is_array());
        for v in order {
            let var = self.proc.var(v);
            if matches!(var.storage, Storage::Global(..))
                || !self.named.contains(&v)
                || (var.storage == Storage::Local && gone.contains(&self.names[v.index()]))
            {
                continue;
            }
            decls.push(format!("  {}", self.declaration(v)?));
            if var.storage == Storage::Local
                && self.read.contains(&v)
                && !defined_first.contains(&v)
            {
                let zero = match var.ty {
                    Type::Char => "' '".to_string(),
                    t => literal(Const::Int(0), t).text,
                };
                let zero = if var.ty == Type::Bool {
                    ".false.".to_string()
                } else {
                    zero
                };
                inits.push(format!("  {} = {zero}", self.names[v.index()]));
            }
        }
        for (bytes, name) in &self.literal_names {
            decls.push(format!(
                "  character(len={}), parameter :: {name} = {}",
                bytes.len(),
                expr::string_literal(bytes)
            ));
        }
        decls.extend(self.common_declarations()?);
        for (name, ty) in &self.external_functions {
            decls.push(format!("  {ty}, external :: {name}"));
        }
        for (name, ty) in self.temps.iter().filter(|(n, _)| !gone.contains(*n)) {
            decls.push(format!("  {} :: {name}", expr::type_name(*ty)));
        }
        for (name, (_, ty)) in &self.one_element {
            decls.push(format!("  {} :: {name}(1)", expr::type_name(*ty)));
        }
        for (name, ty) in &self.part_arrays {
            decls.push(format!(
                "  {}, allocatable :: {name}(:)",
                expr::type_name(*ty)
            ));
        }
        for name in self.char_scalars.keys() {
            decls.push(format!("  character(len=:), allocatable :: {name}"));
        }
        // Lines are written whole: `emit` breaks the long ones.
        let mut text = String::new();
        for l in head.iter().chain(&decls) {
            push_line(&mut text, l);
        }
        // The caller sets the entry's element counts (names kept short
        // per line: strings are not broken).
        for (local, variable, dummy) in &self.entry_sizes {
            text.push_str(&format!(
                "  if ({local} < 0) error stop '{}: set ' // &\n      \
                 '{variable} (module {})' // &\n      \
                 ' to the number of elements of {dummy} before the call'\n",
                self.name, self.ctx.sizes_module
            ));
        }
        if !inits.is_empty() {
            text.push_str("  ! Locals start at zero.\n");
            for l in &inits {
                push_line(&mut text, l);
            }
        }
        for l in &self.lines {
            // Labels stay in the first columns.
            if l.split_whitespace().nth(1) == Some("continue")
                && l.starts_with(|c: char| c.is_ascii_digit())
            {
                push_line(&mut text, l);
            } else {
                text.push_str("  ");
                push_line(&mut text, l);
            }
        }
        text.push_str(&format!("end subroutine {}\n", self.name));
        Ok(Printed { text, uses_modules })
    }
}

/// Appends `line` and a newline to `text`.
fn push_line(text: &mut String, line: &str) {
    text.push_str(line);
    text.push('\n');
}

fn unary(op: UnaryOp, a: &Expr) -> Expr {
    match op {
        UnaryOp::Neg => Expr {
            text: format!("-{}", a.at_least(expr::ADD + 1)),
            prec: expr::ADD,
        },
        UnaryOp::Not => Expr {
            text: format!(".not. {}", a.at_least(expr::NOT + 1)),
            prec: expr::NOT,
        },
        UnaryOp::Special(Special::Polygamma(n)) => {
            Expr::primary(format!("adjit_polygamma({n}, {})", a.text))
        }
        _ => Expr::primary(format!(
            "{}({})",
            expr::unary_function(op).unwrap_or("abs"),
            a.text
        )),
    }
}

fn binary(op: adjit_ir::BinaryOp, a: &Expr, b: &Expr) -> Expr {
    match binary_spelling(op) {
        BinarySpelling::Infix(sym, prec) => {
            // Left-associative except `**`; a right operand of equal
            // precedence, and any signed operand on the right, needs
            // parentheses (Fortran has no `a * -b`).
            let left_min = if prec == expr::POW { prec + 1 } else { prec };
            Expr {
                text: format!("{} {sym} {}", a.at_least(left_min), b.at_least(prec + 1)),
                prec,
            }
        }
        BinarySpelling::Function(f) => Expr::primary(format!("{f}({}, {})", a.text, b.text)),
    }
}

fn compare(op: CmpOp, a: &Expr, b: &Expr, operand: Type) -> Expr {
    if operand == Type::Bool {
        return match op {
            CmpOp::Eq | CmpOp::Ne => {
                let sym = if op == CmpOp::Eq { ".eqv." } else { ".neqv." };
                Expr {
                    text: format!(
                        "{} {sym} {}",
                        a.at_least(expr::EQV + 1),
                        b.at_least(expr::EQV + 1)
                    ),
                    prec: expr::EQV,
                }
            }
            _ => {
                let num = |x: &Expr| Expr::primary(format!("merge(1, 0, {})", x.text));
                compare(op, &num(a), &num(b), Type::I32)
            }
        };
    }
    Expr {
        text: format!(
            "{} {} {}",
            a.at_least(expr::REL + 1),
            relational(op),
            b.at_least(expr::REL + 1)
        ),
        prec: expr::REL,
    }
}

fn convert(a: &Expr, from: Type, to: Type, rounding: Rounding) -> Expr {
    if from == to {
        return a.clone();
    }
    let k = expr::kind(to).unwrap_or(8);
    match (from, to) {
        (Type::Bool, _) => Expr::primary(format!("merge(1_{k}, 0_{k}, {})", a.text)),
        (_, Type::Bool) => Expr {
            text: format!(
                "{} /= 0_{}",
                a.at_least(expr::REL + 1),
                expr::kind(from).unwrap_or(8)
            ),
            prec: expr::REL,
        },
        (_, Type::F32 | Type::F64) => Expr::primary(format!("real({}, {k})", a.text)),
        (Type::F32 | Type::F64, _) => {
            let f = match rounding {
                Rounding::Trunc => "int",
                Rounding::Nearest => "nint",
                Rounding::Floor => "floor",
                Rounding::Ceil => "ceiling",
            };
            Expr::primary(format!("{f}({}, {k})", a.text))
        }
        _ => Expr::primary(format!("int({}, {k})", a.text)),
    }
}

/// The argument pairs `(i, j)`, `i < j`, that pass one variable to two
/// dummies of `callee` (whole, or the same element as `same_element`
/// judges subscripts) where the callee may write one of them: Fortran
/// forbids such aliasing
/// (gfortran may keep either dummy in a register), while the IR passes by
/// reference and allows it, as an adjoint of `vdot(a, a)` does when it
/// accumulates into `a_b` through both of its dummies. Different elements
/// of one array (`a(1, j)`, `a(1, k)`) are taken to be apart, as Fortran
/// requires of the program.
fn aliased_and_written(
    module: &Module,
    args: &[CallArg],
    callee: &Proc,
    same_element: impl Fn(&[Value], &[Value]) -> bool,
) -> Vec<(usize, usize)> {
    let overlap = |a: &CallArg, b: &CallArg| match (a, b) {
        (CallArg::Var(x), CallArg::Var(y) | CallArg::Elem(y, _) | CallArg::Slice(y, _, _))
        | (CallArg::Elem(x, _) | CallArg::Slice(x, _, _), CallArg::Var(y)) => x == y,
        (
            CallArg::Elem(x, i) | CallArg::Slice(x, i, _),
            CallArg::Elem(y, j) | CallArg::Slice(y, j, _),
        ) => x == y && same_element(i, j),
        _ => false,
    };
    let mut pairs = Vec::new();
    for (i, a) in args.iter().enumerate() {
        for (j, b) in args.iter().enumerate().skip(i + 1) {
            let written = [i, j].iter().any(|&k| {
                callee
                    .params
                    .get(k)
                    .is_some_and(|&d| may_write(module, callee, d))
            });
            if overlap(a, b) && written && j < callee.params.len() {
                pairs.push((i, j));
            }
        }
    }
    pairs
}

/// A pair `(i, j)` of elements of one array, at other subscripts, passed
/// to two array dummies of `callee` that it writes, where each follows an
/// element of one other array passed to a dummy `callee` does not write
/// (the derivative following its primal, as in `ddot_rev(n, a(1, j),
/// a_b(1, j), a(1, 1), a_b(1, 1), ...)`). The original call only read the
/// primal elements, which Fortran lets overlap (`ddot(n, a(1, j), a(1, 1))`
/// with `j = 1`), so the derivative elements may overlap too, and the
/// callee writing both is aliasing that Fortran forbids. (Where the
/// original wrote one of them, Fortran kept them apart.) The caller passes
/// the second through a zeroed array and adds it back after the call, so
/// it needs the element count from that element to the end of its array
/// (see `Context::sized_params`).
pub(crate) fn derivatives_may_overlap(
    module: &Module,
    args: &[CallArg],
    callee: &Proc,
    same_element: impl Fn(&[Value], &[Value]) -> bool,
) -> Option<(usize, usize)> {
    let written_array = |k: usize| {
        callee
            .params
            .get(k)
            .is_some_and(|&d| !callee.var(d).dims.is_empty() && may_write(module, callee, d))
    };
    let read_only = |k: usize| {
        callee
            .params
            .get(k)
            .is_some_and(|&d| !may_write(module, callee, d))
    };
    let element = |k: usize| match args.get(k) {
        Some(CallArg::Elem(x, idx)) => Some((*x, idx.as_slice())),
        _ => None,
    };
    for i in 1..args.len() {
        for j in i + 2..args.len() {
            let (Some((x, xi)), Some((y, yi))) = (element(i), element(j)) else {
                continue;
            };
            let (Some((p, _)), Some((q, _))) = (element(i - 1), element(j - 1)) else {
                continue;
            };
            if x == y
                && p == q
                && p != x
                && !same_element(xi, yi)
                && written_array(i)
                && written_array(j)
                && read_only(i - 1)
                && read_only(j - 1)
            {
                return Some((i, j));
            }
        }
    }
    None
}

/// Whether `proc` only accumulates into its scalar `v`: every write is
/// `v = v + e`, the value of `v` is read for those sums alone, and `v` is
/// not passed on. A caller can then hand it a zeroed temporary and add
/// the temporary to the actual after the call.
fn only_accumulates(proc: &Proc, v: VarId) -> bool {
    let value = |i: usize| Value(i as u32);
    let loads: HashSet<Value> = (0..proc.insts.len())
        .filter(|&i| matches!(proc.insts[i].kind, Inst::Load(x) if x == v))
        .map(value)
        .collect();
    let mut sums = HashSet::new();
    for data in &proc.insts {
        match &data.kind {
            Inst::Store(x, s) if *x == v => match proc.inst(*s).kind {
                Inst::Binary(adjit_ir::BinaryOp::Add, a, b)
                    if loads.contains(&a) != loads.contains(&b) =>
                {
                    sums.insert(*s);
                }
                _ => return false,
            },
            Inst::Store(..) => {}
            _ if may_write_inst(&data.kind, v) => return false,
            _ => {}
        }
    }
    // A load of `v` feeds its sum only; a sum is stored into `v` only.
    for (i, data) in proc.insts.iter().enumerate() {
        let mut ok = true;
        data.kind.for_each_operand(|o| {
            if loads.contains(&o) && !sums.contains(&value(i)) {
                ok = false;
            }
            if sums.contains(&o) && !matches!(data.kind, Inst::Store(x, _) if x == v) {
                ok = false;
            }
        });
        if !ok {
            return false;
        }
    }
    proc.blocks.iter().all(|b| match &b.term {
        Terminator::Branch { cond: c, .. } | Terminator::Switch { value: c, .. } => {
            !loads.contains(c) && !sums.contains(c)
        }
        _ => true,
    })
}

/// The character scalar with the characters of `buffer`, an array of
/// one-character elements (an expression: it cannot be defined).
fn chars_as_scalar(buffer: &str) -> String {
    format!("transfer({buffer}, repeat(' ', size({buffer})))")
}

/// Whether `proc` may write its variable `v`: stores, allocation, character
/// assignment to it, or passing it on to a call whose dummy may be written
/// (followed through [`CALL_DEPTH`] calls, then assumed).
fn may_write(module: &Module, proc: &Proc, v: VarId) -> bool {
    writes_within(module, proc, v, CALL_DEPTH)
}

/// How deep [`may_write`] follows calls (recursion ends there).
const CALL_DEPTH: usize = 6;

/// [`may_write`], following calls `depth` levels down.
fn writes_within(module: &Module, proc: &Proc, v: VarId, depth: usize) -> bool {
    proc.insts.iter().any(|data| match &data.kind {
        Inst::Call(c, args) if depth > 0 => args.iter().enumerate().any(|(k, a)| {
            let passed = matches!(a, CallArg::Var(x) | CallArg::Elem(x, _) | CallArg::Slice(x, _, _) if *x == v);
            let callee = module.proc(*c);
            passed
                && callee
                    .params
                    .get(k)
                    .is_none_or(|&d| writes_within(module, callee, d, depth - 1))
        }),
        kind => may_write_inst(kind, v),
    })
}

/// Whether instruction `inst` may write variable `v` (see [`may_write`]).
fn may_write_inst(inst: &Inst, v: VarId) -> bool {
    match inst {
        Inst::Store(x, _)
        | Inst::StoreElem(x, _, _)
        | Inst::Allocate(x, _)
        | Inst::Deallocate(x) => *x == v,
        Inst::CharAssign(
            CharRef {
                base: CharBase::Var { var, .. },
                ..
            },
            _,
        ) => *var == v,
        Inst::Call(_, args) => args
            .iter()
            .any(|a| matches!(a, CallArg::Var(x) | CallArg::Elem(x, _) | CallArg::Slice(x, _, _) if *x == v)),
        _ => false,
    }
}

/// The I/O steps of `proc` that belong to kept records: from a
/// `BeginKeep` or `BeginRestore` to the `EndWrite` or `EndRead` that ends
/// it, following the control flow from the entry block (a record's steps
/// may span the blocks of its loops, with no other I/O statement among
/// them).
fn kept_steps(proc: &Proc) -> HashSet<Value> {
    // Whether a block starts inside a kept record, as far as found.
    let mut inside_at = vec![false; proc.blocks.len()];
    let mut seen = vec![false; proc.blocks.len()];
    let mut out = HashSet::new();
    let mut work = vec![BlockId(0)];
    if proc.blocks.is_empty() {
        return out;
    }
    seen[0] = true;
    while let Some(b) = work.pop() {
        let mut inside = inside_at[b.index()];
        for &v in &proc.blocks[b.index()].insts {
            let Inst::Io(op) = &proc.inst(v).kind else {
                continue;
            };
            match op {
                IoOp::BeginKeep(_) | IoOp::BeginRestore(_) => inside = true,
                IoOp::BeginWrite(_) | IoOp::BeginRead | IoOp::BeginReadFrom(..) => inside = false,
                _ => {}
            }
            if inside {
                out.insert(v);
            }
            if matches!(op, IoOp::EndWrite | IoOp::EndRead) {
                inside = false;
            }
        }
        for s in proc.successors(b) {
            if !seen[s.index()] || (inside && !inside_at[s.index()]) {
                seen[s.index()] = true;
                inside_at[s.index()] |= inside;
                work.push(s);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use adjit_ir::builder::ProcBuilder;
    use adjit_ir::BinaryOp;

    /// `x_b = x_b + e` only accumulates; a plain assignment, a read of the
    /// sum elsewhere or `x_b = x_b + x_b` does not.
    #[test]
    fn accumulation_is_told_from_other_writes() {
        let build = |body: &dyn Fn(&mut ProcBuilder, VarId, VarId)| {
            let mut proc = Proc::new("p");
            let x = {
                let mut b = ProcBuilder::new(&mut proc);
                let x = b.param("x_b", Type::F64, vec![]);
                let y = b.param("y", Type::F64, vec![]);
                body(&mut b, x, y);
                x
            };
            (proc, x)
        };
        let (p, x) = build(&|b, x, y| {
            let old = b.load(x);
            let e = b.load(y);
            let sum = b.binary(BinaryOp::Add, old, e);
            b.store(x, sum);
        });
        assert!(only_accumulates(&p, x));
        let (p, x) = build(&|b, x, y| {
            let e = b.load(y);
            b.store(x, e);
        });
        assert!(!only_accumulates(&p, x));
        let (p, x) = build(&|b, x, y| {
            let old = b.load(x);
            let e = b.load(y);
            let sum = b.binary(BinaryOp::Add, old, e);
            b.store(x, sum);
            b.store(y, sum);
        });
        assert!(!only_accumulates(&p, x));
        let (p, x) = build(&|b, x, _| {
            let old = b.load(x);
            let sum = b.binary(BinaryOp::Add, old, old);
            b.store(x, sum);
        });
        assert!(!only_accumulates(&p, x));
    }
}
