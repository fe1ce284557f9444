//! Evaluation into caller-owned buffers: a reusable [`Workspace`] holds the
//! derivative companions of the arguments and the runtime with its tape, so
//! that a gradient or directional derivative in an optimizer loop
//! allocates nothing of the problem's size (only the call's small argument
//! slot list) and copies no argument buffer.
//!
//! A call hands the derivative procedure the caller's argument buffers
//! where they are (or, on the executor's slower paths, moves them into its
//! argument list and back: a swap of vectors, no copy), runs the
//! combined adjoint `foo_b` (or the tangent `foo_d`) on the workspace's
//! runtime, whose stack segments stay mapped from call to call, and
//! leaves the derivative in the caller's slice. The companions live in
//! the workspace: they are cleared in place (no fresh zero-filled pages)
//! and laid out again only when the argument shapes change.
//!
//! Problem-size memory is touched once per call where it can be:
//! - an adjoint's input companion that the `wrt` elements cover whole, in
//!   order (`--wrt x`), is the caller's gradient slice itself: zeroed (or
//!   seeded) there, accumulated into by the sweep, nothing copied out;
//! - a companion that the `of` elements cover whole, in order, is
//!   overwritten by the seed (one copy, no clear before it);
//! - the other input companions of an adjoint are zeroed in the pass that
//!   copies the gradient out (one pass over them instead of two), and
//!   those of a tangent are overwritten by the direction.

use super::{
    elements, not_one_output, Adjoint, Element, Error, ErrorKind, ParamMap, Selection, Tangent,
};
use crate::engine::{Args, Executor};
use adjit_ir::Type;
use adjit_ir::{Buffer, ProcId, RuntimeErrorKind};
use adjit_jit::codegen::{buffer_slot, ArgBuffers, ArgRef};
use adjit_jit::runtime::{ArgSlot, Runtime};

/// Reusable storage for [`Adjoint::vjp_into`], [`Adjoint::gradient_into`]
/// and [`Tangent::directional_into`]: derivative companions, the runtime
/// (tape segments kept across calls) and the element lists of the last
/// argument shapes. Made by [`Adjoint::workspace`] or
/// [`Tangent::workspace`]; belongs to the handle that made it.
#[derive(Default)]
pub struct Workspace {
    /// Arguments of the derivative procedure: companions, and empty
    /// placeholders in the primal slots between calls.
    bufs: Vec<Buffer>,
    runtime: Option<Box<Runtime>>,
    /// Lengths of the caller's buffers the layout was made for.
    shape: Vec<usize>,
    of: Vec<Element>,
    /// The output elements as runs (see [`runs`]).
    of_runs: Vec<Run>,
    /// The input elements as runs (see [`runs`]).
    wrt_runs: Vec<Run>,
    wrt_len: usize,
    /// Per slot: where in the seed a run of output elements covers its
    /// `F64` companion whole, in order (the seed is copied over it).
    seed_at: Vec<Option<usize>>,
    /// Per slot of an adjoint (one direction): where in the gradient a run
    /// of input elements covers its `F64` companion whole, in order (the
    /// caller's gradient slice is the companion when the call runs native
    /// code in place).
    grad_at: Vec<Option<usize>>,
    /// Per slot, where a call in place finds its argument: without, and
    /// with the companions at `grad_at` in the caller's gradient.
    places: [Vec<Place>; 2],
    /// Per slot: the input runs of its companion as sorted, disjoint
    /// ranges of entries, when it is an `F64` companion whose runs do not
    /// overlap (empty otherwise). Only these runs are read and zeroed in
    /// one pass, or overwritten by a tangent direction.
    input_ranges: Vec<Vec<(usize, usize)>>,
    /// The `input_ranges` entries are zero (the last adjoint read its
    /// gradient out of them without error).
    inputs_zero: bool,
    /// The handle the layout was made for (see [`handle_id`]); 0 before
    /// the first.
    owner: u64,
    /// The plan of a call, decided with the layout: what an adjoint's
    /// seed, its gradient and a tangent's direction do to which storage.
    plan: Plan,
}

