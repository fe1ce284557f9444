//! The sweeps of a loop outlined for binomial checkpointing
//! ([`crate::ad::checkpoint`]): a call of the loop procedure is reversed by
//! Griewank and Walther's schedule over calls of the step procedure, with
//! at most `K` snapshots of the loop's live state (the variables a trip
//! may write and may read before writing them) on the runtime stacks.
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

/// Names of the automatic mode's globals: bytes counted by a measured
/// trip, and 1 while a trip is measured.
const PROBE_GLOBALS: [&str; 2] = ["_ad_ckp_probe", "_ad_ckp_probing"];

/// The local variables and callees of one generated sweep.
struct Driver {
    /// The step's primal, forward and reverse sweeps.
    step: ProcId,
    step_fwd: ProcId,
    step_rev: ProcId,
    /// Arguments of the step's primal and of its sweeps.
    primal_args: Vec<CallArg>,
    sweep_args: Vec<CallArg>,
    /// Variables a trip may write and may read before writing (the
    /// snapshot).
    snapshot: Vec<VarId>,
    /// Scalars a trip may write but always writes before reading: saved
    /// once by the forward sweep, restored at the end of the reverse sweep.
    dead: Vec<VarId>,
    /// I64 locals.
    a: VarId,
    b: VarId,
    c: VarId,
    m: VarId,
    j: VarId,
    k: VarId,
    depth: VarId,
    words: VarId,
    split_out: VarId,
    /// The statistics globals (as variables of the sweep).
    stats: [VarId; 3],
    split: ProcId,
    /// True in the reverse sweep (trips are counted as recomputed).
    reverse: bool,
}

