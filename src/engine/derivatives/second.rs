//! Second-order derivatives by transforming transforms.
//!
//! * [`Hessian`]: the tangent transform applied to the adjoint's combined
//!   procedure `foo_b` (tangent over adjoint, `foo_b_d` or `foo_b_dv`).
//!   With the output's adjoint seeded 1 and the inputs' tangents seeded
//!   with directions `V`, the tangents of the inputs' adjoints are `H V`:
//!   one sweep is a Hessian-vector product, `ceil(n / K)` vector-mode
//!   sweeps of K directions give the full Hessian.
//! * [`SecondDirectional`]: the tangent transform applied to a tangent
//!   (tangent over tangent, `foo_d_d`): `u^T H v` in one sweep.
//!
//! Both compile the second-order code with the program like any other
//! module; the value stack of the adjoint carries the tangents (see
//! [`crate::ad::tangent`]).
//!
//! The inner (first-order) code is generated with IEEE products
//! ([`StrongZero::Off`]): a strong-zero guard `select(p == 0, 0, p * d)`
//! is right as a value but flat as a function, so its tangent at a point
//! where the partial `p` is exactly zero would drop `p' * d` (Rosenbrock's
//! `(1 - x)**2` at `x = 1` lost its 2). The outer tangent keeps the
//! default guards.

use super::{ad_error, elements, label, sweeps_from_start, var_ids, Element, ParamMap, Selection};
use crate::ad::adjoint::{adjoint, AdjointOptions};
use crate::ad::rules::StrongZero;
use crate::ad::tangent::{default_directions, tangent, TangentOptions, MAX_DIRECTIONS};
use crate::engine::{Args, Engine, Error, ErrorKind, Executor, Program};
use adjit_ir::{Buffer, GlobalId, Proc, ProcId, VarId};
use std::sync::Arc;

/// Where each parameter of a second-order procedure comes from: primal
/// parameter `param`, first-order companion (`first`: its adjoint or inner
/// tangent) or not, second-order companion (`second`: the outer tangent)
/// or not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Slot {
    param: usize,
    first: bool,
    second: bool,
}

/// The parameter layout of a second-order procedure.
#[derive(Clone, Debug)]
struct SecondMap {
    slots: Vec<Slot>,
}

impl SecondMap {
    /// Composes the first-order map (primal -> first-order procedure) with
    /// the tangent's layout (first-order -> second-order procedure).
    fn new(first_map: &ParamMap, first: &Proc, second: &Proc) -> SecondMap {
        let outer = tangent_layout(first, second);
        let slots = outer
            .into_iter()
            .map(|(k, is_tangent)| {
                let (param, is_first) = first_map.slots[k];
                Slot {
                    param,
                    first: is_first,
                    second: is_tangent,
                }
            })
            .collect();
        SecondMap { slots }
    }

    fn find(&self, param: usize, first: bool, second: bool) -> Option<usize> {
        let want = Slot {
            param,
            first,
            second,
        };
        self.slots.iter().position(|&s| s == want)
    }

    /// Zeroed buffers (primal values copied), `width` entries per element
    /// for the outer tangents.
    fn buffers(&self, args: &Args, width: usize) -> Vec<Buffer> {
        self.slots
            .iter()
            .map(|s| {
                let b = &args.buffers()[s.param];
                match (s.first, s.second) {
                    (false, false) => b.clone(),
                    (true, false) => Buffer::zeros(b.ty(), b.len()),
                    (_, true) => Buffer::zeros(b.ty(), b.len() * width),
                }
            })
            .collect()
    }

    /// Adds `value` to entry `index` of the buffer of `(param, first,
    /// second)`, when the procedure has that parameter.
    fn add(&self, bufs: &mut [Buffer], e: (usize, bool, bool), index: usize, value: f64) {
        if let Some(slot) = self.find(e.0, e.1, e.2) {
            let v = bufs[slot].get_f64(index) + value;
            bufs[slot].set_f64(index, v);
        }
    }

    /// Entry `index` of the buffer of `(param, first, second)` (0 when the
    /// procedure has no such parameter: a derivative that is zero).
    fn get(&self, bufs: &[Buffer], e: (usize, bool, bool), index: usize) -> f64 {
        self.find(e.0, e.1, e.2)
            .map_or(0.0, |slot| bufs[slot].get_f64(index))
    }
}

