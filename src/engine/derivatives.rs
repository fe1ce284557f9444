//! Derivative handles: tangent (forward mode), adjoint (reverse mode) and
//! central finite differences, all producing [`Jacobian`]s over named
//! selections of inputs and outputs.

use super::state::{GlobalState, Held};
use super::{Args, Engine, Error, ErrorKind, Executor, Procedure, Program, Session, SessionMark};
use crate::ad::adjoint::{
    adjoint_scheduled, zeroing_copy, AdjointOptions, AdjointProcs, ReversalSchedule, STATS_GLOBALS,
};
use crate::ad::tangent::{tangent, TangentOptions};
use adjit_ir::Buffer;
use adjit_ir::{GlobalId, Module, Proc, ProcId, Type, VarId};
use adjit_jit::runtime::Runtime;
use std::sync::{Arc, Mutex};

mod second;
mod workspace;
pub use second::{Hessian, HessianMatrix, SecondDirectional};
pub use workspace::Workspace;

/// A named argument, optionally one element of it: `c`, `f(3)`, `a(1,2)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Selection {
    /// The argument name (lower case).
    pub name: String,
    /// Fortran subscripts of one element (`None`: every element).
    pub subscripts: Option<Vec<i64>>,
}

impl Selection {
    /// Parses `name` or `name(i, j, ...)`; a component of a derived-type
    /// argument is named `p%x`, the storage of an ALLOCATABLE component of
    /// an array of structures `b%u.data` (as [`Args::names`] lists it).
    ///
    /// [`Args::names`]: crate::engine::Args::names
    pub fn parse(text: &str) -> Result<Selection, Error> {
        let t = text.trim();
        let bad = || {
            Error::new(
                ErrorKind::Usage,
                format!("cannot read `{text}` as NAME or NAME(i,...)"),
            )
        };
        match t.find('(') {
            None => {
                if t.is_empty()
                    || !t
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '%' | '.'))
                {
                    return Err(bad());
                }
                Ok(Selection {
                    name: t.to_ascii_lowercase(),
                    subscripts: None,
                })
            }
            Some(open) => {
                let inner = t[open + 1..].strip_suffix(')').ok_or_else(bad)?;
                let subs: Result<Vec<i64>, _> =
                    inner.split(',').map(|s| s.trim().parse::<i64>()).collect();
                Ok(Selection {
                    name: t[..open].trim().to_ascii_lowercase(),
                    subscripts: Some(subs.map_err(|_| bad())?),
                })
            }
        }
    }

    /// Parses a comma-separated list, commas inside parentheses excluded:
    /// `x,f(1,2),y`.
    pub fn parse_list(text: &str) -> Result<Vec<Selection>, Error> {
        let mut out = Vec::new();
        let mut depth = 0;
        let mut start = 0;
        for (i, c) in text.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                ',' if depth == 0 => {
                    out.push(Selection::parse(&text[start..i])?);
                    start = i + 1;
                }
                _ => {}
            }
        }
        out.push(Selection::parse(&text[start..])?);
        Ok(out)
    }
}

/// One scalar element of an argument, resolved against an argument list.
#[derive(Clone, Copy, Debug)]
struct Element {
    param: usize,
    offset: usize,
}

/// Expands selections into elements (whole arrays become all their
/// elements in column-major order). Cheap: labels are made only when a
/// [`Jacobian`] needs them.
fn elements(args: &Args, selections: &[Selection]) -> Result<Vec<Element>, Error> {
    let mut out = Vec::new();
    for s in selections {
        let param = args.index_of(&s.name)?;
        if !args.ty(param).is_float() {
            return Err(Error::new(
                ErrorKind::Usage,
                format!(
                    "`{}` is {}, not a floating-point variable: it has no derivative",
                    s.name,
                    args.describe(param)
                ),
            ));
        }
        match &s.subscripts {
            Some(subs) => out.push(Element {
                param,
                offset: args.offset(param, subs)?,
            }),
            None if !args.is_array(param) => out.push(Element { param, offset: 0 }),
            None => {
                let n = args.get(&s.name)?.len().min(args.declared_len(param));
                out.extend((0..n).map(|offset| Element { param, offset }));
            }
        }
    }
    Ok(out)
}

/// The Fortran name of an element: `c`, `f(3)`, `a(1,2)`.
fn label(args: &Args, e: Element) -> String {
    let name = &args.names()[e.param];
    if !args.is_array(e.param) {
        return name.clone();
    }
    let mut rest = e.offset as i64;
    let subs: Vec<String> = args
        .bounds(e.param)
        .iter()
        .map(|&(lo, hi)| {
            let extent = (hi - lo + 1).max(1);
            let s = lo + rest % extent;
            rest /= extent;
            s.to_string()
        })
        .collect();
    format!("{name}({})", subs.join(","))
}

/// The number of scalar elements a list of selections covers.
pub fn element_count(args: &Args, selections: &[Selection]) -> Result<usize, Error> {
    Ok(elements(args, selections)?.len())
}

/// A dense Jacobian: rows are output elements, columns input elements.
#[derive(Clone, Debug, PartialEq)]
pub struct Jacobian {
    /// Labels of the rows (`f(1)`, ...).
    pub of: Vec<String>,
    /// Labels of the columns (`x(1)`, ...).
    pub wrt: Vec<String>,
    /// Row-major entries, `of.len() * wrt.len()` of them.
    pub matrix: Vec<f64>,
    /// The primal values of the outputs at the point.
    pub values: Vec<f64>,
    /// What the forward sweep recorded, for a Jacobian made by reverse
    /// sweeps.
    pub tape: Option<AdjointStats>,
}

