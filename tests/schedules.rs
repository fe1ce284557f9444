//! Reversal schedules on the whole corpus: the adjoint Jacobian of every
//! case (every floating-point argument both input and output) is the same
//! under split reversal (the default), joint reversal of every call, mixed
//! links (alternately weak and strong per caller-callee pair), and with the
//! binomial-checkpointing directives ignored, to 1e-13 relative to the
//! largest entry of its row; and the same when every counted DO loop of the
//! corpus is checkpointed (2 or 3 snapshots, joint calls, automatic mode).

mod common;

use adjit::ad::adjoint::{AdjointOptions, Reversal, ReversalSchedule};
use adjit::engine::{Args, Backend, Engine, Jacobian, Options, Selection};
use adjit::ir::io::Channels;
use adjit::ir::Inst;
use common::corpus::{case_engine, case_settings, corpus_dir, programs_in};
use std::path::Path;
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

/// A runnable corpus case: its engine (the interpreter, output discarded),
/// arguments, entry and every floating-point argument selected.
struct Case {
    engine: Engine,
    args: Args,
    entry: String,
    sel: Vec<Selection>,
}

impl Case {
    /// The case `case` of the program at `path` (the corpus file or a
    /// rewritten copy, INCLUDE files found in the corpus): `Ok(None)` when
    /// the primal fails or has no floating-point argument.
    fn new(path: &Path, case: &str) -> Result<Option<Case>, String> {
        let (entry, sets) = case_settings(case);
        let options = Options {
            backend: Backend::Interpreter,
            io: Channels {
                output: Arc::new(Mutex::new(std::io::sink())),
                ..Channels::standard()
            },
            include_dirs: vec![corpus_dir()],
            ..Options::default()
        };
        let (engine, sets) =
            case_engine(path, entry.as_deref(), &sets, options).map_err(|e| e.to_string())?;
        let primal = engine
            .procedure(entry.as_deref())
            .map_err(|e| e.to_string())?;
        let mut args = primal.args();
        args.apply_settings(&sets).map_err(|e| e.to_string())?;
        if primal.call(&mut args.clone()).is_err() {
            return Ok(None);
        }
        let floats: Vec<String> = (0..args.names().len())
            .filter(|&i| args.ty(i).is_float() && !args.buffers()[i].is_empty())
            .map(|i| args.names()[i].clone())
            .collect();
        if floats.is_empty() {
            return Ok(None);
        }
        let sel = Selection::parse_list(&floats.join(",")).unwrap();
        let entry = primal.name().to_string();
        Ok(Some(Case {
            engine,
            args,
            entry,
            sel,
        }))
    }

    /// The adjoint Jacobian under `options` and `schedule`.
    fn jacobian(
        &self,
        options: &AdjointOptions,
        schedule: &ReversalSchedule,
    ) -> Result<Jacobian, String> {
        self.engine
            .adjoint_scheduled(Some(&self.entry), &self.sel, &self.sel, options, schedule)
            .and_then(|a| a.jacobian(&self.args))
            .map_err(|e| e.to_string())
    }
}