/// The tangent's parameter layout: for each parameter of the tangent
/// procedure `derived` of `src`, the index of the `src` parameter it is or
/// whose tangent it is (the tangent keeps the source's variable handles
/// and appends tangent variables, each tangent parameter right after its
/// primal).
fn tangent_layout(src: &Proc, derived: &Proc) -> Vec<(usize, bool)> {
    let mut out = Vec::new();
    let mut last = 0;
    for &p in &derived.params {
        match src.params.iter().position(|&q| q == p) {
            Some(k) if p.index() < src.vars.len() => {
                last = k;
                out.push((k, false));
            }
            _ => out.push((last, true)),
        }
    }
    out
}

/// A symmetric Hessian of one scalar output.
#[derive(Clone, Debug, PartialEq)]
pub struct HessianMatrix {
    /// The label of the output (`f`, `y(2)`).
    pub of: String,
    /// The labels of the inputs: rows and columns.
    pub wrt: Vec<String>,
    /// Row-major entries, `wrt.len()` squared.
    pub matrix: Vec<f64>,
    /// The output's value at the point.
    pub value: f64,
    /// The gradient at the point (over the `wrt` elements).
    pub gradient: Vec<f64>,
}

impl HessianMatrix {
    /// Number of rows (= columns).
    pub fn n(&self) -> usize {
        self.wrt.len()
    }
    /// Entry `(row, col)`: `d2 f / d x_row d x_col`.
    pub fn get(&self, row: usize, col: usize) -> f64 {
        self.matrix[row * self.wrt.len() + col]
    }
}

/// A compiled tangent-over-adjoint procedure: Hessian-vector products and
/// full Hessians of one scalar output.
pub struct Hessian {
    program: Program,
    primal: ProcId,
    proc: ProcId,
    writes: Vec<GlobalId>,
    exec: Executor,
    map: SecondMap,
    directions: usize,
    of: Vec<Selection>,
    wrt: Vec<Selection>,
}

/// A compiled tangent-over-tangent procedure: second directional
/// derivatives `u^T H v` of the outputs.
pub struct SecondDirectional {
    program: Program,
    primal: ProcId,
    proc: ProcId,
    exec: Executor,
    map: SecondMap,
    of: Vec<Selection>,
    wrt: Vec<Selection>,
}

/// The parameters of `derived` (a first-order procedure of `primal` laid
/// out by `map`) that are the primal parameters `vars`, and those that are
/// their companions.
fn first_order_vars(
    map: &ParamMap,
    primal: &Proc,
    derived: &Proc,
    vars: &[VarId],
) -> (Vec<VarId>, Vec<VarId>) {
    let positions: Vec<usize> = vars
        .iter()
        .filter_map(|v| primal.params.iter().position(|p| p == v))
        .collect();
    let pick = |companion: bool| {
        positions
            .iter()
            .filter_map(move |&i| map.slots.iter().position(|&s| s == (i, companion)))
    };
    (
        pick(false).map(|k| derived.params[k]).collect(),
        pick(true).map(|k| derived.params[k]).collect(),
    )
}

impl Engine {
    /// Generates and compiles the Hessian of the scalar output `of` with
    /// respect to `wrt` by tangent over adjoint: the adjoint of `entry`
    /// (with `options`, except that its products are IEEE ones, see the
    /// module docs) and the tangent of its combined procedure, with
    /// `directions` tangent directions per sweep (0: up to 8).
    pub fn hessian(
        &self,
        entry: Option<&str>,
        of: &[Selection],
        wrt: &[Selection],
        directions: usize,
        options: &AdjointOptions,
    ) -> Result<Hessian, Error> {
        let primal = self.entry(entry)?;
        let proc = self.module.proc(primal);
        let probe = Args::new(proc);
        // Array extents may depend on arguments not set yet: the number
        // of elements is checked again at every evaluation.
        if let Ok(n) = elements(&probe, of).map(|e| e.len()) {
            if n > 1 {
                return Err(not_one_scalar(n));
            }
        }
        let directions = match directions {
            0 => elements(&probe, wrt).map_or(8, |e| default_directions(e.len())),
            k => k.min(MAX_DIRECTIONS),
        };
        let (indep, dep) = (var_ids(proc, &probe, wrt)?, var_ids(proc, &probe, of)?);
        let options = AdjointOptions {
            strong_zero: StrongZero::Off,
            ..*options
        };
        let (adj, procs) =
            adjoint(&self.module, primal, &indep, &dep, &options).map_err(ad_error)?;
        let combined = adj.proc(procs.combined);
        let adj_map = ParamMap::new(proc, combined, "_b")?;
        // Tangent of foo_b: varied inputs x, dependents x_b.
        let (xs, xbs) = first_order_vars(&adj_map, proc, combined, &indep);
        let topts = TangentOptions {
            directions,
            ..TangentOptions::default()
        };
        let (module, tproc) = tangent(&adj, procs.combined, &xs, &xbs, &topts).map_err(ad_error)?;
        let map = SecondMap::new(&adj_map, combined, module.proc(tproc));
        let program = Program {
            sources: self.sources.clone(),
            module: Arc::new(module),
        };
        let exec = self.executor(program.clone())?;
        Ok(Hessian {
            writes: exec.written_by(&[tproc]),
            exec,
            program,
            primal,
            proc: tproc,
            map,
            directions,
            of: of.to_vec(),
            wrt: wrt.to_vec(),
        })
    }

