//! Reversal schedules on the whole corpus: the adjoint Jacobian of every
//! case (every floating-point argument both input and output) is the same
//! under split reversal (the default), joint reversal of every call, mixed
//! links (alternately weak and strong per caller-callee pair), and with the
//! binomial-checkpointing directives ignored, to 1e-13 relative to the
//! largest entry of its row.

mod common;

use adjit::ad::adjoint::{AdjointOptions, Reversal, ReversalSchedule};
use adjit::engine::{Backend, Engine, Jacobian, Options, Selection};
use adjit::ir::io::Channels;
use adjit::ir::Inst;
use common::corpus::{case_engine, case_settings, corpus_dir, programs_in};
use std::sync::{Arc, Mutex};

const TOLERANCE: f64 = 1e-13;

/// The caller-callee pairs of a program, in module order.
fn call_pairs(engine: &Engine) -> Vec<(String, String)> {
    let module = engine.module();
    let mut pairs = Vec::new();
    for proc in &module.procs {
        for inst in &proc.insts {
            if let Inst::Call(callee, _) = &inst.kind {
                let pair = (proc.name.clone(), module.proc(*callee).name.clone());
                if !pairs.contains(&pair) {
                    pairs.push(pair);
                }
            }
        }
    }
    pairs
}

/// Entries of `b` that differ from `a` beyond the tolerance.
fn mismatches(what: &str, a: &Jacobian, b: &Jacobian) -> Vec<String> {
    let mut out = Vec::new();
    for r in 0..a.rows() {
        let scale = (0..a.cols())
            .map(|c| a.get(r, c).abs())
            .fold(0.0f64, f64::max);
        for c in 0..a.cols() {
            let (x, y) = (a.get(r, c), b.get(r, c));
            let same = x == y || (x - y).abs() <= TOLERANCE * scale || (x.is_nan() && y.is_nan());
            if !same {
                out.push(format!(
                    "{what}: d{}/d{}: {x:e} vs {y:e}",
                    a.of[r], a.wrt[c]
                ));
            }
        }
    }
    out
}

