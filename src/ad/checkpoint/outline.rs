//! Moves each DO loop marked for binomial checkpointing
//! ([`adjit_ir::CheckpointLoop`]) out of its procedure, into two new ones:
//!
//! * the **step** `foo_ckpN_step`: one trip of the loop (the body and the
//!   latch that increments the DO variable);
//! * the **loop** `foo_ckpN`: `trips` calls of the step, where `trips` and
//!   the directive's snapshot count are its last two parameters.
//!
//! The marked loop becomes one call of the loop procedure. Both new
//! procedures take by reference every variable the trip names (and the
//! variables their bounds and lengths read), keeping globals global, so the
//! rewritten module computes what the original did. The adjoint transform
//! then reverses a call of the loop procedure by the binomial schedule
//! over calls of the step (`super::sweeps`).

use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeSet;

use adjit_ir::{
    BinaryOp, Block, BlockId, CallArg, CharBase, CharRef, CheckpointLoop, CmpOp, Const, Inst, IoOp,
    Module, Proc, ProcId, Span, Storage, Terminator, Type, Var, VarId,
};

use crate::ad::AdError;

/// A marked loop after outlining.
#[derive(Clone, Debug)]
pub struct OutlinedLoop {
    /// The step procedure (one trip).
    pub step: ProcId,
    /// Where the directive was written.
    pub span: Span,
    /// The name of the procedure the loop came from.
    pub host: String,
    /// Whether the directive gave a snapshot count.
    pub has_snapshots: bool,
}

/// Outlines every marked loop of every procedure of `module` (loops nested
/// in an outlined trip are outlined from the step procedure in turn).
/// Returns the rewritten module and, by loop procedure, what it stands for.
pub fn outline_loops(module: &Module) -> Result<(Module, HashMap<ProcId, OutlinedLoop>), AdError> {
    let mut out = module.clone();
    let mut loops = HashMap::default();
    let mut p = 0;
    while p < out.procs.len() {
        let mut n = 0;
        while let Some(mark) = out.procs[p].checkpoints.first().cloned() {
            n += 1;
            let host = ProcId(p as u32);
            let (step, driver) = outline_one(&mut out, host, &mark, n)?;
            loops.insert(
                driver,
                OutlinedLoop {
                    step,
                    span: mark.span,
                    host: out.proc(host).name.clone(),
                    has_snapshots: mark.snapshots.is_some(),
                },
            );
        }
        p += 1;
    }
    Ok((out, loops))
}

/// Calls `f` on every variable an instruction names.
pub(crate) fn inst_vars(inst: &Inst, f: &mut dyn FnMut(VarId)) {
    let char_ref = |r: &CharRef, f: &mut dyn FnMut(VarId)| {
        if let CharBase::Var { var, .. } = &r.base {
            f(*var)
        }
    };
    match inst {
        Inst::Load(v)
        | Inst::Store(v, _)
        | Inst::LoadElem(v, _)
        | Inst::StoreElem(v, ..)
        | Inst::DimLower(v, _)
        | Inst::DimExtent(v, _) => f(*v),
        Inst::Call(_, args) => {
            for a in args {
                if let CallArg::Var(v) | CallArg::Elem(v, _) | CallArg::Slice(v, _, _) = a {
                    f(*v)
                }
            }
        }
        Inst::CharAssign(a, b)
        | Inst::CharCompare(_, a, b)
        | Inst::CharIndex(a, b)
        | Inst::CharSearch(_, _, a, b) => {
            char_ref(a, f);
            char_ref(b, f)
        }
        Inst::CharLen(a)
        | Inst::Io(
            IoOp::PutChar(a) | IoOp::GetChar(a) | IoOp::EndWriteTo(a) | IoOp::BeginReadFrom(a, _),
        ) => char_ref(a, f),
        _ => {}
    }
}

/// The blocks of one trip: reached from `mark.body` without entering
/// `mark.header`. A trip must end at the latch only.
fn trip_blocks(proc: &Proc, mark: &CheckpointLoop) -> Result<Vec<bool>, AdError> {
    let mut inside = vec![false; proc.blocks.len()];
    let mut work = vec![mark.body];
    while let Some(b) = work.pop() {
        if b == mark.header || std::mem::replace(&mut inside[b.index()], true) {
            continue;
        }
        let term = &proc.block(b).term;
        let leaves = match term {
            Terminator::Return => true,
            _ => term
                .successors()
                .iter()
                .any(|&s| s == mark.header && b != mark.latch || s == Proc::ENTRY),
        };
        if leaves || (b == mark.latch && term.successors() != vec![mark.header]) {
            return Err(unsupported(proc, mark, "EXIT, RETURN or GO TO leave"));
        }
        work.extend(term.successors());
    }
    if inside[mark.exit.index()] {
        return Err(unsupported(proc, mark, "EXIT, RETURN or GO TO leave"));
    }
    Ok(inside)
}