impl Jacobian {
    /// A zero Jacobian; an error instead of an allocation abort when its
    /// `rows x cols` entries cannot be had (found by the fuzzer: a
    /// 38 TB matrix aborted the process).
    fn zeros(args: &Args, of: &[Element], wrt: &[Element]) -> Result<Jacobian, Error> {
        let too_big = || {
            Error::new(
                ErrorKind::Usage,
                format!(
                    "a Jacobian of {} x {} entries is too large to allocate",
                    of.len(),
                    wrt.len()
                ),
            )
        };
        let n = of.len().checked_mul(wrt.len()).ok_or_else(too_big)?;
        let mut matrix = Vec::new();
        matrix.try_reserve_exact(n).map_err(|_| too_big())?;
        matrix.resize(n, 0.0);
        Ok(Jacobian {
            of: of.iter().map(|&e| label(args, e)).collect(),
            wrt: wrt.iter().map(|&e| label(args, e)).collect(),
            matrix,
            values: vec![0.0; of.len()],
            tape: None,
        })
    }
    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.of.len()
    }
    /// Number of columns.
    pub fn cols(&self) -> usize {
        self.wrt.len()
    }
    /// Entry `(row, col)`.
    pub fn get(&self, row: usize, col: usize) -> f64 {
        self.matrix[row * self.wrt.len() + col]
    }
    fn set(&mut self, row: usize, col: usize, v: f64) {
        let cols = self.wrt.len();
        self.matrix[row * cols + col] = v;
    }
}

/// Maps the parameters of a derivative procedure back to the primal's: for
/// each derivative parameter, either primal parameter `i` or the derivative
/// companion of primal parameter `i` (named `<name><suffix>`).
#[derive(Clone, Debug)]
struct ParamMap {
    /// For each derivative-procedure parameter: `(primal index, is companion)`.
    slots: Vec<(usize, bool)>,
}

impl ParamMap {
    fn new(primal: &Proc, derived: &Proc, suffix: &str) -> Result<ParamMap, Error> {
        let mut slots = Vec::new();
        let mut next = 0usize;
        for &p in &derived.params {
            let name = &derived.var(p).name;
            if next < primal.params.len() && *name == primal.var(primal.params[next]).name {
                slots.push((next, false));
                next += 1;
            } else if next > 0
                && *name == format!("{}{suffix}", primal.var(primal.params[next - 1]).name)
            {
                slots.push((next - 1, true));
            } else {
                return Err(Error::new(
                    ErrorKind::Internal,
                    format!("derivative parameter `{name}` of `{}` does not follow the naming convention", derived.name),
                ));
            }
        }
        Ok(ParamMap { slots })
    }

    fn companion(&self, primal: usize) -> Option<usize> {
        self.slots.iter().position(|&s| s == (primal, true))
    }

    fn primal_slot(&self, primal: usize) -> Option<usize> {
        self.slots.iter().position(|&s| s == (primal, false))
    }

    /// Buffers for the derivative procedure: primal values copied, companions
    /// zeroed with `width` entries per primal element.
    fn buffers(&self, args: &Args, width: usize) -> Vec<Buffer> {
        self.slots
            .iter()
            .map(|&(i, companion)| {
                let b = &args.buffers()[i];
                if companion {
                    Buffer::zeros(b.ty(), b.len() * width)
                } else {
                    b.clone()
                }
            })
            .collect()
    }
}

fn var_ids(proc: &Proc, args: &Args, sels: &[Selection]) -> Result<Vec<VarId>, Error> {
    let mut out: Vec<VarId> = Vec::new();
    for s in sels {
        let v = proc.params[args.index_of(&s.name)?];
        if !out.contains(&v) {
            out.push(v);
        }
    }
    Ok(out)
}

/// The error of a gradient asked for `n != 1` output elements.
fn not_one_output(n: usize) -> Error {
    Error::new(
        ErrorKind::Usage,
        format!("a gradient needs one scalar output; `--of` selects {n} elements"),
    )
}

/// True when `root` or a procedure it calls pushes on a runtime stack.
fn pushes(module: &Module, root: ProcId) -> bool {
    let mut seen = std::collections::HashSet::new();
    let mut work = vec![root];
    while let Some(p) = work.pop() {
        if !seen.insert(p) {
            continue;
        }
        for inst in &module.proc(p).insts {
            match &inst.kind {
                adjit_ir::Inst::Push(..) => return true,
                adjit_ir::Inst::Call(callee, _) => work.push(*callee),
                _ => {}
            }
        }
    }
    false
}

impl Engine {
    /// A transform's refusal of a construct, located in the source
    /// (`file:line:col: ...`, a compile error); other failures as
    /// [`ad_error`].
    fn located_ad_error(&self, e: crate::ad::AdError) -> Error {
        match &e {
            crate::ad::AdError::Unsupported { span, .. } if span.line > 0 => Error::new(
                ErrorKind::Compile,
                format!("{}: error: {e}", self.sources.location(*span)),
            ),
            _ => ad_error(e),
        }
    }
}

fn ad_error(e: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::Internal, format!("differentiation failed: {e}"))
}

/// A compiled tangent (forward-mode) procedure for fixed outputs and inputs.
pub struct Tangent {
    program: Program,
    primal: ProcId,
    proc: ProcId,
    /// The program's globals a tangent sweep may write.
    writes: Vec<GlobalId>,
    exec: Executor,
    map: ParamMap,
    /// Tells this handle's [`Workspace`]s from another's (see
    /// [`workspace::handle_id`]).
    id: u64,
    directions: usize,
    of: Vec<Selection>,
    wrt: Vec<Selection>,
}

