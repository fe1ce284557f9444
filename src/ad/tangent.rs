//! The tangent (forward-mode) transform of code lists (seed 004 section 6,
//! seed 001 section 2).
//!
//! [`tangent`] returns a copy of the module with one tangent procedure per
//! (procedure, activity context) reached from the root. A tangent procedure
//! computes the primal exactly as the original does and, for every active
//! value `v = phi(u)`, the directional derivative
//! `v_d = sum_i dphi/du_i * u_i_d` (partials from [`super::rules`]), placed
//! before the stores that use it.
//!
//! # Signature convention
//!
//! The tangent of `foo` is `foo_d` (vector mode: `foo_dv`; further activity
//! contexts of the same callee get `_2`, `_3`, ... appended). Its parameters
//! are the original parameters in order, each **active** float parameter `x`
//! immediately followed by its tangent `x_d` of the same element type (REAL(4)
//! tangents are f32):
//!
//! * scalar mode (`directions == 1`): `x_d` has `x`'s shape;
//! * vector mode (`directions == K > 1`): `x_d` has an extra *leading*
//!   dimension `1:K`, i.e. `x_d(K, dims...)`, so the K directions of one
//!   element are contiguous; a scalar `x` gets `x_d(K)`.
//!
//! A FUNCTION's result parameter stays last among the originals, followed by
//! its tangent; the tangent procedure is a subroutine (`result` is `None`).
//! The root's independents and dependents are always active; which other
//! parameters are active is given by [`active_params`].
//!
//! On entry to the root tangent, the tangents of the independents are the
//! seed directions; the tangents of the other active parameters (and of
//! active globals) are set to zero by the tangent itself, so their incoming
//! contents are ignored. On return, the tangents of the dependents hold
//! `J * seed`.
//!
//! # How code is generated
//!
//! * Variables keep their handles; tangent variables are appended. Blocks are
//!   copied one to one after a prologue block (which zeroes tangents at the
//!   root) and values are renumbered.
//! * Loads of an active variable load its tangent (same subscripts); stores
//!   to an active variable also store the tangent of the stored value, or
//!   zero when that value is passive, so every active variable's tangent is
//!   correct wherever its value is useful. Tangents are only computed for
//!   values that are varied and useful (activity analysis); passive integer
//!   and index code is copied untouched.
//! * Calls whose callee (in that call's context) has active variables call
//!   the callee's tangent, passing after each active parameter the tangent
//!   of the actual: the tangent variable for `Var`, the tangent element for
//!   `Elem` (sequence association carries over: the tangent of `a(k)` in
//!   vector mode is `a_d(1, k)`), a tangent temporary for `Value`. Other
//!   calls call the original procedure.
//! * Vector mode is unrolled: each instruction's partials are computed once
//!   and applied to the K directions as K straight-line accumulations. The
//!   IR's values live only inside their block, so a loop over `k` would have
//!   to spill every partial and every tangent to memory; unrolled, they stay
//!   SSA values that Cranelift keeps in registers. Code size grows with K,
//!   so K is limited to [`MAX_DIRECTIONS`]; callers should pick
//!   `min(number of independent elements, 8)` and sweep `ceil(n / K)` times.
//!
//! # Derivative code as input (second order)
//!
//! The input may itself be derivative code: the tangent of an adjoint's
//! combined procedure `foo_b` (tangent over adjoint, Hessians) or of a
//! tangent (tangent over tangent). When the code reached from the root
//! pushes or pops the runtime *value* stack, activity analysis runs in
//! value-stack mode ([`activity::uses_value_stack`]) and every push of a
//! float `u` becomes `push u_d(1..K); push u` (zeros when `u` is passive)
//! and every pop `pop v; pop v_d(K..1)`, so tangents travel on the same
//! stack beside the values they belong to, in every procedure: a callee
//! that uses the value stack is always called in its tangent form, even
//! when nothing else in it is active, so pushes and pops stay paired. The
//! integer and control stacks carry no derivatives and are copied.
//!
//! Recursive procedures (direct or mutual) get one tangent procedure per
//! activity context, which calls itself: the activity analysis resolves the
//! recursion by a fixpoint ([`activity`] module docs), and a recursive call
//! reaching the root's context calls a non-root copy of it.

use super::activity::{self, uses_value_stack, Activity, Context};
use super::rules::{self, Emit, StrongZero};
use super::AdError;
use adjit_ir::builder::ProcBuilder;
use adjit_ir::{
    BinaryOp, BlockId, Bound, CallArg, CharBase, CharRef, CmpOp, Dim, Global, GlobalId, Inst,
    Module, Proc, ProcId, Span, StackKind, Storage, Terminator, Type, Value, Var, VarId,
};
use std::collections::HashMap;

/// The largest number of directions of vector mode (the code is unrolled).
pub const MAX_DIRECTIONS: usize = 64;

/// Options of the tangent transform.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TangentOptions {
    /// Number of directions carried at once: 1 is scalar mode (`foo_d`),
    /// K > 1 vector mode (`foo_dv`, tangents with a leading dimension 1:K).
    pub directions: usize,
    /// Which products `partial * tangent` are strong zeros (a zero factor
    /// makes the product 0 even where the other is infinite or NaN; see
    /// [`super::rules`]). Default: [`StrongZero::All`].
    pub strong_zero: StrongZero,
}

impl Default for TangentOptions {
    fn default() -> Self {
        TangentOptions {
            directions: 1,
            strong_zero: StrongZero::All,
        }
    }
}

/// The number of directions to use for `n` independent elements: one sweep
/// when `n` is small, else sweeps of 8 (`ceil(n / 8)` of them).
pub fn default_directions(n: usize) -> usize {
    n.clamp(1, 8)
}

/// The parameters of `proc` that get a tangent in [`tangent`]'s output for
/// these independents and dependents, in parameter order.
pub fn active_params(
    module: &Module,
    proc: ProcId,
    independents: &[VarId],
    dependents: &[VarId],
) -> Vec<VarId> {
    activity::analyze(module, proc, independents, dependents).active_params(module)
}

/// Generates the tangent of `proc` for the given independents and
/// dependents (float parameters of `proc`, or variables naming float
/// globals). Returns the input module's procedures (same handles) followed
/// by the generated tangent procedures, and the handle of the root tangent.
pub fn tangent(
    module: &Module,
    proc: ProcId,
    independents: &[VarId],
    dependents: &[VarId],
    options: &TangentOptions,
) -> Result<(Module, ProcId), AdError> {
    let src = module
        .procs
        .get(proc.index())
        .ok_or(AdError::UnknownProc(proc.0))?;
    if options.directions == 0 || options.directions > MAX_DIRECTIONS {
        return Err(AdError::BadOption(format!(
            "directions must be between 1 and {MAX_DIRECTIONS}, got {}",
            options.directions
        )));
    }
    for &v in independents.iter().chain(dependents) {
        check_interface_var(src, v)?;
    }
    if let Err(errors) = adjit_ir::verify::verify_module(module) {
        let first = errors.first().map(|e| e.to_string()).unwrap_or_default();
        return Err(AdError::InvalidIr(first));
    }
    let activity = activity::analyze(module, proc, independents, dependents);
    let mut generator = Generator {
        src: module,
        root: &activity,
        out: module.clone(),
        directions: options.directions,
        strong_zero: options.strong_zero,
        memo: HashMap::new(),
        tangent_globals: HashMap::new(),
        value_stack: uses_value_stack(module, proc),
    };
    let root = generator.generate(&activity, true)?;
    Ok((generator.out, root))
}

/// Checks that an independent / dependent is a float parameter or global.
fn check_interface_var(proc: &Proc, v: VarId) -> Result<(), AdError> {
    let bad = |reason: &str| AdError::BadVariable {
        proc: proc.name.clone(),
        var: proc
            .vars
            .get(v.index())
            .map_or_else(|| v.to_string(), |x| x.name.clone()),
        reason: reason.to_string(),
    };
    let var = proc
        .vars
        .get(v.index())
        .ok_or_else(|| bad("does not exist"))?;
    if !var.ty.is_float() {
        return Err(bad("is not floating-point"));
    }
    if var.storage == Storage::Local {
        return Err(bad("is a local variable, not a parameter or global"));
    }
    Ok(())
}

/// Generates tangent procedures into a copy of the module.
struct Generator<'m> {
    src: &'m Module,
    /// The root's activity (resolves the stubs of recursive calls).
    root: &'m Activity,
    out: Module,
    directions: usize,
    /// Which local products are strong zeros.
    strong_zero: StrongZero,
    /// Tangent procedure of each context already generated.
    memo: HashMap<Context, ProcId>,
    /// Tangent global of each active global.
    tangent_globals: HashMap<GlobalId, GlobalId>,
    /// Value-stack mode: tangents travel on the value stack (module docs).
    value_stack: bool,
}

impl Generator<'_> {
    fn vector(&self) -> bool {
        self.directions > 1
    }

    /// The tangent global of `g`, created on first use.
    fn tangent_global(&mut self, g: GlobalId) -> GlobalId {
        if let Some(&t) = self.tangent_globals.get(&g) {
            return t;
        }
        let global = &self.src.globals[g.index()];
        let mut dims = global.dims.clone();
        if self.vector() {
            dims.insert(0, (1, self.directions as i64));
        }
        let t = self.out.add_global(Global {
            name: format!("{}_d", global.name),
            ty: global.ty,
            dims,
            char_len: 1,
            init: Vec::new(),
        });
        self.tangent_globals.insert(g, t);
        t
    }

    /// A unique name for the tangent of `base` in context `ctx`.
    fn proc_name(&self, base: &str) -> String {
        let suffix = if self.vector() { "_dv" } else { "_d" };
        let name = format!("{base}{suffix}");
        if self.out.find_proc(&name).is_none() {
            return name;
        }
        (2..)
            .map(|i| format!("{name}_{i}"))
            .find(|n| self.out.find_proc(n).is_none())
            .expect("an unused name exists")
    }

    /// Generates (or reuses) the tangent procedure of one activity context.
    ///
    /// The root is never reused: a recursive call reaching the root's
    /// context gets a procedure of its own (the root zeroes tangents on
    /// entry and always has its independents and dependents active).
    fn generate(&mut self, activity: &Activity, is_root: bool) -> Result<ProcId, AdError> {
        if let (false, Some(&p)) = (is_root, self.memo.get(&activity.context)) {
            return Ok(p);
        }
        let src = self.src.proc(activity.context.proc);
        let id = self.out.add_proc(Proc::new(self.proc_name(&src.name)));
        if !is_root {
            self.memo.insert(activity.context.clone(), id);
        }
        let proc = ProcGen::new(self, activity, id, is_root)?.finish(self)?;
        self.out.procs[id.index()] = proc;
        Ok(id)
    }
}

