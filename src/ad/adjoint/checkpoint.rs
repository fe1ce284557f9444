//! The sweeps of a loop outlined for binomial checkpointing
//! ([`crate::ad::checkpoint`]): a call of the loop procedure is reversed by
//! Griewank and Walther's schedule over calls of the step procedure, with
//! at most `K` snapshots of the loop's state (the variables a trip may
//! write) on the runtime stacks.
//!
//! The schedule is the recursion of [`crate::ad::checkpoint::revolve`]:
//! to reverse trips `a..b` from a snapshot of state `a`, advance to the
//! split point `m`, snapshot it (unless one trip is left), reverse `m..b`
//! with one snapshot less, restore `a`, reverse `a..m`. Every pending
//! "restore `a`, reverse `a..m`" is a frame `(a, m, c)` on the control
//! stack, so the recursion runs as a loop:
//!
//! * the **forward sweep** runs the first chain of advances (each trip once,
//!   taking the snapshots the schedule keeps), records the last trip with
//!   the step's forward sweep, and pushes the snapshot count, the trip count
//!   and the number of frames;
//! * the **reverse sweep** reverses the last trip, then pops the frames in
//!   turn: restores the frame's snapshot, runs the chain from it (advances,
//!   snapshots, frames), records and reverses the trip it ends on.
//!
//! Everything is LIFO on the ordinary runtime stacks, so code around the
//! loop records and reverses as before. The reverse sweep counts the trips
//! it runs (advances and recordings: `t(n, K)` of revolve) and both sweeps
//! keep the bytes of snapshots held and their peak, in three I64 globals
//! ([`STATS_GLOBALS`]).

use adjit_ir::{
    BinaryOp, CallArg, CmpOp, Global, GlobalId, Inst, Proc, ProcId, Terminator, Type, Value, VarId,
};

use super::emit::Cursor;
use super::sweep::{CalleeSweeps, Layout};
use super::{global_var, Activation, Generator};
use crate::ad::AdError;

/// Names of the statistics globals: trips run by reverse sweeps beyond the
/// first forward pass, bytes of snapshots held now, their peak.
pub const STATS_GLOBALS: [&str; 3] = [
    "_ad_ckp_recomputed",
    "_ad_ckp_snapshot_bytes",
    "_ad_ckp_snapshot_peak",
];

/// The local variables and callees of one generated sweep.
struct Driver {
    /// The step's primal, forward and reverse sweeps.
    step: ProcId,
    step_fwd: ProcId,
    step_rev: ProcId,
    /// Arguments of the step's primal and of its sweeps.
    primal_args: Vec<CallArg>,
    sweep_args: Vec<CallArg>,
    /// Variables a trip may write (the snapshot).
    snapshot: Vec<VarId>,
    /// I64 locals.
    a: VarId,
    b: VarId,
    c: VarId,
    m: VarId,
    j: VarId,
    depth: VarId,
    words: VarId,
    split_out: VarId,
    /// The statistics globals (as variables of the sweep).
    stats: [VarId; 3],
    split: ProcId,
    /// True in the reverse sweep (trips are counted as recomputed).
    reverse: bool,
}

impl Driver {
    fn load(c: &mut Cursor<'_>, v: VarId) -> Value {
        c.ins(Inst::Load(v), Some(Type::I64))
    }
    fn set(c: &mut Cursor<'_>, v: VarId, x: Value) {
        c.ins(Inst::Store(v, x), None);
    }
    fn add_to(c: &mut Cursor<'_>, v: VarId, x: Value) {
        let old = Self::load(c, v);
        let new = c.binary(BinaryOp::Add, old, x);
        Self::set(c, v, new);
    }
    fn count_trips(&self, c: &mut Cursor<'_>, n: Value) {
        if self.reverse {
            Self::add_to(c, self.stats[0], n);
        }
    }

    /// Pushes the snapshot and counts its bytes.
    fn save(&self, c: &mut Cursor<'_>) {
        for &v in &self.snapshot {
            c.save_var(v);
        }
        let w = Self::load(c, self.words);
        let eight = c.int(8);
        let bytes = c.binary(BinaryOp::Mul, w, eight);
        Self::add_to(c, self.stats[1], bytes);
        let now = Self::load(c, self.stats[1]);
        let peak = Self::load(c, self.stats[2]);
        let peak = c.binary(BinaryOp::Max, now, peak);
        Self::set(c, self.stats[2], peak);
    }