    /// Generates and compiles the second directional derivatives of the
    /// outputs `of` along input directions over `wrt`, by tangent over
    /// tangent.
    pub fn second_directional(
        &self,
        entry: Option<&str>,
        of: &[Selection],
        wrt: &[Selection],
    ) -> Result<SecondDirectional, Error> {
        let primal = self.entry(entry)?;
        let proc = self.module.proc(primal);
        let probe = Args::new(proc);
        let (indep, dep) = (var_ids(proc, &probe, wrt)?, var_ids(proc, &probe, of)?);
        let inner = TangentOptions {
            strong_zero: StrongZero::Off,
            ..TangentOptions::default()
        };
        let (first, fproc) =
            tangent(&self.module, primal, &indep, &dep, &inner).map_err(ad_error)?;
        let first_proc = first.proc(fproc);
        let first_map = ParamMap {
            slots: tangent_layout(proc, first_proc),
        };
        // Outer tangent: varied x, dependents f_d.
        let (xs, _) = first_order_vars(&first_map, proc, first_proc, &indep);
        let (_, fds) = first_order_vars(&first_map, proc, first_proc, &dep);
        let outer = TangentOptions::default();
        let (module, sproc) = tangent(&first, fproc, &xs, &fds, &outer).map_err(ad_error)?;
        let map = SecondMap::new(&first_map, first_proc, module.proc(sproc));
        let program = Program {
            sources: self.sources.clone(),
            module: Arc::new(module),
        };
        let exec = self.executor(program.clone())?;
        Ok(SecondDirectional {
            exec,
            program,
            primal,
            proc: sproc,
            map,
            of: of.to_vec(),
            wrt: wrt.to_vec(),
        })
    }
}

/// The error of a Hessian asked for `n != 1` output elements.
fn not_one_scalar(n: usize) -> Error {
    Error::new(
        ErrorKind::Usage,
        format!("a Hessian needs one scalar output; `--of` selects {n} elements"),
    )
}

/// Checks a direction's length against the input elements.
fn check_len(what: &str, got: usize, want: usize) -> Result<(), Error> {
    if got == want {
        return Ok(());
    }
    Err(Error::new(
        ErrorKind::Usage,
        format!("{got} {what} values for {want} inputs"),
    ))
}

impl Hessian {
    /// Directions per sweep.
    pub fn directions(&self) -> usize {
        self.directions
    }

    /// A zeroed argument list of the primal procedure.
    pub fn args(&self) -> Args {
        Args::new(self.program.module.proc(self.primal))
    }

    /// The generated module and the tangent-over-adjoint procedure.
    pub fn module(&self) -> (&adjit_ir::Module, ProcId) {
        (&self.program.module, self.proc)
    }

    /// The buffers of one sweep: output adjoint 1, input tangents seeded
    /// by `seed(direction, input element)`.
    fn seeded(
        &self,
        args: &Args,
        of: Element,
        wrt: &[Element],
        seed: impl Fn(usize, usize) -> f64,
    ) -> Vec<Buffer> {
        let k = self.directions;
        let mut bufs = self.map.buffers(args, k);
        self.map
            .add(&mut bufs, (of.param, true, false), of.offset, 1.0);
        for (col, w) in wrt.iter().enumerate() {
            for dir in 0..k {
                let s = seed(dir, col);
                if s != 0.0 {
                    let index = w.offset * k + dir;
                    self.map.add(&mut bufs, (w.param, false, true), index, s);
                }
            }
        }
        bufs
    }

    /// The output element and the input elements at `args`.
    fn elements(&self, args: &Args) -> Result<(Element, Vec<Element>), Error> {
        let of = elements(args, &self.of)?;
        let [of] = of[..] else {
            return Err(not_one_scalar(of.len()));
        };
        Ok((of, elements(args, &self.wrt)?))
    }

