//! Statement normalisation before reversal.
//!
//! The reverse sweep handles one *statement* at a time: a code list of pure
//! instructions ending in one effect (a store, a call, a character copy). To
//! recompute a statement's code list from the restored state, the code list
//! must not read SSA values computed by an earlier statement (their inputs
//! may have been overwritten since). This pass rewrites a copy of the
//! procedure so that this holds:
//!
//! * a value used by a later statement of its block is *spilled*: stored into
//!   a fresh local right after its definition and reloaded by each user;
//! * so is every value computed from character data (LEN, INDEX, searches,
//!   comparisons): character variables are not restored for the reverse
//!   sweep, so it reloads such values instead of recomputing them;
//! * call arguments are made restorable: an expression argument becomes a
//!   fresh local passed by reference, and the subscripts of an array-element
//!   argument are stored in fresh integer locals (the callee may overwrite
//!   the variables the subscripts were computed from).
//!
//! The result is semantically the same procedure. Original variables keep
//! their handles; new locals are appended (names start with `_ad_`).

use adjit_ir::{
    BlockId, CallArg, CharBase, CharRef, Inst, InstData, IoOp, Proc, Span, Type, Value, Var, VarId,
};

use crate::ad::AdError;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// One statement: pure instructions then one effect.
#[derive(Clone, Debug)]
pub(crate) struct Statement {
    /// Pure instructions in execution order.
    pub pure: Vec<Value>,
    /// The effect instruction ending the statement.
    pub effect: Value,
}

/// A block split into statements.
#[derive(Clone, Debug, Default)]
pub(crate) struct BlockShape {
    /// Statements in execution order.
    pub statements: Vec<Statement>,
    /// Pure instructions after the last effect (they feed the terminator).
    pub tail: Vec<Value>,
}

/// A normalised copy of a procedure and its statements.
#[derive(Clone, Debug)]
pub(crate) struct Normalized {
    /// The rewritten procedure.
    pub proc: Proc,
    /// Statement structure of each block (indexed like `proc.blocks`).
    pub shapes: Vec<BlockShape>,
}

/// True for instructions with an effect on storage (they end a statement).
/// I/O steps are effects, except the read of a value (`IoOp::Get`), which
/// belongs to the statement storing it: it has no partial, so the reverse
/// sweep never recomputes it, and the forward sweep reads once.
pub(crate) fn is_effect(inst: &Inst) -> bool {
    matches!(
        inst,
        Inst::Store(..)
            | Inst::StoreElem(..)
            | Inst::Call(..)
            | Inst::CharAssign(..)
            | Inst::Push(..)
            | Inst::Pop(..)
            | Inst::Allocate(..)
            | Inst::Deallocate(_)
    ) || matches!(inst, Inst::Io(op) if *op != IoOp::Get)
}

/// A copy of `inst` with every value operand replaced by `f(operand)`.
pub(crate) fn map_operands(inst: &Inst, f: &mut dyn FnMut(Value) -> Value) -> Inst {
    let map_ref = |r: &CharRef, f: &mut dyn FnMut(Value) -> Value| CharRef {
        base: match &r.base {
            CharBase::Var { var, index } => CharBase::Var {
                var: *var,
                index: index.iter().map(|&v| f(v)).collect(),
            },
            CharBase::Literal(bytes) => CharBase::Literal(bytes.clone()),
        },
        start: r.start.map(&mut *f),
        end: r.end.map(&mut *f),
    };
    match inst {
        Inst::Const(_)
        | Inst::Load(_)
        | Inst::DimLower(..)
        | Inst::DimExtent(..)
        | Inst::Pop(_) => inst.clone(),
        Inst::Store(var, v) => Inst::Store(*var, f(*v)),
        Inst::LoadElem(var, idx) => Inst::LoadElem(*var, idx.iter().map(|&v| f(v)).collect()),
        Inst::StoreElem(var, idx, v) => {
            let idx = idx.iter().map(|&v| f(v)).collect();
            Inst::StoreElem(*var, idx, f(*v))
        }
        Inst::Unary(op, v) => Inst::Unary(*op, f(*v)),
        Inst::Binary(op, a, b) => Inst::Binary(*op, f(*a), f(*b)),
        Inst::Cmp(op, a, b) => Inst::Cmp(*op, f(*a), f(*b)),
        Inst::Convert(v, r) => Inst::Convert(f(*v), *r),
        Inst::Select(c, a, b) => Inst::Select(f(*c), f(*a), f(*b)),
        Inst::Call(p, args) => Inst::Call(
            *p,
            args.iter()
                .map(|a| match a {
                    CallArg::Var(v) => CallArg::Var(*v),
                    CallArg::Elem(v, idx) => CallArg::Elem(*v, idx.iter().map(|&i| f(i)).collect()),
                    CallArg::Slice(v, idx, n) => {
                        CallArg::Slice(*v, idx.iter().map(|&i| f(i)).collect(), f(*n))
                    }
                    CallArg::Value(v) => CallArg::Value(f(*v)),
                })
                .collect(),
        ),
        Inst::CharAssign(a, b) => {
            let a = map_ref(a, f);
            Inst::CharAssign(a, map_ref(b, f))
        }
        Inst::CharCompare(op, a, b) => {
            let a = map_ref(a, f);
            Inst::CharCompare(*op, a, map_ref(b, f))
        }
        Inst::Push(k, v) => Inst::Push(*k, f(*v)),
        Inst::CharLen(..)
        | Inst::CharIndex(..)
        | Inst::CharSearch(..)
        | Inst::Io(..)
        | Inst::Allocate(..)
        | Inst::Deallocate(_)
        | Inst::Allocated(_) => inst.map_operands(f),
    }
}