    /// Pops the snapshot into the state.
    fn restore(&self, c: &mut Cursor<'_>) {
        for &v in self.snapshot.iter().rev() {
            c.restore_var(v);
        }
        let w = Self::load(c, self.words);
        let eight = c.int(-8);
        let bytes = c.binary(BinaryOp::Mul, w, eight);
        Self::add_to(c, self.stats[1], bytes);
    }

    /// Runs trips `a..m` with the step's primal (`j` counts them).
    fn advance(&self, c: &mut Cursor<'_>) {
        let zero = c.int(0);
        Self::set(c, self.j, zero);
        let (head, body, exit) = (c.new_block(), c.new_block(), c.new_block());
        c.terminate(Terminator::Jump(head));
        c.switch_to(head);
        let a = Self::load(c, self.a);
        let m = Self::load(c, self.m);
        let len = c.binary(BinaryOp::Sub, m, a);
        let j = Self::load(c, self.j);
        let more = c.ins(Inst::Cmp(CmpOp::Lt, j, len), Some(Type::Bool));
        c.terminate(Terminator::Branch {
            cond: more,
            then_dest: body,
            else_dest: exit,
        });
        c.switch_to(body);
        c.ins(Inst::Call(self.step, self.primal_args.clone()), None);
        let one = c.int(1);
        Self::add_to(c, self.j, one);
        c.terminate(Terminator::Jump(head));
        c.switch_to(exit);
        let a = Self::load(c, self.a);
        let m = Self::load(c, self.m);
        let len = c.binary(BinaryOp::Sub, m, a);
        self.count_trips(c, len);
    }

    /// Records one trip with the step's forward sweep.
    fn record(&self, c: &mut Cursor<'_>) {
        c.ins(Inst::Call(self.step_fwd, self.sweep_args.clone()), None);
        let one = c.int(1);
        self.count_trips(c, one);
    }

    /// Reverses the trip just recorded.
    fn reverse_trip(&self, c: &mut Cursor<'_>) {
        c.ins(Inst::Call(self.step_rev, self.sweep_args.clone()), None);
    }

    /// The chain from state `a` (snapshot of `a` held when `b - a > 1`):
    /// advance to the split, push the frame, snapshot, until one trip is
    /// left; the state is then `b - 1`, in `a`.
    fn chain(&self, cur: &mut Cursor<'_>) {
        let (head, body, exit) = (cur.new_block(), cur.new_block(), cur.new_block());
        cur.terminate(Terminator::Jump(head));
        cur.switch_to(head);
        let a = Self::load(cur, self.a);
        let b = Self::load(cur, self.b);
        let len = cur.binary(BinaryOp::Sub, b, a);
        let one = cur.int(1);
        let more = cur.ins(Inst::Cmp(CmpOp::Gt, len, one), Some(Type::Bool));
        cur.terminate(Terminator::Branch {
            cond: more,
            then_dest: body,
            else_dest: exit,
        });
        cur.switch_to(body);
        let a = Self::load(cur, self.a);
        let b = Self::load(cur, self.b);
        let len = cur.binary(BinaryOp::Sub, b, a);
        let c = Self::load(cur, self.c);
        let one = cur.int(1);
        let s = cur.binary(BinaryOp::Add, c, one);
        cur.ins(
            Inst::Call(
                self.split,
                vec![
                    CallArg::Value(len),
                    CallArg::Value(s),
                    CallArg::Var(self.split_out),
                ],
            ),
            None,
        );
        let a = Self::load(cur, self.a);
        let off = Self::load(cur, self.split_out);
        let m = cur.binary(BinaryOp::Add, a, off);
        Self::set(cur, self.m, m);
        self.advance(cur);
        for v in [self.a, self.m, self.c] {
            let x = Self::load(cur, v);
            cur.ins(Inst::Push(adjit_ir::StackKind::Control, x), None);
        }
        let one = cur.int(1);
        Self::add_to(cur, self.depth, one);
        let b = Self::load(cur, self.b);
        let m = Self::load(cur, self.m);
        let rest = cur.binary(BinaryOp::Sub, b, m);
        let one = cur.int(1);
        let snap = cur.ins(Inst::Cmp(CmpOp::Gt, rest, one), Some(Type::Bool));
        let (take, next) = (cur.new_block(), cur.new_block());
        cur.terminate(Terminator::Branch {
            cond: snap,
            then_dest: take,
            else_dest: next,
        });
        cur.switch_to(take);
        self.save(cur);
        let minus = cur.int(-1);
        Self::add_to(cur, self.c, minus);
        cur.terminate(Terminator::Jump(next));
        cur.switch_to(next);
        let m = Self::load(cur, self.m);
        Self::set(cur, self.a, m);
        cur.terminate(Terminator::Jump(head));
        cur.switch_to(exit);
    }
}

