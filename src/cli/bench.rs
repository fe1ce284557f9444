//! `adjit bench`: times primal, adjoint gradient, tangent gradient (vector
//! mode) and finite-difference gradient over problem sizes, prints a table
//! of times and ratios to the primal, optionally JSON and a log-log plot of
//! time against n in the manner of seed 001's figure 2.

use super::{
    adjoint_options, arguments, directions, problem, reversal_schedule, CmdResult, Failure, Problem,
};
use crate::cli::options::CommandLine;
use crate::cli::output::{to_json, Num};
use adjit::engine::{element_count, ArgValue, Args, FiniteDifferences, Procedure, Selection};
use adjit::timing::Sampler;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// Beyond this estimated cost, O(n) sweeps are extrapolated from a sample.
const SWEEP_BUDGET: Duration = Duration::from_secs(2);

/// One measured (or extrapolated) time.
#[derive(Clone, Copy, Debug)]
struct Timing {
    seconds: f64,
    extrapolated: bool,
}

impl Serialize for Timing {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        /// A timing in JSON.
        #[derive(Serialize)]
        struct TimingJson {
            seconds: Num,
            extrapolated: bool,
        }
        TimingJson {
            seconds: Num(self.seconds),
            extrapolated: self.extrapolated,
        }
        .serialize(s)
    }
}

/// The measurements at one size.
#[derive(Serialize)]
struct Measurement {
    n: usize,
    inputs: usize,
    primal: Timing,
    adjoint: Timing,
    tangent: Timing,
    fd: Timing,
}

/// Repetitions of one measurement.
const SAMPLER: Sampler = Sampler {
    min_runs: 3,
    max_runs: 25,
    budget: Duration::from_millis(300),
};

/// Median wall time of `f` over repeated runs within the budget.
fn median_time(f: impl FnMut() -> Result<(), Failure>) -> Result<f64, Failure> {
    SAMPLER.median(f)
}

/// Median wall time of one call of `f`, timed in batches of about 1 ms so
/// that microsecond calls are measured, not the clock.
fn median_call_time(f: impl FnMut() -> Result<(), Failure>) -> Result<f64, Failure> {
    SAMPLER.median_batched(Duration::from_millis(1), f)
}

pub(crate) fn bench(cl: &CommandLine) -> CmdResult {
    let Problem {
        engine,
        primal,
        args: base_args,
        of,
        wrt,
    } = problem(cl)?;
    let (size_name, sizes) = sizes(cl)?;
    let entry = Some(primal.name());
    let adjoint = engine.adjoint_scheduled(
        entry,
        &of,
        &wrt,
        &adjoint_options(cl),
        &reversal_schedule(cl)?,
    )?;

    let progress = if std::io::stderr().is_terminal() {
        let bar = ProgressBar::new(sizes.len() as u64 * 4);
        bar.set_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar
    } else {
        ProgressBar::with_draw_target(Some(sizes.len() as u64 * 4), ProgressDrawTarget::hidden())
    };

    // Every timed evaluation starts from the program's initial state (its
    // globals), restored inside the timed region (a copy of the globals).
    let start = engine.state();
    let mut rows = Vec::new();
    for &n in &sizes {
        let mut args = base_args.clone();
        args.set(&size_name, ArgValue::Scalar(n as f64))?;
        // Re-apply --set so that fills cover the resized arrays.
        let args = arguments(cl, &engine, args)?;
        let inputs = element_count(&args, &wrt)?;
        progress.set_message(format!("{size_name}={n}: primal"));
        // Timed calls read and write one argument list set up before the
        // timing (a procedure that overwrites its inputs runs on what the
        // previous call left); the adjoint evaluates into a workspace and a
        // gradient buffer made once, as in an optimizer's loop.
        let mut a = args.clone();
        let primal_t = median_call_time(|| {
            engine.set_state(&start)?;
            primal.call(&mut a)?;
            Ok(())
        })?;
        progress.inc(1);
        progress.set_message(format!("{size_name}={n}: adjoint"));
        let mut ws = adjoint.workspace();
        let mut grad = vec![0.0; inputs];
        let mut a = args.clone();
        let adjoint_t = median_call_time(|| {
            engine.set_state(&start)?;
            adjoint.gradient_into(&mut ws, &mut a, &mut grad)?;
            Ok(())
        })?;
        progress.inc(1);
        progress.set_message(format!("{size_name}={n}: tangent"));
        let k = directions(cl, inputs);
        let tangent = engine.tangent(entry, &of, &wrt, k)?;
        let sweeps = inputs.div_ceil(k);
        // One sweep of k directions into a workspace (what a sweep costs
        // does not depend on the seed).
        let mut tws = tangent.workspace();
        let mut a = args.clone();
        let seed = vec![1.0; inputs];
        let mut out = vec![0.0; element_count(&args, &of)?];
        let tangent_t = sweeps_time(sweeps, primal_t, || {
            engine.set_state(&start)?;
            tangent.directional_into(&mut tws, &mut a, &seed, &mut out)?;
            Ok(())
        })?;
        progress.inc(1);
        progress.set_message(format!("{size_name}={n}: finite differences"));
        engine.set_state(&start)?;
        let fd_t = fd_time(&primal, &args, &of, &wrt, inputs, primal_t)?;
        progress.inc(1);
        rows.push(Measurement {
            n,
            inputs,
            primal: Timing {
                seconds: primal_t,
                extrapolated: false,
            },
            adjoint: Timing {
                seconds: adjoint_t,
                extrapolated: false,
            },
            tangent: tangent_t,
            fd: fd_t,
        });
    }
    progress.finish_and_clear();

    if cl.flag("json") {
        print_json(&rows, &size_name);
    } else {
        print_table(&rows, &size_name);
    }
    if let Some(path) = cl.value("plot") {
        plot(path, &rows, primal.name()).map_err(Failure::Usage)?;
        if !cl.flag("json") {
            outln!(
                "plot written to {path} and {}",
                path.replace(".svg", ".png")
            );
        }
    }
    Ok(0)
}

