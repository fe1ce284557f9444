//! Optimizer integration (cargo feature `argmin`): a Fortran objective and
//! its adjoint gradient as an [argmin] problem.
//!
//! [`Problem`] owns the compiled primal and adjoint of one entry, the
//! arguments that stay fixed, and the name of the argument the optimizer
//! moves (a REAL array or scalar). argmin's solvers call
//! [`CostFunction::cost`] (one primal call) and [`Gradient::gradient`]
//! (one forward and one reverse sweep); both start from a copy of the fixed
//! arguments, so an evaluation never sees what another left in them.
//! [`Problem::with_hessian`] adds the Hessian (tangent over adjoint), for
//! argmin's second-order solvers (Newton-CG, trust region) through
//! [`argmin::core::Hessian`].
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use adjit::engine::Engine;
//! use adjit::optim::Problem;
//! use argmin::core::Executor;
//! use argmin::solver::{linesearch::MoreThuenteLineSearch, quasinewton::LBFGS};
//!
//! let engine = Engine::from_source("quad.f90", "
//! subroutine quad(n, x, f)
//!   integer n
//!   double precision x(n), f
//!   f = sum((x - 1d0)**2)
//! end subroutine")?;
//! let mut args = engine.procedure(None)?.args();
//! args.set_scalar("n", 3.0)?;
//! let problem = Problem::new(&engine, None, "f", "x", args)?;
//! let solver = LBFGS::new(MoreThuenteLineSearch::new(), 5);
//! let result = Executor::new(problem, solver)
//!     .configure(|state| state.param(vec![0.0; 3]).max_iters(50))
//!     .run()?;
//! # Ok(()) }
//! ```
//!
//! [argmin]: https://argmin-rs.org

use argmin::core::{CostFunction, Gradient};

use crate::ad::adjoint::AdjointOptions;
use crate::engine::{Adjoint, Args, Engine, Error, ErrorKind, Hessian, Procedure, Selection};

/// A scalar output of a Fortran entry, minimized over one of its REAL
/// arguments, with the adjoint as its gradient.
pub struct Problem {
    primal: Procedure,
    adjoint: Adjoint,
    fixed: Args,
    of: String,
    wrt: String,
    hessian: Option<Hessian>,
}

impl Problem {
    /// The problem of minimizing the scalar `of` of `entry` (the engine's
    /// only entry when `None`) over the argument `wrt`, the other arguments
    /// taken from `fixed` (sizes, data). `wrt`'s value in `fixed` is
    /// ignored: argmin's parameter vector replaces it at every evaluation.
    pub fn new(
        engine: &Engine,
        entry: Option<&str>,
        of: &str,
        wrt: &str,
        fixed: Args,
    ) -> Result<Problem, Error> {
        let primal = engine.procedure(entry)?;
        let (of_sel, wrt_sel) = (Selection::parse(of)?, Selection::parse(wrt)?);
        fixed.index_of(of)?;
        fixed.index_of(wrt)?;
        let adjoint = engine.adjoint(entry, &[of_sel], &[wrt_sel], &AdjointOptions::default())?;
        Ok(Problem {
            primal,
            adjoint,
            fixed,
            of: of.to_string(),
            wrt: wrt.to_string(),
            hessian: None,
        })
    }

    /// The same problem with its Hessian compiled too (tangent over
    /// adjoint, up to 8 directions per sweep), for argmin's second-order
    /// solvers; `entry` as given to [`Problem::new`].
    pub fn with_hessian(mut self, engine: &Engine, entry: Option<&str>) -> Result<Problem, Error> {
        let (of, wrt) = (Selection::parse(&self.of)?, Selection::parse(&self.wrt)?);
        // 0 directions: as many per sweep as inputs, up to 8.
        self.hessian = Some(engine.hessian(entry, &[of], &[wrt], 0, &AdjointOptions::default())?);
        Ok(self)
    }

    /// The Hessian of the objective at `x`, by rows.
    pub fn hessian_at(&self, x: &[f64]) -> Result<Vec<Vec<f64>>, Error> {
        let hessian = self.hessian.as_ref().ok_or_else(|| {
            Error::new(
                ErrorKind::Usage,
                "the problem has no Hessian: build it with `Problem::with_hessian`".to_string(),
            )
        })?;
        let h = hessian.hessian(&self.args_at(x)?)?;
        let n = h.n();
        Ok((0..n)
            .map(|r| h.matrix[r * n..(r + 1) * n].to_vec())
            .collect())
    }

    /// The fixed arguments with `wrt` set to `x`.
    fn args_at(&self, x: &[f64]) -> Result<Args, Error> {
        let mut args = self.fixed.clone();
        let index = args.index_of(&self.wrt)?;
        if args.is_array(index) {
            args.set_array(&self.wrt, x)?;
        } else if let [value] = x {
            args.set_scalar(&self.wrt, *value)?;
        } else {
            return Err(Error::new(
                ErrorKind::Usage,
                format!(
                    "`{}` is a scalar; the parameter has {} values",
                    self.wrt,
                    x.len()
                ),
            ));
        }
        Ok(args)
    }

    /// The objective at `x`: one primal call.
    pub fn value(&self, x: &[f64]) -> Result<f64, Error> {
        let mut args = self.args_at(x)?;
        self.primal.call(&mut args)?;
        args.scalar(&self.of)
    }

    /// The objective and its gradient at `x`: one forward and one reverse
    /// sweep.
    pub fn value_and_gradient(&self, x: &[f64]) -> Result<(f64, Vec<f64>), Error> {
        self.adjoint.gradient(&self.args_at(x)?)
    }
}

impl CostFunction for Problem {
    type Param = Vec<f64>;
    type Output = f64;

    fn cost(&self, x: &Vec<f64>) -> Result<f64, argmin::core::Error> {
        Ok(self.value(x)?)
    }
}

impl Gradient for Problem {
    type Param = Vec<f64>;
    type Gradient = Vec<f64>;

    fn gradient(&self, x: &Vec<f64>) -> Result<Vec<f64>, argmin::core::Error> {
        Ok(self.value_and_gradient(x)?.1)
    }
}

impl argmin::core::Hessian for Problem {
    type Param = Vec<f64>;
    type Hessian = Vec<Vec<f64>>;

    fn hessian(&self, x: &Vec<f64>) -> Result<Vec<Vec<f64>>, argmin::core::Error> {
        Ok(self.hessian_at(x)?)
    }
}