impl Generator<'_> {
    /// The sweeps of a call of the loop procedure `driver` (outlined from a
    /// loop under BINOMIAL-CKP) for the activity pattern `active`.
    pub(super) fn checkpoint_sweeps(
        &mut self,
        driver: ProcId,
        active: &[bool],
    ) -> Result<CalleeSweeps, AdError> {
        let outlined = self.loops[&driver].clone();
        let source = self.source.proc(driver).clone();
        let n_state = source.params.len() - 2;
        let fixed = self.options.snapshots;
        if !outlined.has_snapshots && fixed.is_none() {
            return Err(AdError::Unsupported {
                proc: outlined.host.clone(),
                what: "a loop under a bare BINOMIAL-CKP without a snapshot count \
                       (write `!$AD BINOMIAL-CKP nsteps nsnapshots first` or give \
                       --checkpoints K)"
                    .into(),
                span: outlined.span,
            });
        }
        let step_active = active[..n_state].to_vec();
        let step_sweeps = match self.callees.get(&(outlined.step, step_active.clone())) {
            Some(s) => s.clone(),
            None => {
                let g = self.generate(
                    outlined.step,
                    Activation::Callee {
                        active: &step_active,
                    },
                )?;
                CalleeSweeps {
                    forward: g.forward,
                    reverse: g.reverse,
                    active: step_active.clone(),
                }
            }
        };
        let has_adjoint = |v: VarId| {
            source
                .params
                .iter()
                .position(|&p| p == v)
                .is_some_and(|i| active.get(i).copied().unwrap_or(false))
        };
        let layout = {
            let mut globals = |g| self.global_adjoint(g);
            Layout::new(&source, &has_adjoint, &mut globals)
        };
        let step_proc = self.source.proc(outlined.step);
        let mut written = written_params(step_proc);
        for g in self.written_globals(outlined.step) {
            written.push(WrittenVar::Global(g));
        }
        let split = self.split_proc();
        let stats = self.stats_globals();
        let mut procs = Vec::new();
        for reverse in [false, true] {
            let suffix = if reverse { "rev" } else { "fwd" };
            let name = format!("{}_{suffix}", source.name);
            let id = self.reserve(&name);
            let name = self.out.proc(id).name.clone();
            let mut p = layout.new_proc(name, source.span);
            flatten_array_params(&mut p);
            let Some(snapshot) = self.snapshot_vars(&mut p, &source, &written) else {
                return Err(AdError::Unsupported {
                    proc: outlined.host.clone(),
                    what: "a loop under BINOMIAL-CKP that assigns a character variable".into(),
                    span: outlined.span,
                });
            };
            let stat_vars =
                stats.map(|g| global_var(&mut p, &self.out.globals[g.index()].clone(), g));
            let local =
                |p: &mut Proc, name: &str| p.add_var(adjit_ir::Var::scalar(name, Type::I64));
            let d = Driver {
                step: outlined.step,
                step_fwd: step_sweeps.forward,
                step_rev: step_sweeps.reverse,
                primal_args: source.params[..n_state]
                    .iter()
                    .map(|&v| CallArg::Var(v))
                    .collect(),
                sweep_args: source.params[..n_state]
                    .iter()
                    .flat_map(|&v| {
                        std::iter::once(CallArg::Var(v))
                            .chain(layout.adjoint.get(&v).map(|&a| CallArg::Var(a)))
                    })
                    .collect(),
                snapshot,
                a: local(&mut p, "_ckp_a"),
                b: local(&mut p, "_ckp_b"),
                c: local(&mut p, "_ckp_c"),
                m: local(&mut p, "_ckp_m"),
                j: local(&mut p, "_ckp_j"),
                depth: local(&mut p, "_ckp_depth"),
                words: local(&mut p, "_ckp_words"),
                split_out: local(&mut p, "_ckp_split"),
                stats: stat_vars,
                split,
                reverse,
            };
            let trips = source.params[n_state];
            let snaps = source.params[n_state + 1];
            let mut c = Cursor::new(&mut p, Proc::ENTRY);
            snapshot_words(&mut c, &d);
            if reverse {
                reverse_sweep(&mut c, &d);
            } else {
                forward_sweep(&mut c, &d, trips, snaps, fixed);
            }
            c.terminate(Terminator::Return);
            self.out.procs[id.index()] = p;
            procs.push(id);
        }
        Ok(CalleeSweeps {
            forward: procs[0],
            reverse: procs[1],
            active: active.to_vec(),
        })
    }

    /// Joint sweeps of a call of `callee` (activity pattern `active`, split
    /// sweeps `split`): the forward sweep saves the variables the callee
    /// may write and runs it plain; the reverse sweep restores them, then
    /// runs the split forward and reverse sweeps. A callee that writes
    /// character variables keeps its split sweeps.
    pub(super) fn joint_sweeps(
        &mut self,
        callee: ProcId,
        active: &[bool],
        split: &CalleeSweeps,
    ) -> Result<CalleeSweeps, AdError> {
        if let Some(s) = self.joint.get(&(callee, active.to_vec())) {
            return Ok(s.clone());
        }
        let source = self.source.proc(callee).clone();
        let has_adjoint = |v: VarId| {
            source
                .params
                .iter()
                .position(|&p| p == v)
                .is_some_and(|i| active.get(i).copied().unwrap_or(false))
        };
        let layout = {
            let mut globals = |g| self.global_adjoint(g);
            Layout::new(&source, &has_adjoint, &mut globals)
        };
        let mut written = written_params(&source);
        for g in self.written_globals(callee) {
            written.push(WrittenVar::Global(g));
        }
        let writes_chars = written.iter().any(
            |w| matches!(*w, WrittenVar::Param(i) if source.var(source.params[i]).ty == Type::Char),
        );
        if writes_chars {
            return Ok(split.clone());
        }
        let primal_args: Vec<CallArg> = source.params.iter().map(|&v| CallArg::Var(v)).collect();
        let sweep_args: Vec<CallArg> = layout.params.iter().map(|&v| CallArg::Var(v)).collect();
        let mut procs = Vec::new();
        for reverse in [false, true] {
            let suffix = if reverse { "jrev" } else { "jfwd" };
            let id = self.reserve(&format!("{}_{suffix}", source.name));
            let name = self.out.proc(id).name.clone();
            let mut p = layout.new_proc(name, source.span);
            flatten_array_params(&mut p);
            // Checked above: no character variable is written.
            let snapshot = self
                .snapshot_vars(&mut p, &source, &written)
                .unwrap_or_default();
            let mut c = Cursor::new(&mut p, Proc::ENTRY);
            if reverse {
                for &v in snapshot.iter().rev() {
                    c.restore_var(v);
                }
                c.ins(Inst::Call(split.forward, sweep_args.clone()), None);
                c.ins(Inst::Call(split.reverse, sweep_args.clone()), None);
            } else {
                for &v in &snapshot {
                    c.save_var(v);
                }
                c.ins(Inst::Call(callee, primal_args.clone()), None);
            }
            c.terminate(Terminator::Return);
            self.out.procs[id.index()] = p;
            procs.push(id);
        }
        let sweeps = CalleeSweeps {
            forward: procs[0],
            reverse: procs[1],
            active: active.to_vec(),
        };
        self.joint.insert((callee, active.to_vec()), sweeps.clone());
        Ok(sweeps)
    }

    /// The variables of `p` (laid out from `source`) behind `written`,
    /// globals added to `p`; `None` when one is a character variable.
    fn snapshot_vars(
        &self,
        p: &mut Proc,
        source: &Proc,
        written: &[WrittenVar],
    ) -> Option<Vec<VarId>> {
        let mut snapshot = Vec::new();
        for w in written {
            let v = match *w {
                WrittenVar::Param(i) => source.params[i],
                WrittenVar::Global(g) => global_var(p, &self.out.globals[g.index()].clone(), g),
            };
            if p.var(v).ty == Type::Char {
                return None;
            }
            if !snapshot.contains(&v) {
                snapshot.push(v);
            }
        }
        Some(snapshot)
    }

    /// The split procedure of the schedule (generated once per module).
    fn split_proc(&mut self) -> ProcId {
        if let Some(id) = self.split {
            return id;
        }
        let id = self.reserve("_ad_revolve_split");
        let name = self.out.proc(id).name.clone();
        self.out.procs[id.index()] = crate::ad::checkpoint::split_procedure(name);
        self.split = Some(id);
        id
    }

    /// The statistics globals (created once per module).
    fn stats_globals(&mut self) -> [GlobalId; 3] {
        STATS_GLOBALS.map(|name| {
            if let Some(i) = self.out.globals.iter().position(|g| g.name == name) {
                return GlobalId(i as u32);
            }
            self.out.add_global(Global {
                name: name.into(),
                ty: Type::I64,
                dims: Vec::new(),
                char_len: 1,
                init: Vec::new(),
            })
        })
    }
}