/// What the calls of one layout do to the companions, decided once by
/// [`Workspace::fit`] from the argument shapes, the handle's `of` and
/// `wrt` and its [`ParamMap`], so that a call iterates over the steps that
/// matter only (no search of the parameter map, no per-slot decisions).
/// Each list comes in two forms: without, and with the companions at
/// [`Workspace::grad_at`] in the caller's gradient.
#[derive(Default)]
struct Plan {
    /// How an adjoint sets its companions from the seed, in order.
    seed: [Vec<SeedStep>; 2],
    /// How an adjoint's gradient is read out of its companions, in order.
    take: [Vec<TakeStep>; 2],
    /// Per input run of a tangent: `(slot, first offset, seed position,
    /// count)` of the runs whose parameter has a companion.
    direction: Vec<(usize, usize, usize, usize)>,
    /// Per output element: its companion slot and offset, if it has one.
    out: Vec<Option<(usize, usize)>>,
}

/// One step of [`Plan::seed`].
#[derive(Clone, Copy, Debug)]
enum SeedStep {
    /// The caller's gradient from entry `k`, `len` entries, is a
    /// companion: overwritten by the seed from `seed` entry `s`, or zeroed.
    Grad {
        k: usize,
        len: usize,
        s: Option<usize>,
    },
    /// The workspace's companion in `slot`: overwritten by the seed from
    /// entry `s` (an `F64` companion it covers whole), or cleared (except
    /// input ranges known to be zero).
    Companion { slot: usize, s: Option<usize> },
    /// Seed entries `s..s + n` added to the caller's gradient from entry
    /// `k` (after the sets and clears).
    AddGrad { k: usize, s: usize, n: usize },
    /// Seed entries `s..s + n` added to companion `slot` from entry
    /// `start`.
    AddCompanion {
        slot: usize,
        start: usize,
        s: usize,
        n: usize,
    },
}

/// One step of [`Plan::take`]: gradient entries `k..k + n` (one input run).
#[derive(Clone, Copy, Debug)]
enum TakeStep {
    /// The run's parameter has no companion: zero.
    Zero { k: usize, n: usize },
    /// Moved out of `F64` companion `slot` from entry `start`, leaving
    /// zeros (the slot's input ranges are disjoint).
    Move {
        slot: usize,
        start: usize,
        k: usize,
        n: usize,
    },
    /// Read out of companion `slot` from entry `start`.
    Read {
        slot: usize,
        start: usize,
        k: usize,
        n: usize,
    },
}

/// A fresh identity for a derivative handle, which its [`Workspace`]s
/// record: a workspace laid out for one handle and passed to another is
/// laid out again for that one (never run with the first one's plan).
pub(super) fn handle_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// What a derivative handle lays a [`Workspace`] out for.
#[derive(Clone, Copy)]
struct Layout<'h> {
    /// The handle's identity ([`handle_id`]).
    owner: u64,
    map: &'h ParamMap,
    of: &'h [Selection],
    wrt: &'h [Selection],
    /// Directions per sweep (1 for an adjoint).
    width: usize,
    /// The slots whose gradient slices the handle's procedure run in place
    /// zeroes on entry (see [`Workspace::seed`]); they belong to the
    /// handle, so a layout made for it keeps them.
    zeroed: &'h [usize],
}

impl Workspace {
    /// Lays the workspace out for `args` and the handle `layout` describes
    /// unless it already is: the check of the layout (every call) inline at
    /// the caller, the layout itself (when the shapes change) out of line.
    #[inline]
    fn fit(&mut self, layout: &Layout<'_>, args: &Args) -> Result<(), Error> {
        let same = self.owner == layout.owner
            && self.bufs.len() == layout.map.slots.len()
            && self.shape.len() == args.buffers().len()
            && self
                .shape
                .iter()
                .zip(args.buffers())
                .all(|(&n, b)| n == b.len());
        if same {
            return Ok(());
        }
        self.lay_out(layout, args)
    }