/// Appends an instruction to the arena without placing it in a block.
fn detached(proc: &mut Proc, kind: Inst, ty: Option<Type>, span: Span) -> Value {
    proc.insts.push(InstData { kind, ty, span });
    Value(proc.insts.len() as u32 - 1)
}

/// A fresh local scalar for the normaliser.
fn fresh_local(proc: &mut Proc, what: &str, ty: Type) -> VarId {
    let name = format!("_ad_{what}{}", proc.vars.len());
    proc.add_var(Var::scalar(name, ty))
}

/// Normalises a copy of `proc` (see the module documentation).
pub(crate) fn normalize(proc: &Proc) -> Result<Normalized, AdError> {
    let mut proc = proc.clone();
    for b in 0..proc.blocks.len() {
        let block = BlockId(b as u32);
        for &v in &proc.block(block).insts {
            if matches!(proc.inst(v).kind, Inst::Push(..) | Inst::Pop(..)) {
                return Err(AdError::Unsupported {
                    proc: proc.name.clone(),
                    what: "tape stack instructions (the sweeps of an ADR block that records loops, or other adjoint code): the adjoint of adjoint code is not supported yet".into(),
                    span: proc.inst(v).span,
                });
            }
        }
        materialize_call_args(&mut proc, block);
        spill_cross_statement_values(&mut proc, block);
    }
    let shapes = (0..proc.blocks.len())
        .map(|b| shape_of(&proc, BlockId(b as u32)))
        .collect();
    Ok(Normalized { proc, shapes })
}

/// Stores an integer operand of a call argument (a subscript, a slice
/// length) into a fresh local before the call and reloads it after it:
/// the reload is what the rewritten argument names.
fn stash(
    proc: &mut Proc,
    rebuilt: &mut Vec<Value>,
    reloads: &mut Vec<Value>,
    sub: Value,
    span: Span,
) -> Value {
    let ty = proc.value_type(sub).unwrap_or(Type::I64);
    let temp = fresh_local(proc, "sub", ty);
    rebuilt.push(detached(proc, Inst::Store(temp, sub), None, span));
    let reload = detached(proc, Inst::Load(temp), Some(ty), span);
    reloads.push(reload);
    reload
}

/// Rewrites call arguments of one block so that the reverse sweep can
/// reproduce them after the callee ran (see the module documentation).
fn materialize_call_args(proc: &mut Proc, block: BlockId) {
    let insts = proc.blocks[block.index()].insts.clone();
    let mut rebuilt = Vec::with_capacity(insts.len());
    for v in insts {
        let InstData { kind, span, .. } = proc.inst(v).clone();
        let Inst::Call(callee, args) = kind else {
            rebuilt.push(v);
            continue;
        };
        let mut reloads = Vec::new();
        let mut new_args = Vec::with_capacity(args.len());
        for arg in args {
            match arg {
                CallArg::Var(var) => new_args.push(CallArg::Var(var)),
                CallArg::Value(value) => {
                    let ty = proc.value_type(value).unwrap_or(Type::F64);
                    let temp = fresh_local(proc, "arg", ty);
                    rebuilt.push(detached(proc, Inst::Store(temp, value), None, span));
                    new_args.push(CallArg::Var(temp));
                }
                CallArg::Elem(var, index) => {
                    let index = index
                        .into_iter()
                        .map(|sub| stash(proc, &mut rebuilt, &mut reloads, sub, span))
                        .collect();
                    new_args.push(CallArg::Elem(var, index));
                }
                CallArg::Slice(var, index, len) => {
                    let index = index
                        .into_iter()
                        .map(|sub| stash(proc, &mut rebuilt, &mut reloads, sub, span))
                        .collect();
                    let len = stash(proc, &mut rebuilt, &mut reloads, len, span);
                    new_args.push(CallArg::Slice(var, index, len));
                }
            }
        }
        rebuilt.extend(reloads);
        proc.insts[v.index()].kind = Inst::Call(callee, new_args);
        rebuilt.push(v);
    }
    proc.blocks[block.index()].insts = rebuilt;
}