/// Builds one tangent procedure.
struct ProcGen<'a> {
    src: &'a Proc,
    activity: &'a Activity,
    proc: Proc,
    directions: usize,
    /// Which local products are strong zeros.
    strong_zero: StrongZero,
    vector: bool,
    /// Tangent variable of each primal variable.
    tvar: Vec<Option<VarId>>,
    /// New block of each source block.
    bmap: Vec<BlockId>,
    /// New value of each source value.
    vmap: HashMap<Value, Value>,
    /// Tangent (one value per direction) of each new value.
    tval: HashMap<Value, Vec<Value>>,
    /// Loop counters for zero fills.
    counters: Vec<LoopCounters>,
    is_root: bool,
}

impl<'a> ProcGen<'a> {
    fn new<'m: 'a>(
        g: &mut Generator<'m>,
        activity: &'a Activity,
        id: ProcId,
        is_root: bool,
    ) -> Result<ProcGen<'a>, AdError> {
        let src = g.src.proc(activity.context.proc);
        let directions = g.directions;
        let vector = g.vector();
        let mut proc = Proc::new(g.out.proc(id).name.clone());
        proc.span = src.span;
        proc.vars = src.vars.clone();
        let mut tvar = vec![None; src.vars.len()];
        // Parameters: each active one followed by its tangent.
        for &p in &src.params {
            let kind = src.var(p).storage;
            proc.vars[p.index()].storage = kind.as_param(proc.params.len() as u32);
            proc.params.push(p);
            if activity.is_active(p) && src.var(p).ty.is_float() {
                let storage = kind.as_param(proc.params.len() as u32);
                let t = add_tangent_var(&mut proc, g, src.var(p), storage);
                tvar[p.index()] = Some(t);
                proc.params.push(t);
            }
        }
        for (i, var) in src.vars.iter().enumerate() {
            let x = VarId(i as u32);
            if tvar[i].is_some() || !activity.is_active(x) || !var.ty.is_float() {
                continue;
            }
            if var.storage.param_index().is_none() {
                tvar[i] = Some(add_tangent_var(&mut proc, g, var, var.storage));
            }
        }
        let mut gen = ProcGen {
            src,
            activity,
            proc,
            directions,
            strong_zero: g.strong_zero,
            vector,
            tvar,
            bmap: Vec::new(),
            vmap: HashMap::new(),
            tval: HashMap::new(),
            counters: Vec::new(),
            is_root,
        };
        gen.bmap = (0..src.blocks.len())
            .map(|_| gen.proc.add_block())
            .collect();
        Ok(gen)
    }

    fn finish(mut self, g: &mut Generator) -> Result<Proc, AdError> {
        self.prologue(g);
        for b in 0..self.src.blocks.len() {
            self.block(g, BlockId(b as u32))?;
        }
        Ok(self.proc)
    }

    /// Block 0: at the root, zero the tangents of the active parameters that
    /// are not independents and of every active global; then enter the copy
    /// of the source entry block.
    fn prologue(&mut self, g: &mut Generator) {
        let mut to_zero = Vec::new();
        if self.is_root {
            let ctx = &self.activity.context;
            for &p in &self.src.params {
                if let Some(t) = self.tvar[p.index()] {
                    if !ctx.independents.contains(&p) {
                        to_zero.push(t);
                    }
                }
            }
            // Every active global, named here or not (not the independents).
            let mut globals: Vec<GlobalId> = (0..g.src.globals.len())
                .map(|i| GlobalId(i as u32))
                .filter(|&gl| {
                    self.activity.is_global_active(gl) && !ctx.varied_globals.contains(&gl)
                })
                .collect();
            globals.sort();
            for gl in globals {
                let global = &g.src.globals[gl.index()];
                let tg = g.tangent_global(gl);
                let mut dims: Vec<Dim> = global
                    .dims
                    .iter()
                    .map(|&(l, u)| Dim {
                        lower: Bound::Const(l),
                        upper: Some(Bound::Const(u)),
                    })
                    .collect();
                if self.vector {
                    dims.insert(0, directions_dim(self.directions));
                }
                let t = self.proc.add_var(Var {
                    name: unique_var_name(&self.proc, &format!("{}_d", global.name)),
                    ty: global.ty,
                    dims,
                    char_len: None,
                    storage: Storage::Global(tg, 0),
                });
                to_zero.push(t);
            }
        }
        let entry = self.bmap.first().copied();
        let counters = &mut self.counters;
        let mut b = ProcBuilder::new(&mut self.proc);
        b.set_span(self.src.span);
        for t in to_zero {
            zero_fill(&mut b, t, counters);
        }
        match entry {
            Some(e) => b.jump(e),
            None => b.ret(),
        }
    }

    fn unsupported(&self, what: &str, span: Span) -> AdError {
        AdError::Unsupported {
            proc: self.src.name.clone(),
            what: what.to_string(),
            span,
        }
    }

    fn map(&self, v: Value) -> Value {
        self.vmap.get(&v).copied().unwrap_or(v)
    }

    /// Copies one source block with its tangent code.
    fn block(&mut self, g: &mut Generator, sb: BlockId) -> Result<(), AdError> {
        let src = self.src;
        let block = &src.blocks[sb.index()];
        let nb = self.bmap[sb.index()];
        for &v in &block.insts {
            let data = src.inst(v);
            let inst = remap(&data.kind, &|u| self.map(u));
            match &data.kind {
                Inst::Call(callee, args) => self.call(g, nb, v, *callee, args, inst, data.span)?,
                _ => {
                    let nv = self.proc.push_inst(nb, inst.clone(), data.ty, data.span);
                    self.vmap.insert(v, nv);
                    self.tangent_of(nb, v, nv, &inst, data.ty, data.span)?;
                }
            }
        }
        let term = match &block.term {
            Terminator::Jump(d) => Terminator::Jump(self.bmap[d.index()]),
            Terminator::Branch {
                cond,
                then_dest,
                else_dest,
            } => Terminator::Branch {
                cond: self.map(*cond),
                then_dest: self.bmap[then_dest.index()],
                else_dest: self.bmap[else_dest.index()],
            },
            Terminator::Switch {
                value,
                cases,
                default,
            } => Terminator::Switch {
                value: self.map(*value),
                cases: cases
                    .iter()
                    .map(|&(k, d)| (k, self.bmap[d.index()]))
                    .collect(),
                default: self.bmap[default.index()],
            },
            t => t.clone(),
        };
        let nblock = &mut self.proc.blocks[nb.index()];
        nblock.term = term;
        nblock.term_span = block.term_span;
        Ok(())
    }

    /// A builder appending to block `nb` with `span`.
    fn builder(&mut self, nb: BlockId, span: Span) -> ProcBuilder<'_> {
        let mut b = ProcBuilder::new(&mut self.proc);
        b.switch_to_block(nb);
        b.set_span(span);
        b
    }

    /// Emits the tangent code of the (already copied) instruction `nv`.
    /// `inst` is the copy, `v` the source value.
    fn tangent_of(
        &mut self,
        nb: BlockId,
        v: Value,
        nv: Value,
        inst: &Inst,
        ty: Option<Type>,
        span: Span,
    ) -> Result<(), AdError> {
        let active = self.activity.is_value_active(v);
        match inst {
            Inst::Load(x) | Inst::LoadElem(x, _) => {
                let (Some(t), true) = (self.tvar[x.index()], active) else {
                    return Ok(());
                };
                let idx = match inst {
                    Inst::LoadElem(_, idx) => idx.clone(),
                    _ => Vec::new(),
                };
                let vector = self.vector;
                let k = self.directions;
                let mut b = self.builder(nb, span);
                let tangent = load_tangent(&mut b, t, &idx, vector, k);
                self.tval.insert(nv, tangent);
            }
            Inst::Store(x, u) | Inst::StoreElem(x, _, u) => {
                let Some(t) = self.tvar[x.index()] else {
                    return Ok(());
                };
                let idx = match inst {
                    Inst::StoreElem(_, idx, _) => idx.clone(),
                    _ => Vec::new(),
                };
                let tangent = self.tval.get(u).cloned();
                let ty = self.proc.var(t).ty;
                let (vector, k) = (self.vector, self.directions);
                // Tangent store before the primal store: move it up.
                let primal = self.proc.blocks[nb.index()].insts.pop();
                let mut b = self.builder(nb, span);
                let tangent = tangent.unwrap_or_else(|| {
                    let z = b.fconst(ty, 0.0);
                    vec![z; k]
                });
                store_tangent(&mut b, t, &idx, &tangent, vector);
                self.proc.blocks[nb.index()].insts.extend(primal);
            }
            // Value-stack mode: the tangents are pushed under the value.
            Inst::Push(StackKind::Value, u) => {
                let tangent = self.tval.get(u).cloned();
                let ty = self.proc.value_type(*u).unwrap_or(Type::F64);
                let k = self.directions;
                let primal = self.proc.blocks[nb.index()].insts.pop();
                let mut b = self.builder(nb, span);
                let tangent = tangent.unwrap_or_else(|| {
                    let z = b.fconst(ty, 0.0);
                    vec![z; k]
                });
                for t in tangent {
                    b.push(StackKind::Value, t);
                }
                self.proc.blocks[nb.index()].insts.extend(primal);
            }
            Inst::Pop(StackKind::Value) => {
                let ty = ty.unwrap_or(Type::F64);
                let k = self.directions;
                let mut b = self.builder(nb, span);
                let mut tangent: Vec<Value> = (0..k).map(|_| b.pop(StackKind::Value, ty)).collect();
                tangent.reverse();
                if active {
                    self.tval.insert(nv, tangent);
                }
            }
            // The tangent array is allocated and released with the primal.
            Inst::Allocate(x, bounds) => {
                let Some(t) = self.tvar[x.index()] else {
                    return Ok(());
                };
                let (vector, k) = (self.vector, self.directions as i64);
                let mut b = self.builder(nb, span);
                let mut bounds = bounds.clone();
                if vector {
                    let (one, k) = (b.iconst(Type::I64, 1), b.iconst(Type::I64, k));
                    bounds.insert(0, (one, k));
                }
                b.ins(Inst::Allocate(t, bounds), None);
            }
            Inst::Deallocate(x) => {
                if let Some(t) = self.tvar[x.index()] {
                    self.builder(nb, span).ins(Inst::Deallocate(t), None);
                }
            }
            _ if active && rules::is_elemental(inst) => {
                let Some(ty) = ty else { return Ok(()) };
                let tval = std::mem::take(&mut self.tval);
                let (k, strong_zero) = (self.directions, self.strong_zero);
                let mut b = self.builder(nb, span);
                let wanted = |u: Value| tval.contains_key(&u);
                let partials = rules::partials(&mut b, inst, ty, nv, &wanted).unwrap_or_default();
                let result: Vec<Option<Value>> = (0..k)
                    .map(|dir| {
                        partials.iter().fold(None, |acc, (u, p)| {
                            rules::accumulate(&mut b, acc, p, tval[u][dir], ty, strong_zero)
                        })
                    })
                    .collect();
                self.tval = tval;
                if result.iter().all(Option::is_some) && !partials.is_empty() {
                    self.tval.insert(nv, result.into_iter().flatten().collect());
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Copies a call: to the callee's tangent when it has active variables
    /// in this call's context, else to the original.
    #[allow(clippy::too_many_arguments)]
    fn call(
        &mut self,
        g: &mut Generator,
        nb: BlockId,
        v: Value,
        callee: ProcId,
        args: &[CallArg],
        inst: Inst,
        span: Span,
    ) -> Result<(), AdError> {
        let root = g.root;
        let callee_activity = self.activity.call(v).map(|a| root.resolve(a));
        let needs_tangent = match callee_activity {
            Some(a) => root.any_active(a) || (g.value_stack && uses_value_stack(g.src, callee)),
            None => self.call_touches_active(args),
        };
        if !needs_tangent {
            let nv = self.proc.push_inst(nb, inst, None, span);
            self.vmap.insert(v, nv);
            return Ok(());
        }
        let Some(callee_activity) = callee_activity else {
            let what = format!(
                "the call of `{}` with active arguments (no callee activity)",
                g.src.proc(callee).name
            );
            return Err(self.unsupported(&what, span));
        };
        let target = g.generate(callee_activity, false)?;
        let callee_proc = g.src.proc(callee);
        let Inst::Call(_, new_args) = inst else {
            unreachable!("remap keeps calls")
        };
        let mut call_args = Vec::new();
        for (k, arg) in new_args.into_iter().enumerate() {
            let param = callee_proc.params.get(k).copied();
            let active = param
                .is_some_and(|p| callee_activity.is_active(p) && callee_proc.var(p).ty.is_float());
            let param_ty = param.map(|p| callee_proc.var(p).ty);
            call_args.push(arg.clone());
            if !active {
                continue;
            }
            let ty = param_ty.unwrap_or(Type::F64);
            let tangent_arg = self.tangent_arg(nb, &arg, ty, span);
            call_args.push(tangent_arg);
        }
        let nv = self
            .proc
            .push_inst(nb, Inst::Call(target, call_args), None, span);
        self.vmap.insert(v, nv);
        Ok(())
    }

    /// Without a callee activity (recursion): true when an argument has a
    /// tangent.
    fn call_touches_active(&self, args: &[CallArg]) -> bool {
        args.iter().any(|a| match a {
            CallArg::Var(x) | CallArg::Elem(x, _) | CallArg::Slice(x, _, _) => {
                self.tvar[x.index()].is_some()
            }
            CallArg::Value(u) => self.tval.contains_key(&self.map(*u)),
        })
    }

    /// The tangent actual argument for the (already remapped) actual `arg`
    /// bound to an active callee parameter of type `ty`.
    fn tangent_arg(&mut self, nb: BlockId, arg: &CallArg, ty: Type, span: Span) -> CallArg {
        let (vector, k) = (self.vector, self.directions);
        match arg {
            CallArg::Var(x) => {
                if let Some(t) = self.tvar[x.index()] {
                    return CallArg::Var(t);
                }
            }
            CallArg::Elem(x, idx) => {
                if let Some(t) = self.tvar[x.index()] {
                    let mut b = self.builder(nb, span);
                    let mut sub = Vec::new();
                    if vector {
                        sub.push(b.iconst(Type::I64, 1));
                    }
                    sub.extend(idx.iter().copied());
                    return CallArg::Elem(t, sub);
                }
            }
            CallArg::Slice(x, idx, n) => {
                if let Some(t) = self.tvar[x.index()] {
                    let mut b = self.builder(nb, span);
                    if !vector {
                        return CallArg::Slice(t, idx.clone(), *n);
                    }
                    // The directions of each element lie together: the
                    // slice spans `k` times the elements from direction 1.
                    let nty = b.value_type(*n).unwrap_or(Type::I64);
                    let kk = b.iconst(nty, k as i64);
                    let len = b.binary(BinaryOp::Mul, *n, kk);
                    let mut sub = vec![b.iconst(Type::I64, 1)];
                    sub.extend(idx.iter().copied());
                    return CallArg::Slice(t, sub, len);
                }
            }
            CallArg::Value(_) => {}
        }
        // A tangent temporary: the value's tangent, or zero.
        let tangent = match arg {
            CallArg::Value(u) => self.tval.get(u).cloned(),
            _ => None,
        };
        if !vector {
            let mut b = self.builder(nb, span);
            let t = tangent.map(|t| t[0]).unwrap_or_else(|| b.fconst(ty, 0.0));
            let t = b.convert_to(t, ty);
            return CallArg::Value(t);
        }
        let temp = self.proc.add_var(Var {
            name: unique_var_name(&self.proc, "_arg_d"),
            ty,
            dims: vec![directions_dim(k)],
            char_len: None,
            storage: Storage::Local,
        });
        let mut b = self.builder(nb, span);
        let values = match tangent {
            Some(t) => t.into_iter().map(|x| b.convert_to(x, ty)).collect(),
            None => {
                let z = b.fconst(ty, 0.0);
                vec![z; k]
            }
        };
        store_tangent(&mut b, temp, &[], &values, true);
        CallArg::Var(temp)
    }
}

/// Adds the tangent variable of `var` (same type; in vector mode an extra
/// leading dimension 1:K) with the given storage (a global's tangent lives in
/// the tangent global).
fn add_tangent_var(proc: &mut Proc, g: &mut Generator, var: &Var, storage: Storage) -> VarId {
    let mut dims = var.dims.clone();
    if g.vector() {
        dims.insert(0, directions_dim(g.directions));
    }
    let storage = match storage {
        // In vector mode each element of the global carries K tangents.
        Storage::Global(gl, at) => {
            let per = if g.vector() { g.directions as i64 } else { 1 };
            Storage::Global(g.tangent_global(gl), at * per)
        }
        s => s,
    };
    proc.add_var(Var {
        name: unique_var_name(proc, &format!("{}_d", var.name)),
        ty: var.ty,
        dims,
        char_len: None,
        storage,
    })
}

/// `base`, or `base_2`, `base_3`, ... when a variable of the procedure
/// already has that name.
fn unique_var_name(proc: &Proc, base: &str) -> String {
    if proc.find_var(base).is_none() {
        return base.to_string();
    }
    (2..)
        .map(|i| format!("{base}_{i}"))
        .find(|n| proc.find_var(n).is_none())
        .expect("an unused name exists")
}

/// The dimension `1:k` of the directions.
fn directions_dim(k: usize) -> Dim {
    Dim {
        lower: Bound::Const(1),
        upper: Some(Bound::Const(k as i64)),
    }
}

/// Loads the tangent of `x(idx)` (or of scalar `x`), one value per direction.
fn load_tangent(
    b: &mut ProcBuilder,
    t: VarId,
    idx: &[Value],
    vector: bool,
    k: usize,
) -> Vec<Value> {
    if !vector {
        return vec![if idx.is_empty() {
            b.load(t)
        } else {
            b.load_elem(t, idx.to_vec())
        }];
    }
    (1..=k)
        .map(|dir| {
            let mut sub = vec![b.iconst(Type::I64, dir as i64)];
            sub.extend_from_slice(idx);
            b.load_elem(t, sub)
        })
        .collect()
}

/// Stores one value per direction into the tangent of `x(idx)`.
fn store_tangent(b: &mut ProcBuilder, t: VarId, idx: &[Value], values: &[Value], vector: bool) {
    let ty = b.proc().var(t).ty;
    if !vector {
        let v = b.convert_to(values[0], ty);
        if idx.is_empty() {
            b.store(t, v);
        } else {
            b.store_elem(t, idx.to_vec(), v);
        }
        return;
    }
    for (dir, &v) in values.iter().enumerate() {
        let v = b.convert_to(v, ty);
        let mut sub = vec![b.iconst(Type::I64, dir as i64 + 1)];
        sub.extend_from_slice(idx);
        b.store_elem(t, sub, v);
    }
}

/// Emits code setting every element of `var` to zero (nested loops over its
/// dimensions, bounds read with `DimLower` / `DimExtent`). `counters` holds
/// reusable I64 loop counters (a subscript and a trip count per dimension),
/// extended as needed. Leaves the builder at the end of the fill.
fn zero_fill(b: &mut ProcBuilder, var: VarId, counters: &mut Vec<LoopCounters>) {
    let ty = b.proc().var(var).ty;
    let rank = b.proc().var(var).dims.len();
    if rank == 0 {
        let z = b.fconst(ty, 0.0);
        b.store(var, z);
        return;
    }
    while counters.len() < rank {
        let n = counters.len();
        let subscript = b.local(format!("_k{n}"), Type::I64);
        let trips = b.local(format!("_kt{n}"), Type::I64);
        counters.push(LoopCounters { subscript, trips });
    }
    nest_loops(b, var, &counters[..rank], rank, &mut |b, idx| {
        let z = b.fconst(ty, 0.0);
        b.store_elem(var, idx.to_vec(), z);
    });
}

/// The two I64 locals of one loop of [`nest_loops`].
#[derive(Clone, Copy)]
struct LoopCounters {
    /// The subscript, from the dimension's upper bound down to its lower.
    subscript: VarId,
    /// The trips left.
    trips: VarId,
}

/// Emits `rank` nested loops over the dimensions of `var` (outermost: the
/// last dimension) running `body` with the subscripts. Each loop counts its
/// trips down to zero while its subscript steps down by one from the
/// dimension's upper bound: the shape of the adjoint's reversed DO loops,
/// which the JIT's loop versioning recognises (one range test before the
/// loop instead of a bounds check per element).
fn nest_loops(
    b: &mut ProcBuilder,
    var: VarId,
    counters: &[LoopCounters],
    rank: usize,
    body: &mut dyn FnMut(&mut ProcBuilder, &[Value]),
) {
    if rank == 0 {
        let idx: Vec<Value> = counters.iter().map(|c| b.load(c.subscript)).collect();
        body(b, &idx);
        return;
    }
    let d = rank - 1;
    let LoopCounters { subscript, trips } = counters[d];
    let lower = b.dim_lower(var, d as u32);
    let extent = b.dim_extent(var, d as u32);
    let end = b.binary(BinaryOp::Add, lower, extent);
    let one = b.iconst(Type::I64, 1);
    let upper = b.binary(BinaryOp::Sub, end, one);
    b.store(subscript, upper);
    b.store(trips, extent);
    let header = b.create_block();
    let inner = b.create_block();
    let exit = b.create_block();
    b.jump(header);
    b.switch_to_block(header);
    let left = b.load(trips);
    let zero = b.iconst(Type::I64, 0);
    let more = b.cmp(CmpOp::Gt, left, zero);
    b.branch(more, inner, exit);
    b.switch_to_block(inner);
    nest_loops(b, var, counters, d, body);
    for counter in [trips, subscript] {
        let c = b.load(counter);
        let one = b.iconst(Type::I64, 1);
        let next = b.binary(BinaryOp::Sub, c, one);
        b.store(counter, next);
    }
    b.jump(header);
    b.switch_to_block(exit);
}

/// A copy of an instruction with every value operand mapped.
fn remap(inst: &Inst, m: &dyn Fn(Value) -> Value) -> Inst {
    let idx = |i: &[Value]| i.iter().map(|&v| m(v)).collect::<Vec<_>>();
    let char_ref = |r: &CharRef| CharRef {
        base: match &r.base {
            CharBase::Var { var, index } => CharBase::Var {
                var: *var,
                index: idx(index),
            },
            CharBase::Literal(s) => CharBase::Literal(s.clone()),
        },
        start: r.start.map(m),
        end: r.end.map(m),
    };
    match inst {
        Inst::Const(c) => Inst::Const(*c),
        Inst::Load(x) => Inst::Load(*x),
        Inst::Store(x, v) => Inst::Store(*x, m(*v)),
        Inst::LoadElem(x, i) => Inst::LoadElem(*x, idx(i)),
        Inst::StoreElem(x, i, v) => Inst::StoreElem(*x, idx(i), m(*v)),
        Inst::Unary(op, a) => Inst::Unary(*op, m(*a)),
        Inst::Binary(op, a, b) => Inst::Binary(*op, m(*a), m(*b)),
        Inst::Cmp(op, a, b) => Inst::Cmp(*op, m(*a), m(*b)),
        Inst::Convert(a, r) => Inst::Convert(m(*a), *r),
        Inst::Select(c, a, b) => Inst::Select(m(*c), m(*a), m(*b)),
        Inst::DimLower(x, d) => Inst::DimLower(*x, *d),
        Inst::DimExtent(x, d) => Inst::DimExtent(*x, *d),
        Inst::Call(p, args) => Inst::Call(
            *p,
            args.iter()
                .map(|a| match a {
                    CallArg::Var(x) => CallArg::Var(*x),
                    CallArg::Elem(x, i) => CallArg::Elem(*x, idx(i)),
                    CallArg::Slice(x, i, n) => CallArg::Slice(*x, idx(i), m(*n)),
                    CallArg::Value(v) => CallArg::Value(m(*v)),
                })
                .collect(),
        ),
        Inst::CharAssign(a, b) => Inst::CharAssign(char_ref(a), char_ref(b)),
        Inst::CharCompare(op, a, b) => Inst::CharCompare(*op, char_ref(a), char_ref(b)),
        Inst::Push(k, v) => Inst::Push(*k, m(*v)),
        Inst::Pop(k) => Inst::Pop(*k),
        Inst::CharLen(..)
        | Inst::CharIndex(..)
        | Inst::CharSearch(..)
        | Inst::Io(..)
        | Inst::Allocate(..)
        | Inst::Deallocate(_)
        | Inst::Allocated(_) => inst.map_operands(m),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use adjit_ir::buffer::Buffer;
    use adjit_ir::interp::Interpreter;
    use adjit_ir::special::Special;
    use adjit_ir::{Rounding, UnaryOp};

    /// The flat element positions of the independents / dependents: (param
    /// index, element) pairs in order.
    fn elements(proc: &Proc, vars: &[VarId], args: &[Buffer]) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for v in vars {
            let k = proc
                .params
                .iter()
                .position(|p| p == v)
                .expect("a parameter");
            out.extend((0..args[k].len()).map(|e| (k, e)));
        }
        out
    }

    fn run(module: &Module, proc: ProcId, args: &mut [Buffer]) {
        Interpreter::new(module).call(proc, args).expect("runs");
    }

    /// The Jacobian (rows: dependent elements, columns: independent
    /// elements) by tangent sweeps of `k` directions, checking that the
    /// primal outputs of the tangent equal the original's.
    fn tangent_jacobian(
        module: &Module,
        proc: ProcId,
        ind: &[VarId],
        dep: &[VarId],
        args: &[Buffer],
        k: usize,
    ) -> Vec<Vec<f64>> {
        let (tm, tp) = tangent(
            module,
            proc,
            ind,
            dep,
            &TangentOptions {
                directions: k,
                ..TangentOptions::default()
            },
        )
        .expect("tangent generated");
        adjit_ir::verify::verify_module(&tm).expect("tangent verifies");
        let src = module.proc(proc);
        let active = active_params(module, proc, ind, dep);
        let cols = elements(src, ind, args);
        let rows = elements(src, dep, args);
        let mut primal = args.to_vec();
        run(module, proc, &mut primal);
        let mut jac = vec![vec![0.0; cols.len()]; rows.len()];
        for start in (0..cols.len()).step_by(k) {
            let mut targs = Vec::new();
            let mut tangent_pos = vec![None; args.len()];
            for (i, a) in args.iter().enumerate() {
                targs.push(a.clone());
                if active.contains(&src.params[i]) {
                    tangent_pos[i] = Some(targs.len());
                    targs.push(Buffer::zeros(a.ty(), a.len() * k));
                }
            }
            for dir in 0..k.min(cols.len() - start) {
                let (p, e) = cols[start + dir];
                let t = tangent_pos[p].expect("independents are active");
                targs[t].set_f64(e * k + dir, 1.0);
            }
            run(&tm, tp, &mut targs);
            for (i, a) in primal.iter().enumerate() {
                let pos = tangent_pos[..i].iter().flatten().count() + i;
                // Debug text: NaN equals NaN.
                assert_eq!(
                    format!("{:?}", targs[pos]),
                    format!("{a:?}"),
                    "primal output {i}"
                );
            }
            for (r, &(p, e)) in rows.iter().enumerate() {
                let t = tangent_pos[p].expect("dependents are active");
                for dir in 0..k.min(cols.len() - start) {
                    jac[r][start + dir] = targs[t].get_f64(e * k + dir);
                }
            }
        }
        jac
    }

    /// The Jacobian by central finite differences of the original.
    fn fd_jacobian(
        module: &Module,
        proc: ProcId,
        ind: &[VarId],
        dep: &[VarId],
        args: &[Buffer],
    ) -> Vec<Vec<f64>> {
        let src = module.proc(proc);
        let cols = elements(src, ind, args);
        let rows = elements(src, dep, args);
        let mut jac = vec![vec![0.0; cols.len()]; rows.len()];
        for (c, &(p, e)) in cols.iter().enumerate() {
            let x = args[p].get_f64(e);
            let h = f64::EPSILON.cbrt() * x.abs().max(1.0);
            let eval = |x: f64| {
                let mut a = args.to_vec();
                a[p].set_f64(e, x);
                run(module, proc, &mut a);
                rows.iter()
                    .map(|&(q, f)| a[q].get_f64(f))
                    .collect::<Vec<_>>()
            };
            let (plus, minus) = (eval(x + h), eval(x - h));
            for r in 0..rows.len() {
                jac[r][c] = (plus[r] - minus[r]) / (2.0 * h);
            }
        }
        jac
    }

    fn assert_close(a: &[Vec<f64>], b: &[Vec<f64>], rel: f64, what: &str) {
        for (ra, rb) in a.iter().zip(b) {
            for (&x, &y) in ra.iter().zip(rb) {
                assert!(
                    (x - y).abs() <= rel * x.abs().max(y.abs()).max(1.0),
                    "{what}: {x} vs {y}\n{a:?}\n{b:?}"
                );
            }
        }
    }

    /// Checks tangent (scalar and vector mode) against finite differences.
    fn check_fd(
        module: &Module,
        proc: ProcId,
        ind: &[VarId],
        dep: &[VarId],
        args: &[Buffer],
    ) -> Vec<Vec<f64>> {
        let fd = fd_jacobian(module, proc, ind, dep, args);
        let scalar = tangent_jacobian(module, proc, ind, dep, args, 1);
        assert_close(&scalar, &fd, 1e-6, "tangent vs finite differences");
        let n: usize = elements(module.proc(proc), ind, args).len();
        for k in [2, n.max(2), 3] {
            let vector = tangent_jacobian(module, proc, ind, dep, args, k);
            assert_close(&vector, &scalar, 1e-15, "vector vs scalar mode");
        }
        scalar
    }

    fn f64s(x: &[f64]) -> Buffer {
        Buffer::F64(x.to_vec())
    }

    /// Naumann & Riehme's example (REFERENCE_CASES.md §1).
    fn naumann() -> (Module, ProcId, VarId, VarId) {
        let mut proc = Proc::new("f");
        let mut b = ProcBuilder::new(&mut proc);
        let x = b.param("x", Type::F64, vec![]);
        let y = b.param("y", Type::F64, vec![]);
        let (then_b, head, body, exit) = (
            b.create_block(),
            b.create_block(),
            b.create_block(),
            b.create_block(),
        );
        let (lx, ly) = (b.load(x), b.load(y));
        let c = b.cmp(CmpOp::Lt, lx, ly);
        b.branch(c, then_b, exit);
        b.switch_to_block(then_b);
        let (lx, ly) = (b.load(x), b.load(y));
        let p = b.binary(BinaryOp::Mul, lx, ly);
        b.store(x, p);
        b.jump(head);
        b.switch_to_block(head);
        let (lx, ly) = (b.load(x), b.load(y));
        let c = b.cmp(CmpOp::Lt, ly, lx);
        b.branch(c, body, exit);
        b.switch_to_block(body);
        let (lx, ly) = (b.load(x), b.load(y));
        let p = b.binary(BinaryOp::Mul, lx, ly);
        let s = b.unary(UnaryOp::Sin, p);
        b.store(x, s);
        b.jump(head);
        b.switch_to_block(exit);
        b.ret();
        let mut m = Module::default();
        let id = m.add_proc(proc);
        (m, id, x, y)
    }

    #[test]
    fn naumann_example_gradient() {
        let (m, f, x, y) = naumann();
        let args = [f64s(&[-5.0]), f64s(&[-0.5])];
        let jac = check_fd(&m, f, &[x, y], &[x], &args);
        assert!(
            (jac[0][0] - 0.07883059059881717).abs() <= 1e-14 * 0.08,
            "{}",
            jac[0][0]
        );
        assert!(
            (jac[0][1] - 1.5766118119763433).abs() <= 1e-14 * 1.6,
            "{}",
            jac[0][1]
        );
    }

    /// Griewank's function (REFERENCE_CASES.md §2) on `a(s)`.
    fn griewank() -> (Module, ProcId, [VarId; 3]) {
        let mut proc = Proc::new("griewank");
        let mut b = ProcBuilder::new(&mut proc);
        let s = b.param("s", Type::I32, vec![]);
        let a = b.param("a", Type::F64, vec![ProcBuilder::var_dim(s)]);
        let c = b.param("c", Type::F64, vec![]);
        let d = b.local("d", Type::F64);
        let i = b.local("i", Type::I32);
        let (head, body, exit) = (b.create_block(), b.create_block(), b.create_block());
        let one = b.fconst(Type::F64, 1.0);
        b.store(c, one);
        let one = b.fconst(Type::F64, 1.0);
        b.store(d, one);
        let one = b.iconst(Type::I32, 1);
        b.store(i, one);
        b.jump(head);
        b.switch_to_block(head);
        let (li, ls) = (b.load(i), b.load(s));
        let more = b.cmp(CmpOp::Le, li, ls);
        b.branch(more, body, exit);
        b.switch_to_block(body);
        let li = b.load(i);
        let ai = b.load_elem(a, vec![li]);
        let two = b.iconst(Type::I32, 2);
        let sq = b.binary(BinaryOp::PowI, ai, two);
        let k400 = b.iconst(Type::I32, 400);
        let f400 = b.convert(k400, Type::F64, Rounding::Trunc);
        let q = b.binary(BinaryOp::Div, sq, f400);
        let lc = b.load(c);
        let sum = b.binary(BinaryOp::Add, lc, q);
        b.store(c, sum);
        let ai = b.load_elem(a, vec![li]);
        let di = b.convert(li, Type::F64, Rounding::Trunc);
        let root = b.unary(UnaryOp::Sqrt, di);
        let arg = b.binary(BinaryOp::Div, ai, root);
        let cs = b.unary(UnaryOp::Cos, arg);
        let ld = b.load(d);
        let prod = b.binary(BinaryOp::Mul, ld, cs);
        b.store(d, prod);
        let one = b.iconst(Type::I32, 1);
        let next = b.binary(BinaryOp::Add, li, one);
        b.store(i, next);
        b.jump(head);
        b.switch_to_block(exit);
        let (lc, ld) = (b.load(c), b.load(d));
        let r = b.binary(BinaryOp::Sub, lc, ld);
        b.store(c, r);
        b.ret();
        let mut m = Module::default();
        let id = m.add_proc(proc);
        (m, id, [s, a, c])
    }

    /// Seed 001 table 2: the adjoint gradient of Griewank's function at
    /// s = 5, a(i) = 1 (REFERENCE_CASES.md §2), digits as published.
    #[allow(clippy::excessive_precision)]
    const GRIEWANK_GRADIENT: [f64; 5] = [
        0.4291500041640747,
        0.1695581977732323,
        0.1074226956746736,
        7.9390989486530394e-02,
        6.3416055468902388e-02,
    ];

    #[test]
    fn griewank_gradient_table() {
        let (m, g, [_, a, c]) = griewank();
        let args = [Buffer::I32(vec![5]), f64s(&[1.0; 5]), f64s(&[0.0])];
        let jac = check_fd(&m, g, &[a], &[c], &args);
        let expected = GRIEWANK_GRADIENT;
        for (got, want) in jac[0].iter().zip(expected) {
            assert!((got - want).abs() <= 2e-15 * want, "{got} vs {want}");
        }
    }

    /// `y = op(x)` in type `ty`.
    /// The tangents of the special functions against their analytic
    /// derivatives (known closed forms and constants).
    #[test]
    fn special_function_tangents_match_analytic_values() {
        use std::f64::consts::{FRAC_2_SQRT_PI, PI};
        const EULER: f64 = 0.577_215_664_901_532_9;
        let cases: &[(Special, f64, f64)] = &[
            // erf'(x) = 2/sqrt(pi) exp(-x^2); erfc' = -erf'.
            (Special::Erf, 0.0, FRAC_2_SQRT_PI),
            (Special::Erf, 1.0, FRAC_2_SQRT_PI * (-1f64).exp()),
            (Special::Erfc, 0.5, -FRAC_2_SQRT_PI * (-0.25f64).exp()),
            // gamma'(1) = -euler; gamma'(2) = 1 - euler.
            (Special::Gamma, 1.0, -EULER),
            (Special::Gamma, 2.0, 1.0 - EULER),
            // log_gamma'(x) = psi(x): psi(1/2) = -euler - 2 ln 2.
            (Special::LogGamma, 0.5, -EULER - 2.0 * 2f64.ln()),
            (Special::LogGamma, 1.0, -EULER),
            // psi'(1) = pi^2/6.
            (Special::Polygamma(0), 1.0, PI * PI / 6.0),
            // J0' = -J1 (J1(1) = 0.44005058574493355); J1'(0) = 1/2.
            (Special::BesselJ0, 1.0, -0.440_050_585_744_933_55),
            (Special::BesselJ1, 0.0, 0.5),
            // J1'(1) = J0(1) - J1(1) (J0(1) = 0.7651976865579666).
            (
                Special::BesselJ1,
                1.0,
                0.765_197_686_557_966_6 - 0.440_050_585_744_933_55,
            ),
        ];
        for &(s, x0, expected) in cases {
            let (m, f, x, y) = unary_proc(UnaryOp::Special(s), Type::F64);
            let jac = tangent_jacobian(&m, f, &[x], &[y], &[f64s(&[x0]), f64s(&[0.0])], 1);
            let got = jac[0][0];
            assert!(
                (got - expected).abs() <= 1e-14 * expected.abs().max(1.0),
                "{s:?}'({x0}) = {got}, expected {expected}"
            );
        }
    }

    fn unary_proc(op: UnaryOp, ty: Type) -> (Module, ProcId, VarId, VarId) {
        let mut proc = Proc::new("u");
        let mut b = ProcBuilder::new(&mut proc);
        let x = b.param("x", ty, vec![]);
        let y = b.param("y", ty, vec![]);
        let lx = b.load(x);
        let r = b.unary(op, lx);
        b.store(y, r);
        b.ret();
        let mut m = Module::default();
        let id = m.add_proc(proc);
        (m, id, x, y)
    }

    /// `r = op(a, b)`, the type of `b` given (an integer for `PowI`).
    fn binary_proc(op: BinaryOp, b_ty: Type) -> (Module, ProcId, [VarId; 3]) {
        let mut proc = Proc::new("b");
        let mut b = ProcBuilder::new(&mut proc);
        let x = b.param("a", Type::F64, vec![]);
        let y = b.param("b", b_ty, vec![]);
        let r = b.param("r", Type::F64, vec![]);
        let (lx, ly) = (b.load(x), b.load(y));
        let v = b.binary(op, lx, ly);
        b.store(r, v);
        b.ret();
        let mut m = Module::default();
        let id = m.add_proc(proc);
        (m, id, [x, y, r])
    }

    #[test]
    fn every_unary_rule_matches_finite_differences() {
        use UnaryOp as U;
        let cases: &[(UnaryOp, &[f64])] = &[
            (U::Neg, &[0.7, -1.3]),
            (U::Abs, &[0.7, -1.3]),
            (U::Sqrt, &[0.7, 2.5]),
            (U::Exp, &[0.7, -1.3]),
            (U::Log, &[0.7, 2.5]),
            (U::Log10, &[0.7, 2.5]),
            (U::Sin, &[0.7, -1.3]),
            (U::Cos, &[0.7, -1.3]),
            (U::Tan, &[0.7, -1.3]),
            (U::Asin, &[0.3, -0.6]),
            (U::Acos, &[0.3, -0.6]),
            (U::Atan, &[0.7, -1.3]),
            (U::Sinh, &[0.7, -1.3]),
            (U::Cosh, &[0.7, -1.3]),
            (U::Tanh, &[0.7, -1.3]),
            (U::Floor, &[0.7, -1.3]),
            (U::Ceil, &[0.7, -1.3]),
            (U::Trunc, &[0.7, -1.3]),
            (U::Round, &[0.7, -1.3]),
            (U::Special(Special::Erf), &[0.7, -1.3]),
            (U::Special(Special::Erfc), &[0.7, -1.3]),
            (U::Special(Special::Gamma), &[0.7, -1.3, 4.5]),
            (U::Special(Special::LogGamma), &[0.7, -1.3, 4.5]),
            (U::Special(Special::Polygamma(0)), &[0.7, -1.3, 4.5]),
            (U::Special(Special::Polygamma(1)), &[0.7, 4.5]),
            (U::Special(Special::BesselJ0), &[0.7, -1.3]),
            (U::Special(Special::BesselJ1), &[0.7, -1.3, 0.0]),
        ];
        for &(op, points) in cases {
            let (m, f, x, y) = unary_proc(op, Type::F64);
            for &p in points {
                check_fd(&m, f, &[x], &[y], &[f64s(&[p]), f64s(&[0.0])]);
            }
        }
    }

    #[test]
    fn every_binary_rule_matches_finite_differences() {
        use BinaryOp as B;
        let cases: &[(BinaryOp, &[(f64, f64)])] = &[
            (B::Add, &[(0.7, -1.3)]),
            (B::Sub, &[(0.7, -1.3)]),
            (B::Mul, &[(0.7, -1.3)]),
            (B::Div, &[(0.7, -1.3)]),
            (B::Pow, &[(1.3, 0.7), (2.5, -1.2)]),
            (B::Min, &[(0.7, 1.3), (1.3, 0.7)]),
            (B::Max, &[(0.7, 1.3), (1.3, 0.7)]),
            (B::Atan2, &[(0.7, -1.3), (-0.4, 0.9)]),
            (B::Sign, &[(0.7, -1.3), (-0.7, 1.3)]),
            (B::Dim, &[(1.3, 0.7), (0.7, 1.3)]),
            (B::Mod, &[(5.3, 1.7), (-5.3, 1.7), (5.3, -1.7)]),
            (B::Modulo, &[(5.3, 1.7), (-5.3, 1.7), (5.3, -1.7)]),
        ];
        for &(op, points) in cases {
            let (m, f, [a, b, r]) = binary_proc(op, Type::F64);
            for &(pa, pb) in points {
                check_fd(
                    &m,
                    f,
                    &[a, b],
                    &[r],
                    &[f64s(&[pa]), f64s(&[pb]), f64s(&[0.0])],
                );
            }
        }
        let (m, f, [a, n, r]) = binary_proc(B::PowI, Type::I32);
        for k in [3, -2, 1, 0] {
            check_fd(
                &m,
                f,
                &[a],
                &[r],
                &[f64s(&[1.3]), Buffer::I32(vec![k]), f64s(&[0.0])],
            );
        }
        assert!(!active_params(&m, f, &[a], &[r]).contains(&n));
    }

    /// The tangent of a one-output procedure for one seed.
    fn directional(
        module: &Module,
        proc: ProcId,
        ind: &[VarId],
        dep: &[VarId],
        args: &[Buffer],
    ) -> Vec<f64> {
        tangent_jacobian(module, proc, ind, dep, args, 1).remove(0)
    }

    #[test]
    fn choices_at_non_differentiable_points() {
        let (m, f, x, y) = unary_proc(UnaryOp::Abs, Type::F64);
        assert_eq!(
            directional(&m, f, &[x], &[y], &[f64s(&[0.0]), f64s(&[0.0])]),
            [1.0]
        );
        // -0.0 is on the side `x >= 0` puts it (Jacobi's `theta = 0.5*h/a`
        // with h = 0 and a < 0 is -0.0 and takes the `theta >= 0` branch).
        assert_eq!(
            directional(&m, f, &[x], &[y], &[f64s(&[-0.0]), f64s(&[0.0])]),
            [1.0]
        );
        assert_eq!(
            directional(&m, f, &[x], &[y], &[f64s(&[-1e-300]), f64s(&[0.0])]),
            [-1.0]
        );
        let (m, f, [a, b, r]) = binary_proc(BinaryOp::Pow, Type::F64);
        let at = |pa: f64, pb: f64| {
            directional(
                &m,
                f,
                &[a, b],
                &[r],
                &[f64s(&[pa]), f64s(&[pb]), f64s(&[0.0])],
            )
        };
        assert_eq!(at(0.0, 2.0), [0.0, 0.0]);
        assert_eq!(at(0.0, 1.0), [1.0, 0.0]);
        assert_eq!(at(0.0, 0.0), [0.0, 0.0]);
        assert_eq!(at(-2.0, 2.0), [-4.0, 0.0]);
        for op in [BinaryOp::Min, BinaryOp::Max] {
            let (m, f, [a, b, r]) = binary_proc(op, Type::F64);
            let at = |pa: f64, pb: f64| {
                directional(
                    &m,
                    f,
                    &[a, b],
                    &[r],
                    &[f64s(&[pa]), f64s(&[pb]), f64s(&[0.0])],
                )
            };
            assert_eq!(at(1.0, 1.0), [1.0, 0.0], "{op:?} tie goes to the first");
            assert_eq!(at(f64::NAN, 1.0), [0.0, 1.0], "{op:?} NaN in a selects b");
        }
        let (m, f, [a, b, r]) = binary_proc(BinaryOp::Atan2, Type::F64);
        let d = directional(
            &m,
            f,
            &[a, b],
            &[r],
            &[f64s(&[0.0]), f64s(&[0.0]), f64s(&[0.0])],
        );
        assert_eq!(d, [0.0, 0.0]);
        let (m, f, [a, b, r]) = binary_proc(BinaryOp::Dim, Type::F64);
        let at = |pa: f64, pb: f64| {
            let args = [f64s(&[pa]), f64s(&[pb]), f64s(&[0.0])];
            directional(&m, f, &[a, b], &[r], &args)
        };
        assert_eq!(at(1.0, 1.0), [1.0, -1.0], "DIM ties go to a - b, like MAX");
        assert_eq!(at(f64::NAN, 1.0), [0.0, 0.0]);
        let (m, f, [a, n, r]) = binary_proc(BinaryOp::PowI, Type::I32);
        let _ = n;
        let d = directional(
            &m,
            f,
            &[a],
            &[r],
            &[f64s(&[0.0]), Buffer::I32(vec![0]), f64s(&[0.0])],
        );
        assert_eq!(d, [0.0]);
        let (m, f, x, y) = unary_proc(UnaryOp::Sqrt, Type::F64);
        assert_eq!(
            directional(&m, f, &[x], &[y], &[f64s(&[0.0]), f64s(&[0.0])]),
            [f64::INFINITY]
        );
    }

    #[test]
    fn select_and_conversions() {
        // r = merge(a*a, 3*b, a < b)
        let mut proc = Proc::new("sel");
        let mut bld = ProcBuilder::new(&mut proc);
        let a = bld.param("a", Type::F64, vec![]);
        let b = bld.param("b", Type::F64, vec![]);
        let r = bld.param("r", Type::F64, vec![]);
        let (la, lb) = (bld.load(a), bld.load(b));
        let c = bld.cmp(CmpOp::Lt, la, lb);
        let sq = bld.binary(BinaryOp::Mul, la, la);
        let three = bld.fconst(Type::F64, 3.0);
        let tb = bld.binary(BinaryOp::Mul, three, lb);
        let s = bld.select(c, sq, tb);
        bld.store(r, s);
        bld.ret();
        let mut m = Module::default();
        let f = m.add_proc(proc);
        let d = check_fd(
            &m,
            f,
            &[a, b],
            &[r],
            &[f64s(&[0.5]), f64s(&[0.7]), f64s(&[0.0])],
        );
        assert_eq!(d, [[1.0, 0.0]]);
        let d = check_fd(
            &m,
            f,
            &[a, b],
            &[r],
            &[f64s(&[0.9]), f64s(&[0.7]), f64s(&[0.0])],
        );
        assert_eq!(d, [[0.0, 3.0]]);

        // REAL(4) in, REAL(8) out: y = dble(x) * dble(x); and a REAL(4)
        // tangent for z = sin(x) in f32.
        let mut proc = Proc::new("conv");
        let mut bld = ProcBuilder::new(&mut proc);
        let x = bld.param("x", Type::F32, vec![]);
        let y = bld.param("y", Type::F64, vec![]);
        let z = bld.param("z", Type::F32, vec![]);
        let lx = bld.load(x);
        let dx = bld.convert(lx, Type::F64, Rounding::Trunc);
        let p = bld.binary(BinaryOp::Mul, dx, dx);
        bld.store(y, p);
        let s = bld.unary(UnaryOp::Sin, lx);
        bld.store(z, s);
        // An integer conversion is passive: n = int(x) never carries a tangent.
        let n = bld.local("n", Type::I32);
        let i = bld.convert(lx, Type::I32, Rounding::Trunc);
        bld.store(n, i);
        bld.ret();
        let mut m = Module::default();
        let f = m.add_proc(proc);
        let (tm, tp) = tangent(&m, f, &[x], &[y, z], &TangentOptions::default()).expect("tangent");
        let tproc = tm.proc(tp);
        let types: Vec<Type> = tproc.params.iter().map(|&p| tproc.var(p).ty).collect();
        assert_eq!(
            types,
            [
                Type::F32,
                Type::F32,
                Type::F64,
                Type::F64,
                Type::F32,
                Type::F32
            ]
        );
        assert!(tproc.find_var("n_d").is_none());
        let x0 = 0.7f32;
        let mut args = vec![
            Buffer::F32(vec![x0]),
            Buffer::F32(vec![1.0]),
            f64s(&[0.0]),
            f64s(&[0.0]),
            Buffer::F32(vec![0.0]),
            Buffer::F32(vec![0.0]),
        ];
        run(&tm, tp, &mut args);
        assert_eq!(args[3], f64s(&[2.0 * x0 as f64]));
        assert_eq!(args[5], Buffer::F32(vec![x0.cos()]));
    }

    /// A module with calls of every argument kind, a FUNCTION and a global:
    /// returns it, the root and the root's parameters `x(3), y, z`.
    fn calls_module() -> (Module, ProcId, [VarId; 3]) {
        use BinaryOp as B;
        let mut m = Module::default();
        let gv = m.add_global(Global {
            name: "gv".into(),
            ty: Type::F64,
            dims: vec![],
            char_len: 1,
            init: vec![],
        });
        let global_var = |b: &mut ProcBuilder| {
            b.declare_var(Var {
                name: "gv".into(),
                ty: Type::F64,
                dims: vec![],
                char_len: None,
                storage: Storage::Global(gv, 0),
            })
        };
        // g(a, b): b = a*a + sin(a)
        let mut p = Proc::new("g");
        let mut b = ProcBuilder::new(&mut p);
        let (a, bb) = (
            b.param("a", Type::F64, vec![]),
            b.param("b", Type::F64, vec![]),
        );
        let la = b.load(a);
        let sq = b.binary(B::Mul, la, la);
        let sn = b.unary(UnaryOp::Sin, la);
        let v = b.binary(B::Add, sq, sn);
        b.store(bb, v);
        b.ret();
        let g = m.add_proc(p);
        // h(v(*), n, s): s = v(1)*v(1) + v(2)*exp(v(1)) + n
        let mut p = Proc::new("h");
        let mut b = ProcBuilder::new(&mut p);
        let vv = b.param("v", Type::F64, vec![ProcBuilder::assumed_dim()]);
        let n = b.param("n", Type::I32, vec![]);
        let sv = b.param("s", Type::F64, vec![]);
        let (i1, i2) = (b.iconst(Type::I32, 1), b.iconst(Type::I32, 2));
        let (v1, v2) = (b.load_elem(vv, vec![i1]), b.load_elem(vv, vec![i2]));
        let sq = b.binary(B::Mul, v1, v1);
        let e = b.unary(UnaryOp::Exp, v1);
        let t = b.binary(B::Mul, v2, e);
        let sum = b.binary(B::Add, sq, t);
        let ln = b.load(n);
        let fnn = b.convert(ln, Type::F64, Rounding::Trunc);
        let sum = b.binary(B::Add, sum, fnn);
        b.store(sv, sum);
        b.ret();
        let h = m.add_proc(p);
        // function q(t) = t*3 + t*t
        let mut p = Proc::new("q");
        let mut b = ProcBuilder::new(&mut p);
        let t = b.param("t", Type::F64, vec![]);
        let res = b.result_param("q", Type::F64);
        let lt = b.load(t);
        let three = b.fconst(Type::F64, 3.0);
        let a3 = b.binary(B::Mul, lt, three);
        let sq = b.binary(B::Mul, lt, lt);
        let v = b.binary(B::Add, a3, sq);
        b.store(res, v);
        b.ret();
        let q = m.add_proc(p);
        // setg(x): gv = x*x ; useg(y): y = y + sin(gv)
        let mut p = Proc::new("setg");
        let mut b = ProcBuilder::new(&mut p);
        let x = b.param("x", Type::F64, vec![]);
        let gvar = global_var(&mut b);
        let lx = b.load(x);
        let sq = b.binary(B::Mul, lx, lx);
        b.store(gvar, sq);
        b.ret();
        let setg = m.add_proc(p);
        let mut p = Proc::new("useg");
        let mut b = ProcBuilder::new(&mut p);
        let y = b.param("y", Type::F64, vec![]);
        let gvar = global_var(&mut b);
        let (ly, lg) = (b.load(y), b.load(gvar));
        let sn = b.unary(UnaryOp::Sin, lg);
        let v = b.binary(B::Add, ly, sn);
        b.store(y, v);
        b.ret();
        let useg = m.add_proc(p);
        // f(x(3), y, z)
        let mut p = Proc::new("f");
        let mut b = ProcBuilder::new(&mut p);
        let x = b.param("x", Type::F64, vec![ProcBuilder::const_dim(1, 3)]);
        let y = b.param("y", Type::F64, vec![]);
        let z = b.param("z", Type::F64, vec![]);
        let [t, u, w, r, c] = ["t", "u", "w", "r", "c"].map(|n| b.local(n, Type::F64));
        let (i1, i2) = (b.iconst(Type::I32, 1), b.iconst(Type::I32, 2));
        b.call(g, vec![CallArg::Elem(x, vec![i1]), CallArg::Var(t)]);
        let x2 = b.load_elem(x, vec![i2]);
        let two = b.fconst(Type::F64, 2.0);
        let x2t = b.binary(B::Mul, x2, two);
        b.call(g, vec![CallArg::Value(x2t), CallArg::Var(u)]);
        let c15 = b.fconst(Type::F64, 1.5);
        b.call(g, vec![CallArg::Value(c15), CallArg::Var(c)]);
        let two_i = b.iconst(Type::I32, 2);
        b.call(
            h,
            vec![
                CallArg::Elem(x, vec![i2]),
                CallArg::Value(two_i),
                CallArg::Var(w),
            ],
        );
        let lt = b.load(t);
        b.call(q, vec![CallArg::Value(lt), CallArg::Var(r)]);
        b.call(setg, vec![CallArg::Var(y)]);
        b.call(useg, vec![CallArg::Var(z)]);
        let [lt, lu, lw, lr, lc] = [t, u, w, r, c].map(|v| b.load(v));
        let p1 = b.binary(B::Mul, lt, lu);
        let s1 = b.binary(B::Add, p1, lw);
        let s2 = b.binary(B::Add, s1, lr);
        let s3 = b.binary(B::Add, s2, lc);
        b.store(y, s3);
        b.ret();
        let f = m.add_proc(p);
        adjit_ir::verify::verify_module(&m).expect("test module verifies");
        (m, f, [x, y, z])
    }

    #[test]
    fn calls_of_every_argument_kind() {
        let (m, f, [x, y, z]) = calls_module();
        let args = [f64s(&[0.3, -0.4, 0.8]), f64s(&[0.6]), f64s(&[0.25])];
        check_fd(&m, f, &[x, y], &[y, z], &args);
        let (tm, _) =
            tangent(&m, f, &[x, y], &[y, z], &TangentOptions::default()).expect("tangent");
        for name in ["f_d", "g_d", "h_d", "q_d", "setg_d", "useg_d"] {
            assert!(tm.find_proc(name).is_some(), "{name} generated");
        }
        // The constant call g(1.5, c) calls the original g.
        let fd = tm.proc(tm.find_proc("f_d").expect("root"));
        let g = m.find_proc("g").expect("g");
        let calls_of_g = fd
            .insts
            .iter()
            .filter(|i| matches!(&i.kind, Inst::Call(p, _) if *p == g))
            .count();
        assert_eq!(calls_of_g, 1);
        // The tangent of the FUNCTION q: t, t_d, q, q_d.
        let qd = tm.proc(tm.find_proc("q_d").expect("q_d"));
        let names: Vec<&str> = qd.params.iter().map(|&p| qd.var(p).name.as_str()).collect();
        assert_eq!(names, ["t", "t_d", "q", "q_d"]);
        assert_eq!(qd.result, None);
        let (vm, vp) = tangent(
            &m,
            f,
            &[x, y],
            &[y, z],
            &TangentOptions {
                directions: 4,
                ..TangentOptions::default()
            },
        )
        .expect("vector");
        assert_eq!(vm.proc(vp).name, "f_dv");
        let xd = vm.proc(vp).params[1];
        assert_eq!(vm.proc(vp).var(xd).dims.len(), 2);
    }

    #[test]
    fn bad_requests_are_errors() {
        let (m, f, [_, _, c]) = griewank();
        let s = m.proc(f).params[0];
        let opts = TangentOptions::default();
        assert!(matches!(
            tangent(&m, f, &[s], &[c], &opts),
            Err(AdError::BadVariable { .. })
        ));
        assert!(matches!(
            tangent(&m, f, &[VarId(99)], &[c], &opts),
            Err(AdError::BadVariable { .. })
        ));
        let d = m.proc(f).find_var("d").expect("local d");
        assert!(matches!(
            tangent(&m, f, &[d], &[c], &opts),
            Err(AdError::BadVariable { .. })
        ));
        assert!(matches!(
            tangent(&m, ProcId(7), &[], &[], &opts),
            Err(AdError::UnknownProc(7))
        ));
        // A recursive call with active arguments: the root's tangent calls a
        // non-root copy (the root zeroes tangents on entry), which calls
        // itself.
        let mut p = Proc::new("r");
        let mut b = ProcBuilder::new(&mut p);
        let x = b.param("x", Type::F64, vec![]);
        b.call(ProcId(0), vec![CallArg::Var(x)]);
        b.ret();
        let mut rm = Module::default();
        let r = rm.add_proc(p);
        let (out, root) = tangent(&rm, r, &[x], &[x], &opts).expect("recursion is differentiated");
        let callee_of = |p: ProcId| {
            out.proc(p).insts.iter().find_map(|d| match d.kind {
                Inst::Call(c, ref args) => Some((c, args.len())),
                _ => None,
            })
        };
        let (copy, nargs) = callee_of(root).expect("the root calls");
        assert_ne!(copy, root);
        assert_eq!(nargs, 2, "x and its tangent");
        assert_eq!(callee_of(copy), Some((copy, 2)), "the copy calls itself");
        let zero = TangentOptions {
            directions: 0,
            ..TangentOptions::default()
        };
        assert!(matches!(
            tangent(&m, f, &[c], &[c], &zero),
            Err(AdError::BadOption(_))
        ));
    }

    /// The Bratu subroutine of seed 003 appendix A (REFERENCE_CASES.md §3,
    /// with `/1.2` in the loop's `F(i)` line), built statement by statement.
    fn bratu() -> (Module, ProcId, [VarId; 5]) {
        use BinaryOp as B;
        let mut p = Proc::new("bratu");
        let mut b = ProcBuilder::new(&mut p);
        let dim = b.param("dim", Type::I32, vec![]);
        let parmax = b.param("parmax", Type::I32, vec![]);
        let x = b.param("x", Type::F64, vec![ProcBuilder::var_dim(dim)]);
        let prm = b.param("prm", Type::F64, vec![ProcBuilder::var_dim(parmax)]);
        let f = b.param("f", Type::F64, vec![ProcBuilder::var_dim(dim)]);
        let i = b.local("i", Type::I32);
        let h = b.local("h", Type::F64);
        let int = |b: &mut ProcBuilder, k: i64| b.iconst(Type::I32, k);
        let real = |b: &mut ProcBuilder, r: f32| b.fconst(Type::F64, r as f64);
        // h*h*prm(1)/div*exp(x(k)/(1.0+prm(2)*x(k))), times (1+10*e) when `ten`.
        let term = |b: &mut ProcBuilder, k: Value, div: f32, ten: bool| {
            let lh = b.load(h);
            let hh = b.binary(B::Mul, lh, lh);
            let one_i = int(b, 1);
            let p1 = b.load_elem(prm, vec![one_i]);
            let c = b.binary(B::Mul, hh, p1);
            let d = real(b, div);
            let c = b.binary(B::Div, c, d);
            let xk = b.load_elem(x, vec![k]);
            let two_i = int(b, 2);
            let p2 = b.load_elem(prm, vec![two_i]);
            let px = b.binary(B::Mul, p2, xk);
            let one = real(b, 1.0);
            let den = b.binary(B::Add, one, px);
            let q = b.binary(B::Div, xk, den);
            let e = b.unary(UnaryOp::Exp, q);
            let e = if ten {
                let ten_i = int(b, 10);
                let ten_f = b.convert(ten_i, Type::F64, Rounding::Trunc);
                let te = b.binary(B::Mul, ten_f, e);
                let one_i = int(b, 1);
                let one_f = b.convert(one_i, Type::F64, Rounding::Trunc);
                b.binary(B::Add, one_f, te)
            } else {
                e
            };
            b.binary(B::Mul, c, e)
        };
        let two_x = |b: &mut ProcBuilder, k: Value| {
            let two_i = int(b, 2);
            let two = b.convert(two_i, Type::F64, Rounding::Trunc);
            let xk = b.load_elem(x, vec![k]);
            b.binary(B::Mul, two, xk)
        };
        // h = 2.0/(dim+1), in REAL(4).
        let ld = b.load(dim);
        let one_i = int(&mut b, 1);
        let dp1 = b.binary(B::Add, ld, one_i);
        let dp1 = b.convert(dp1, Type::F32, Rounding::Trunc);
        let two = b.fconst(Type::F32, 2.0);
        let hq = b.binary(B::Div, two, dp1);
        let hq = b.convert(hq, Type::F64, Rounding::Trunc);
        b.store(h, hq);
        // F(1) = -2*x(1) + term10(1)
        let k1 = int(&mut b, 1);
        let t2 = two_x(&mut b, k1);
        let n2 = b.unary(UnaryOp::Neg, t2);
        let t = term(&mut b, k1, 12.0, true);
        let v = b.binary(B::Add, n2, t);
        b.store_elem(f, vec![k1], v);
        // F(2) = x(1) + term(1)
        let k2 = int(&mut b, 2);
        let x1 = b.load_elem(x, vec![k1]);
        let t = term(&mut b, k1, 12.0, false);
        let v = b.binary(B::Add, x1, t);
        b.store_elem(f, vec![k2], v);
        // do i = 2, dim-1
        b.store(i, k2);
        let (head, body, exit) = (b.create_block(), b.create_block(), b.create_block());
        b.jump(head);
        b.switch_to_block(head);
        let (li, ld) = (b.load(i), b.load(dim));
        let one_i = int(&mut b, 1);
        let dm1 = b.binary(B::Sub, ld, one_i);
        let more = b.cmp(CmpOp::Le, li, dm1);
        b.branch(more, body, exit);
        b.switch_to_block(body);
        let li = b.load(i);
        let one_i = int(&mut b, 1);
        let im1 = b.binary(B::Sub, li, one_i);
        let ip1 = b.binary(B::Add, li, one_i);
        // F(i-1) = F(i-1) + x(i) + term(i)
        let fim1 = b.load_elem(f, vec![im1]);
        let xi = b.load_elem(x, vec![li]);
        let s = b.binary(B::Add, fim1, xi);
        let t = term(&mut b, li, 12.0, false);
        let v = b.binary(B::Add, s, t);
        b.store_elem(f, vec![im1], v);
        // F(i) = F(i) - 2*x(i) + h*h*prm(1)/1.2*exp(...)
        let fi = b.load_elem(f, vec![li]);
        let t2 = two_x(&mut b, li);
        let s = b.binary(B::Sub, fi, t2);
        let t = term(&mut b, li, 1.2, false);
        let v = b.binary(B::Add, s, t);
        b.store_elem(f, vec![li], v);
        // F(i+1) = x(i) + term(i)
        let xi = b.load_elem(x, vec![li]);
        let t = term(&mut b, li, 12.0, false);
        let v = b.binary(B::Add, xi, t);
        b.store_elem(f, vec![ip1], v);
        let next = b.binary(B::Add, li, one_i);
        b.store(i, next);
        b.jump(head);
        b.switch_to_block(exit);
        let ld = b.load(dim);
        let one_i = int(&mut b, 1);
        let dm1 = b.binary(B::Sub, ld, one_i);
        // F(dim-1) = F(dim-1) + x(dim) + term(dim)
        let fdm1 = b.load_elem(f, vec![dm1]);
        let xd = b.load_elem(x, vec![ld]);
        let s = b.binary(B::Add, fdm1, xd);
        let t = term(&mut b, ld, 12.0, false);
        let v = b.binary(B::Add, s, t);
        b.store_elem(f, vec![dm1], v);
        // F(dim) = F(dim) - 2*x(dim); F(dim) = F(dim) + term10(dim)
        let fd = b.load_elem(f, vec![ld]);
        let t2 = two_x(&mut b, ld);
        let v = b.binary(B::Sub, fd, t2);
        b.store_elem(f, vec![ld], v);
        let fd = b.load_elem(f, vec![ld]);
        let t = term(&mut b, ld, 12.0, true);
        let v = b.binary(B::Add, fd, t);
        b.store_elem(f, vec![ld], v);
        b.ret();
        let mut m = Module::default();
        let id = m.add_proc(p);
        (m, id, [dim, parmax, x, prm, f])
    }

    #[test]
    fn bratu_jacobian_by_columns() {
        let (m, bratu, [_, _, x, prm, f]) = bratu();
        let xs: Vec<f64> = [1.72f32, 3.45, 4.16, 4.87, 4.16, 3.45, 1.72]
            .iter()
            .map(|&v| v as f64)
            .collect();
        let prms: Vec<f64> = [1.3f32, 0.245828].iter().map(|&v| v as f64).collect();
        assert_eq!(xs[0], 1.7200000286102295);
        let args = [
            Buffer::I32(vec![7]),
            Buffer::I32(vec![2]),
            f64s(&xs),
            f64s(&prms),
            f64s(&[0.0; 7]),
        ];
        let jac = check_fd(&m, bratu, &[x, prm], &[f], &args);
        assert!(
            (jac[0][0] - -1.8879679375574547).abs() <= 1e-14 * 1.9,
            "{}",
            jac[0][0]
        );
        assert!(
            (jac[1][0] - 1.0112032062442544).abs() <= 1e-14,
            "{}",
            jac[1][0]
        );
        let rounded = [
            [-1.89, 1.01, 0.0, 0.0, 0.0, 0.0, 0.0, 0.21, -0.48],
            [1.01, -1.87, 1.01, 0.0, 0.0, 0.0, 0.0, 0.40, -1.78],
            [0.0, 1.01, -1.87, 1.01, 0.0, 0.0, 0.0, 0.49, -2.70],
            [0.0, 0.0, 1.01, -1.87, 1.01, 0.0, 0.0, 0.56, -3.50],
            [0.0, 0.0, 0.0, 1.01, -1.87, 1.01, 0.0, 0.49, -2.70],
            [0.0, 0.0, 0.0, 0.0, 1.01, -1.87, 1.01, 0.40, -1.78],
            [0.0, 0.0, 0.0, 0.0, 0.0, 1.01, -1.89, 0.21, -0.48],
        ];
        for (row, want) in jac.iter().zip(rounded) {
            for (&got, want) in row.iter().zip(want) {
                assert!((got - want).abs() <= 0.005 + 1e-12, "{got} vs {want}");
            }
        }
        // Vector mode with K = 9 (one sweep) equals scalar mode exactly.
        let vector = tangent_jacobian(&m, bratu, &[x, prm], &[f], &args, 9);
        assert_eq!(vector, jac);
    }

    /// Parses and compiles Fortran source with the front end.
    fn fortran(src: &str, form: crate::front::source::SourceForm) -> Module {
        let mut map = crate::front::diag::SourceMap::new();
        let file = map.add("test.f", src);
        let (ast, diags) = crate::front::parser::parse_file(&map, file, form);
        assert!(
            diags.iter().all(|d| !d.is_error()),
            "parse errors: {diags:?}"
        );
        match crate::front::sema::compile(&map, &[ast]) {
            Ok(c) => c.module,
            Err(d) => panic!("compile errors: {d:?}"),
        }
    }

    fn param(m: &Module, proc: ProcId, name: &str) -> VarId {
        m.proc(proc).find_var(name).expect("a parameter")
    }

    #[test]
    fn fortran_naumann_and_griewank() {
        use crate::front::source::SourceForm;
        let m = fortran(
            "subroutine f(x, y)\n  double precision x, y\n  if (x < y) then\n    x = x*y\n    do while (y < x)\n      x = sin(x*y)\n    end do\n  end if\nend subroutine\n",
            SourceForm::Free,
        );
        let f = m.find_proc("f").expect("f");
        let (x, y) = (param(&m, f, "x"), param(&m, f, "y"));
        let jac = check_fd(&m, f, &[x, y], &[x], &[f64s(&[-5.0]), f64s(&[-0.5])]);
        assert!(
            (jac[0][0] - 0.07883059059881717).abs() <= 1e-14 * 0.08,
            "{}",
            jac[0][0]
        );
        assert!(
            (jac[0][1] - 1.5766118119763433).abs() <= 1e-14 * 1.6,
            "{}",
            jac[0][1]
        );

        let m = fortran(
            "subroutine griewank(s, a, c)\n  integer s, i\n  double precision a(s), c, d\n  c = 1\n  d = 1.D0\n  DO i = 1, s\n    c = c + (a(i)**2)/400\n    d = d*COS(a(i)/SQRT(DBLE(i)))\n  END DO\n  c = c - d\nend subroutine\n",
            SourceForm::Free,
        );
        let g = m.find_proc("griewank").expect("griewank");
        let (a, c) = (param(&m, g, "a"), param(&m, g, "c"));
        let args = [Buffer::I32(vec![5]), f64s(&[1.0; 5]), f64s(&[0.0])];
        let jac = check_fd(&m, g, &[a], &[c], &args);
        let expected = GRIEWANK_GRADIENT;
        for (got, want) in jac[0].iter().zip(expected) {
            assert!((got - want).abs() <= 2e-15 * want, "{got} vs {want}");
        }
    }

    /// Seed 003's appendix A, fixed form, `/1.2` in the loop's `F(i)` line.
    const BRATU_F77: &str = "      subroutine bratu(dim,parmax,x,prm,F)
      integer    dim    , parmax
C independent variables
      double precision x(dim), prm(parmax)
C   dependent variables
      double precision F(dim)
C
      integer i
      double precision h

      h = 2.0/(dim+1)
      F(1) = -2*x(1)+h*h*prm(1)/12.0*(1+10*exp(x(1)/(1.0+prm(2)*x(1))))
      F(2) = x(1)+h*h*prm(1)/12.0*exp(x(1)/(1.0+prm(2)*x(1)))

      do 1 i=2,dim-1
        F(i-1) = F(i-1)+x(i)+h*h*prm(1)/12.0*exp(x(i)/(1.0+prm(2)*x(i)))
        F(i) = F(i)-2*x(i)+h*h*prm(1)/1.2*exp(x(i)/(1.0+prm(2)*x(i)))
        F(i+1) = x(i)+h*h*prm(1)/12.0*exp(x(i)/(1.0+prm(2)*x(i)))
    1 continue

      F(dim-1) = F(dim-1)+x(dim)+h*h*prm(1)/12.0*exp(x(dim)/(1.0
     *          +prm(2)*x(dim)))
      F(dim) = F(dim)-2*x(dim)
      F(dim) = F(dim)+h*h*prm(1)/12.0*(1+10*exp(x(dim)/(1.0
     *          +prm(2)*x(dim))))
      end
";

    #[test]
    fn fortran_bratu_jacobian() {
        let m = fortran(BRATU_F77, crate::front::source::SourceForm::Fixed);
        let b = m.find_proc("bratu").expect("bratu");
        let [x, prm, f] = ["x", "prm", "f"].map(|n| param(&m, b, n));
        let xs: Vec<f64> = [1.72f32, 3.45, 4.16, 4.87, 4.16, 3.45, 1.72]
            .iter()
            .map(|&v| v as f64)
            .collect();
        let prms: Vec<f64> = [1.3f32, 0.245828].iter().map(|&v| v as f64).collect();
        let args = [
            Buffer::I32(vec![7]),
            Buffer::I32(vec![2]),
            f64s(&xs),
            f64s(&prms),
            f64s(&[0.0; 7]),
        ];
        let jac = check_fd(&m, b, &[x, prm], &[f], &args);
        assert!(
            (jac[0][0] - -1.8879679375574547).abs() <= 1e-14 * 1.9,
            "{}",
            jac[0][0]
        );
        assert!(
            (jac[1][0] - 1.0112032062442544).abs() <= 1e-14,
            "{}",
            jac[1][0]
        );
        assert!((jac[1][1] - -1.87).abs() < 0.005 && (jac[3][8] - -3.50).abs() < 0.005);
        // The same numbers as the hand-built IR.
        let (hm, hb, [_, _, hx, hprm, hf]) = bratu();
        assert_eq!(tangent_jacobian(&hm, hb, &[hx, hprm], &[hf], &args, 1), jac);
    }

    #[test]
    fn fortran_calls_functions_and_modules() {
        let src = "module shared
  double precision :: scale = 2.0d0
  double precision :: acc
end module

double precision function sq(t)
  double precision t
  sq = t*t + scale*t
end function

subroutine accumulate(v, n)
  use shared
  integer n, i
  double precision v(n)
  do i = 1, n
    acc = acc + v(i)*exp(v(i))
  end do
end subroutine

subroutine top(x, y)
  use shared
  double precision x(4), y(2), sq
  external sq
  acc = 0
  call accumulate(x(2), 3)
  y(1) = sq(x(1)) + acc
  y(2) = max(x(1), x(4)) * sign(x(3), -1.0d0) + mod(x(2), 0.7d0)
end subroutine
";
        let m = fortran(src, crate::front::source::SourceForm::Free);
        let top = m.find_proc("top").expect("top");
        let (x, y) = (param(&m, top, "x"), param(&m, top, "y"));
        let args = [f64s(&[0.3, -0.4, 0.8, 0.1]), f64s(&[0.0, 0.0])];
        check_fd(&m, top, &[x], &[y], &args);
    }

    #[test]
    fn compiled_tangents_agree_with_the_interpreter() {
        use adjit_jit::codegen::{CompiledModule, JitOptions};
        let m = fortran(BRATU_F77, crate::front::source::SourceForm::Fixed);
        let b = m.find_proc("bratu").expect("bratu");
        let [x, prm, f] = ["x", "prm", "f"].map(|n| param(&m, b, n));
        for k in [1, 4] {
            let (tm, tp) = tangent(
                &m,
                b,
                &[x, prm],
                &[f],
                &TangentOptions {
                    directions: k,
                    ..TangentOptions::default()
                },
            )
            .expect("tangent");
            let compiled = CompiledModule::compile(&tm, &JitOptions::default()).expect("compiles");
            let xs: Vec<f64> = (0..7).map(|i| 1.0 + 0.5 * i as f64).collect();
            let seed: Vec<f64> = (0..7 * k).map(|i| (i as f64 * 0.37).sin()).collect();
            let pseed: Vec<f64> = (0..2 * k).map(|i| (i as f64 * 0.91).cos()).collect();
            let args = vec![
                Buffer::I32(vec![7]),
                Buffer::I32(vec![2]),
                f64s(&xs),
                f64s(&seed),
                f64s(&[1.3, 0.245828]),
                f64s(&pseed),
                f64s(&[0.0; 7]),
                f64s(&vec![0.0; 7 * k]),
            ];
            let mut by_interp = args.clone();
            run(&tm, tp, &mut by_interp);
            let mut by_jit = args;
            compiled.call(tp, &mut by_jit).expect("runs");
            assert_eq!(by_jit, by_interp, "K = {k}");
        }
    }
}