/// A compiled adjoint (reverse-mode) procedure for fixed outputs and inputs.
pub struct Adjoint {
    program: Program,
    primal: ProcId,
    procs: AdjointProcs,
    /// The copy of the combined adjoint that zeroes the adjoints of the
    /// inputs that are not outputs on entry, with their parameter slots:
    /// what [`Adjoint::vjp_into`] runs in place, so that it need not clear
    /// the caller's gradient first.
    zeroing: Option<(ProcId, Vec<usize>)>,
    /// The program's globals a reverse sweep may write.
    reverse_writes: Vec<GlobalId>,
    /// True when the reverse sweep records as well as pops (checkpointed
    /// loops, joint calls): it overwrites the forward sweep's tape, so a
    /// further reverse sweep needs the forward sweep again.
    reverse_records: bool,
    exec: Executor,
    map: ParamMap,
    /// Tells this handle's [`Workspace`]s from another's (see
    /// [`workspace::handle_id`]).
    id: u64,
    of: Vec<Selection>,
    wrt: Vec<Selection>,
    /// Runtimes of finished tapes, kept with their mapped stack segments so
    /// that the next gradient does not map and fault in a new tape. Boxed
    /// as a session holds them: taking one allocates nothing.
    #[allow(clippy::vec_box)]
    spare_runtimes: Mutex<Vec<Box<Runtime>>>,
}

/// What one forward sweep recorded: entries left on each stack for the
/// reverse sweep.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AdjointStats {
    /// Entries on the value stack.
    pub values: u64,
    /// Entries on the integer stack.
    pub integers: u64,
    /// Entries on the control stack.
    pub control: u64,
    /// Bytes of the tape held in a memory-mapped temporary file because the
    /// RAM budget was exceeded.
    pub spilled_bytes: u64,
    /// Peak bytes on the three stacks over the forward sweep and the reverse
    /// sweeps run so far (the sum of each stack's peak; snapshots of
    /// checkpointed loops included). Exact in the interpreter; compiled
    /// code samples a stack's depth when it changes segment and at the end
    /// of every sweep.
    pub tape_peak_bytes: u64,
    /// Bytes of stack memory mapped by the sweeps' runtime (compiled code;
    /// the interpreter reports `tape_peak_bytes`): an upper bound of the
    /// tape's memory.
    pub tape_mapped_bytes: u64,
    /// Peak bytes of snapshots held by checkpointed loops.
    pub snapshots_peak_bytes: u64,
    /// Trips of checkpointed loops run by the last reverse sweep (advances
    /// and recordings): the loop body executions beyond the forward sweep's
    /// single pass.
    pub forward_steps_recomputed: u64,
}

impl AdjointStats {
    /// Tape size in bytes (every entry is one 8-byte word).
    pub fn bytes(&self) -> u64 {
        8 * (self.values + self.integers + self.control)
    }
}

impl Engine {
    /// Generates and compiles the tangent of `entry` for outputs `of` with
    /// respect to inputs `wrt`, carrying `directions` directions per sweep
    /// (1 = scalar mode).
    pub fn tangent(
        &self,
        entry: Option<&str>,
        of: &[Selection],
        wrt: &[Selection],
        directions: usize,
    ) -> Result<Tangent, Error> {
        let primal = self.entry(entry)?;
        let proc = self.module.proc(primal);
        let probe = Args::with_memory_limit(proc, self.options.memory_limit);
        let (indep, dep) = (var_ids(proc, &probe, wrt)?, var_ids(proc, &probe, of)?);
        let options = TangentOptions {
            directions: directions.max(1),
            ..TangentOptions::default()
        };
        let (module, tproc) =
            tangent(&self.module, primal, &indep, &dep, &options).map_err(ad_error)?;
        let map = ParamMap::new(proc, module.proc(tproc), "_d")?;
        let program = Program {
            sources: self.sources.clone(),
            module: Arc::new(module),
        };
        // Tangents along the caller's directions are rarely zero.
        let exec = Executor::for_entries(
            program.clone(),
            &self.options,
            &self.globals,
            Some(&[tproc]),
            true,
        )?;
        Ok(Tangent {
            writes: exec.written_by(&[tproc]),
            exec,
            program,
            primal,
            proc: tproc,
            map,
            id: workspace::handle_id(),
            directions: options.directions,
            of: of.to_vec(),
            wrt: wrt.to_vec(),
        })
    }

    /// Generates and compiles the adjoint of `entry` for outputs `of` with
    /// respect to inputs `wrt`.
    pub fn adjoint(
        &self,
        entry: Option<&str>,
        of: &[Selection],
        wrt: &[Selection],
        options: &AdjointOptions,
    ) -> Result<Adjoint, Error> {
        let schedule = ReversalSchedule::uniform(options.reversal);
        self.adjoint_scheduled(entry, of, wrt, options, &schedule)
    }

