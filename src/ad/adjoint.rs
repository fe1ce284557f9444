//! Reverse-mode AD on the code-list IR: the adjoint transform.
//!
//! [`adjoint`] takes a procedure, its independent and dependent variables and
//! returns a module holding the input procedures (same [`ProcId`]s) plus
//! three generated procedures (Tapenade's naming and conventions):
//!
//! * `foo_fwd`, the **augmented forward sweep**: runs the original code and
//!   records on the runtime stacks what the reverse sweep needs;
//! * `foo_rev`, the **reverse sweep**: pops the records and accumulates the
//!   adjoints;
//! * `foo_b`, the **combined adjoint**: forward sweep, reverse sweep, and
//!   around the reverse sweep a save and restore of the outputs it
//!   overwrites (the primal is not run again).
//!
//! # Signature
//!
//! All three take the original parameters in order, each *active* floating
//! point parameter `x` followed by its adjoint `x_b` (same type and shape).
//! A FUNCTION's result parameter stays last, followed by its adjoint (the
//! generated procedures are subroutines: `Proc::result` is `None`).
//! [`AdjointProcs::active_params`] says which parameters are active: without
//! activity analysis every floating-point parameter; with it, the
//! independents, the dependents and the parameters the analysis finds active.
//!
//! # Semantics
//!
//! On entry the dependents' adjoints hold the output seed `y_b`. On exit of
//! `foo_b` the independents' adjoints have been *incremented* by `y_b · J`,
//! the adjoints of variables that the procedure overwrites have been reset
//! after use (a pure output's adjoint comes back 0), and every parameter
//! holds its primal output value. Active globals (module variables, SAVE
//! locals) have adjoint globals (`g_b`); `foo_b` zeroes those of globals
//! that are not dependents on entry, so nothing a previous call left there
//! leaks into this one, and on exit they hold the sensitivity to the
//! global's entry value.
//!
//! Split use: `foo_fwd` followed by `foo_rev` on the same runtime stacks
//! accumulates exactly the same adjoints as `foo_b`. `foo_rev` expects every
//! parameter and global in its state at the end of `foo_fwd` (the locals it
//! needs travel on the stacks); while it runs it restores the variables it
//! needs to their values at the matching point of the forward sweep, so on
//! exit they hold their entry values when they were recorded (always with
//! [`RecordPolicy::Conservative`]; with [`RecordPolicy::Tbr`] only the values
//! TBR found necessary are restored, others keep their end-of-forward
//! values). To serve several seeds from one tape, snapshot the argument
//! buffers after `foo_fwd`, and before each further `foo_rev` restore the
//! buffers *and globals* from the snapshot, the adjoint globals to zero
//! (plus any seed), and the stacks to their end-of-forward depth (the
//! interpreter and runtime stacks are plain LIFO buffers): a reverse sweep
//! changes globals (it restores overwritten values), and the next one must
//! see the forward sweep's end state again. The engine's `Tape` does this.
//!
//! # What is recorded
//!
//! One decision point, [`record`]'s plan: copy-on-def (every overwritten
//! value) or TBR; see that module. Control flow is recorded by predecessor
//! ids at every join (seed 000's general scheme, any CFG), except that
//! natural loops record one iteration count per execution; see [`sweep`] and
//! `control`.
//!
//! # ALLOCATABLE arrays
//!
//! An allocatable local and its adjoint are allocated together in both
//! sweeps (the forward sweep passes the adjoint to callees' sweeps). A
//! DEALLOCATE pushes the array's elements and bounds first; its reverse
//! allocates the array again, pops them, and allocates a zero adjoint. The
//! reverse of an ALLOCATE releases both. At the end of the forward sweep
//! each allocatable local hands its allocation state (elements, bounds and
//! a flag) over to the reverse sweep, so every reverse statement sees the
//! storage its forward statement saw, after any reallocation.
//! An ALLOCATABLE array passed by descriptor (a dummy the callee may
//! allocate) is the caller's: the callee's sweeps allocate, release and
//! restore it (and its adjoint, passed by descriptor too) in place, and a
//! call passing one is always reversed split, so the caller's sweeps see
//! the allocation the callee's sweeps leave.
//!
//! # Calls
//!
//! A call is reversed split by default: the forward sweep calls
//! the callee's forward sweep and the reverse sweep calls the callee's
//! reverse sweep, generated once per callee and activity pattern (which
//! arguments carry adjoints). A [`ReversalSchedule`] makes chosen call
//! sites joint instead (`checkpoint`): the forward sweep snapshots what the
//! callee may write and runs it plain, the reverse sweep restores the
//! snapshot and runs the callee's two sweeps; `!$AD NOCHECKPOINT` keeps a
//! call split. Loops marked `!$AD BINOMIAL-CKP` are outlined into a loop
//! procedure whose call is reversed by the binomial schedule (see
//! [`crate::ad::checkpoint`]). A callee's sweeps record every overwrite of a
//! parameter or global, so its reverse sweep gives the caller back the state
//! before the call. Every global active anywhere in the call tree carries
//! its adjoint into and out of every callee sweep, so a callee's activity
//! is analysed with all of them varied at entry and useful at return, also
//! those it never names (one written by a deeper callee from the callee's
//! own active values).