/// Parses `--size NAME=N1,N2,...`.
fn sizes(cl: &CommandLine) -> Result<(String, Vec<usize>), Failure> {
    let spec = cl.required("size")?;
    let (name, list) = spec
        .split_once('=')
        .ok_or_else(|| format!("--size expects NAME=N1,N2,..., got `{spec}`"))?;
    let sizes: Result<Vec<usize>, _> = list.split(',').map(|s| s.trim().parse::<usize>()).collect();
    let sizes =
        sizes.map_err(|_| format!("--size: `{list}` is not a list of positive integers"))?;
    if sizes.is_empty() || sizes.contains(&0) {
        return Err(Failure::Usage("--size needs positive sizes".into()));
    }
    Ok((name.trim().to_string(), sizes))
}

/// Time of `count` sweeps of `sweep`: measured when the estimate from the
/// primal time fits the budget, else extrapolated from a sample.
fn sweeps_time(
    count: usize,
    primal: f64,
    mut sweep: impl FnMut() -> Result<(), Failure>,
) -> Result<Timing, Failure> {
    let estimate = primal * 2.0 * count as f64;
    if estimate <= SWEEP_BUDGET.as_secs_f64() {
        let t = Instant::now();
        for _ in 0..count {
            sweep()?;
        }
        return Ok(Timing {
            seconds: t.elapsed().as_secs_f64(),
            extrapolated: false,
        });
    }
    let per_sweep = median_time(&mut sweep)?;
    Ok(Timing {
        seconds: per_sweep * count as f64,
        extrapolated: true,
    })
}

/// Time of a central finite-difference gradient (2n primal evaluations).
fn fd_time(
    primal: &Procedure,
    args: &Args,
    of: &[Selection],
    wrt: &[Selection],
    inputs: usize,
    primal_t: f64,
) -> Result<Timing, Failure> {
    let estimate = primal_t * 2.0 * inputs as f64;
    if estimate <= SWEEP_BUDGET.as_secs_f64() {
        let fd = FiniteDifferences::new(primal);
        let t = Instant::now();
        fd.jacobian(args, of, wrt)?;
        return Ok(Timing {
            seconds: t.elapsed().as_secs_f64(),
            extrapolated: false,
        });
    }
    // Measured evaluations, scaled to the 2n + 1 a gradient needs.
    Ok(Timing {
        seconds: primal_t * (2 * inputs + 1) as f64,
        extrapolated: true,
    })
}

fn cell(t: Timing) -> String {
    format!(
        "{:.3e}{}",
        t.seconds,
        if t.extrapolated { "*" } else { " " }
    )
}

fn print_table(rows: &[Measurement], size_name: &str) {
    outln!(
        "{:>10} {:>8} {:>12} {:>12} {:>12} {:>12} {:>9} {:>9} {:>9}",
        size_name,
        "inputs",
        "primal [s]",
        "adjoint [s]",
        "tangent [s]",
        "fd [s]",
        "adj/pri",
        "tan/pri",
        "fd/adj"
    );
    let mut any_extrapolated = false;
    for r in rows {
        any_extrapolated |= r.tangent.extrapolated || r.fd.extrapolated;
        outln!(
            "{:>10} {:>8} {:>12} {:>12} {:>12} {:>12} {:>9.2} {:>9.1} {:>9.1}",
            r.n,
            r.inputs,
            cell(r.primal),
            cell(r.adjoint),
            cell(r.tangent),
            cell(r.fd),
            r.adjoint.seconds / r.primal.seconds,
            r.tangent.seconds / r.primal.seconds,
            r.fd.seconds / r.adjoint.seconds,
        );
    }
    if any_extrapolated {
        outln!(
            "* extrapolated from measured evaluations (beyond the {}s budget)",
            SWEEP_BUDGET.as_secs()
        );
    }
}