    /// [`Engine::adjoint`] with the reversal of each call site given by
    /// `schedule` (joint or split per caller-callee pair).
    pub fn adjoint_scheduled(
        &self,
        entry: Option<&str>,
        of: &[Selection],
        wrt: &[Selection],
        options: &AdjointOptions,
        schedule: &ReversalSchedule,
    ) -> Result<Adjoint, Error> {
        let primal = self.entry(entry)?;
        let proc = self.module.proc(primal);
        let probe = Args::with_memory_limit(proc, self.options.memory_limit);
        let (indep, dep) = (var_ids(proc, &probe, wrt)?, var_ids(proc, &probe, of)?);
        let (module, procs) =
            adjoint_scheduled(&self.module, primal, &indep, &dep, options, schedule)
                .map_err(|e| self.located_ad_error(e))?;
        let map = ParamMap::new(proc, module.proc(procs.combined), "_b")?;
        // The adjoints of inputs that are not outputs carry no seed: a copy
        // of the combined adjoint zeroes them itself (`Adjoint::vjp_into`).
        // Only the executor's module holds it: `Adjoint::module` shows the
        // generated procedures alone.
        let fresh: Vec<usize> = indep
            .iter()
            .filter(|v| !dep.contains(v))
            .filter_map(|v| proc.params.iter().position(|p| p == v))
            .filter_map(|i| map.companion(i))
            .collect();
        let with_copy = if options.in_place_zeroing && !fresh.is_empty() {
            let mut with_copy = module.clone();
            zeroing_copy(&mut with_copy, procs.combined, &fresh).map(|z| (with_copy, z))
        } else {
            None
        };
        let program = Program {
            sources: self.sources.clone(),
            module: Arc::new(module),
        };
        let mut roots = vec![procs.combined, procs.forward, procs.reverse];
        let (run, zeroing) = match with_copy {
            Some((with_copy, zeroing)) => {
                roots.push(zeroing.0);
                let run = Program {
                    sources: self.sources.clone(),
                    module: Arc::new(with_copy),
                };
                (run, Some(zeroing))
            }
            None => (program.clone(), None),
        };
        let exec = self.executor_for(run, &roots)?;
        Ok(Adjoint {
            reverse_records: pushes(&program.module, procs.reverse),
            reverse_writes: exec.written_by(&[procs.reverse]),
            exec,
            program,
            primal,
            procs,
            zeroing,
            map,
            id: workspace::handle_id(),
            of: of.to_vec(),
            wrt: wrt.to_vec(),
            spare_runtimes: Mutex::new(Vec::new()),
        })
    }

    /// The module holding generated derivative code, for printing.
    pub fn tangent_module(&self, t: &Tangent) -> (Arc<Module>, ProcId) {
        (t.program.module.clone(), t.proc)
    }
}

impl Tangent {
    /// Waits until calls run the optimized native code (see
    /// [`Procedure::wait_optimized`]).
    pub fn wait_optimized(&self) -> Result<(), Error> {
        self.exec.wait_optimized()
    }

    /// Directions per sweep.
    pub fn directions(&self) -> usize {
        self.directions
    }

    /// The module with the generated tangent procedures, and the tangent of
    /// the entry.
    pub fn module(&self) -> (&Module, ProcId) {
        (&self.program.module, self.proc)
    }

    /// A zeroed argument list of the primal procedure.
    pub fn args(&self) -> Args {
        self.exec.args(self.program.module.proc(self.primal))
    }

    /// The Jacobian of the outputs with respect to the inputs at `args`, by
    /// columns: `ceil(n / directions)` tangent sweeps, each from the
    /// program's state at the start (so the globals are left as one primal
    /// call would leave them).
    pub fn jacobian(&self, args: &Args) -> Result<Jacobian, Error> {
        self.jacobian_columns(args, 0..usize::MAX)
    }

    /// The columns `cols` (indices into the `wrt` elements, clipped to
    /// their number) of the Jacobian at `args`: a block of
    /// [`Tangent::jacobian`] whose `wrt` labels are those columns', by
    /// `ceil(cols.len() / directions)` sweeps from the program's state at
    /// the start. Blocks of one Jacobian can be computed apart (by other
    /// threads, processes or machines) and put side by side.
    pub fn jacobian_columns(
        &self,
        args: &Args,
        cols: std::ops::Range<usize>,
    ) -> Result<Jacobian, Error> {
        let mut held = self.exec.hold()?;
        self.columns_held(&mut held, args, cols)
    }

    /// [`Tangent::jacobian_columns`] against the globals `held`.
    fn columns_held(
        &self,
        held: &mut Held<'_>,
        args: &Args,
        cols: std::ops::Range<usize>,
    ) -> Result<Jacobian, Error> {
        let of = elements(args, &self.of)?;
        let all = elements(args, &self.wrt)?;
        let wrt = &all[cols.start.min(all.len())..cols.end.min(all.len())];
        let mut jac = Jacobian::zeros(args, &of, wrt)?;
        let k = self.directions;
        let seed = |sweep: usize| {
            let start = sweep * k;
            let mut bufs = self.map.buffers(args, k);
            for (dir, col) in wrt.iter().enumerate().skip(start).take(k) {
                if let Some(slot) = self.map.companion(col.param) {
                    bufs[slot].set_f64(col.offset * k + (dir - start), 1.0);
                }
            }
            bufs
        };
        let read = |sweep: usize, bufs: &[Buffer]| {
            let start = sweep * k;
            for (row, out) in of.iter().enumerate() {
                if sweep == 0 {
                    if let Some(slot) = self.map.primal_slot(out.param) {
                        jac.values[row] = bufs[slot].get_f64(out.offset);
                    }
                }
                let Some(slot) = self.map.companion(out.param) else {
                    continue;
                };
                for dir in 0..k.min(wrt.len().saturating_sub(start)) {
                    jac.set(row, start + dir, bufs[slot].get_f64(out.offset * k + dir));
                }
            }
        };
        let sweeps = wrt.len().max(1).div_ceil(k);
        sweeps_from_start(
            held,
            &self.exec,
            &self.writes,
            self.proc,
            sweeps,
            seed,
            read,
        )?;
        Ok(jac)
    }