mod checkpoint;
pub use checkpoint::STATS_GLOBALS;
mod control;
mod emit;
mod increment;
mod normalize;
pub(crate) mod reach;
pub mod record;
mod store;
pub mod sweep;

use super::rules::StrongZero;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::cell::OnceCell;

use adjit_ir::{
    BlockId, Bound, CallArg, Dim, Global, GlobalId, Inst, Module, Proc, ProcId, Storage,
    Terminator, Type, Value, Var, VarId,
};

use self::control::ControlPlan;
use self::emit::Cursor;
use self::normalize::normalize;
use self::record::{conservative_plan, tbr_plan, PlanContext};
use self::sweep::{forward_sweep, is_nonlinear, reverse_sweep, CalleeSweeps, Layout, SweepContext};
use crate::ad::AdError;

/// Which overwritten values the forward sweep records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordPolicy {
    /// Copy-on-def: every overwritten value (seed 001 §3.2).
    Conservative,
    /// To-be-recorded analysis: only values a nonlinear partial or a
    /// subscript of the reverse sweep reads (seed 003).
    Tbr,
}

/// Options of the adjoint transform.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AdjointOptions {
    /// What the forward sweep records.
    pub record: RecordPolicy,
    /// Use activity analysis: only active variables get adjoints and only
    /// active statements are reversed. Off: every floating-point variable is
    /// active.
    pub activity: bool,
    /// Which products `partial * adjoint` are strong zeros (a zero factor
    /// makes the product 0 even where the other is infinite or NaN; see
    /// [`crate::ad::rules`]). Default: [`StrongZero::All`]: adjoints flow
    /// backward into every executed statement, so any infinite partial
    /// (even an infinite primal value `t` in `z = t*y`) must be guarded.
    pub strong_zero: StrongZero,
    /// Reverse the DO loops marked `!$AD BINOMIAL-CKP` by binomial
    /// checkpointing (default). Off: the directives are ignored and every
    /// loop records its whole tape.
    pub checkpoint: bool,
    /// The number of snapshots of every checkpointed loop, overriding the
    /// directives' counts (`None`: each directive's own).
    pub snapshots: Option<u32>,
    /// The automatic mode of checkpointing: bytes the tape of one marked
    /// loop may take. When set, the forward sweep of every loop marked
    /// `!$AD BINOMIAL-CKP` (with or without arguments) measures the bytes
    /// one trip records (running its first trip once more, with a counting
    /// copy of the trip's forward sweep that pushes nothing) and projects
    /// the loop's tape as bytes per trip × trips: within the budget the
    /// loop records every trip (the plain adjoint); over it the loop is
    /// checkpointed with the largest snapshot count `K` whose snapshots
    /// and control frames fit beside one trip's tape (at least 1, at most
    /// the trip count and `snapshots` when given; the directive's count is
    /// not used). `None`: the directives' schedule.
    pub tape_budget: Option<u64>,
    /// How calls are reversed, unless a link of the [`ReversalSchedule`]
    /// given to [`adjoint_scheduled`] says otherwise.
    pub reversal: Reversal,
    /// Store the results of library calls (`exp`, `log`, `sin`, ...) that the
    /// reverse sweep needs on the value stack instead of recomputing them
    /// (default; see `store.rs`). Off: the reverse sweep recomputes them, so
    /// an adjoint without loops pushes nothing (as the sweeps of an ADR
    /// block must, to be differentiated again).
    pub store_library_results: bool,
    /// Also make a copy of the combined adjoint that zeroes the adjoints of
    /// the inputs that are not outputs on entry ([`zeroing_copy`]), which
    /// the engine's `Adjoint::vjp_into` runs in place: repeated gradients
    /// skip clearing the caller's gradient, and the jit narrows the zeroing
    /// to what the reverse loop does not overwrite (product, n = 10^6: 30
    /// -> 21 M instructions per gradient), for about 1.7x the compile work
    /// (the copy of the reverse sweep is compiled too). Default off.
    pub in_place_zeroing: bool,
}

/// How a call is reversed (seed 004's schedules).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reversal {
    /// The callee records with the caller (its forward sweep runs in the
    /// caller's forward sweep) and reverses with it: the larger tape, no
    /// recomputation. Tapenade's `!$AD NOCHECKPOINT`, a strong link.
    Split,
    /// The callee runs plain in the caller's forward sweep, with a snapshot
    /// of the variables it may write; the caller's reverse sweep restores
    /// the snapshot, records the callee and reverses it at once: a smaller
    /// tape for one more run of the callee. A weak link.
    Joint,
}

/// The reversal of every call site: a default and per caller-callee links.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReversalSchedule {
    /// The reversal of calls no link names.
    pub default: Reversal,
    /// `(caller, callee, reversal)`: lower-case procedure names.
    pub links: Vec<(String, String, Reversal)>,
}