fn unsupported(proc: &Proc, mark: &CheckpointLoop, why: &str) -> AdError {
    AdError::Unsupported {
        proc: proc.name.clone(),
        what: format!("a loop under BINOMIAL-CKP that {why}"),
        span: mark.span,
    }
}

/// The variables a trip names, with those their bounds and lengths read,
/// globals left out.
fn trip_vars(proc: &Proc, inside: &[bool]) -> Vec<VarId> {
    let mut named = BTreeSet::new();
    for (b, block) in proc.blocks.iter().enumerate() {
        if !inside[b] {
            continue;
        }
        for &v in &block.insts {
            inst_vars(&proc.inst(v).kind, &mut |var| {
                named.insert(var);
            });
        }
    }
    let mut work: Vec<VarId> = named.iter().copied().collect();
    while let Some(v) = work.pop() {
        let var = proc.var(v);
        let mut add = |b: VarId| {
            if named.insert(b) {
                work.push(b)
            }
        };
        for d in &var.dims {
            d.lower.for_each_var(&mut add);
            if let Some(u) = &d.upper {
                u.for_each_var(&mut add);
            }
        }
        if let Some(len) = &var.char_len {
            len.for_each_var(&mut add);
        }
    }
    named
        .into_iter()
        .filter(|&v| !matches!(proc.var(v).storage, Storage::Global(..)))
        .collect()
}

/// `proc`'s variables with `params` turned into parameters (in order) and
/// the other non-global variables into unused scalars.
fn with_params(proc: &Proc, params: &[VarId]) -> Vec<Var> {
    proc.vars
        .iter()
        .enumerate()
        .map(|(i, var)| {
            if let Some(pos) = params.iter().position(|p| p.index() == i) {
                let mut var = var.clone();
                if var.ty == Type::Char && var.char_len.is_none() {
                    var.char_len = Some(adjit_ir::Bound::Const(1));
                }
                var.storage = Storage::Param(pos as u32);
                var
            } else if matches!(var.storage, Storage::Global(..)) {
                var.clone()
            } else {
                Var::scalar(format!("_unused_{}", var.name), Type::I32)
            }
        })
        .collect()
}