    /// Lays the workspace out for `args` (see [`Workspace::fit`]).
    #[cold]
    #[inline(never)]
    fn lay_out(&mut self, layout: &Layout<'_>, args: &Args) -> Result<(), Error> {
        let Layout {
            owner,
            map,
            of,
            wrt,
            width,
            zeroed,
        } = *layout;
        if self.owner != owner {
            // Another handle's runtime: made for its executor.
            self.runtime = None;
        }
        // Laid out for no handle until the layout is whole.
        self.owner = 0;
        self.of = elements(args, of)?;
        self.of_runs = runs(&self.of);
        let wrt = elements(args, wrt)?;
        self.wrt_len = wrt.len();
        self.wrt_runs = runs(&wrt);
        self.shape = args.buffers().iter().map(Buffer::len).collect();
        self.bufs = map
            .slots
            .iter()
            .map(|&(i, companion)| {
                let b = &args.buffers()[i];
                if companion {
                    Buffer::zeros(b.ty(), b.len() * width)
                } else {
                    Buffer::F64(Vec::new())
                }
            })
            .collect();
        self.input_ranges = vec![Vec::new(); self.bufs.len()];
        for &(param, start, n) in &self.wrt_runs {
            if let Some(slot) = map.companion(param) {
                if matches!(self.bufs[slot], Buffer::F64(_)) {
                    self.input_ranges[slot].push((start, start + n));
                }
            }
        }
        for ranges in &mut self.input_ranges {
            ranges.sort_unstable();
            if ranges.windows(2).any(|w| w[0].1 > w[1].0) {
                ranges.clear();
            }
        }
        self.seed_at = self.whole(map, &self.of_runs);
        self.grad_at = if width == 1 {
            self.whole(map, &self.wrt_runs)
        } else {
            vec![None; self.bufs.len()]
        };
        self.places = [false, true].map(|in_grad| {
            map.slots
                .iter()
                .zip(&self.grad_at)
                .zip(&self.bufs)
                .map(|((&(param, companion), &at), buf)| match at {
                    _ if !companion => Place::Arg(param),
                    Some(k) if in_grad => Place::Grad(k, buf.len()),
                    _ => Place::Companion,
                })
                .collect()
        });
        self.inputs_zero = false;
        self.plan = self.make_plan(map, width, zeroed);
        self.owner = owner;
        Ok(())
    }

    /// The [`Plan`] of the layout just made; a call in place leaves the
    /// gradient slices of the slots `zeroed` as they are.
    fn make_plan(&self, map: &ParamMap, width: usize, zeroed: &[usize]) -> Plan {
        let companions = || {
            map.slots
                .iter()
                .enumerate()
                .filter(|(_, &(_, companion))| companion)
                .map(|(slot, _)| slot)
        };
        let seed = [false, true].map(|in_grad| {
            let grad_at = |slot: usize| self.grad_at[slot].filter(|_| in_grad);
            let mut steps: Vec<SeedStep> = companions()
                // Zeroed on entry by the procedure run in place.
                .filter(|slot| {
                    !(in_grad
                        && self.seed_at[*slot].is_none()
                        && self.grad_at[*slot].is_some()
                        && zeroed.contains(slot))
                })
                .map(|slot| match grad_at(slot) {
                    Some(k) => SeedStep::Grad {
                        k,
                        len: self.bufs[slot].len(),
                        s: self.seed_at[slot],
                    },
                    None => SeedStep::Companion {
                        slot,
                        s: self.seed_at[slot],
                    },
                })
                .collect();
            let mut s = 0;
            for &(param, start, n) in &self.of_runs {
                if let Some(slot) = map.companion(param) {
                    // A companion the seed covers whole was copied over.
                    if self.seed_at[slot].is_none() {
                        steps.push(match grad_at(slot) {
                            Some(k) => SeedStep::AddGrad { k: k + start, s, n },
                            None => SeedStep::AddCompanion { slot, start, s, n },
                        });
                    }
                }
                s += n;
            }
            steps
        });
        let take = [false, true].map(|in_grad| {
            let mut steps = Vec::new();
            let mut k = 0;
            for &(param, start, n) in &self.wrt_runs {
                match map.companion(param) {
                    None => steps.push(TakeStep::Zero { k, n }),
                    // The caller's gradient was the companion.
                    Some(slot) if in_grad && self.grad_at[slot].is_some() => {}
                    Some(slot) => steps.push(
                        if matches!(self.bufs[slot], Buffer::F64(_))
                            && !self.input_ranges[slot].is_empty()
                        {
                            TakeStep::Move { slot, start, k, n }
                        } else {
                            TakeStep::Read { slot, start, k, n }
                        },
                    ),
                }
                k += n;
            }
            steps
        });
        let mut direction = Vec::new();
        let mut s = 0;
        for &(param, start, n) in &self.wrt_runs {
            if let Some(slot) = map.companion(param) {
                direction.push((slot, start, s, n));
            }
            s += n;
        }
        let out = self
            .of
            .iter()
            .map(|o| map.companion(o.param).map(|slot| (slot, o.offset * width)))
            .collect();
        Plan {
            seed,
            take,
            direction,
            out,
        }
    }