impl ReversalSchedule {
    /// The schedule with no links.
    pub fn uniform(default: Reversal) -> ReversalSchedule {
        ReversalSchedule {
            default,
            links: Vec::new(),
        }
    }

    /// The reversal of calls of `callee` from `caller`.
    pub fn of(&self, caller: &str, callee: &str) -> Reversal {
        self.links
            .iter()
            .rev()
            .find(|(a, b, _)| a.eq_ignore_ascii_case(caller) && b.eq_ignore_ascii_case(callee))
            .map_or(self.default, |&(_, _, r)| r)
    }
}

impl Default for AdjointOptions {
    fn default() -> Self {
        AdjointOptions {
            record: RecordPolicy::Tbr,
            activity: true,
            strong_zero: StrongZero::All,
            checkpoint: true,
            snapshots: None,
            tape_budget: None,
            reversal: Reversal::Split,
            store_library_results: true,
            in_place_zeroing: false,
        }
    }
}

/// The generated procedures of one adjoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdjointProcs {
    /// `foo_b`: forward sweep, reverse sweep, primal outputs restored.
    pub combined: ProcId,
    /// `foo_fwd`: the augmented forward sweep.
    pub forward: ProcId,
    /// `foo_rev`: the reverse sweep.
    pub reverse: ProcId,
    /// Per original parameter: true when its adjoint follows it in the
    /// signature of the three procedures.
    pub active_params: Vec<bool>,
}

/// Generates the adjoint of `proc` (see the module documentation).
///
/// `independents` and `dependents` are floating-point parameters or globals
/// of `proc`. The input module must pass the verifier
/// ([`AdError::InvalidIr`] otherwise); procedures with explicit stack
/// instructions are refused ([`AdError::Unsupported`]).
pub fn adjoint(
    module: &Module,
    proc: ProcId,
    independents: &[VarId],
    dependents: &[VarId],
    options: &AdjointOptions,
) -> Result<(Module, AdjointProcs), AdError> {
    let schedule = ReversalSchedule::uniform(options.reversal);
    adjoint_scheduled(module, proc, independents, dependents, options, &schedule)
}

/// [`adjoint`] with the reversal of each call site given by `schedule`
/// (which overrides `options.reversal`).
pub fn adjoint_scheduled(
    module: &Module,
    proc: ProcId,
    independents: &[VarId],
    dependents: &[VarId],
    options: &AdjointOptions,
    schedule: &ReversalSchedule,
) -> Result<(Module, AdjointProcs), AdError> {
    let source = module
        .procs
        .get(proc.index())
        .ok_or(AdError::UnknownProc(proc.0))?;
    for &var in independents.iter().chain(dependents) {
        check_interface_var(source, var)?;
    }
    if let Err(errors) = adjit_ir::verify::verify_module(module) {
        let first = errors.first().map(|e| e.to_string()).unwrap_or_default();
        return Err(AdError::InvalidIr(first));
    }
    if options.snapshots == Some(0) {
        return Err(AdError::BadOption(
            "the number of snapshots must be at least 1".into(),
        ));
    }
    // Marked loops become calls of loop procedures (the primal is
    // unchanged), reversed by the binomial schedule.
    let (outlined, loops) = if options.checkpoint {
        crate::ad::checkpoint::outline::outline_loops(module)?
    } else {
        (module.clone(), HashMap::default())
    };
    let module = &outlined;
    let mut generator = Generator {
        source: module,
        out: module.clone(),
        loops,
        split: None,
        schedule: schedule.clone(),
        joint: HashMap::default(),
        options: *options,
        callees: HashMap::default(),
        global_adjoints: HashMap::default(),
        active_globals: None,
    };
    let top = generator.generate(
        proc,
        Activation::Top {
            independents,
            dependents,
        },
    )?;
    let combined = generator.combined(proc, &top, dependents)?;
    Ok((
        generator.out,
        AdjointProcs {
            combined,
            forward: top.forward,
            reverse: top.reverse,
            active_params: top.layout.active_params.clone(),
        },
    ))
}

