//! The cost of strong zeros (`cargo bench --bench strong_zero`): products
//! `partial * d` of the tangent and adjoint guarded as
//! `select(d == 0, 0, partial * d)` (see `adjit::ad::rules`). This times
//! the same derivative code generated with the default guards (singular
//! partials only), with every computed partial guarded, and without guards
//! (IEEE), on Griewank and Bratu, in alternating rounds so that load on a
//! shared machine falls on all alike; it prints the median of the rounds'
//! medians and the ratios to IEEE.

mod common;

use adjit::ad::adjoint::AdjointOptions;
use adjit::ad::rules::StrongZero;
use adjit::ad::tangent::{active_params, tangent, TangentOptions};
use adjit::engine::{Args, Engine};
use adjit::ir::Buffer;
use adjit::ir::{ProcId, VarId};
use adjit::jit::codegen::{CompiledModule, JitOptions};
use adjit::timing::Sampler;
use common::{bratu_args, engine, sel};
use std::time::Duration;

/// Alternating rounds per case.
const ROUNDS: usize = 7;

/// One round: the median of a few runs.
const ROUND: Sampler = Sampler {
    min_runs: 3,
    max_runs: 100,
    budget: Duration::from_millis(300),
};

/// The parameter of the entry named `name`.
fn param(engine: &Engine, name: &str) -> VarId {
    let proc = engine.module().proc(engine.entry(None).unwrap());
    *proc
        .params
        .iter()
        .find(|&&p| proc.var(p).name.eq_ignore_ascii_case(name))
        .expect("a parameter")
}

/// A compiled tangent of the entry with `k` directions, and the Jacobian
/// sweeps it runs: `ceil(n / k)` sweeps over the elements of `wrt`.
struct TangentRun {
    compiled: CompiledModule,
    proc: ProcId,
    /// Per primal parameter: whether a tangent follows it.
    active: Vec<bool>,
    /// Positions of the independents among the primal parameters.
    wrt: Vec<usize>,
    k: usize,
}

impl TangentRun {
    fn new(
        engine: &Engine,
        of: &[&str],
        wrt: &[&str],
        k: usize,
        strong_zero: StrongZero,
    ) -> TangentRun {
        let module = engine.module();
        let entry = engine.entry(None).unwrap();
        let ind: Vec<VarId> = wrt.iter().map(|n| param(engine, n)).collect();
        let dep: Vec<VarId> = of.iter().map(|n| param(engine, n)).collect();
        let options = TangentOptions {
            directions: k,
            strong_zero,
        };
        let (tm, tp) = tangent(module, entry, &ind, &dep, &options).expect("tangent");
        let actives = active_params(module, entry, &ind, &dep);
        let params = &module.proc(entry).params;
        TangentRun {
            compiled: CompiledModule::compile(&tm, &JitOptions::default()).expect("compiles"),
            proc: tp,
            active: params.iter().map(|p| actives.contains(p)).collect(),
            wrt: ind
                .iter()
                .map(|v| params.iter().position(|p| p == v).unwrap())
                .collect(),
            k,
        }
    }

    /// All tangent sweeps of the Jacobian (or one sweep seeded with ones
    /// when `all_ones`).
    fn run(&self, args: &Args, all_ones: bool) {
        let columns: Vec<(usize, usize)> = self
            .wrt
            .iter()
            .flat_map(|&p| (0..args.buffers()[p].len()).map(move |e| (p, e)))
            .collect();
        let sweeps = if all_ones {
            1
        } else {
            columns.len().div_ceil(self.k)
        };
        for sweep in 0..sweeps {
            let mut bufs = Vec::new();
            let mut slot = vec![None; self.active.len()];
            for (i, b) in args.buffers().iter().enumerate() {
                bufs.push(b.clone());
                if self.active[i] {
                    slot[i] = Some(bufs.len());
                    bufs.push(Buffer::zeros(b.ty(), b.len() * self.k));
                }
            }
            if all_ones {
                for &p in &self.wrt {
                    let t = slot[p].unwrap();
                    for e in 0..args.buffers()[p].len() {
                        bufs[t].set_f64(e * self.k, 1.0);
                    }
                }
            } else {
                for dir in 0..self.k {
                    if let Some(&(p, e)) = columns.get(sweep * self.k + dir) {
                        bufs[slot[p].unwrap()].set_f64(e * self.k + dir, 1.0);
                    }
                }
            }
            self.compiled.call(self.proc, &mut bufs).expect("runs");
        }
    }
}