    /// The Jacobian by column blocks on `threads` threads (each block by
    /// [`Tangent::jacobian_columns`]): the same matrix as
    /// [`Tangent::jacobian`]. Every block starts from a copy of the
    /// program's globals (module variables, COMMON, SAVE) as they are at
    /// the start, and the program is left as one primal call would leave
    /// it, as by [`Tangent::jacobian`].
    pub fn jacobian_threads(&self, args: &Args, threads: usize) -> Result<Jacobian, Error> {
        let cols = element_count(args, &self.wrt)?;
        let blocks = blocks(cols, threads);
        let mut held = self.exec.hold()?;
        let parts = in_parallel(threads, &blocks, |c| {
            let mut mine = held.fork()?;
            let part = self.columns_held(&mut mine, args, c)?;
            Ok((part, mine))
        })?;
        held.adopt(&parts[0].1);
        let parts: Vec<Jacobian> = parts.into_iter().map(|(p, _)| p).collect();
        let mut jac = Jacobian::zeros(args, &elements(args, &self.of)?, &[])?;
        jac.values = parts[0].values.clone();
        jac.wrt = parts.iter().flat_map(|p| p.wrt.iter().cloned()).collect();
        jac.matrix = (0..jac.of.len())
            .flat_map(|r| {
                parts
                    .iter()
                    .flat_map(move |p| p.matrix[r * p.cols()..(r + 1) * p.cols()].iter().copied())
            })
            .collect();
        Ok(jac)
    }

    /// One directional derivative: `seed` gives the direction per input
    /// element (in the order of the `wrt` elements); returns the output
    /// tangents in the order of the `of` elements.
    pub fn directional(&self, args: &Args, seed: &[f64]) -> Result<Vec<f64>, Error> {
        let of = elements(args, &self.of)?;
        let wrt = elements(args, &self.wrt)?;
        if seed.len() != wrt.len() {
            return Err(Error::new(
                ErrorKind::Usage,
                format!("{} seed values for {} inputs", seed.len(), wrt.len()),
            ));
        }
        let k = self.directions;
        let mut bufs = self.map.buffers(args, k);
        for (col, s) in wrt.iter().zip(seed) {
            if let Some(slot) = self.map.companion(col.param) {
                let i = col.offset * k;
                let v = bufs[slot].get_f64(i) + s;
                bufs[slot].set_f64(i, v);
            }
        }
        self.exec.call(self.proc, &mut bufs)?;
        Ok(of
            .iter()
            .map(|o| {
                self.map
                    .companion(o.param)
                    .map(|slot| bufs[slot].get_f64(o.offset * k))
                    .unwrap_or(0.0)
            })
            .collect())
    }
}

/// Runs `sweeps` calls of `proc`, each from the program's state at the
/// start: the globals a sweep may write (`writes`) are put back before the
/// next one, and the last leaves what one call would. `seed(i)` makes the
/// buffers of sweep `i`, `read(i, buffers)` takes its results.
fn sweeps_from_start(
    held: &mut Held<'_>,
    exec: &Executor,
    writes: &[GlobalId],
    proc: ProcId,
    sweeps: usize,
    mut seed: impl FnMut(usize) -> Vec<Buffer>,
    mut read: impl FnMut(usize, &[Buffer]),
) -> Result<(), Error> {
    let start_state = held.state(writes);
    let mut session = exec.session();
    for sweep in 0..sweeps {
        let mut bufs = seed(sweep);
        if sweep > 0 {
            held.put(&start_state)?;
        }
        session.call_held(held, proc, &mut bufs)?;
        read(sweep, &bufs);
    }
    exec.keep_runtime(session);
    Ok(())
}

impl Adjoint {
    /// Waits until calls run the optimized native code (see
    /// [`Procedure::wait_optimized`]).
    pub fn wait_optimized(&self) -> Result<(), Error> {
        self.exec.wait_optimized()
    }

    /// The module with the generated adjoint procedures, and their handles.
    pub fn module(&self) -> (&Module, &AdjointProcs) {
        (&self.program.module, &self.procs)
    }

    /// A zeroed argument list of the primal procedure.
    pub fn args(&self) -> Args {
        self.exec.args(self.program.module.proc(self.primal))
    }