/// Adds to `module` a copy of the combined adjoint `combined` that sets the
/// adjoints at parameter positions `adjoints` (of `combined`'s parameters)
/// to zero on entry ([`Proc::zeroed_params`]) instead of incrementing what
/// the caller passes in them: for a caller that wants the gradient alone,
/// not added to anything, and need then not clear its gradient buffer
/// first. Only float array adjoints qualify: returns the copy and the
/// positions of those it zeroes, or `None` when none does.
///
/// The combined adjoint passes an input's adjoint to its forward sweep,
/// which never touches it, then to its reverse sweep, whose first access
/// is the increment the jit narrows the fill for (its `first_touch` pass
/// works within one procedure). So when the copy's only references to such
/// an adjoint are calls passing it whole, the last of them in a block that
/// runs once on every path to the return and the others to callees that
/// never reference that dummy, the zeroing moves into a copy of the last
/// callee (for that dummy), which the copy calls instead: the same zeros
/// reach the same code.
pub fn zeroing_copy(
    module: &mut Module,
    combined: ProcId,
    adjoints: &[usize],
) -> Option<(ProcId, Vec<usize>)> {
    let mut copy = module.procs.get(combined.index())?.clone();
    let positions: Vec<usize> = adjoints
        .iter()
        .copied()
        .filter(|&i| {
            copy.params.get(i).is_some_and(|&v| {
                let var = copy.var(v);
                var.is_array() && var.ty.is_float() && matches!(var.storage, Storage::Param(_))
            })
        })
        .collect();
    if positions.is_empty() {
        return None;
    }
    let zeroed: Vec<VarId> = positions.iter().map(|&i| copy.params[i]).collect();
    // Per call moved to a zeroing callee: (block, position, dummies).
    let mut moved: Vec<(usize, usize, Vec<VarId>)> = Vec::new();
    for &z in &zeroed {
        match last_call_passing(module, &copy, z) {
            Some((b, pos, dummy)) => match moved.iter_mut().find(|m| (m.0, m.1) == (b, pos)) {
                Some(m) => m.2.push(dummy),
                None => moved.push((b, pos, vec![dummy])),
            },
            None => copy.zeroed_params.push(z),
        }
    }
    for (b, pos, dummies) in moved {
        let v = copy.blocks[b].insts[pos];
        let Inst::Call(callee, _) = copy.inst(v).kind else {
            continue;
        };
        let mut sweep = module.proc(callee).clone();
        sweep.name = format!("{}_zeroed", sweep.name);
        sweep.zeroed_params = dummies;
        let id = module.add_proc(sweep);
        if let Inst::Call(target, _) = &mut copy.insts[v.index()].kind {
            *target = id;
        }
    }
    copy.name = format!("{}_zeroed", copy.name);
    Some((module.add_proc(copy), positions))
}

/// The call of `proc` that may take over the zeroing of its parameter `z`
/// (see [`zeroing_copy`]): its block, its position there and the callee's
/// dummy for `z`.
fn last_call_passing(module: &Module, proc: &Proc, z: VarId) -> Option<(usize, usize, VarId)> {
    let mut calls = Vec::new();
    for (b, block) in proc.blocks.iter().enumerate() {
        for (pos, &v) in block.insts.iter().enumerate() {
            let inst = &proc.inst(v).kind;
            match inst {
                Inst::Call(callee, args) => {
                    let passed: Vec<usize> = args
                        .iter()
                        .enumerate()
                        .filter(|(_, a)| matches!(a, CallArg::Var(w) if *w == z))
                        .map(|(k, _)| k)
                        .collect();
                    let [k] = passed[..] else {
                        if inst.touches_contents(z) {
                            return None;
                        }
                        continue;
                    };
                    let dummy = *module.proc(*callee).params.get(k)?;
                    calls.push((b, pos, *callee, dummy));
                }
                other if other.touches_contents(z) => return None,
                _ => {}
            }
        }
    }
    let &(b, pos, _, dummy) = calls.last()?;
    let block = BlockId(b as u32);
    let untouched = |&(cb, _, callee, d): &(usize, usize, ProcId, VarId)| {
        cb == b
            && module.proc(callee).blocks.iter().all(|blk| {
                blk.insts
                    .iter()
                    .all(|&v| !module.proc(callee).inst(v).kind.touches_contents(d))
            })
    };
    let others = &calls[..calls.len() - 1];
    (others.iter().all(untouched) && !proc.on_cycle(block) && proc.on_every_return_path(block))
        .then_some((b, pos, dummy))
}

/// The variable of `proc` that names global `id` (described by `global`),
/// added when there is none.
fn global_var(proc: &mut Proc, global: &Global, id: GlobalId) -> VarId {
    if let Some(i) = proc.vars.iter().position(|v| {
        v.storage == Storage::Global(id, 0)
            && v.dims.len() == global.dims.len()
            && v.dims.iter().zip(&global.dims).all(|(d, &(lo, hi))| {
                d.lower == Bound::Const(lo) && d.upper == Some(Bound::Const(hi))
            })
    }) {
        return VarId(i as u32);
    }
    proc.vars.push(Var {
        name: global.name.replace("::", "_"),
        ty: global.ty,
        dims: global
            .dims
            .iter()
            .map(|&(lo, hi)| Dim {
                lower: Bound::Const(lo),
                upper: Some(Bound::Const(hi)),
            })
            .collect(),
        char_len: None,
        storage: Storage::Global(id, 0),
    });
    VarId(proc.vars.len() as u32 - 1)
}

/// An independent or dependent must be a float parameter or global.
fn check_interface_var(proc: &Proc, var: VarId) -> Result<(), AdError> {
    let bad = |reason: &str| AdError::BadVariable {
        proc: proc.name.clone(),
        var: proc
            .vars
            .get(var.index())
            .map_or_else(|| var.to_string(), |v| v.name.clone()),
        reason: reason.into(),
    };
    let v = proc
        .vars
        .get(var.index())
        .ok_or_else(|| bad("does not exist"))?;
    if !v.ty.is_float() {
        return Err(bad("is not floating-point"));
    }
    if v.storage == Storage::Local {
        return Err(bad("is a local variable, not a parameter or global"));
    }
    Ok(())
}