    /// Per slot: the position in the element order of `runs` of the one
    /// run that covers the slot's `F64` companion whole, from its first
    /// entry in order, when the companion's parameter has no other run.
    fn whole(&self, map: &ParamMap, runs: &[Run]) -> Vec<Option<usize>> {
        let mut at = vec![None; self.bufs.len()];
        let mut seen = vec![0usize; self.bufs.len()];
        let mut k = 0;
        for &(param, start, n) in runs {
            if let Some(slot) = map.companion(param) {
                seen[slot] += 1;
                if let Buffer::F64(v) = &self.bufs[slot] {
                    if start == 0 && n == v.len() {
                        at[slot] = Some(k);
                    }
                }
            }
            k += n;
        }
        for (a, &times) in at.iter_mut().zip(&seen) {
            if times != 1 {
                *a = None;
            }
        }
        at
    }

    /// Clears the companions in place, except the input ranges when
    /// `skip_inputs` (they are zero already, or about to be overwritten).
    fn clear(&mut self, map: &ParamMap, skip_inputs: bool) {
        for (slot, (buf, &(_, companion))) in self.bufs.iter_mut().zip(&map.slots).enumerate() {
            if companion {
                clear_companion(buf, kept_zero(&self.input_ranges, slot, skip_inputs));
            }
        }
        self.inputs_zero = false;
    }

    /// Sets the companions of an adjoint to the seed `seed` (the weights
    /// of the `of` elements, added into zero companions) in one pass each:
    /// a companion the seed covers whole is copied over, the others are
    /// cleared (except input ranges known to be zero) and get their seed
    /// entries added. With `grad`, the companions at [`Workspace::grad_at`]
    /// are the caller's gradient slice, prepared there instead (except the
    /// slices the procedure run zeroes on entry: see [`Workspace::fit`]).
    /// Follows [`Plan::seed`].
    fn seed(&mut self, seed: &[f64], grad: Option<&mut [f64]>) {
        let skip_inputs = self.inputs_zero;
        self.inputs_zero = false;
        let in_grad = grad.is_some();
        let grad = grad.unwrap_or_default();
        for &step in &self.plan.seed[usize::from(in_grad)] {
            match step {
                SeedStep::Grad { k, len, s } => {
                    let g = &mut grad[k..k + len];
                    match s {
                        Some(s) => copy(g, &seed[s..s + len]),
                        None => zero(g),
                    }
                }
                SeedStep::Companion { slot, s } => match (&mut self.bufs[slot], s) {
                    (Buffer::F64(v), Some(s)) => {
                        let len = v.len();
                        copy(v, &seed[s..s + len]);
                    }
                    (buf, _) => {
                        clear_companion(buf, kept_zero(&self.input_ranges, slot, skip_inputs));
                    }
                },
                SeedStep::AddGrad { k, s, n } => {
                    for (d, w) in grad[k..k + n].iter_mut().zip(&seed[s..s + n]) {
                        *d += w;
                    }
                }
                SeedStep::AddCompanion { slot, start, s, n } => {
                    let b = &mut self.bufs[slot];
                    for (j, w) in seed[s..s + n].iter().enumerate() {
                        b.set_f64(start + j, b.get_f64(start + j) + w);
                    }
                }
            }
        }
    }