    /// Runs the forward sweep at `args` and keeps its tape and end state,
    /// ready for any number of reverse sweeps (`Tape::reverse`), each of
    /// which starts from the program's globals as the forward sweep left
    /// them and leaves them so.
    pub fn record(&self, args: &Args) -> Result<Tape<'_>, Error> {
        let mut held = self.exec.hold()?;
        let mut tape = self.record_held(&mut held, args)?;
        tape.globals = held.state_all();
        tape.restore_first = true;
        Ok(tape)
    }

    /// The forward sweep with the globals held by the caller; the tape
    /// keeps the globals a reverse sweep may write.
    fn record_held(&self, held: &mut Held<'_>, args: &Args) -> Result<Tape<'_>, Error> {
        let of = elements(args, &self.of)?;
        let wrt = elements(args, &self.wrt)?;
        let mut end_state = self.map.buffers(args, 1);
        let spare = self.spare_runtimes.lock().ok().and_then(|mut s| s.pop());
        let mut session = Session::with_runtime(&self.exec, spare);
        let replay = self.reverse_records.then(|| Replay {
            start_mark: session.mark(),
            start_bufs: end_state.clone(),
            start_globals: held.state_all(),
            reversed: false,
        });
        session.call_held(held, self.procs.forward, &mut end_state)?;
        let [values, integers, control] = session.depths();
        let spilled_bytes = session.spilled_bytes();
        let ckp = self.checkpoint_counters(held);
        let tape_peak_bytes = 8 * session.peaks().iter().sum::<u64>();
        let tape_mapped_bytes = session.mapped_bytes();
        Ok(Tape {
            ckp,
            replay,
            adjoint: self,
            mark: session.mark(),
            session,
            end_state,
            globals: held.state(&self.reverse_writes),
            restore_first: false,
            of,
            wrt,
            stats: AdjointStats {
                values,
                integers,
                control,
                spilled_bytes,
                tape_peak_bytes,
                tape_mapped_bytes,
                snapshots_peak_bytes: ckp[2].max(0) as u64,
                forward_steps_recomputed: 0,
            },
        })
    }

    /// The values of the checkpointing statistics globals (recomputed trips,
    /// snapshot bytes held, their peak), zeros without checkpointed loops.
    fn checkpoint_counters(&self, held: &Held<'_>) -> [i64; 3] {
        let globals = &self.program.module.globals;
        let ids: Vec<GlobalId> = STATS_GLOBALS
            .iter()
            .filter_map(|name| globals.iter().position(|g| g.name == *name))
            .map(|i| GlobalId(i as u32))
            .collect();
        let state = held.state(&ids);
        STATS_GLOBALS.map(|name| match state.get(name) {
            Some(Buffer::I64(v)) => v.first().copied().unwrap_or(0),
            _ => 0,
        })
    }

    /// One reverse sweep: `seed` weights the output elements (the order of
    /// the `of` elements); returns the primal outputs' values and the
    /// weighted gradient over the `wrt` elements.
    pub fn vjp(&self, args: &Args, seed: &[f64]) -> Result<(Vec<f64>, Vec<f64>), Error> {
        let mut held = self.exec.hold()?;
        let mut tape = self.record_held(&mut held, args)?;
        let values = tape.values();
        // The only sweep over this tape: it may consume the end state.
        let mut end_state = std::mem::take(&mut tape.end_state);
        let grad = tape.reverse_held(&mut held, &mut end_state, seed)?;
        Ok((values, grad))
    }

    /// The gradient of the single output element with respect to the inputs:
    /// `(value, gradient over the wrt elements)`.
    pub fn gradient(&self, args: &Args) -> Result<(f64, Vec<f64>), Error> {
        let n = elements(args, &self.of)?.len();
        if n != 1 {
            return Err(not_one_output(n));
        }
        let (values, grad) = self.vjp(args, &[1.0])?;
        Ok((values[0], grad))
    }

    /// The Jacobian by rows: one forward sweep, then one reverse sweep per
    /// output element over the same tape.
    pub fn jacobian(&self, args: &Args) -> Result<Jacobian, Error> {
        self.jacobian_rows(args, 0..usize::MAX)
    }

    /// The rows `rows` (indices into the `of` elements, clipped to their
    /// number) of the Jacobian at `args`: one forward sweep, then one
    /// reverse sweep per row. Blocks of rows of one Jacobian can be computed
    /// apart (by other threads) and stacked.
    pub fn jacobian_rows(
        &self,
        args: &Args,
        rows: std::ops::Range<usize>,
    ) -> Result<Jacobian, Error> {
        let mut held = self.exec.hold()?;
        self.rows_held(&mut held, args, rows)
    }

    /// [`Adjoint::jacobian_rows`] against the globals `held`.
    fn rows_held(
        &self,
        held: &mut Held<'_>,
        args: &Args,
        rows: std::ops::Range<usize>,
    ) -> Result<Jacobian, Error> {
        let mut tape = self.record_held(held, args)?;
        let all = tape.of.len();
        let rows = rows.start.min(all)..rows.end.min(all);
        let values = tape.values();
        let mut jac = Jacobian::zeros(args, &tape.of[rows.clone()], &tape.wrt)?;
        jac.values = values[rows.clone()].to_vec();
        // One set of buffers for every row, refilled in place from the
        // end state (no allocation per reverse sweep).
        let mut bufs = tape.end_state.clone();
        let mut seed = vec![0.0; all];
        for (r, row) in rows.enumerate() {
            for (b, end) in bufs.iter_mut().zip(&tape.end_state) {
                refill(b, end);
            }
            seed.fill(0.0);
            seed[row] = 1.0;
            for (col, g) in tape
                .reverse_held(held, &mut bufs, &seed)?
                .into_iter()
                .enumerate()
            {
                jac.set(r, col, g);
            }
        }
        jac.tape = Some(tape.stats());
        Ok(jac)
    }

    /// The Jacobian by rows on `threads` threads: each thread records its
    /// own forward sweep and runs the reverse sweeps of a block of rows.
    /// The same matrix as [`Adjoint::jacobian`]. Every block starts from a
    /// copy of the program's globals (module variables, COMMON, SAVE) as
    /// they are at the start, and the program is left as by
    /// [`Adjoint::jacobian`].
    pub fn jacobian_threads(&self, args: &Args, threads: usize) -> Result<Jacobian, Error> {
        let rows = element_count(args, &self.of)?;
        let blocks = blocks(rows, threads);
        let mut held = self.exec.hold()?;
        let parts = in_parallel(threads, &blocks, |r| {
            let mut mine = held.fork()?;
            let part = self.rows_held(&mut mine, args, r)?;
            Ok((part, mine))
        })?;
        held.adopt(&parts[0].1);
        let mut parts = parts.into_iter().map(|(p, _)| p);
        let mut jac = parts.next().expect("at least one block");
        for part in parts {
            jac.of.extend(part.of);
            jac.matrix.extend(part.matrix);
            jac.values.extend(part.values);
        }
        Ok(jac)
    }
}