/// Views every array parameter of `p` as a one-dimensional assumed-size
/// array: the sweeps only pass them on (by sequence association) and save
/// and restore their elements, and a numeric array may be given less
/// storage than its declaration describes (Fortran 77), so the snapshot
/// covers the storage actually passed.
fn flatten_array_params(p: &mut Proc) {
    for &v in &p.params.clone() {
        let var = &mut p.vars[v.index()];
        if var.is_array() && var.ty != Type::Char {
            var.dims = vec![adjit_ir::Dim {
                lower: adjit_ir::Bound::Const(1),
                upper: None,
            }];
        }
    }
}

/// A variable a trip may write.
enum WrittenVar {
    /// The i-th parameter of the step (and of the loop procedure).
    Param(usize),
    /// A global.
    Global(GlobalId),
}

/// The parameters of the step that it may write: stored into, read into,
/// or passed to a procedure.
fn written_params(step: &Proc) -> Vec<WrittenVar> {
    let mut written = std::collections::BTreeSet::new();
    for block in &step.blocks {
        for &v in &block.insts {
            match &step.inst(v).kind {
                Inst::Store(var, _) | Inst::StoreElem(var, ..) => {
                    written.insert(*var);
                }
                Inst::Call(_, args) => {
                    for a in args {
                        if let CallArg::Var(var) | CallArg::Elem(var, _) = a {
                            written.insert(*var);
                        }
                    }
                }
                Inst::CharAssign(dst, _) | Inst::Io(adjit_ir::IoOp::GetChar(dst)) => {
                    if let adjit_ir::CharBase::Var { var, .. } = &dst.base {
                        written.insert(*var);
                    }
                }
                _ => {}
            }
        }
    }
    step.params
        .iter()
        .enumerate()
        .filter(|(_, p)| written.contains(p))
        .map(|(i, _)| WrittenVar::Param(i))
        .collect()
}