    /// Runs `proc` on the companions and the caller's buffers in the
    /// primal slots: read and written in place when the executor runs
    /// native code without globals, else moved into the slots (and moved
    /// back, also on failure).
    /// With `grad` (only when `exec` runs native code in place: see
    /// [`Executor::runs_in_place`]), the companions at
    /// [`Workspace::grad_at`] are the caller's gradient slice.
    fn run(
        &mut self,
        exec: &Executor,
        map: &ParamMap,
        proc: ProcId,
        args: &mut Args,
        grad: Option<&mut [f64]>,
    ) -> Result<(), Error> {
        let in_grad = grad.is_some();
        let mut gathered = Gathered {
            bufs: &mut self.bufs,
            args: args.buffers_mut(),
            grad: grad.unwrap_or_default(),
            places: &self.places[usize::from(in_grad)],
        };
        if let Some(result) = exec.call_direct(&mut self.runtime, proc, &mut gathered) {
            return self.relayout_after(result);
        }
        if in_grad {
            return Err(Error::new(
                ErrorKind::Internal,
                "a gradient slice was prepared for a call that does not run in place",
            ));
        }
        let swap = |bufs: &mut Vec<Buffer>, args: &mut Args| {
            for (slot, &(i, companion)) in map.slots.iter().enumerate() {
                if !companion {
                    std::mem::swap(&mut bufs[slot], &mut args.buffers_mut()[i]);
                }
            }
        };
        swap(&mut self.bufs, args);
        let result = exec.call_reusing(&mut self.runtime, proc, &mut self.bufs);
        swap(&mut self.bufs, args);
        self.relayout_after(result)
    }

    /// `result`, after making the next call lay the workspace out again
    /// when it is an argument error: the companions were made after
    /// buffers of the wrong type (the layout compares lengths only).
    fn relayout_after(&mut self, result: Result<(), Error>) -> Result<(), Error> {
        if let Err(e) = &result {
            if e.runtime
                .as_ref()
                .is_some_and(|r| r.kind == RuntimeErrorKind::ArgumentSize)
            {
                self.shape.clear();
            }
        }
        result
    }

    /// Moves the input companions' entries, for every input element in
    /// order, into `out`, leaving zeros behind in the input ranges (which
    /// the next adjoint then need not clear); with `in_grad`, the
    /// companions at [`Workspace::grad_at`] were `out` itself during the
    /// call and are left as they are. Follows [`Plan::take`].
    fn take_inputs(&mut self, out: &mut [f64], in_grad: bool) {
        for &step in &self.plan.take[usize::from(in_grad)] {
            match step {
                TakeStep::Zero { k, n } => zero(&mut out[k..k + n]),
                TakeStep::Move { slot, start, k, n } => {
                    if let Buffer::F64(v) = &mut self.bufs[slot] {
                        // Two whole-slice passes (memcpy, memset), not an
                        // element-wise take: 2.3 -> 0.4 instructions per
                        // element.
                        let src = &mut v[start..start + n];
                        copy(&mut out[k..k + n], src);
                        zero(src);
                    }
                }
                TakeStep::Read { slot, start, k, n } => {
                    let b = &self.bufs[slot];
                    for (j, d) in out[k..k + n].iter_mut().enumerate() {
                        *d = b.get_f64(start + j);
                    }
                }
            }
        }
        self.inputs_zero = true;
    }
}

/// Copies `src` over `dst` (equal lengths): a single entry (a scalar's
/// companion, a one-element seed) is one store, not a call of `memcpy`.
#[inline]
fn copy(dst: &mut [f64], src: &[f64]) {
    match (dst, src) {
        ([d], [s]) => *d = *s,
        (dst, src) => dst.copy_from_slice(src),
    }
}

/// Zeroes `v`: a single entry is one store, not a call of `memset`.
#[inline]
fn zero(v: &mut [f64]) {
    match v {
        [] => {}
        [d] => *d = 0.0,
        v => v.fill(0.0),
    }
}

/// A run of elements of one parameter at consecutive offsets:
/// `(parameter, first offset, count)`.
type Run = (usize, usize, usize);

/// `elements` as runs, in order.
fn runs(elements: &[Element]) -> Vec<Run> {
    let mut out: Vec<Run> = Vec::new();
    for e in elements {
        match out.last_mut() {
            Some((p, start, n)) if *p == e.param && *start + *n == e.offset => *n += 1,
            _ => out.push((e.param, e.offset, 1)),
        }
    }
    out
}

/// The ranges of companion `slot` a clear may skip: its input ranges when
/// `inputs_zero` (the last adjoint left them zero), else none.
fn kept_zero(
    input_ranges: &[Vec<(usize, usize)>],
    slot: usize,
    inputs_zero: bool,
) -> &[(usize, usize)] {
    if inputs_zero {
        &input_ranges[slot]
    } else {
        &[]
    }
}