/// `n` rows or columns cut into at most `threads` consecutive blocks of
/// nearly equal size (always at least one).
fn blocks(n: usize, threads: usize) -> Vec<std::ops::Range<usize>> {
    let count = threads.clamp(1, n.max(1));
    (0..count)
        .map(|b| b * n / count..(b + 1) * n / count)
        .collect()
}

/// `work` over `blocks` on `threads` threads, the results in the order of
/// the blocks. The calling thread computes the first block itself while the
/// workers of a pool kept for this thread count take the others (see
/// [`pool`]): no thread is started per call, and the caller neither sleeps
/// nor waits to be woken for work it could do (under load, each wake-up of
/// a sleeping thread waits for a time slice).
fn in_parallel<T: Send>(
    threads: usize,
    blocks: &[std::ops::Range<usize>],
    work: impl Fn(std::ops::Range<usize>) -> Result<T, Error> + Sync,
) -> Result<Vec<T>, Error> {
    let Some((first, rest)) = blocks.split_first() else {
        return Ok(Vec::new());
    };
    if rest.is_empty() {
        return Ok(vec![work(first.clone())?]);
    }
    let pool = pool(threads.saturating_sub(1).max(1))?;
    let mut results: Vec<Option<Result<T, Error>>> = (0..blocks.len()).map(|_| None).collect();
    let (head, tail) = results.split_at_mut(1);
    let work = &work;
    pool.in_place_scope(|scope| {
        for (slot, block) in tail.iter_mut().zip(rest) {
            scope.spawn(move |_| *slot = Some(work(block.clone())));
        }
        head[0] = Some(work(first.clone()));
    });
    results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(Error::new(ErrorKind::Internal, "a block was not run"))))
        .collect()
}

/// The pool of `workers` threads shared by the threaded Jacobians with that
/// many workers: started at its first use and kept, so that its threads,
/// their stacks and their allocator arenas are warm for the next call.
fn pool(workers: usize) -> Result<std::sync::Arc<rayon::ThreadPool>, Error> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<rayon::ThreadPool>>>> = OnceLock::new();
    let mut pools = POOLS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(p) = pools.get(&workers) {
        return Ok(p.clone());
    }
    let p = rayon::ThreadPoolBuilder::new()
        .num_threads(workers)
        .thread_name(|i| format!("adjit-jacobian-{i}"))
        .build()
        .map_err(|e| {
            Error::new(
                ErrorKind::Io,
                format!("cannot start {workers} threads: {e}"),
            )
        })?;
    let p = Arc::new(p);
    pools.insert(workers, p.clone());
    Ok(p)
}

/// A recorded forward sweep: the tape and the arguments' state at its end,
/// serving any number of reverse sweeps (Jacobian rows) without running the
/// forward sweep again.
pub struct Tape<'a> {
    adjoint: &'a Adjoint,
    session: Session<'a>,
    mark: SessionMark,
    end_state: Vec<Buffer>,
    /// The program's globals at the end of the forward sweep that a
    /// reverse sweep may change (all of them for a tape whose sweeps run
    /// outside the recording's evaluation): every reverse sweep leaves them so.
    globals: GlobalState,
    /// Put `globals` back before a reverse sweep too (other calls may have
    /// run since the forward sweep).
    restore_first: bool,
    of: Vec<Element>,
    wrt: Vec<Element>,
    stats: AdjointStats,
    /// The checkpointing counters at the end of the forward sweep.
    ckp: [i64; 3],
    /// What recording the forward sweep again needs, for an adjoint whose
    /// reverse sweep pushes over the tape it pops.
    replay: Option<Replay>,
}

/// The start of a forward sweep, to record it again.
struct Replay {
    start_mark: SessionMark,
    start_bufs: Vec<Buffer>,
    start_globals: GlobalState,
    /// True once a reverse sweep has run over the tape.
    reversed: bool,
}

impl Drop for Tape<'_> {
    fn drop(&mut self) {
        if let Some(runtime) = self.session.take_runtime() {
            if let Ok(mut spare) = self.adjoint.spare_runtimes.lock() {
                spare.push(runtime);
            }
        }
    }
}