/// `words` = number of stack words of one snapshot.
fn snapshot_words(c: &mut Cursor<'_>, d: &Driver) {
    let mut total = c.int(0);
    for &v in &d.snapshot {
        let rank = c.proc.var(v).dims.len();
        let mut n = c.int(1);
        for dim in 0..rank {
            let e = c.ins(Inst::DimExtent(v, dim as u32), Some(Type::I64));
            n = c.binary(BinaryOp::Mul, n, e);
        }
        total = c.binary(BinaryOp::Add, total, n);
    }
    Driver::set(c, d.words, total);
}

/// The forward sweep: first chain, last trip recorded, then the snapshot
/// count, the trip count and the number of frames pushed.
fn forward_sweep(c: &mut Cursor<'_>, d: &Driver, trips: VarId, snaps: VarId, fixed: Option<u32>) {
    let k = match fixed {
        Some(k) => c.int(i64::from(k)),
        None => Driver::load(c, snaps),
    };
    let one = c.int(1);
    let k = c.binary(BinaryOp::Max, k, one);
    let k1 = c.binary(BinaryOp::Sub, k, one);
    Driver::set(c, d.c, k1);
    let zero = c.int(0);
    Driver::set(c, d.a, zero);
    Driver::set(c, d.depth, zero);
    let n = Driver::load(c, trips);
    Driver::set(c, d.b, n);
    let (snap, go, done) = (c.new_block(), c.new_block(), c.new_block());
    let one = c.int(1);
    let many = c.ins(Inst::Cmp(CmpOp::Gt, n, one), Some(Type::Bool));
    let after_snap = c.new_block();
    c.terminate(Terminator::Branch {
        cond: many,
        then_dest: snap,
        else_dest: after_snap,
    });
    c.switch_to(snap);
    d.save(c);
    c.terminate(Terminator::Jump(after_snap));
    c.switch_to(after_snap);
    let n = Driver::load(c, d.b);
    let zero = c.int(0);
    let any = c.ins(Inst::Cmp(CmpOp::Gt, n, zero), Some(Type::Bool));
    c.terminate(Terminator::Branch {
        cond: any,
        then_dest: go,
        else_dest: done,
    });
    c.switch_to(go);
    d.chain(c);
    d.record(c);
    c.terminate(Terminator::Jump(done));
    c.switch_to(done);
    let k = match fixed {
        Some(k) => c.int(i64::from(k)),
        None => Driver::load(c, snaps),
    };
    let n = Driver::load(c, d.b);
    let depth = Driver::load(c, d.depth);
    for x in [k, n, depth] {
        c.ins(Inst::Push(adjit_ir::StackKind::Control, x), None);
    }
}