/// How a procedure is being differentiated.
enum Activation<'a> {
    /// The procedure the user asked for.
    Top {
        independents: &'a [VarId],
        dependents: &'a [VarId],
    },
    /// A callee, with the activity pattern of its parameters at a call site.
    Callee { active: &'a [bool] },
}

/// The sweeps generated for one procedure.
struct Generated {
    forward: ProcId,
    reverse: ProcId,
    layout: Layout,
}

/// Generates sweeps, recursively for callees, into the output module.
struct Generator<'m> {
    source: &'m Module,
    out: Module,
    options: AdjointOptions,
    /// Callee sweeps by (callee, activity pattern).
    callees: HashMap<(ProcId, Vec<bool>), CalleeSweeps>,
    /// The adjoint global of each active global.
    global_adjoints: HashMap<GlobalId, GlobalId>,
    /// With activity analysis: the globals active anywhere in the call tree
    /// of the top procedure (known once the top procedure is analysed).
    active_globals: Option<HashSet<GlobalId>>,
    /// The loop procedures of the loops outlined for checkpointing.
    loops: HashMap<ProcId, crate::ad::checkpoint::outline::OutlinedLoop>,
    /// The schedule's split procedure, once generated.
    split: Option<ProcId>,
    /// The reversal of each call site.
    schedule: ReversalSchedule,
    /// Joint sweeps by (callee, activity pattern).
    joint: HashMap<(ProcId, Vec<bool>), CalleeSweeps>,
}