impl Tape<'_> {
    /// The primal values of the output elements.
    pub fn values(&self) -> Vec<f64> {
        self.of
            .iter()
            .map(|o| {
                self.adjoint
                    .map
                    .primal_slot(o.param)
                    .map(|s| self.end_state[s].get_f64(o.offset))
                    .unwrap_or(0.0)
            })
            .collect()
    }

    /// What the forward sweep recorded.
    pub fn stats(&self) -> AdjointStats {
        self.stats
    }

    /// One reverse sweep for an output seed (one weight per output element);
    /// returns the weighted gradient over the input elements.
    pub fn reverse(&mut self, seed: &[f64]) -> Result<Vec<f64>, Error> {
        let mut state = self.end_state.clone();
        let mut held = self.adjoint.exec.hold()?;
        self.reverse_held(&mut held, &mut state, seed)
    }

    /// A reverse sweep starting from `bufs`, the end state of the forward
    /// sweep, with the program's globals held.
    fn reverse_held(
        &mut self,
        held: &mut Held<'_>,
        bufs: &mut [Buffer],
        seed: &[f64],
    ) -> Result<Vec<f64>, Error> {
        if seed.len() != self.of.len() {
            return Err(Error::new(
                ErrorKind::Usage,
                format!("{} seed values for {} outputs", seed.len(), self.of.len()),
            ));
        }
        let map = &self.adjoint.map;
        for (o, s) in self.of.iter().zip(seed) {
            if let Some(slot) = map.companion(o.param) {
                let v = bufs[slot].get_f64(o.offset) + s;
                bufs[slot].set_f64(o.offset, v);
            }
        }
        if let Some(r) = &mut self.replay {
            if r.reversed {
                // The last reverse sweep recorded over the forward sweep's
                // tape (checkpointed loops, joint calls): record it again.
                self.session.rewind(&r.start_mark);
                held.put(&r.start_globals)?;
                let mut start = r.start_bufs.clone();
                self.session
                    .call_held(held, self.adjoint.procs.forward, &mut start)?;
                self.mark = self.session.mark();
            }
            r.reversed = true;
        }
        self.session.rewind(&self.mark);
        if self.restore_first {
            held.put(&self.globals)?;
        }
        self.session
            .call_held(held, self.adjoint.procs.reverse, bufs)?;
        // The counters restart at 0 with every sweep: the reverse sweep's
        // snapshot bytes are relative to those the forward sweep left held.
        let [recomputed, _, peak] = self.adjoint.checkpoint_counters(held);
        let s = &mut self.stats;
        s.forward_steps_recomputed = recomputed.max(0) as u64;
        s.snapshots_peak_bytes = s
            .snapshots_peak_bytes
            .max((self.ckp[1] + peak).max(0) as u64);
        s.tape_peak_bytes = 8 * self.session.peaks().iter().sum::<u64>();
        s.tape_mapped_bytes = self.session.mapped_bytes();
        held.put(&self.globals)?;
        Ok(self
            .wrt
            .iter()
            .map(|w| {
                map.companion(w.param)
                    .map(|s| bufs[s].get_f64(w.offset))
                    .unwrap_or(0.0)
            })
            .collect())
    }
}

/// Makes `dst` a copy of `src`, reusing its allocation when both hold the
/// same element type.
fn refill(dst: &mut Buffer, src: &Buffer) {
    match (dst, src) {
        (Buffer::F64(d), Buffer::F64(s)) => d.clone_from(s),
        (Buffer::F32(d), Buffer::F32(s)) => d.clone_from(s),
        (Buffer::I32(d), Buffer::I32(s)) => d.clone_from(s),
        (Buffer::I64(d), Buffer::I64(s)) => d.clone_from(s),
        (Buffer::Bool(d), Buffer::Bool(s)) => d.clone_from(s),
        (Buffer::Char(d), Buffer::Char(s)) => d.clone_from(s),
        (d, s) => *d = s.clone(),
    }
}

/// Central finite differences on a primal procedure.
pub struct FiniteDifferences<'a> {
    procedure: &'a Procedure,
    /// Relative step (default: cube root of the machine epsilon of each
    /// input's type).
    pub step: Option<f64>,
}

impl<'a> FiniteDifferences<'a> {
    /// Finite differences of `procedure`.
    pub fn new(procedure: &'a Procedure) -> FiniteDifferences<'a> {
        FiniteDifferences {
            procedure,
            step: None,
        }
    }

    /// The step used for an input of value `x` and type `ty`.
    pub fn step_for(&self, x: f64, ty: Type) -> f64 {
        let eps = if ty == Type::F32 {
            f32::EPSILON as f64
        } else {
            f64::EPSILON
        };
        let rel = self.step.unwrap_or_else(|| eps.cbrt());
        rel * x.abs().max(1.0)
    }

    /// The Jacobian by central differences: `2n` primal evaluations.
    pub fn jacobian(
        &self,
        args: &Args,
        of: &[Selection],
        wrt: &[Selection],
    ) -> Result<Jacobian, Error> {
        let of_e = elements(args, of)?;
        let wrt_e = elements(args, wrt)?;
        let mut jac = Jacobian::zeros(args, &of_e, &wrt_e)?;
        let read = |a: &Args| -> Vec<f64> {
            of_e.iter()
                .map(|o| a.buffers()[o.param].get_f64(o.offset))
                .collect()
        };
        // Every point from the same state; the base point's end state is
        // what one primal call leaves, and what the evaluation leaves.
        let procedure = self.procedure;
        let mut held = procedure.exec.hold()?;
        let start = held.state(&procedure.writes);
        let mut session = procedure.exec.session();
        let mut call = |held: &mut Held<'_>, a: &mut Args| {
            session.call_held(held, procedure.proc, a.buffers_mut())
        };
        let mut base = args.clone();
        call(&mut held, &mut base)?;
        // The base point's output is the program's; the perturbed
        // evaluations print nothing.
        session.silence_output();
        let mut call = |held: &mut Held<'_>, a: &mut Args| {
            session.call_held(held, procedure.proc, a.buffers_mut())
        };
        let end = held.state(&procedure.writes);
        jac.values = read(&base);
        for (col, w) in wrt_e.iter().enumerate() {
            let x = args.buffers()[w.param].get_f64(w.offset);
            let h = self.step_for(x, args.ty(w.param));
            let mut plus = args.clone();
            plus.buffers_mut()[w.param].set_f64(w.offset, x + h);
            let mut minus = args.clone();
            minus.buffers_mut()[w.param].set_f64(w.offset, x - h);
            // The step actually representable in the input's type.
            let h2 = plus.buffers()[w.param].get_f64(w.offset)
                - minus.buffers()[w.param].get_f64(w.offset);
            held.put(&start)?;
            call(&mut held, &mut plus)?;
            held.put(&start)?;
            call(&mut held, &mut minus)?;
            let (fp, fm) = (read(&plus), read(&minus));
            for row in 0..of_e.len() {
                jac.set(row, col, (fp[row] - fm[row]) / h2);
            }
        }
        procedure.exec.keep_runtime(session);
        held.put(&end)?;
        Ok(jac)
    }
}