/// The reverse sweep: reverse the last trip, then every frame.
fn reverse_sweep(c: &mut Cursor<'_>, d: &Driver) {
    for v in [d.depth, d.b, d.c] {
        let x = c.ins(Inst::Pop(adjit_ir::StackKind::Control), Some(Type::I64));
        Driver::set(c, v, x);
    }
    let (last, frames, done) = (c.new_block(), c.new_block(), c.new_block());
    let n = Driver::load(c, d.b);
    let zero = c.int(0);
    let any = c.ins(Inst::Cmp(CmpOp::Gt, n, zero), Some(Type::Bool));
    c.terminate(Terminator::Branch {
        cond: any,
        then_dest: last,
        else_dest: done,
    });
    c.switch_to(last);
    d.reverse_trip(c);
    c.terminate(Terminator::Jump(frames));
    // The frame loop.
    c.switch_to(frames);
    let depth = Driver::load(c, d.depth);
    let zero = c.int(0);
    let more = c.ins(Inst::Cmp(CmpOp::Gt, depth, zero), Some(Type::Bool));
    let frame = c.new_block();
    c.terminate(Terminator::Branch {
        cond: more,
        then_dest: frame,
        else_dest: done,
    });
    c.switch_to(frame);
    for v in [d.c, d.m, d.a] {
        let x = c.ins(Inst::Pop(adjit_ir::StackKind::Control), Some(Type::I64));
        Driver::set(c, v, x);
    }
    let minus = c.int(-1);
    Driver::add_to(c, d.depth, minus);
    let a = Driver::load(c, d.a);
    let m = Driver::load(c, d.m);
    let len = c.binary(BinaryOp::Sub, m, a);
    let one = c.int(1);
    let single = c.ins(Inst::Cmp(CmpOp::Eq, len, one), Some(Type::Bool));
    let (one_trip, several) = (c.new_block(), c.new_block());
    c.terminate(Terminator::Branch {
        cond: single,
        then_dest: one_trip,
        else_dest: several,
    });
    c.switch_to(one_trip);
    d.restore(c);
    d.record(c);
    d.reverse_trip(c);
    c.terminate(Terminator::Jump(frames));
    c.switch_to(several);
    d.restore(c);
    d.save(c);
    let m = Driver::load(c, d.m);
    Driver::set(c, d.b, m);
    d.chain(c);
    d.record(c);
    d.reverse_trip(c);
    c.terminate(Terminator::Jump(frames));
    c.switch_to(done);
}