/// The three settings timed, in column order.
const SETTINGS: [StrongZero; 3] = [StrongZero::Singular, StrongZero::All, StrongZero::Off];

/// Times one closure per setting in alternating rounds; prints the medians
/// and the ratios to the last (IEEE).
fn compare(label: &str, runs: &mut [Box<dyn FnMut() + '_>]) {
    let mut times = vec![Vec::new(); runs.len()];
    for _ in 0..ROUNDS {
        for (run, t) in runs.iter_mut().zip(&mut times) {
            t.push(ROUND.median_of(&mut *run));
        }
    }
    let medians: Vec<f64> = times
        .into_iter()
        .map(|mut v| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        })
        .collect();
    let ieee = medians[medians.len() - 1];
    println!(
        "{label:<40} {:>12.4e} {:>12.4e} {:>12.4e} {:>9.3} {:>9.3}",
        medians[0],
        medians[1],
        ieee,
        medians[0] / ieee,
        medians[1] / ieee
    );
}

fn main() {
    println!(
        "{:<40} {:>12} {:>12} {:>12} {:>9} {:>9}",
        "case", "singular [s]", "all [s]", "IEEE [s]", "sing/IEEE", "all/IEEE"
    );
    let adjoint_options = |strong_zero| AdjointOptions {
        strong_zero,
        ..AdjointOptions::default()
    };

    let griewank = engine("examples/griewank.f90");
    let n = 1_000_000;
    let mut args = griewank.procedure(None).unwrap().args();
    args.set_scalar("s", n as f64).unwrap();
    let a: Vec<f64> = (0..n).map(|i| 1.0 + (i % 7) as f64 * 0.1).collect();
    args.set_array("a", &a).unwrap();
    let runs = SETTINGS.map(|z| TangentRun::new(&griewank, &["c"], &["a"], 1, z));
    compare(
        &format!("griewank tangent n={n}"),
        &mut runs
            .each_ref()
            .map(|r| Box::new(|| r.run(&args, true)) as Box<dyn FnMut()>),
    );
    let adjoints = SETTINGS.map(|z| {
        griewank
            .adjoint(None, &sel("c"), &sel("a"), &adjoint_options(z))
            .unwrap()
    });
    compare(
        &format!("griewank adjoint n={n}"),
        &mut adjoints
            .each_ref()
            .map(|a| Box::new(|| drop(a.gradient(&args).unwrap())) as Box<dyn FnMut()>),
    );

    let bratu = engine("examples/bratu.f");
    let dim = 1_000_000;
    let args = bratu_args(&bratu, dim);
    let runs = SETTINGS.map(|z| TangentRun::new(&bratu, &["f"], &["x", "prm"], 1, z));
    compare(
        &format!("bratu tangent dim={dim}"),
        &mut runs
            .each_ref()
            .map(|r| Box::new(|| r.run(&args, true)) as Box<dyn FnMut()>),
    );
    let adjoints = SETTINGS.map(|z| {
        bratu
            .adjoint(None, &sel("f(2)"), &sel("x,prm"), &adjoint_options(z))
            .unwrap()
    });
    compare(
        &format!("bratu adjoint dim={dim}"),
        &mut adjoints
            .each_ref()
            .map(|a| Box::new(|| drop(a.gradient(&args).unwrap())) as Box<dyn FnMut()>),
    );

    // Full Jacobians, dim = 1000: vector tangent (guards per direction)
    // and reverse sweeps over one tape.
    let args = bratu_args(&bratu, 1000);
    let runs = SETTINGS.map(|z| TangentRun::new(&bratu, &["f"], &["x", "prm"], 8, z));
    compare(
        "bratu Jacobian dim=1000, tangent K=8",
        &mut runs
            .each_ref()
            .map(|r| Box::new(|| r.run(&args, false)) as Box<dyn FnMut()>),
    );
    let adjoints = SETTINGS.map(|z| {
        bratu
            .adjoint(None, &sel("f"), &sel("x,prm"), &adjoint_options(z))
            .unwrap()
    });
    compare(
        "bratu Jacobian dim=1000, adjoint",
        &mut adjoints
            .each_ref()
            .map(|a| Box::new(|| drop(a.jacobian(&args).unwrap())) as Box<dyn FnMut()>),
    );
}