fn print_json(rows: &[Measurement], size_name: &str) {
    /// `bench --json`.
    #[derive(Serialize)]
    struct BenchReport<'a> {
        size: &'a str,
        results: &'a [Measurement],
    }
    outln!(
        "{}",
        to_json(&BenchReport {
            size: size_name,
            results: rows,
        })
    );
}

/// A plotted curve: label, colour, and the timing it shows.
type Series = (
    &'static str,
    plotters::style::RGBColor,
    fn(&Measurement) -> Timing,
);

/// The plot's size in pixels.
const PLOT_SIZE: (u32, u32) = (900, 620);

/// The font of the plots' text, shipped with adjit (DejaVu Sans Mono,
/// assets/fonts/DejaVu-LICENSE) so that PNG text renders without system
/// fonts.
static PLOT_FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSansMono.ttf");

/// Draws time against n on log-log axes into `path` (SVG) and the PNG
/// next to it.
fn plot(path: &str, rows: &[Measurement], name: &str) -> Result<(), String> {
    use plotters::prelude::*;
    let Some(stem) = path.strip_suffix(".svg") else {
        return Err(format!(
            "--plot {path}: name the plot *.svg (a PNG is written next to it)"
        ));
    };
    let png = format!("{stem}.png");
    plotters::style::register_font("sans-serif", FontStyle::Normal, PLOT_FONT)
        .map_err(|_| "cannot load the plot's font".to_string())?;
    let err = |file: &str, e: &dyn std::fmt::Display| format!("cannot draw {file}: {e}");
    draw(
        SVGBackend::new(path, PLOT_SIZE).into_drawing_area(),
        rows,
        name,
    )
    .map_err(|e| err(path, &e))?;
    draw(
        BitMapBackend::new(&png, PLOT_SIZE).into_drawing_area(),
        rows,
        name,
    )
    .map_err(|e| err(&png, &e))
}

/// Draws the log-log plot of time against n on `root`.
fn draw<DB: plotters::prelude::DrawingBackend>(
    root: plotters::prelude::DrawingArea<DB, plotters::coord::Shift>,
    rows: &[Measurement],
    name: &str,
) -> Result<(), plotters::drawing::DrawingAreaErrorKind<DB::ErrorType>> {
    use plotters::prelude::*;
    let series: [Series; 4] = [
        ("primal", RGBColor(90, 90, 90), |m| m.primal),
        ("adjoint", RGBColor(200, 30, 30), |m| m.adjoint),
        ("tangent (vector)", RGBColor(30, 120, 30), |m| m.tangent),
        ("finite differences", RGBColor(30, 60, 200), |m| m.fd),
    ];
    let all: Vec<f64> = rows
        .iter()
        .flat_map(|m| series.iter().map(move |s| (s.2)(m).seconds))
        .filter(|t| *t > 0.0)
        .collect();
    let lo = all.iter().cloned().fold(f64::INFINITY, f64::min).max(1e-12) / 2.0;
    let hi = all.iter().cloned().fold(0.0, f64::max) * 2.0;
    let nmin = rows.iter().map(|m| m.n).min().unwrap_or(1) as f64;
    let nmax = rows.iter().map(|m| m.n).max().unwrap_or(10) as f64;
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("{name}: gradient cost vs n (adjit)"),
            ("sans-serif", 22),
        )
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(75)
        .build_cartesian_2d(
            (nmin / 1.5..nmax * 1.5).log_scale(),
            (lo.max(1e-12)..hi.max(lo * 10.0)).log_scale(),
        )?;
    chart
        .configure_mesh()
        .x_desc("n (inputs)")
        .y_desc("time [s]")
        .y_label_formatter(&|y| format!("{y:.0e}"))
        .x_label_formatter(&|x| format!("{x:.0e}"))
        .draw()?;
    for (label, color, get) in series {
        let points: Vec<(f64, f64)> = rows
            .iter()
            .map(|m| (m.n as f64, get(m).seconds.max(lo)))
            .collect();
        chart
            .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))?
            .label(label)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        // Hollow markers for extrapolated points, filled for measured ones.
        chart.draw_series(rows.iter().map(|m| {
            let t = get(m);
            let style = if t.extrapolated {
                color.stroke_width(1)
            } else {
                color.filled()
            };
            Circle::new((m.n as f64, t.seconds.max(lo)), 4, style)
        }))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