#[test]
fn every_schedule_gives_the_same_adjoint_on_the_corpus() {
    let mut failures = Vec::new();
    let mut with_calls = 0;
    for program in programs_in(&corpus_dir()) {
        for case in &program.cases {
            let label = format!("{} [{case}]", program.name());
            let (entry, sets) = case_settings(case);
            let options = Options {
                backend: Backend::Interpreter,
                io: Channels {
                    output: Arc::new(Mutex::new(std::io::sink())),
                    ..Channels::standard()
                },
                ..Options::default()
            };
            let Ok((engine, sets)) = case_engine(&program.path, entry.as_deref(), &sets, options)
            else {
                continue;
            };
            let primal = engine.procedure(entry.as_deref()).unwrap();
            let mut args = primal.args();
            args.apply_settings(&sets).unwrap();
            if primal.call(&mut args.clone()).is_err() {
                continue;
            }
            let floats: Vec<String> = (0..args.names().len())
                .filter(|&i| args.ty(i).is_float() && !args.buffers()[i].is_empty())
                .map(|i| args.names()[i].clone())
                .collect();
            if floats.is_empty() {
                continue;
            }
            let sel = Selection::parse_list(&floats.join(",")).unwrap();
            let entry = Some(primal.name());
            let jacobian = |options: &AdjointOptions, schedule: &ReversalSchedule| {
                engine
                    .adjoint_scheduled(entry, &sel, &sel, options, schedule)
                    .and_then(|a| a.jacobian(&args))
            };
            let defaults = AdjointOptions::default();
            let Ok(split) = jacobian(&defaults, &ReversalSchedule::uniform(Reversal::Split)) else {
                continue; // tests/derivatives.rs reports it
            };
            let pairs = call_pairs(&engine);
            let mixed = ReversalSchedule {
                default: Reversal::Split,
                links: pairs
                    .iter()
                    .enumerate()
                    .map(|(i, (a, b))| {
                        let r = if i % 2 == 0 {
                            Reversal::Joint
                        } else {
                            Reversal::Split
                        };
                        (a.clone(), b.clone(), r)
                    })
                    .collect(),
            };
            let plain = AdjointOptions {
                checkpoint: false,
                ..AdjointOptions::default()
            };
            let others = [
                (
                    "joint",
                    &defaults,
                    ReversalSchedule::uniform(Reversal::Joint),
                ),
                ("mixed links", &defaults, mixed),
                (
                    "no checkpointing",
                    &plain,
                    ReversalSchedule::uniform(Reversal::Split),
                ),
            ];
            if !pairs.is_empty() {
                with_calls += 1;
            }
            for (what, options, schedule) in &others {
                match jacobian(options, schedule) {
                    Ok(j) => failures.extend(
                        mismatches(what, &split, &j)
                            .into_iter()
                            .map(|m| format!("{label}: {m}")),
                    ),
                    Err(e) => failures.push(format!("{label}: {what}: {e}")),
                }
            }
        }
    }
    assert!(with_calls >= 20, "only {with_calls} cases with calls");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn joint_reversal_trades_tape_for_recomputation() {
    // The callee's tape is not kept during the caller's forward sweep: only
    // the snapshot of what it writes (x), not its three overwrites of t.
    let source = "
subroutine inner(x)
  double precision :: x, t
  t = sin(x)
  t = t * exp(t)
  t = t / (1.0d0 + t*t)
  x = t
end subroutine inner
subroutine outer(x, y)
  double precision :: x, y
  integer :: i
  y = 0.0d0
  do i = 1, 50
    call inner(x)
    y = y + x*x
  end do
end subroutine outer
";
    let engine =
        Engine::from_sources(&[("calls.f90".into(), source.into())], Options::default()).unwrap();
    let sel = |s: &str| Selection::parse_list(s).unwrap();
    let mut args = engine.procedure(Some("outer")).unwrap().args();
    args.set_scalar("x", 0.7).unwrap();
    let run = |schedule: ReversalSchedule| {
        let adjoint = engine
            .adjoint_scheduled(
                Some("outer"),
                &sel("y"),
                &sel("x"),
                &AdjointOptions::default(),
                &schedule,
            )
            .unwrap();
        adjoint.jacobian(&args).unwrap()
    };
    // Several reverse sweeps over one recording (two outputs): the joint
    // reverse sweep records over the tape, so each row records it again.
    let rows = |schedule: ReversalSchedule| {
        let adjoint = engine
            .adjoint_scheduled(
                Some("outer"),
                &sel("x,y"),
                &sel("x"),
                &AdjointOptions::default(),
                &schedule,
            )
            .unwrap();
        let j = adjoint.jacobian(&args).unwrap();
        (j.get(0, 0), j.get(1, 0))
    };
    assert_eq!(
        rows(ReversalSchedule::uniform(Reversal::Split)),
        rows(ReversalSchedule::uniform(Reversal::Joint))
    );
    let split = run(ReversalSchedule::uniform(Reversal::Split));
    let joint = run(ReversalSchedule::uniform(Reversal::Joint));
    let link = run(ReversalSchedule {
        default: Reversal::Split,
        links: vec![("outer".into(), "inner".into(), Reversal::Joint)],
    });
    assert_eq!(split.get(0, 0), joint.get(0, 0));
    assert_eq!(split.get(0, 0), link.get(0, 0));
    let (s, j) = (split.tape.unwrap(), joint.tape.unwrap());
    assert!(
        j.bytes() < s.bytes(),
        "joint {} vs split {}",
        j.bytes(),
        s.bytes()
    );
    assert_eq!(link.tape.unwrap().bytes(), j.bytes());
    // `!$AD NOCHECKPOINT` on the call: split whatever the schedule.
    let marked = source.replace(
        "    call inner(x)",
        "    !$AD NOCHECKPOINT\n    call inner(x)",
    );
    let engine = Engine::from_sources(&[("calls.f90".into(), marked)], Options::default()).unwrap();
    let adjoint = engine
        .adjoint_scheduled(
            Some("outer"),
            &sel("y"),
            &sel("x"),
            &AdjointOptions::default(),
            &ReversalSchedule::uniform(Reversal::Joint),
        )
        .unwrap();
    let marked = adjoint.jacobian(&args).unwrap();
    assert_eq!(marked.get(0, 0), split.get(0, 0));
    assert_eq!(marked.tape.unwrap().bytes(), s.bytes());
}