impl Generator<'_> {
    /// A new procedure slot in the output module with a unique name.
    fn reserve(&mut self, base: &str) -> ProcId {
        let mut name = base.to_string();
        let mut n = 1;
        while self.out.find_proc(&name).is_some() {
            name = format!("{base}{n}");
            n += 1;
        }
        self.out.add_proc(Proc::new(name))
    }

    /// The adjoint global of `g` (created on first use).
    fn global_adjoint(&mut self, g: GlobalId) -> GlobalId {
        if let Some(&a) = self.global_adjoints.get(&g) {
            return a;
        }
        let mut global = self.source.globals[g.index()].clone();
        global.name = format!("{}_b", global.name);
        global.init.clear();
        let a = self.out.add_global(global);
        self.global_adjoints.insert(g, a);
        a
    }

    /// Generates the forward and reverse sweeps of `proc`.
    fn generate(&mut self, proc: ProcId, how: Activation<'_>) -> Result<Generated, AdError> {
        let original = self
            .source
            .procs
            .get(proc.index())
            .ok_or(AdError::UnknownProc(proc.0))?;
        let norm = normalize(original)?;
        let has_adjoint = self.adjoint_set(proc, &norm.proc, &how)?;
        let has_adjoint_fn = |v: VarId| has_adjoint.contains(&v);
        let layout = {
            let mut globals = |g| self.global_adjoint(g);
            Layout::new(&norm.proc, &has_adjoint_fn, &mut globals)
        };
        let (forward, reverse) = match &how {
            Activation::Top { .. } => (
                self.reserve(&format!("{}_fwd", original.name)),
                self.reserve(&format!("{}_rev", original.name)),
            ),
            Activation::Callee { active } => {
                let forward = self.reserve(&format!("{}_fwd", original.name));
                let reverse = self.reserve(&format!("{}_rev", original.name));
                self.callees.insert(
                    (proc, active.to_vec()),
                    CalleeSweeps {
                        forward,
                        reverse,
                        active: active.to_vec(),
                    },
                );
                (forward, reverse)
            }
        };
        let calls = self.callee_sweeps(&norm.proc, &layout)?;
        // Asked for every operand of every statement by the plan and both
        // sweeps: each value's answer is computed once.
        let nonlinear_memo: Vec<OnceCell<bool>> = (0..norm.proc.insts.len())
            .map(|_| OnceCell::new())
            .collect();
        let nonlinear =
            |v: Value| *nonlinear_memo[v.index()].get_or_init(|| is_nonlinear(&norm.proc, v));
        let plan_ctx = PlanContext {
            norm: &norm,
            has_adjoint: &has_adjoint_fn,
            nonlinear: &nonlinear,
            restore_nonlocals: matches!(how, Activation::Callee { .. }),
            store_library_results: self.options.store_library_results,
            recomputed: PlanContext::recomputed_memo(&norm.proc),
        };
        let plan = match self.options.record {
            RecordPolicy::Conservative => conservative_plan(&plan_ctx),
            RecordPolicy::Tbr => tbr_plan(&plan_ctx),
        };
        let reachable = reach::reachable_blocks(&norm.proc);
        let edges = reach::incoming_edges(&norm.proc, &reachable);
        let mut layout = layout;
        let control = ControlPlan::new(&norm.proc, &reachable, &edges, &mut layout.vars);
        let sc = SweepContext {
            control: &control,
            plan_ctx,
            plan: &plan,
            layout: &layout,
            calls: &calls,
            reachable: &reachable,
            strong_zero: self.options.strong_zero,
        };
        let fwd_name = self.out.proc(forward).name.clone();
        let rev_name = self.out.proc(reverse).name.clone();
        self.out.procs[forward.index()] = forward_sweep(&sc, fwd_name);
        self.out.procs[reverse.index()] = reverse_sweep(&sc, rev_name);
        Ok(Generated {
            forward,
            reverse,
            layout,
        })
    }

    /// The variables of `norm` that get an adjoint.
    fn adjoint_set(
        &mut self,
        proc: ProcId,
        norm: &Proc,
        how: &Activation<'_>,
    ) -> Result<HashSet<VarId>, AdError> {
        let original = self.source.proc(proc);
        let floats = |i: usize| norm.vars[i].ty.is_float();
        let mut set: HashSet<VarId> = HashSet::default();
        let (independents, dependents): (Vec<VarId>, Vec<VarId>) = match how {
            Activation::Top {
                independents,
                dependents,
            } => (independents.to_vec(), dependents.to_vec()),
            Activation::Callee { active } => {
                let params: Vec<VarId> = original
                    .params
                    .iter()
                    .zip(active.iter())
                    .filter(|(_, &a)| a)
                    .map(|(&p, _)| p)
                    .collect();
                (params.clone(), params)
            }
        };
        let (mut independents, mut dependents) = (independents, dependents);
        if let Some(active_globals) = &self.active_globals {
            // Globals active anywhere in the call tree carry their adjoint
            // into and out of every callee.
            for (i, var) in norm.vars.iter().enumerate().take(original.vars.len()) {
                if let Storage::Global(g, _) = var.storage {
                    if var.ty.is_float() && active_globals.contains(&g) {
                        independents.push(VarId(i as u32));
                        dependents.push(VarId(i as u32));
                    }
                }
            }
        }
        // The callee's context includes every active global, named in it or
        // not: one written by a deeper callee must stay useful here.
        let mut context_globals: Vec<GlobalId> =
            self.active_globals.iter().flatten().copied().collect();
        context_globals.sort();
        let analysed = self.options.activity.then(|| {
            crate::ad::activity::analyze_with_globals(
                self.source,
                proc,
                &independents,
                &dependents,
                &context_globals,
            )
        });
        if let (Some(activity), None, Activation::Top { .. }) =
            (&analysed, &self.active_globals, how)
        {
            let globals = (0..self.source.globals.len())
                .map(|g| GlobalId(g as u32))
                .filter(|&g| activity.is_global_active(g))
                .collect();
            self.active_globals = Some(globals);
        }
        for i in 0..norm.vars.len() {
            let id = VarId(i as u32);
            if !floats(i) {
                continue;
            }
            let is_new_temp = i >= original.vars.len();
            let active = match &analysed {
                None => true,
                Some(activity) => is_new_temp || activity.is_active(id),
            };
            if active || independents.contains(&id) || dependents.contains(&id) {
                set.insert(id);
            }
        }
        // A callee's parameter activity is fixed by the call site.
        if let Activation::Callee { active } = how {
            for (&p, &a) in original.params.iter().zip(active.iter()) {
                if a {
                    set.insert(p);
                } else {
                    set.remove(&p);
                }
            }
        }
        Ok(set)
    }

    /// The callee sweeps of every call of `norm`, generating them on first
    /// use.
    fn callee_sweeps(
        &mut self,
        norm: &Proc,
        layout: &Layout,
    ) -> Result<HashMap<Value, CalleeSweeps>, AdError> {
        let mut calls = HashMap::default();
        for block in &norm.blocks {
            for &v in &block.insts {
                let Inst::Call(callee, args) = &norm.inst(v).kind else {
                    continue;
                };
                let target = self
                    .source
                    .procs
                    .get(callee.index())
                    .ok_or(AdError::UnknownProc(callee.0))?;
                let active: Vec<bool> = args
                    .iter()
                    .enumerate()
                    .map(|(i, arg)| {
                        let param_float = target
                            .params
                            .get(i)
                            .is_some_and(|&p| target.var(p).ty.is_float());
                        let arg_var = match arg {
                            CallArg::Var(var)
                            | CallArg::Elem(var, _)
                            | CallArg::Slice(var, _, _) => Some(*var),
                            CallArg::Value(_) => None,
                        };
                        param_float && arg_var.is_some_and(|var| layout.adjoint.contains_key(&var))
                    })
                    .collect();
                let key = (*callee, active.clone());
                let sweeps = match self.callees.get(&key) {
                    Some(s) => s.clone(),
                    None if self.loops.contains_key(callee) => {
                        let s = self.checkpoint_sweeps(*callee, &active)?;
                        self.callees.insert(key, s.clone());
                        s
                    }
                    None => {
                        let g = self.generate(*callee, Activation::Callee { active: &active })?;
                        CalleeSweeps {
                            forward: g.forward,
                            reverse: g.reverse,
                            active: active.clone(),
                        }
                    }
                };
                let joint = !self.loops.contains_key(callee)
                    && !marked_split(norm, v)
                    && !passes_characters(norm, v)
                    && !target
                        .params
                        .iter()
                        .any(|&p| matches!(target.var(p).storage, Storage::AllocatableParam(_)))
                    && self.schedule.of(&norm.name, &target.name) == Reversal::Joint;
                let sweeps = match joint {
                    true => self.joint_sweeps(*callee, &active, &sweeps)?,
                    false => sweeps,
                };
                calls.insert(v, sweeps);
            }
        }
        Ok(calls)
    }

    /// Generates `foo_b`: zero the adjoints of the active globals that are
    /// not dependents, forward sweep, save the outputs the reverse sweep
    /// changes (the values it restores for its own use), reverse sweep,
    /// restore them. The forward sweep leaves every parameter and global
    /// with its primal output value, so the primal is never run again; only
    /// what the reverse sweep overwrites travels through the stack (nothing
    /// for Griewank, the product or Bratu).
    fn combined(
        &mut self,
        proc: ProcId,
        top: &Generated,
        dependents: &[VarId],
    ) -> Result<ProcId, AdError> {
        let name = format!("{}_b", self.source.proc(proc).name);
        let id = self.reserve(&name);
        let name = self.out.proc(id).name.clone();
        let mut combined = top.layout.new_proc(name, self.source.proc(proc).span);
        let seeded: HashSet<GlobalId> = dependents
            .iter()
            .filter_map(
                |&d| match self.source.proc(proc).vars.get(d.index())?.storage {
                    Storage::Global(g, _) => Some(g),
                    _ => None,
                },
            )
            .collect();
        let mut unseeded: Vec<(GlobalId, GlobalId)> = self
            .global_adjoints
            .iter()
            .filter(|(g, _)| !seeded.contains(g))
            .map(|(&g, &a)| (g, a))
            .collect();
        unseeded.sort();
        let to_zero: Vec<VarId> = unseeded
            .into_iter()
            .map(|(_, a)| global_var(&mut combined, &self.out.globals[a.index()], a))
            .collect();
        let restored = self.overwritten_by(proc, top.reverse, &top.layout, &mut combined);
        let sized = |v: &VarId| combined.var(*v).dims.iter().all(|d| d.upper.is_some());
        if !restored.iter().all(sized) {
            // An assumed-size output cannot be copied into a local.
            return self.combined_by_rerun(proc, top, id, combined, to_zero);
        }
        // The outputs are kept in locals of the same shape (not on the
        // stacks, whose top the reverse sweep pops).
        let copies: Vec<(VarId, VarId)> = restored
            .iter()
            .map(|&var| {
                let mut copy = combined.var(var).clone();
                copy.name = format!("_ad_out_{}", copy.name);
                copy.storage = Storage::Local;
                (var, combined.add_var(copy))
            })
            .collect();
        let mut c = Cursor::new(&mut combined, Proc::ENTRY);
        // An adjoint global left over from an earlier call must not leak
        // into this one: only the dependents carry a seed in.
        for var in to_zero {
            c.zero_var(var);
        }
        let all: Vec<CallArg> = top.layout.params.iter().map(|&p| CallArg::Var(p)).collect();
        c.ins(Inst::Call(top.forward, all.clone()), None);
        for &(var, copy) in &copies {
            c.copy_var(copy, var);
        }
        c.ins(Inst::Call(top.reverse, all), None);
        for &(var, copy) in &copies {
            c.copy_var(var, copy);
        }
        c.terminate(Terminator::Return);
        self.out.procs[id.index()] = combined;
        Ok(id)
    }

    /// `foo_b` for outputs that cannot be copied (assumed size): save the
    /// entry values of every parameter and global the forward sweep may
    /// write, forward sweep, reverse sweep, restore them, run the primal.
    fn combined_by_rerun(
        &mut self,
        proc: ProcId,
        top: &Generated,
        id: ProcId,
        mut combined: Proc,
        to_zero: Vec<VarId>,
    ) -> Result<ProcId, AdError> {
        let written = self.overwritten_by(proc, top.forward, &top.layout, &mut combined);
        let mut c = Cursor::new(&mut combined, Proc::ENTRY);
        for var in to_zero {
            c.zero_var(var);
        }
        for &var in &written {
            c.save_var(var);
        }
        let all: Vec<CallArg> = top.layout.params.iter().map(|&p| CallArg::Var(p)).collect();
        c.ins(Inst::Call(top.forward, all.clone()), None);
        c.ins(Inst::Call(top.reverse, all), None);
        for &var in written.iter().rev() {
            c.restore_var(var);
        }
        let primal: Vec<CallArg> = self
            .source
            .proc(proc)
            .params
            .iter()
            .map(|&p| CallArg::Var(p))
            .collect();
        c.ins(Inst::Call(proc, primal), None);
        c.terminate(Terminator::Return);
        self.out.procs[id.index()] = combined;
        Ok(id)
    }

    /// The parameters and globals (variables of `combined`, added when
    /// missing) that the sweep `sweep` of `proc` may overwrite: those it
    /// stores into or passes to callee sweeps, and when it calls any, every
    /// global the call tree of `proc` writes (callee sweeps record and give
    /// back the globals they overwrite, named in `proc` or not).
    fn overwritten_by(
        &self,
        proc: ProcId,
        sweep: ProcId,
        layout: &Layout,
        combined: &mut Proc,
    ) -> Vec<VarId> {
        let (mut vars, calls) = written_nonlocals(self.out.proc(sweep), layout);
        if calls {
            for g in self.written_globals(proc) {
                let var = global_var(combined, &self.source.globals[g.index()], g);
                if !vars.contains(&var) {
                    vars.push(var);
                }
            }
        }
        vars
    }

    /// The non-character globals that `proc` and the procedures it calls,
    /// directly or not, may write.
    fn written_globals(&self, proc: ProcId) -> Vec<GlobalId> {
        let mut seen: HashSet<ProcId> = HashSet::default();
        let mut work = vec![proc];
        let mut globals: HashSet<GlobalId> = HashSet::default();
        while let Some(p) = work.pop() {
            if !seen.insert(p) {
                continue;
            }
            let Some(body) = self.source.procs.get(p.index()) else {
                continue;
            };
            let mut note = |var: &VarId| {
                if let Storage::Global(g, _) = body.var(*var).storage {
                    globals.insert(g);
                }
            };
            for inst in &body.insts {
                match &inst.kind {
                    Inst::Store(var, _) | Inst::StoreElem(var, ..) => note(var),
                    Inst::Call(callee, args) => {
                        work.push(*callee);
                        for arg in args {
                            if let CallArg::Var(var)
                            | CallArg::Elem(var, _)
                            | CallArg::Slice(var, _, _) = arg
                            {
                                note(var);
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        let mut out: Vec<GlobalId> = globals
            .into_iter()
            .filter(|g| self.source.globals[g.index()].ty != Type::Char)
            .collect();
        out.sort();
        out
    }
}

/// True when the call `v` of `proc` is on a line marked `!$AD
/// NOCHECKPOINT` (split whatever the schedule).
fn marked_split(proc: &Proc, v: Value) -> bool {
    let at = proc.inst(v).span;
    proc.split_calls
        .iter()
        .any(|s| s.file == at.file && s.line == at.line)
}

/// True when the call `v` passes character data: the caller's reverse
/// sweep does not restore character variables, so a joint reversal (which
/// runs the callee again there) would see them changed; such calls are
/// reversed split.
fn passes_characters(proc: &Proc, v: Value) -> bool {
    let Inst::Call(_, args) = &proc.inst(v).kind else {
        return false;
    };
    args.iter().any(|a| match a {
        CallArg::Var(x) | CallArg::Elem(x, _) | CallArg::Slice(x, _, _) => {
            proc.var(*x).ty == Type::Char
        }
        CallArg::Value(_) => false,
    })
}

/// The primal parameters and globals (variables of the sweeps' `layout`)
/// that the sweep `rev` may overwrite: targets of its stores, and,
/// for the callee sweeps it calls, their primal arguments and every
/// global it names; and whether it calls any (then globals it does not name
/// may change too). Adjoint variables and characters are left out.
fn written_nonlocals(rev: &Proc, layout: &Layout) -> (Vec<VarId>, bool) {
    let adjoints: HashSet<VarId> = layout.adjoint.values().copied().collect();
    let mut written: HashSet<VarId> = HashSet::default();
    let mut any_call = false;
    for block in &rev.blocks {
        for &v in &block.insts {
            match &rev.inst(v).kind {
                Inst::Store(var, _) | Inst::StoreElem(var, ..) => {
                    written.insert(*var);
                }
                Inst::Call(_, args) => {
                    any_call = true;
                    for arg in args {
                        if let CallArg::Var(var)
                        | CallArg::Elem(var, _)
                        | CallArg::Slice(var, _, _) = arg
                        {
                            written.insert(*var);
                        }
                    }
                }
                _ => {}
            }
        }
    }
    let mut out: Vec<VarId> = (0..layout.vars.len())
        .map(|i| VarId(i as u32))
        .filter(|&v| {
            let var = &layout.vars[v.index()];
            let global = matches!(var.storage, Storage::Global(..));
            // ALLOCATABLE arrays are private to the activation too.
            !matches!(var.storage, Storage::Local | Storage::Allocatable)
                && var.ty != Type::Char
                && !adjoints.contains(&v)
                && (written.contains(&v) || (any_call && global))
        })
        .collect();
    out.sort();
    (out, any_call)
}

#[cfg(test)]
mod tests;