    /// The Hessian-vector product `H v` (with the value and the gradient)
    /// by one tangent-over-adjoint sweep.
    pub fn hvp(&self, args: &Args, v: &[f64]) -> Result<(f64, Vec<f64>, Vec<f64>), Error> {
        let (of, wrt) = self.elements(args)?;
        check_len("direction", v.len(), wrt.len())?;
        let k = self.directions;
        let bufs = self.seeded(
            args,
            of,
            &wrt,
            |dir, col| if dir == 0 { v[col] } else { 0.0 },
        );
        let mut out = (0.0, Vec::new(), Vec::new());
        let read = |_: usize, bufs: &[Buffer]| {
            out.0 = self.map.get(bufs, (of.param, false, false), of.offset);
            for w in &wrt {
                out.1
                    .push(self.map.get(bufs, (w.param, true, false), w.offset));
                out.2
                    .push(self.map.get(bufs, (w.param, true, true), w.offset * k));
            }
        };
        let mut bufs = Some(bufs);
        let seed = |_| bufs.take().unwrap_or_default();
        let mut held = self.exec.hold()?;
        sweeps_from_start(
            &mut held,
            &self.exec,
            &self.writes,
            self.proc,
            1,
            seed,
            read,
        )?;
        Ok(out)
    }

    /// The full Hessian at `args`: `ceil(n / directions)` sweeps, each from
    /// the program's state at the start.
    pub fn hessian(&self, args: &Args) -> Result<HessianMatrix, Error> {
        let (of, wrt) = self.elements(args)?;
        let n = wrt.len();
        let k = self.directions;
        let mut h = HessianMatrix {
            of: label(args, of),
            wrt: wrt.iter().map(|&e| label(args, e)).collect(),
            matrix: vec![0.0; n * n],
            value: 0.0,
            gradient: vec![0.0; n],
        };
        let seed = |sweep: usize| {
            self.seeded(args, of, &wrt, |dir, col| {
                if col == sweep * k + dir {
                    1.0
                } else {
                    0.0
                }
            })
        };
        let read = |sweep: usize, bufs: &[Buffer]| {
            let start = sweep * k;
            if sweep == 0 {
                h.value = self.map.get(bufs, (of.param, false, false), of.offset);
            }
            for (row, w) in wrt.iter().enumerate() {
                if sweep == 0 {
                    h.gradient[row] = self.map.get(bufs, (w.param, true, false), w.offset);
                }
                for dir in 0..k.min(n.saturating_sub(start)) {
                    let index = w.offset * k + dir;
                    h.matrix[row * n + start + dir] =
                        self.map.get(bufs, (w.param, true, true), index);
                }
            }
        };
        let sweeps = n.max(1).div_ceil(k);
        let mut held = self.exec.hold()?;
        sweeps_from_start(
            &mut held,
            &self.exec,
            &self.writes,
            self.proc,
            sweeps,
            seed,
            read,
        )?;
        Ok(h)
    }
}

impl SecondDirectional {
    /// A zeroed argument list of the primal procedure.
    pub fn args(&self) -> Args {
        Args::new(self.program.module.proc(self.primal))
    }

    /// The generated module and the tangent-over-tangent procedure.
    pub fn module(&self) -> (&adjit_ir::Module, ProcId) {
        (&self.program.module, self.proc)
    }

    /// `u^T H_i v` for every output element `i` (the order of the `of`
    /// elements), with the first directional derivatives `J v`:
    /// `(second, first)`.
    pub fn at(&self, args: &Args, u: &[f64], v: &[f64]) -> Result<(Vec<f64>, Vec<f64>), Error> {
        let of = elements(args, &self.of)?;
        let wrt = elements(args, &self.wrt)?;
        check_len("outer direction", u.len(), wrt.len())?;
        check_len("inner direction", v.len(), wrt.len())?;
        let mut bufs = self.map.buffers(args, 1);
        for (w, (&a, &b)) in wrt.iter().zip(u.iter().zip(v)) {
            self.map.add(&mut bufs, (w.param, true, false), w.offset, b);
            self.map.add(&mut bufs, (w.param, false, true), w.offset, a);
        }
        self.exec.call(self.proc, &mut bufs)?;
        let second = of
            .iter()
            .map(|o| self.map.get(&bufs, (o.param, true, true), o.offset))
            .collect();
        let first = of
            .iter()
            .map(|o| self.map.get(&bufs, (o.param, true, false), o.offset))
            .collect();
        Ok((second, first))
    }
}