/// `if cond { then } else { otherwise }`, the cursor continuing after both.
fn if_else(
    c: &mut Cursor<'_>,
    cond: Value,
    then: impl FnOnce(&mut Cursor<'_>),
    otherwise: impl FnOnce(&mut Cursor<'_>),
) {
    let (yes, no, join) = (c.new_block(), c.new_block(), c.new_block());
    c.terminate(Terminator::Branch {
        cond,
        then_dest: yes,
        else_dest: no,
    });
    c.switch_to(yes);
    then(c);
    c.terminate(Terminator::Jump(join));
    c.switch_to(no);
    otherwise(c);
    c.terminate(Terminator::Jump(join));
    c.switch_to(join);
}

/// `if cond { then }`.
fn if_then(c: &mut Cursor<'_>, cond: Value, then: impl FnOnce(&mut Cursor<'_>)) {
    if_else(c, cond, then, |_| {});
}

/// `while cond() { body }`: `cond` is evaluated in the loop's head.
fn while_loop(
    c: &mut Cursor<'_>,
    cond: impl FnOnce(&mut Cursor<'_>) -> Value,
    body: impl FnOnce(&mut Cursor<'_>),
) {
    let (head, inside, exit) = (c.new_block(), c.new_block(), c.new_block());
    c.terminate(Terminator::Jump(head));
    c.switch_to(head);
    let more = cond(c);
    c.terminate(Terminator::Branch {
        cond: more,
        then_dest: inside,
        else_dest: exit,
    });
    c.switch_to(inside);
    body(c);
    c.terminate(Terminator::Jump(head));
    c.switch_to(exit);
}

/// `x op y` on I64 values.
fn test(c: &mut Cursor<'_>, op: CmpOp, x: Value, y: Value) -> Value {
    c.ins(Inst::Cmp(op, x, y), Some(Type::Bool))
}

/// `v op constant`, `v` an I64 variable.
fn test_var(c: &mut Cursor<'_>, op: CmpOp, v: VarId, constant: i64) -> Value {
    let x = load(c, v);
    let y = c.int(constant);
    test(c, op, x, y)
}

/// `x - y` of two I64 variables.
fn difference(c: &mut Cursor<'_>, x: VarId, y: VarId) -> Value {
    let (x, y) = (load(c, x), load(c, y));
    c.binary(BinaryOp::Sub, x, y)
}

fn load(c: &mut Cursor<'_>, v: VarId) -> Value {
    c.ins(Inst::Load(v), Some(Type::I64))
}

fn set(c: &mut Cursor<'_>, v: VarId, x: Value) {
    c.ins(Inst::Store(v, x), None);
}

fn set_int(c: &mut Cursor<'_>, v: VarId, x: i64) {
    let x = c.int(x);
    set(c, v, x);
}

fn add_to(c: &mut Cursor<'_>, v: VarId, x: Value) {
    let old = load(c, v);
    let new = c.binary(BinaryOp::Add, old, x);
    set(c, v, new);
}

fn add_int(c: &mut Cursor<'_>, v: VarId, x: i64) {
    let x = c.int(x);
    add_to(c, v, x);
}

/// Pushes the variables on the control stack, in order.
fn push_control(c: &mut Cursor<'_>, vars: &[VarId]) {
    for &v in vars {
        let x = load(c, v);
        c.ins(Inst::Push(adjit_ir::StackKind::Control, x), None);
    }
}

/// Pops the control stack into the variables, in order.
fn pop_control(c: &mut Cursor<'_>, vars: &[VarId]) {
    for &v in vars {
        let x = c.ins(Inst::Pop(adjit_ir::StackKind::Control), Some(Type::I64));
        set(c, v, x);
    }
}

impl Driver {
    fn count_trips(&self, c: &mut Cursor<'_>, n: Value) {
        if self.reverse {
            add_to(c, self.stats[0], n);
        }
    }

    /// Adds `sign` times the snapshot's bytes to the bytes held, and keeps
    /// their peak.
    fn count_snapshot(&self, c: &mut Cursor<'_>, sign: i64) {
        let w = load(c, self.words);
        let eight = c.int(8 * sign);
        let bytes = c.binary(BinaryOp::Mul, w, eight);
        add_to(c, self.stats[1], bytes);
        let now = load(c, self.stats[1]);
        let peak = load(c, self.stats[2]);
        let peak = c.binary(BinaryOp::Max, now, peak);
        set(c, self.stats[2], peak);
    }

    /// Pushes the snapshot and counts its bytes.
    fn save(&self, c: &mut Cursor<'_>) {
        for &v in &self.snapshot {
            c.save_var(v);
        }
        self.count_snapshot(c, 1);
    }

    /// Pops the snapshot into the state.
    fn restore(&self, c: &mut Cursor<'_>) {
        for &v in self.snapshot.iter().rev() {
            c.restore_var(v);
        }
        self.count_snapshot(c, -1);
    }

    /// Calls `proc` `n` times (`n` in the variable; `j` counts).
    fn repeat(&self, c: &mut Cursor<'_>, n: VarId, proc: ProcId, args: &[CallArg]) {
        set_int(c, self.j, 0);
        while_loop(
            c,
            |c| {
                let (j, n) = (load(c, self.j), load(c, n));
                test(c, CmpOp::Lt, j, n)
            },
            |c| {
                c.ins(Inst::Call(proc, args.to_vec()), None);
                add_int(c, self.j, 1);
            },
        );
    }

    /// Runs trips `a..m` with the step's primal.
    fn advance(&self, c: &mut Cursor<'_>) {
        let len = difference(c, self.m, self.a);
        set(c, self.k, len);
        self.repeat(c, self.k, self.step, &self.primal_args);
        let len = difference(c, self.m, self.a);
        self.count_trips(c, len);
    }

    /// Records one trip with the step's forward sweep, then reverses it.
    fn record_and_reverse(&self, c: &mut Cursor<'_>) {
        c.ins(Inst::Call(self.step_fwd, self.sweep_args.clone()), None);
        let one = c.int(1);
        self.count_trips(c, one);
        self.reverse_trip(c);
    }

    /// Reverses the trip just recorded.
    fn reverse_trip(&self, c: &mut Cursor<'_>) {
        c.ins(Inst::Call(self.step_rev, self.sweep_args.clone()), None);
    }

    /// The chain from state `a` (snapshot of `a` held when `b - a > 1`):
    /// advance to the split, push the frame, snapshot, until one trip is
    /// left; the state is then `b - 1`, in `a`.
    fn chain(&self, cur: &mut Cursor<'_>) {
        while_loop(
            cur,
            |c| {
                let len = difference(c, self.b, self.a);
                let one = c.int(1);
                test(c, CmpOp::Gt, len, one)
            },
            |cur| {
                let len = difference(cur, self.b, self.a);
                let c = load(cur, self.c);
                let one = cur.int(1);
                let s = cur.binary(BinaryOp::Add, c, one);
                let args = vec![
                    CallArg::Value(len),
                    CallArg::Value(s),
                    CallArg::Var(self.split_out),
                ];
                cur.ins(Inst::Call(self.split, args), None);
                let a = load(cur, self.a);
                let off = load(cur, self.split_out);
                let m = cur.binary(BinaryOp::Add, a, off);
                set(cur, self.m, m);
                self.advance(cur);
                push_control(cur, &[self.a, self.m, self.c]);
                add_int(cur, self.depth, 1);
                let rest = difference(cur, self.b, self.m);
                let one = cur.int(1);
                let snap = test(cur, CmpOp::Gt, rest, one);
                if_then(cur, snap, |cur| {
                    self.save(cur);
                    add_int(cur, self.c, -1);
                });
                let m = load(cur, self.m);
                set(cur, self.a, m);
            },
        );
    }

    /// The binomial forward sweep for the trip count in `b` and the snapshot
    /// count in `k`: the first chain, the last trip recorded, then the trip
    /// count and the number of frames pushed.
    fn revolve_forward(&self, c: &mut Cursor<'_>) {
        let k = load(c, self.k);
        let one = c.int(1);
        let k = c.binary(BinaryOp::Max, k, one);
        let k1 = c.binary(BinaryOp::Sub, k, one);
        set(c, self.c, k1);
        set_int(c, self.a, 0);
        set_int(c, self.depth, 0);
        let many = test_var(c, CmpOp::Gt, self.b, 1);
        if_then(c, many, |c| self.save(c));
        let any = test_var(c, CmpOp::Gt, self.b, 0);
        if_then(c, any, |c| {
            self.chain(c);
            c.ins(Inst::Call(self.step_fwd, self.sweep_args.clone()), None);
        });
        push_control(c, &[self.b, self.depth]);
    }

    /// The binomial reverse sweep: reverse the last trip, then every frame
    /// (restore its snapshot, run the chain from it, record and reverse
    /// the trip it ends on).
    fn revolve_reverse(&self, c: &mut Cursor<'_>) {
        pop_control(c, &[self.depth, self.b]);
        let any = test_var(c, CmpOp::Gt, self.b, 0);
        if_then(c, any, |c| self.reverse_trip(c));
        while_loop(
            c,
            |c| test_var(c, CmpOp::Gt, self.depth, 0),
            |c| {
                pop_control(c, &[self.c, self.m, self.a]);
                add_int(c, self.depth, -1);
                self.restore(c);
                let len = difference(c, self.m, self.a);
                let one = c.int(1);
                let several = test(c, CmpOp::Gt, len, one);
                if_then(c, several, |c| self.save(c));
                let m = load(c, self.m);
                set(c, self.b, m);
                self.chain(c);
                self.record_and_reverse(c);
            },
        );
    }

    /// The plain forward sweep: every trip recorded, the trip count pushed.
    fn plain_forward(&self, c: &mut Cursor<'_>) {
        self.repeat(c, self.b, self.step_fwd, &self.sweep_args);
        push_control(c, &[self.b]);
    }

    /// The plain reverse sweep: every trip reversed.
    fn plain_reverse(&self, c: &mut Cursor<'_>) {
        pop_control(c, &[self.b]);
        self.repeat(c, self.b, self.step_rev, &self.sweep_args);
    }
}

/// The automatic mode's parts of a sweep: the tape budget, the counting
/// copy of the step's forward sweep, the probe globals and a flag.
struct Budget {
    /// Bytes the loop's tape may take.
    bytes: i64,
    /// The counting copy of the step's forward sweep.
    count_fwd: ProcId,
    /// Bytes counted by the counting copy (a global).
    probe: VarId,
    /// 1 while a counting copy runs (a global): loops nested in the
    /// measured trip are not measured in turn.
    probing: VarId,
    /// 1 when the loop is checkpointed (an I64 local).
    flag: VarId,
    /// The snapshot count of the options, if any: the budget's count does
    /// not exceed it (the directive's count is not used).
    cap: Option<u32>,
}

impl Budget {
    /// The automatic forward sweep: with at least one trip (and outside a
    /// measurement), snapshot the state, run the first trip with the
    /// counting copy (statistics of nested loops kept), restore the state;
    /// when bytes per trip × trips exceed the budget, checkpoint with the
    /// largest `K` whose snapshots and control frames fit beside one trip's
    /// tape and the loop's three control entries (at least 1, at most the trip count and the options' count),
    /// else record
    /// every trip. The choice is pushed last.
    fn forward(&self, c: &mut Cursor<'_>, d: &Driver) {
        set_int(c, self.flag, 0);
        let any = test_var(c, CmpOp::Gt, d.b, 0);
        let idle = test_var(c, CmpOp::Eq, self.probing, 0);
        let measure = c.binary(BinaryOp::And, any, idle);
        if_then(c, measure, |c| {
            d.save(c);
            let held = load(c, d.stats[1]);
            let peak = load(c, d.stats[2]);
            set_int(c, self.probing, 1);
            set_int(c, self.probe, 0);
            c.ins(Inst::Call(self.count_fwd, d.sweep_args.clone()), None);
            set_int(c, self.probing, 0);
            set(c, d.stats[1], held);
            set(c, d.stats[2], peak);
            d.restore(c);
            let per_trip = load(c, self.probe);
            let n = load(c, d.b);
            let projected = c.binary(BinaryOp::Mul, per_trip, n);
            let budget = c.int(self.bytes);
            let over = test(c, CmpOp::Gt, projected, budget);
            if_then(c, over, |c| {
                set_int(c, self.flag, 1);
                let budget = c.int(self.bytes);
                let per_trip = load(c, self.probe);
                let room = c.binary(BinaryOp::Sub, budget, per_trip);
                // The trip count, the frame count and the choice.
                let tail = c.int(24);
                let room = c.binary(BinaryOp::Sub, room, tail);
                let w = load(c, d.words);
                let eight = c.int(8);
                let snap = c.binary(BinaryOp::Mul, w, eight);
                let frame = c.int(24);
                let each = c.binary(BinaryOp::Add, snap, frame);
                let k = c.binary(BinaryOp::Div, room, each);
                let one = c.int(1);
                let k = c.binary(BinaryOp::Max, k, one);
                let n = load(c, d.b);
                let mut k = c.binary(BinaryOp::Min, k, n);
                if let Some(cap) = self.cap {
                    let cap = c.int(i64::from(cap));
                    k = c.binary(BinaryOp::Min, k, cap);
                }
                set(c, d.k, k);
            });
        });
        let chosen = test_var(c, CmpOp::Ne, self.flag, 0);
        if_else(c, chosen, |c| d.revolve_forward(c), |c| d.plain_forward(c));
        push_control(c, &[self.flag]);
    }

    /// The automatic reverse sweep: the reversal the forward sweep chose.
    fn reverse(&self, c: &mut Cursor<'_>, d: &Driver) {
        pop_control(c, &[self.flag]);
        let chosen = test_var(c, CmpOp::Ne, self.flag, 0);
        if_else(c, chosen, |c| d.revolve_reverse(c), |c| d.plain_reverse(c));
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
        let budget = self.options.tape_budget;
        if !outlined.has_snapshots && fixed.is_none() && budget.is_none() {
            return Err(AdError::Unsupported {
                proc: outlined.host.clone(),
                what: "a loop under a bare BINOMIAL-CKP without a snapshot count \
                       (write `!$AD BINOMIAL-CKP nsteps nsnapshots first`, or give \
                       --checkpoints K or --tape-budget BYTES)"
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
        // Only what a trip may read before writing it is live at the loop
        // head: a scalar every trip stores before reading is left out.
        // The others (dead) are saved once around the whole loop, so that
        // its reverse sweep leaves every variable as it was before the loop.
        let exposed = crate::ad::checkpoint::live::upward_exposed(step_proc);
        let (mut written, dead): (Vec<WrittenVar>, Vec<WrittenVar>) = written_params(step_proc)
            .into_iter()
            .partition(|w| match *w {
                WrittenVar::Param(i) => exposed.contains(&step_proc.params[i]),
                WrittenVar::Global(_) => true,
            });
        for g in self.written_globals(outlined.step) {
            written.push(WrittenVar::Global(g));
        }
        let split = self.split_proc();
        let stats = self.stats_globals();
        let probe = match budget {
            Some(_) => {
                let [probe, probing] = self.i64_globals(PROBE_GLOBALS);
                let count = self.count_proc(probe);
                let count_fwd = crate::ad::checkpoint::probe::counting_copy(
                    &mut self.out,
                    step_sweeps.forward,
                    count,
                );
                Some((probe, probing, count_fwd))
            }
            None => None,
        };
        let mut procs = Vec::new();
        for reverse in [false, true] {
            let suffix = if reverse { "rev" } else { "fwd" };
            let name = format!("{}_{suffix}", source.name);
            let id = self.reserve(&name);
            let name = self.out.proc(id).name.clone();
            let mut p = layout.new_proc(name, source.span);
            flatten_array_params(&mut p);
            let dead = self.snapshot_vars(&mut p, &source, &dead);
            let Some((snapshot, dead)) = self.snapshot_vars(&mut p, &source, &written).zip(dead)
            else {
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
                dead,
                a: local(&mut p, "_ckp_a"),
                b: local(&mut p, "_ckp_b"),
                c: local(&mut p, "_ckp_c"),
                m: local(&mut p, "_ckp_m"),
                j: local(&mut p, "_ckp_j"),
                k: local(&mut p, "_ckp_k"),
                depth: local(&mut p, "_ckp_depth"),
                words: local(&mut p, "_ckp_words"),
                split_out: local(&mut p, "_ckp_split"),
                stats: stat_vars,
                split,
                reverse,
            };
            let trips = source.params[n_state];
            let snaps = source.params[n_state + 1];
            let automatic = match (budget, probe) {
                (Some(bytes), Some((probe, probing, count_fwd))) => {
                    let globals = self.out.globals.clone();
                    Some(Budget {
                        bytes: i64::try_from(bytes).unwrap_or(i64::MAX),
                        count_fwd,
                        probe: global_var(&mut p, &globals[probe.index()], probe),
                        probing: global_var(&mut p, &globals[probing.index()], probing),
                        flag: local(&mut p, "_ckp_flag"),
                        cap: fixed,
                    })
                }
                _ => None,
            };
            let mut c = Cursor::new(&mut p, Proc::ENTRY);
            snapshot_words(&mut c, &d);
            if !reverse {
                for &v in &d.dead {
                    c.save_var(v);
                }
            }
            match (&automatic, reverse) {
                (Some(auto), false) => {
                    let n = load(&mut c, trips);
                    set(&mut c, d.b, n);
                    auto.forward(&mut c, &d);
                }
                (Some(auto), true) => auto.reverse(&mut c, &d),
                (None, false) => {
                    let n = load(&mut c, trips);
                    set(&mut c, d.b, n);
                    let k = match fixed {
                        Some(k) => c.int(i64::from(k)),
                        None => load(&mut c, snaps),
                    };
                    set(&mut c, d.k, k);
                    d.revolve_forward(&mut c);
                }
                (None, true) => d.revolve_reverse(&mut c),
            }
            if reverse {
                for &v in d.dead.iter().rev() {
                    c.restore_var(v);
                }
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
        self.i64_globals(STATS_GLOBALS)
    }

    /// `_ad_ckp_count`: adds 8 (one stack entry) to the global `probe`
    /// (generated once per module).
    fn count_proc(&mut self, probe: GlobalId) -> ProcId {
        const NAME: &str = "_ad_ckp_count";
        if let Some(id) = self.out.find_proc(NAME) {
            return id;
        }
        let id = self.out.add_proc(Proc::new(NAME));
        let mut p = Proc::new(NAME);
        let global = self.out.globals[probe.index()].clone();
        let v = global_var(&mut p, &global, probe);
        let mut c = Cursor::new(&mut p, Proc::ENTRY);
        add_int(&mut c, v, 8);
        c.terminate(Terminator::Return);
        self.out.procs[id.index()] = p;
        id
    }

    /// Scalar I64 globals of the given names (created once per module).
    fn i64_globals<const N: usize>(&mut self, names: [&str; N]) -> [GlobalId; N] {
        names.map(|name| {
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
                        if let CallArg::Var(var)
                        | CallArg::Elem(var, _)
                        | CallArg::Slice(var, _, _) = a
                        {
                            written.insert(*var);
                        }
                    }
                }
                Inst::CharAssign(dst, _)
                | Inst::Io(adjit_ir::IoOp::GetChar(dst) | adjit_ir::IoOp::EndWriteTo(dst)) => {
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
    set(c, d.words, total);
}