/// Outlines the first mark of `host`; returns (step, loop procedure).
fn outline_one(
    module: &mut Module,
    host: ProcId,
    mark: &CheckpointLoop,
    n: usize,
) -> Result<(ProcId, ProcId), AdError> {
    let proc = module.proc(host).clone();
    let inside = trip_blocks(&proc, mark)?;
    let params = trip_vars(&proc, &inside);
    if let Some(&v) = params
        .iter()
        .find(|&&v| proc.var(v).storage.is_allocatable())
    {
        let why = format!("names the allocatable array `{}`", proc.var(v).name);
        return Err(unsupported(&proc, mark, &why));
    }
    if let Some(&v) = params.iter().find(|&&v| proc.var(v).ty == Type::Char) {
        let why = format!(
            "names the character variable `{}` (snapshots hold no character data)",
            proc.var(v).name
        );
        return Err(unsupported(&proc, mark, &why));
    }
    let base = format!("{}_ckp{n}", proc.name);
    // The step: the host with a new entry jumping to the trip, blocks
    // outside the trip emptied, the latch returning.
    let mut step = proc.clone();
    step.name = format!("{base}_step");
    step.result = None;
    step.params = params.clone();
    step.vars = with_params(&proc, &params);
    for (b, block) in step.blocks.iter_mut().enumerate() {
        if !inside[b] {
            *block = Block::default();
        }
    }
    step.blocks[Proc::ENTRY.index()].term = Terminator::Jump(mark.body);
    step.blocks[mark.latch.index()].term = Terminator::Return;
    step.checkpoints = proc
        .checkpoints
        .iter()
        .filter(|c| inside[c.header.index()])
        .cloned()
        .collect();
    drop_orphans(&mut step);
    let step_id = module.add_proc(step);
    // The loop procedure: `trips` calls of the step.
    let mut driver = Proc::new(base);
    driver.span = proc.span;
    driver.module = proc.module.clone();
    driver.vars = with_params(&proc, &params);
    let int_param = |name: &str, pos: usize| Var {
        name: name.into(),
        ty: Type::I64,
        dims: Vec::new(),
        char_len: None,
        storage: Storage::Param(pos as u32),
    };
    let trips = driver.add_var(int_param("_ckp_trips", params.len()));
    let snaps = driver.add_var(int_param("_ckp_snapshots", params.len() + 1));
    let count = driver.add_var(Var::scalar("_ckp_k", Type::I64));
    driver.params = params.clone();
    driver.params.extend([trips, snaps]);
    {
        let span = mark.span;
        let i64c = |d: &mut Proc, b: BlockId, x: i64| {
            d.push_inst(b, Inst::Const(Const::Int(x)), Some(Type::I64), span)
        };
        let (head, body, exit) = (driver.add_block(), driver.add_block(), driver.add_block());
        let zero = i64c(&mut driver, Proc::ENTRY, 0);
        driver.push_inst(Proc::ENTRY, Inst::Store(count, zero), None, span);
        driver.blocks[0].term = Terminator::Jump(head);
        let k = driver.push_inst(head, Inst::Load(count), Some(Type::I64), span);
        let t = driver.push_inst(head, Inst::Load(trips), Some(Type::I64), span);
        let more = driver.push_inst(head, Inst::Cmp(CmpOp::Lt, k, t), Some(Type::Bool), span);
        driver.blocks[head.index()].term = Terminator::Branch {
            cond: more,
            then_dest: body,
            else_dest: exit,
        };
        let args = params.iter().map(|&v| CallArg::Var(v)).collect();
        driver.push_inst(body, Inst::Call(step_id, args), None, span);
        let k = driver.push_inst(body, Inst::Load(count), Some(Type::I64), span);
        let one = i64c(&mut driver, body, 1);
        let k1 = driver.push_inst(
            body,
            Inst::Binary(BinaryOp::Add, k, one),
            Some(Type::I64),
            span,
        );
        driver.push_inst(body, Inst::Store(count, k1), None, span);
        driver.blocks[body.index()].term = Terminator::Jump(head);
    }
    let driver_id = module.add_proc(driver);
    // The host: the loop becomes one call of the loop procedure.
    let host_proc = &mut module.procs[host.index()];
    let snaps_arg = match mark.snapshots {
        Some(v) => v,
        None => host_proc.add_var(Var::scalar("_ckp_no_snapshots", Type::I64)),
    };
    let mut args: Vec<CallArg> = params.iter().map(|&v| CallArg::Var(v)).collect();
    args.extend([CallArg::Var(mark.trips), CallArg::Var(snaps_arg)]);
    for (b, block) in host_proc.blocks.iter_mut().enumerate() {
        if inside[b] {
            *block = Block::default();
        }
    }
    let header = &mut host_proc.blocks[mark.header.index()];
    header.insts.clear();
    header.term = Terminator::Jump(mark.exit);
    host_proc.push_inst(mark.header, Inst::Call(driver_id, args), None, mark.span);
    host_proc
        .checkpoints
        .retain(|c| c.header != mark.header && !inside[c.header.index()]);
    drop_orphans(host_proc);
    Ok((step_id, driver_id))
}

/// Rebuilds the instruction arena of `proc` with only the instructions its
/// blocks hold (emptied blocks leave theirs behind), renumbering values.
fn drop_orphans(proc: &mut Proc) {
    let old = std::mem::take(&mut proc.insts);
    let mut map: HashMap<adjit_ir::Value, adjit_ir::Value> = HashMap::default();
    for block in &mut proc.blocks {
        for v in &mut block.insts {
            let mut data = old[v.index()].clone();
            data.kind.for_each_operand_mut(|x| *x = map[x]);
            proc.insts.push(data);
            let new = adjit_ir::Value(proc.insts.len() as u32 - 1);
            map.insert(*v, new);
            *v = new;
        }
        match &mut block.term {
            Terminator::Branch { cond: x, .. } | Terminator::Switch { value: x, .. } => *x = map[x],
            _ => {}
        }
    }
}