/// Zeroes a companion in place, except the sorted, disjoint ranges `skip`
/// of an `F64` one.
fn clear_companion(buf: &mut Buffer, skip: &[(usize, usize)]) {
    match buf {
        Buffer::F64(v) => {
            let mut from = 0;
            for &(start, end) in skip {
                zero(&mut v[from..start]);
                from = end;
            }
            zero(&mut v[from..]);
        }
        Buffer::F32(v) => v.fill(0.0),
        other => *other = Buffer::zeros(other.ty(), other.len()),
    }
}

/// Where a call in place finds one argument of a derivative procedure.
#[derive(Clone, Copy, Debug)]
enum Place {
    /// The caller's buffer of this primal parameter.
    Arg(usize),
    /// The workspace's companion in the same slot.
    Companion,
    /// The caller's gradient, from this entry, this many entries.
    Grad(usize, usize),
}

/// The arguments of a derivative procedure where they are: the
/// workspace's companions, the caller's buffers for the primal slots, and
/// the caller's gradient for the companions it holds whole.
struct Gathered<'a> {
    bufs: &'a mut [Buffer],
    args: &'a mut [Buffer],
    grad: &'a mut [f64],
    /// Per slot of the derivative procedure, where its argument is.
    places: &'a [Place],
}

impl ArgBuffers for Gathered<'_> {
    fn count(&self) -> usize {
        self.places.len()
    }
    #[inline]
    fn arg(&mut self, i: usize) -> ArgRef<'_> {
        match self.places[i] {
            Place::Arg(param) => ArgRef::Buffer(&mut self.args[param]),
            Place::Companion => ArgRef::Buffer(&mut self.bufs[i]),
            Place::Grad(k, n) => ArgRef::F64(&mut self.grad[k..k + n]),
        }
    }

    /// One pass over the places, companions and kept types together.
    #[inline]
    fn fill_slots(&mut self, slots: &mut [ArgSlot], types: &[Type]) -> bool {
        let n = slots.len();
        if types.len() != n || self.places.len() != n || self.bufs.len() != n {
            for (i, slot) in slots.iter_mut().enumerate() {
                *slot = self.arg(i).typed_slot().1;
            }
            return false;
        }
        let Gathered {
            bufs,
            args,
            grad,
            places,
        } = self;
        let mut typed = true;
        for (((slot, &place), buf), &want) in slots
            .iter_mut()
            .zip(*places)
            .zip(bufs.iter_mut())
            .zip(types)
        {
            let (ty, arg) = match place {
                Place::Arg(param) => buffer_slot(&mut args[param]),
                Place::Companion => buffer_slot(buf),
                Place::Grad(k, len) => (Type::F64, ArgSlot::of(&mut grad[k..k + len])),
            };
            typed &= ty == want;
            *slot = arg;
        }
        typed
    }
}

/// A usage error for a slice of the wrong length.
fn length_error(what: &str, got: usize, want: usize) -> Error {
    Error::new(
        ErrorKind::Usage,
        format!("{got} {what} values for {want} elements"),
    )
}