#[test]
fn every_schedule_gives_the_same_adjoint_on_the_corpus() {
    let mut failures = Vec::new();
    let mut with_calls = 0;
    for program in programs_in(&corpus_dir()) {
        for case in &program.cases {
            let label = format!("{} [{case}]", program.name());
            let Ok(Some(c)) = Case::new(&program.path, case) else {
                continue;
            };
            let defaults = AdjointOptions::default();
            let Ok(split) = c.jacobian(&defaults, &ReversalSchedule::uniform(Reversal::Split))
            else {
                continue; // tests/derivatives.rs reports it
            };
            let pairs = call_pairs(&c.engine);
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
                match c.jacobian(options, schedule) {
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

/// Whether `line` (of a fixed-form file when `fixed`) starts a counted DO
/// loop: `[label] [name:] DO [label[,]] var =`.
fn starts_counted_do(line: &str, fixed: bool) -> bool {
    let lower = line.to_ascii_lowercase();
    if fixed && lower.starts_with(['c', '*', '!']) {
        return false;
    }
    let mut rest = lower
        .trim_start()
        .trim_start_matches(|c: char| c.is_ascii_digit());
    rest = rest.trim_start();
    if let Some((name, after)) = rest.split_once(':') {
        if !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_') {
            rest = after.trim_start();
        }
    }
    let Some(after) = rest.strip_prefix("do") else {
        return false;
    };
    if !after.starts_with([' ', '\t']) {
        return false;
    }
    let after = after
        .trim_start()
        .trim_start_matches(|c: char| c.is_ascii_digit())
        .trim_start()
        .trim_start_matches(',')
        .trim_start();
    let var: String = after
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    !var.is_empty()
        && !var.starts_with(|c: char| c.is_ascii_digit())
        && var != "while"
        && after[var.len()..].trim_start().starts_with('=')
        && !after[var.len()..].trim_start().starts_with("==")
}

/// `text` with `!$AD BINOMIAL-CKP` on the line before each line of `marks`
/// (0-based); returns the text and, per directive line (1-based), the
/// marked line.
fn with_directives(text: &str, marks: &[usize]) -> (String, Vec<(u32, usize)>) {
    let mut out = String::new();
    let mut directives = Vec::new();
    let mut line_no = 0u32;
    for (i, line) in text.lines().enumerate() {
        if marks.contains(&i) {
            line_no += 1;
            directives.push((line_no, i));
            out.push_str("!$AD BINOMIAL-CKP\n");
        }
        line_no += 1;
        out.push_str(line);
        out.push('\n');
    }
    (out, directives)
}

/// The line number in `error` after `file:`, if any.
fn error_line(error: &str, file: &str) -> Option<u32> {
    let at = error.find(&format!("{file}:"))? + file.len() + 1;
    let digits: String = error[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

#[test]
fn checkpointing_every_counted_loop_gives_the_same_adjoint_on_the_corpus() {
    // Every counted DO loop of every corpus program marked by a bare
    // `!$AD BINOMIAL-CKP` (the loops checkpointing refuses, such as those an
    // EXIT leaves, are unmarked one by one from the located errors), then
    // reversed with 2 snapshots, with 3 snapshots and joint calls, under a
    // tape budget of 0 bytes (every loop checkpointed with 1 snapshot) and
    // of 1 GiB (every loop measured, then recorded plainly).
    let dir = std::env::temp_dir().join(format!("adjit-ckp-corpus-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let modes = [
        (
            "2 snapshots",
            AdjointOptions {
                snapshots: Some(2),
                ..AdjointOptions::default()
            },
            Reversal::Split,
        ),
        (
            "3 snapshots, joint",
            AdjointOptions {
                snapshots: Some(3),
                ..AdjointOptions::default()
            },
            Reversal::Joint,
        ),
        (
            "budget 0",
            AdjointOptions {
                tape_budget: Some(0),
                ..AdjointOptions::default()
            },
            Reversal::Split,
        ),
        (
            "budget 1G",
            AdjointOptions {
                tape_budget: Some(1 << 30),
                ..AdjointOptions::default()
            },
            Reversal::Split,
        ),
    ];
    let mut failures = Vec::new();
    let (mut checked, mut loops) = (0, 0);
    for program in programs_in(&corpus_dir()) {
        let Ok(text) = std::fs::read_to_string(&program.path) else {
            continue; // not UTF-8 (Latin-1 text)
        };
        let fixed = program
            .path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("f"));
        let lines: Vec<&str> = text.lines().collect();
        let candidates: Vec<usize> = (0..lines.len())
            .filter(|&i| starts_counted_do(lines[i], fixed))
            .filter(|&i| {
                let before = lines[..i].iter().rev().find(|l| !l.trim().is_empty());
                !before.is_some_and(|l| l.trim_start().to_ascii_lowercase().starts_with("!$ad"))
            })
            .collect();
        if candidates.is_empty() {
            continue;
        }
        let file_name = program
            .path
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        let path = dir.join(&file_name);
        for case in &program.cases {
            let label = format!("{} [{case}]", program.name());
            let Ok(Some(original)) = Case::new(&program.path, case) else {
                continue;
            };
            let reference = AdjointOptions {
                checkpoint: false,
                ..AdjointOptions::default()
            };
            let Ok(plain) =
                original.jacobian(&reference, &ReversalSchedule::uniform(Reversal::Split))
            else {
                continue;
            };
            let mut marks = candidates.clone();
            'retry: while !marks.is_empty() {
                let (marked, directives) = with_directives(&text, &marks);
                std::fs::write(&path, marked).unwrap();
                // A located error on a directive unmarks its loop.
                let mut unmark = |error: &str| -> bool {
                    let line = error_line(error, &file_name);
                    match directives.iter().find(|&&(l, _)| Some(l) == line) {
                        Some(&(_, i)) if error.contains("BINOMIAL-CKP") => {
                            marks.retain(|&m| m != i);
                            true
                        }
                        _ => false,
                    }
                };
                let c = match Case::new(&path, case) {
                    Ok(Some(c)) => c,
                    Ok(None) => {
                        failures.push(format!("{label}: the marked program does not run"));
                        break;
                    }
                    Err(e) if unmark(&e) => continue,
                    Err(e) => {
                        failures.push(format!("{label}: {e}"));
                        break;
                    }
                };
                let mut results = Vec::new();
                for (what, options, reversal) in &modes {
                    match c.jacobian(options, &ReversalSchedule::uniform(*reversal)) {
                        Ok(j) => results.push((what, j)),
                        Err(e) if unmark(&e) => continue 'retry,
                        Err(e) => failures.push(format!("{label}: {what}: {e}")),
                    }
                }
                for (what, j) in results {
                    failures.extend(
                        mismatches(what, &plain, &j)
                            .into_iter()
                            .map(|m| format!("{label}: {m}")),
                    );
                }
                checked += 1;
                loops += marks.len();
                break;
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        checked >= 40 && loops >= 80,
        "only {checked} cases with {loops} checkpointed loops"
    );
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