/// Statement number of every instruction of a block (incremented after each
/// effect), indexed by position.
fn statement_numbers(proc: &Proc, insts: &[Value]) -> Vec<usize> {
    let mut n = 0;
    insts
        .iter()
        .map(|&v| {
            let here = n;
            if is_effect(&proc.inst(v).kind) {
                n += 1;
            }
            here
        })
        .collect()
}

/// Spills values read by a later statement than their own (to a fixpoint:
/// a spill store itself ends a statement).
fn spill_cross_statement_values(proc: &mut Proc, block: BlockId) {
    let mut spilled_chars = HashSet::default();
    loop {
        let insts = proc.blocks[block.index()].insts.clone();
        let numbers = statement_numbers(proc, &insts);
        let position: HashMap<Value, usize> =
            insts.iter().enumerate().map(|(i, &v)| (v, i)).collect();
        let mut to_spill: Vec<Value> = Vec::new();
        for (i, &v) in insts.iter().enumerate() {
            // The store right after a value-producing effect (an I/O
            // status) that spills it reads it where it is made, although
            // the effect ended that statement.
            let spill_of = |u: Value, pu: usize| {
                i == pu + 1 && matches!(proc.inst(v).kind, Inst::Store(_, x) if x == u)
            };
            proc.inst(v).kind.for_each_operand(|u| {
                if let Some(&pu) = position.get(&u) {
                    let cross = numbers[pu] != numbers[i] && !spill_of(u, pu);
                    let chars = reads_characters(&proc.inst(u).kind) && !spilled_chars.contains(&u);
                    if (cross || chars) && !to_spill.contains(&u) {
                        to_spill.push(u);
                    }
                }
            });
        }
        spilled_chars.extend(
            to_spill
                .iter()
                .copied()
                .filter(|&u| reads_characters(&proc.inst(u).kind)),
        );
        if to_spill.is_empty() {
            return;
        }
        let temps: HashMap<Value, VarId> = to_spill
            .iter()
            .map(|&u| {
                let ty = proc.value_type(u).unwrap_or(Type::F64);
                (u, fresh_local(proc, "spill", ty))
            })
            .collect();
        let mut rebuilt = Vec::with_capacity(insts.len() + 2 * temps.len());
        for &v in &insts {
            let InstData { kind, span, .. } = proc.inst(v).clone();
            let mut reloads = Vec::new();
            let new_kind = map_operands(&kind, &mut |u| match temps.get(&u) {
                Some(&temp) => {
                    let ty = proc.value_type(u);
                    let reload = Value((proc.insts.len() + reloads.len()) as u32);
                    reloads.push((
                        InstData {
                            kind: Inst::Load(temp),
                            ty,
                            span,
                        },
                        reload,
                    ));
                    reload
                }
                None => u,
            });
            for (data, reload) in reloads {
                proc.insts.push(data);
                debug_assert_eq!(proc.insts.len() - 1, reload.index());
                rebuilt.push(reload);
            }
            proc.insts[v.index()].kind = new_kind;
            rebuilt.push(v);
            if let Some(&temp) = temps.get(&v) {
                rebuilt.push(detached(proc, Inst::Store(temp, v), None, span));
            }
        }
        proc.blocks[block.index()].insts = rebuilt;
    }
}

/// True for the pure instructions that read character data.
fn reads_characters(inst: &Inst) -> bool {
    matches!(
        inst,
        Inst::CharLen(..) | Inst::CharIndex(..) | Inst::CharSearch(..) | Inst::CharCompare(..)
    )
}

/// Splits a block into statements.
fn shape_of(proc: &Proc, block: BlockId) -> BlockShape {
    let mut shape = BlockShape::default();
    let mut pure = Vec::new();
    for &v in &proc.block(block).insts {
        if is_effect(&proc.inst(v).kind) {
            shape.statements.push(Statement {
                pure: std::mem::take(&mut pure),
                effect: v,
            });
        } else {
            pure.push(v);
        }
    }
    shape.tail = pure;
    shape
}