impl Adjoint {
    /// What this adjoint lays a workspace out for: its zeroed slots are
    /// the gradient slices the zeroing copy of the adjoint clears itself
    /// when it runs in place (none without one).
    fn layout(&self) -> Layout<'_> {
        Layout {
            owner: self.id,
            map: &self.map,
            of: &self.of,
            wrt: &self.wrt,
            width: 1,
            zeroed: self.zeroing.as_ref().map_or(&[], |(_, slots)| &slots[..]),
        }
    }

    /// An empty workspace for [`Adjoint::vjp_into`] and
    /// [`Adjoint::gradient_into`] (laid out on first use).
    pub fn workspace(&self) -> Workspace {
        Workspace::default()
    }

    /// One reverse sweep into caller-owned storage: runs the combined
    /// adjoint on `args` in place (they come back holding the primal
    /// outputs, as after a primal call), with `seed` weighting the output
    /// elements (the order of the `of` elements), and writes the weighted
    /// gradient over the `wrt` elements into `grad`. Allocates nothing of
    /// the problem's size once `ws` is laid out for the argument shapes;
    /// when the `wrt` elements cover an argument whole, in order, the
    /// sweep accumulates into `grad` itself (nothing copied). After an
    /// error, `grad` holds no meaningful values (a partial sweep's, or
    /// what it held); `ws` is fit for the next call either way.
    pub fn vjp_into(
        &self,
        ws: &mut Workspace,
        args: &mut Args,
        seed: &[f64],
        grad: &mut [f64],
    ) -> Result<(), Error> {
        ws.fit(&self.layout(), args)?;
        self.vjp_fitted(ws, args, seed, grad)
    }

    /// [`Adjoint::vjp_into`] on a workspace [`Workspace::fit`] has just
    /// laid out for `args` (so that [`Adjoint::gradient_into`] checks the
    /// layout once per call, not twice).
    #[inline]
    fn vjp_fitted(
        &self,
        ws: &mut Workspace,
        args: &mut Args,
        seed: &[f64],
        grad: &mut [f64],
    ) -> Result<(), Error> {
        if seed.len() != ws.of.len() {
            return Err(length_error("seed", seed.len(), ws.of.len()));
        }
        if grad.len() != ws.wrt_len {
            return Err(length_error("gradient", grad.len(), ws.wrt_len));
        }
        // Native code in place: the gradient slice holds the companions
        // it covers whole, nothing is copied out.
        let in_grad = self.exec.runs_in_place();
        // There, the zeroing copy of the adjoint clears the gradient slices
        // of the inputs that are not outputs itself (narrowed to what its
        // reverse sweep does not overwrite: the jit's first-touch pass).
        // (The plan of `ws` leaves those slices alone.)
        let proc = match &self.zeroing {
            Some((p, _)) if in_grad => *p,
            _ => self.procs.combined,
        };
        ws.seed(seed, in_grad.then_some(&mut *grad));
        ws.run(
            &self.exec,
            &self.map,
            proc,
            args,
            in_grad.then_some(&mut *grad),
        )?;
        ws.take_inputs(grad, in_grad);
        Ok(())
    }

    /// The gradient of the single output element into `grad` (see
    /// [`Adjoint::vjp_into`]); returns the output's value.
    pub fn gradient_into(
        &self,
        ws: &mut Workspace,
        args: &mut Args,
        grad: &mut [f64],
    ) -> Result<f64, Error> {
        ws.fit(&self.layout(), args)?;
        if ws.of.len() != 1 {
            return Err(not_one_output(ws.of.len()));
        }
        self.vjp_fitted(ws, args, &[1.0], grad)?;
        let o = ws.of[0];
        Ok(args.buffers()[o.param].get_f64(o.offset))
    }
}

impl Tangent {
    /// An empty workspace for [`Tangent::directional_into`].
    pub fn workspace(&self) -> Workspace {
        Workspace::default()
    }

    /// One directional derivative into caller-owned storage: runs the
    /// tangent on `args` in place (they come back holding the primal
    /// outputs), in the direction `seed` (one entry per `wrt` element), and
    /// writes the output tangents (the order of the `of` elements) into
    /// `out`. With several directions per sweep, only the first is used.
    pub fn directional_into(
        &self,
        ws: &mut Workspace,
        args: &mut Args,
        seed: &[f64],
        out: &mut [f64],
    ) -> Result<(), Error> {
        let k = self.directions;
        let layout = Layout {
            owner: self.id,
            map: &self.map,
            of: &self.of,
            wrt: &self.wrt,
            width: k,
            zeroed: &[],
        };
        ws.fit(&layout, args)?;
        if seed.len() != ws.wrt_len {
            return Err(length_error("seed", seed.len(), ws.wrt_len));
        }
        if out.len() != ws.of.len() {
            return Err(length_error("output", out.len(), ws.of.len()));
        }
        // With one direction the seed overwrites the input ranges.
        ws.clear(&self.map, k == 1);
        for &(slot, start, s, n) in &ws.plan.direction {
            match &mut ws.bufs[slot] {
                // Disjoint runs: the direction overwrites them.
                Buffer::F64(v) if k == 1 && !ws.input_ranges[slot].is_empty() => {
                    copy(&mut v[start..start + n], &seed[s..s + n]);
                }
                // An element named twice gets the sum of its entries
                // (as in `Tangent::directional`).
                b => {
                    for j in 0..n {
                        let i = (start + j) * k;
                        b.set_f64(i, b.get_f64(i) + seed[s + j]);
                    }
                }
            }
        }
        ws.run(&self.exec, &self.map, self.proc, args, None)?;
        for (o, d) in ws.plan.out.iter().zip(out.iter_mut()) {
            *d = o.map_or(0.0, |(slot, i)| ws.bufs[slot].get_f64(i));
        }
        Ok(())
    }
}
