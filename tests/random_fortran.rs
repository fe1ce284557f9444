//! Differential tests over random Fortran programs (issue 10, "make it
//! systematic"): generated source goes through the front end, and every
//! program is checked at a random point by `support::differential::check`
//! (primal JIT vs interpreter bit for bit; tangent vs adjoint entry by entry
//! and by the dot-product identity; both against finite differences where
//! the function is smooth; the Jacobian by several reverse sweeps of one
//! tape; repeated evaluations from the state one primal call leaves).
//!
//! Environment:
//! * `ADJIT_PROPTEST_CASES=N`: programs per test (default [`DEFAULT_CASES`]);
//! * `ADJIT_PROPTEST_SEED=S`: the first seed (default 0);
//! * `ADJIT_FUZZ_GFORTRAN=1`: also compare the primal with gfortran's
//!   (`-O0`; three successive calls; skipped when gfortran is missing).
//!
//! A failure prints the seed, the point, the check that failed, the program
//! and a reduced program that still fails the same way.
//!
//! Campaign: `ADJIT_PROPTEST_CASES=10000 cargo test --release --test
//! random_fortran -- --ignored campaign --nocapture`.

mod support;

use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;
use support::differential::{check, check_source, compare_with_gfortran, reduce, Tally, ROUNDS};
use support::random_fortran::{generate, GenOptions, Point};
use support::random_ir::Rng;

/// Programs per test in a plain `cargo test`.
const DEFAULT_CASES: u64 = 300;

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn cases() -> u64 {
    env_u64("ADJIT_PROPTEST_CASES", DEFAULT_CASES)
}

fn seed_base() -> u64 {
    env_u64("ADJIT_PROPTEST_SEED", 0)
}

/// Runs `count` programs from `base`; panics with reduced reproducers on
/// the first few failures; returns the tally.
fn run(base: u64, count: u64, options: &GenOptions) -> Tally {
    let start = Instant::now();
    let mut tally = Tally::default();
    let mut failures = Vec::new();
    let mut classes = std::collections::BTreeMap::<String, usize>::new();
    let watchdog = Watchdog::start(options.clone());
    // Long mode: the primal against gfortran too.
    let gfortran_dir = (std::env::var("ADJIT_FUZZ_GFORTRAN").is_ok_and(|v| v == "1")
        && Command::new("gfortran").arg("--version").output().is_ok())
    .then(|| {
        let dir = std::env::temp_dir().join(format!("adjit-fuzz-gf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temporary directory");
        dir
    });
    for seed in base..base + count {
        watchdog.now_at(seed);
        let program = generate(seed, options);
        let mut rng = Rng::new(seed ^ 0xA11CE);
        let point = Point::random(&mut rng);
        let mut result = check(&program, &point, seed);
        if let (Ok(_), Some(dir)) = (&result, &gfortran_dir) {
            if let Err(f) = compare_with_gfortran(&program.source(), &point, dir) {
                result = Err(f);
            }
        }
        match result {
            Ok(t) => tally.add(&t),
            Err(f) => {
                for other in &f.others {
                    *classes
                        .entry(format!("{other} (with another)"))
                        .or_default() += 1;
                }
                *classes.entry(f.class.clone()).or_default() += 1;
                // Every failing seed, so a campaign lists them all.
                eprintln!(
                    "random_fortran: seed {seed} fails: {}: {}",
                    f.class, f.message
                );
                if failures.len() < 3 && classes[&f.class] == 1 {
                    let verdict = |p: &support::random_fortran::Program| match &gfortran_dir {
                        Some(dir) if f.class == "primal JIT vs gfortran" => {
                            compare_with_gfortran(&p.source(), &point, dir).err()
                        }
                        _ => check(p, &point, seed).err(),
                    };
                    let same = |p: &support::random_fortran::Program| {
                        verdict(p).is_some_and(|g| g.class == f.class)
                    };
                    let reduced = reduce(&program, &same);
                    let now = verdict(&reduced).map(|f| f.message).unwrap_or_default();
                    failures.push(format!(
                        "seed {seed}, point {point:?}\n{}: {}\n--- program ---\n{}--- reduced ({now}) ---\n{}",
                        f.class,
                        f.message,
                        program.source(),
                        reduced.source()
                    ));
                }
            }
        }
    }
    if let Some(dir) = &gfortran_dir {
        let _ = std::fs::remove_dir_all(dir);
    }
    eprintln!(
        "random_fortran: {} programs from seed {base} in {:.1} s; {tally:?}; failures by class {classes:?}",
        count,
        start.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "{} failing program(s), by class {classes:?}; first of each class:\n\n{}",
        classes.values().sum::<usize>(),
        failures.join("\n\n")
    );
    tally
}

/// Seconds one program may take (compiling, checking and reducing
/// included) before the watchdog reports it as hanging.
const HANG_SECONDS: u64 = 60;

/// Reports a program whose check never ends (an endless loop in generated
/// code cannot be interrupted): prints its seed and source and aborts the
/// test process.
struct Watchdog {
    seed: Arc<AtomicU64>,
    tick: Arc<AtomicU64>,
}

impl Watchdog {
    fn start(options: GenOptions) -> Watchdog {
        let seed = Arc::new(AtomicU64::new(u64::MAX));
        let tick = Arc::new(AtomicU64::new(0));
        let (s, t) = (seed.clone(), tick.clone());
        std::thread::spawn(move || {
            let mut last = (u64::MAX, 0);
            let mut since = Instant::now();
            loop {
                std::thread::sleep(std::time::Duration::from_millis(500));
                let now = (s.load(Ordering::SeqCst), t.load(Ordering::SeqCst));
                if now != last {
                    last = now;
                    since = Instant::now();
                } else if now.0 != u64::MAX && since.elapsed().as_secs() > HANG_SECONDS {
                    let program = generate(now.0, &options);
                    eprintln!(
                        "seed {}: no result after {HANG_SECONDS} s (an endless loop?)\n{}",
                        now.0,
                        program.source()
                    );
                    std::process::abort();
                }
            }
        });
        Watchdog { seed, tick }
    }

    fn now_at(&self, seed: u64) {
        self.seed.store(seed, Ordering::SeqCst);
        self.tick.fetch_add(1, Ordering::SeqCst);
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.seed.store(u64::MAX, Ordering::SeqCst);
    }
}

/// The property must not hold only because little is compared: most
/// entries are compared against finite differences, and every check ran.
fn assert_meaningful(tally: &Tally) {
    let total = tally.fd_checked + tally.fd_skipped_total();
    assert!(
        tally.fd_checked * 10 >= total * 7,
        "too many entries left out of the FD comparison: {tally:?}"
    );
    assert!(tally.dot_checked * 10 >= tally.programs * 9, "{tally:?}");
    assert!(tally.ad_checked > 0, "{tally:?}");
}

#[test]
fn random_fortran_programs_agree() {
    let tally = run(seed_base(), cases(), &GenOptions::all());
    assert_meaningful(&tally);
}

/// Functions are passed as dummy procedures (`via(fun1, x)`) in a fair
/// share of the programs, so the agreement checks cover them.
#[test]
fn some_programs_pass_functions_as_dummy_procedures() {
    let with_via = (seed_base()..seed_base() + 200)
        .filter(|&seed| {
            generate(seed, &GenOptions::all())
                .source()
                .contains("via(fun")
        })
        .count();
    assert!(with_via >= 8, "only {with_via} of 200 programs call via");
}

/// Subroutines taking an ALLOCATABLE dummy, and calls passing them an
/// allocatable array, appear in a fair share of the programs, so the
/// agreement checks cover them.
#[test]
fn some_programs_pass_allocatable_dummies() {
    let with = (seed_base()..seed_base() + 200)
        .filter(|&seed| {
            let source = generate(seed, &GenOptions::all()).source();
            source.contains("allocatable, intent(inout) :: c1(:)")
                && source
                    .lines()
                    .any(|l| l.trim_start().starts_with("call sub"))
        })
        .count();
    assert!(
        with >= 8,
        "only {with} of 200 programs take allocatable dummies"
    );
}

/// RECURSIVE functions (direct and mutual) are called in a fair share of
/// the programs, so the agreement checks (tangent, adjoint, finite
/// differences, JIT and interpreter) cover recursion.
#[test]
fn some_programs_call_recursive_functions() {
    let (mut direct, mut mutual) = (0, 0);
    for seed in seed_base()..seed_base() + 200 {
        let source = generate(seed, &GenOptions::all()).source();
        if source.contains("rec1(n, (") {
            if source.contains("function rec2") {
                mutual += 1;
            } else {
                direct += 1;
            }
        }
    }
    assert!(
        direct >= 8 && mutual >= 8,
        "{direct} direct and {mutual} mutual of 200"
    );
}

/// Array sections appear in a fair share of the programs: strided and
/// reversed section assignments, matrix columns, sections passed as actual
/// arguments, assumed-size and assumed-shape dummies.
#[test]
fn some_programs_use_array_sections() {
    // Many programs (generation is cheap), so that the counts below do not
    // hinge on how other constructs draw from the seeds.
    const PROGRAMS: u64 = 1000;
    let sources: Vec<String> = (seed_base()..seed_base() + PROGRAMS)
        .map(|seed| generate(seed, &GenOptions::all()).source())
        .collect();
    let count = |what: &dyn Fn(&str) -> bool| sources.iter().filter(|s| what(s)).count();
    let strided = count(&|s| s.contains(":-2)") || s.contains("n:2)"));
    let reversed_call = count(&|s| {
        s.lines()
            .any(|l| l.trim_start().starts_with("call ") && l.contains("(n:1:-1)"))
    });
    let column = count(&|s| s.contains("m2(1:n, ") || s.contains("m2(n:1:-1, "));
    let assumed_size = count(&|s| s.contains("(*)"));
    let assumed_shape = count(&|s| {
        s.contains("intent(in) :: a1(:)")
            || s.contains("intent(inout) :: b1(:)")
            || s.contains(":: a2(:)")
            || s.contains(":: b2(:)")
    });
    for (what, k) in [
        ("strided sections", strided),
        ("reversed sections passed", reversed_call),
        ("matrix columns", column),
        ("assumed-size dummies", assumed_size),
        ("assumed-shape dummies", assumed_shape),
    ] {
        assert!(k >= 8, "only {k} of 200 programs have {what}");
    }
}

/// WHERE constructs (with ELSEWHERE and nested) and FORALL statements
/// appear in a fair share of the programs.
#[test]
fn some_programs_use_where_and_forall() {
    // Many programs (generation is cheap), so that the counts below do not
    // hinge on how other constructs draw from the seeds.
    const PROGRAMS: u64 = 1000;
    let sources: Vec<String> = (seed_base()..seed_base() + PROGRAMS)
        .map(|seed| generate(seed, &GenOptions::all()).source())
        .collect();
    let count = |what: &str| sources.iter().filter(|s| s.contains(what)).count();
    for what in ["where (", "elsewhere (", "elsewhere\n", "forall ("] {
        let k = if what == "elsewhere\n" {
            sources
                .iter()
                .filter(|s| s.lines().any(|l| l.trim() == "elsewhere"))
                .count()
        } else {
            count(what)
        };
        assert!(k >= 8, "only {k} of 200 programs have `{what}`");
    }
}

/// Derived types appear in a fair share of the programs: structure
/// locals and arrays of structures, constructors, whole assignment, calls
/// with structure dummies, `%` references.
#[test]
fn some_programs_use_derived_types() {
    // Many programs (generation is cheap), so that the counts below do not
    // hinge on how other constructs draw from the seeds.
    const PROGRAMS: u64 = 1000;
    let sources: Vec<String> = (seed_base()..seed_base() + PROGRAMS)
        .map(|seed| generate(seed, &GenOptions::all()).source())
        .collect();
    for what in [
        "type(pt) :: p1",
        "call stsub(n, ",
        "stfun(n, ",
        "= pt(",
        "q(2)%v(",
    ] {
        let k = sources.iter().filter(|s| s.contains(what)).count();
        assert!(k >= 8, "only {k} of 200 programs have `{what}`");
    }
}

/// Array intrinsics on active data appear in the programs: each
/// intrinsic, with DIM= and MASK= (the rarest, UNPACK and EOSHIFT, in
/// about one program in thirty).
#[test]
fn some_programs_use_array_intrinsics() {
    // Many programs (generation is cheap), so that the counts below do not
    // hinge on how other constructs draw from the seeds.
    const PROGRAMS: u64 = 1000;
    let sources: Vec<String> = (seed_base()..seed_base() + PROGRAMS)
        .map(|seed| generate(seed, &GenOptions::all()).source())
        .collect();
    for what in [
        "sq(n, n)",
        ", dim=",
        "mod(n, 1)",
        "mask=",
        "maxloc(",
        "minloc(",
        "count(",
        "any(",
        "matmul(",
        "transpose(",
        "spread(",
        "cshift(",
        "eoshift(",
        "pack(",
        "unpack(",
        "merge(",
        "reshape(",
        "norm2(",
        "product(",
    ] {
        let k = sources.iter().filter(|s| s.contains(what)).count();
        eprintln!("{k} of 200 programs have `{what}`");
        assert!(k >= 3, "only {k} of 200 programs have `{what}`");
    }
}

/// The ALLOCATABLE module array appears in a fair share of the programs:
/// allocated and released by `top`, reallocated and written by callees.
#[test]
fn some_programs_use_module_allocatables() {
    // Many programs (generation is cheap), so that the counts below do not
    // hinge on how other constructs draw from the seeds.
    const PROGRAMS: u64 = 1000;
    let sources: Vec<String> = (seed_base()..seed_base() + PROGRAMS)
        .map(|seed| generate(seed, &GenOptions::all()).source())
        .collect();
    let count = |what: &dyn Fn(&str) -> bool| sources.iter().filter(|s| what(s)).count();
    let declared = count(&|s| s.contains("double precision, allocatable :: ma(:)"));
    let reallocated_by_callee = count(&|s| {
        s.split("subroutine top(")
            .next()
            .is_some_and(|callees| callees.contains("allocate(ma(") || callees.contains("ma = ["))
    });
    let read_by_function = count(&|s| {
        let mut in_function = false;
        s.lines().any(|l| {
            let l = l.trim();
            if l.starts_with("end function") {
                in_function = false;
            } else if l.contains("function ") && !l.starts_with("end") {
                in_function = true;
            }
            in_function && l.contains("ma(")
        })
    });
    for (what, k) in [
        ("module allocatables", declared),
        ("reallocations by a callee", reallocated_by_callee),
        ("functions reading it", read_by_function),
    ] {
        eprintln!("{k} of 200 programs have {what}");
        assert!(k >= 8, "only {k} of 200 programs have {what}");
    }
}

/// The constructs of `support/random_fortran/constructs.rs` and
/// `module_matrix.rs` appear in the programs: array intrinsics inside
/// functions, ASSOCIATE and BLOCK, CHARACTER data through CHAR / ICHAR /
/// INDEX deciding control flow, and the rank-2 ALLOCATABLE module array,
/// read by functions and reallocated by callees.
#[test]
fn some_programs_use_new_constructs() {
    // Many programs (generation is cheap), so that the counts below do not
    // hinge on how other constructs draw from the seeds.
    const PROGRAMS: u64 = 1000;
    let sources: Vec<String> = (seed_base()..seed_base() + PROGRAMS)
        .map(|seed| generate(seed, &GenOptions::all()).source())
        .collect();
    // The text of the functions of a program.
    let functions = |s: &str| -> String {
        let mut in_function = false;
        let mut out = String::new();
        for l in s.lines() {
            let t = l.trim();
            if t.starts_with("end function") {
                in_function = false;
            } else if t.contains("function ") && !t.starts_with("end") {
                in_function = true;
            }
            if in_function {
                out.push_str(t);
                out.push('\n');
            }
        }
        out
    };
    let count = |what: &dyn Fn(&str) -> bool| sources.iter().filter(|s| what(s)).count();
    let in_functions = |what: &'static str| count(&move |s: &str| functions(s).contains(what));
    let callees = |s: &str| s.split("subroutine top(").next().unwrap_or("").to_string();
    for (what, k) in [
        (
            "SUM with a mask of the index in a function",
            in_functions("mask=[(mod(i9"),
        ),
        ("DOT_PRODUCT in a function", in_functions("dot_product(")),
        ("MATMUL in a function", in_functions("matmul(")),
        ("MERGE in a function", in_functions("merge(")),
        ("NORM2 in a function", in_functions("norm2(")),
        ("PRODUCT in a function", in_functions("product(1d0")),
        ("ASSOCIATE", count(&|s: &str| s.contains("associate (z"))),
        (
            "BLOCK",
            count(&|s: &str| s.contains("\n    block\n") || s.contains(" block\n")),
        ),
        (
            "ICHAR and INDEX",
            count(&|s: &str| s.contains("= index(cw")),
        ),
        (
            "a trip count from characters",
            count(&|s: &str| s.contains(", mod(k")),
        ),
        (
            "the module matrix",
            count(&|s: &str| s.contains("double precision, allocatable :: mb(:, :)")),
        ),
        (
            "the module matrix read by a function",
            count(&|s: &str| functions(s).contains("mb(")),
        ),
        (
            "the module matrix reallocated by a callee",
            count(&|s: &str| callees(s).contains("allocate(mb(") || callees(s).contains("mb = ")),
        ),
    ] {
        eprintln!("{k} of {PROGRAMS} programs have {what}");
        assert!(k >= 10, "only {k} of {PROGRAMS} programs have {what}");
    }
}

/// Generation is deterministic: a seed names one program.
#[test]
fn generation_is_deterministic() {
    for seed in seed_base()..seed_base() + 50 {
        let (a, b) = (
            generate(seed, &GenOptions::all()),
            generate(seed, &GenOptions::all()),
        );
        assert_eq!(a.source(), b.source(), "seed {seed}");
    }
}

/// The front end accepts the generated programs, with every feature on.
/// Seed 500932 has a line of more than 90 characters without a blank,
/// which the generator once continued inside a token.
#[test]
fn generated_programs_compile() {
    let seeds = (seed_base()..seed_base() + 300).chain([500_932]);
    for seed in seeds {
        let program = generate(seed, &GenOptions::all());
        if let Err(e) = adjit::engine::Engine::from_source("random.f90", &program.source()) {
            panic!("seed {seed}: {e}\n{}", program.source());
        }
    }
}

/// gfortran accepts the generated programs (when it is installed; the
/// test says so when it is not).
#[test]
fn gfortran_accepts_generated_programs() {
    if Command::new("gfortran").arg("--version").output().is_err() {
        eprintln!("gfortran not found: generated programs not checked against it");
        return;
    }
    let dir = std::env::temp_dir().join(format!("adjit-random-fortran-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for seed in seed_base()..seed_base() + 40 {
        let program = generate(seed, &GenOptions::all());
        let path = dir.join(format!("p{seed}.f90"));
        std::fs::write(&path, program.source()).unwrap();
        let out = Command::new("gfortran")
            .args([
                "-fsyntax-only",
                "-std=f2008",
                "-Wall",
                "-Werror=uninitialized",
            ])
            .arg(&path)
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "seed {seed}: gfortran rejects:\n{}\n{}",
            String::from_utf8_lossy(&out.stderr),
            program.source()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A campaign over every feature: `ADJIT_PROPTEST_CASES=10000 cargo test
/// --release --test random_fortran -- --ignored campaign --nocapture`.
#[test]
#[ignore = "long: a campaign (set ADJIT_PROPTEST_CASES)"]
fn campaign() {
    run(seed_base(), cases(), &GenOptions::all());
}

/// A hand-written program in the generated programs' shape: `y(1) = body`,
/// where `body` may set `trace`.
fn shaped(body: &str) -> String {
    format!(
        "module rfmod
  implicit none
  integer :: trace = 0
contains
  subroutine top(n, mode, x, s, y, r, path)
    integer, intent(in) :: n, mode
    double precision, intent(in) :: x(n), s
    double precision, intent(out) :: y(n), r
    integer, intent(out) :: path
    trace = 0
    y = 0d0
    r = s*s
{body}
    path = trace
  end subroutine top
end module rfmod
"
    )
}

fn at(x: f64) -> Point {
    Point {
        n: 1,
        x: vec![x],
        s: 0.5,
    }
}

/// The checker leaves a kink at the point out of the FD comparison and
/// counts it; away from the kink the same entry is compared.
#[test]
fn checker_counts_a_kink_at_the_point() {
    let source = shaped("    y(1) = abs(x(1)) + 0.5d0*x(1)");
    let kink = check_source(&source, false, &at(0.0), 1).unwrap();
    // One entry of four, in each round.
    assert_eq!(kink.fd_skipped_total(), ROUNDS, "{kink:?}");
    assert!(
        kink.fd_skipped.keys().any(|k| k.starts_with("kink")),
        "{kink:?}"
    );
    let smooth = check_source(&source, false, &at(0.75), 1).unwrap();
    assert_eq!(smooth.fd_skipped_total(), 0, "{smooth:?}");
    assert_eq!(smooth.fd_checked, 4 * ROUNDS, "{smooth:?}");
}

/// The checker leaves an entry whose branch decision changes within the
/// step out of the FD comparison and counts it.
#[test]
fn checker_counts_a_branch_switch_within_the_step() {
    let source = shaped(
        "    if (x(1) > 0.25d0) then
      trace = 1
      y(1) = x(1)**2
    else
      trace = 2
      y(1) = 0.5d0*x(1) - 0.0625d0
    end if",
    );
    let near = check_source(&source, false, &at(0.25 + 1e-7), 1).unwrap();
    assert!(
        near.fd_skipped.keys().any(|k| k.starts_with("branch")),
        "{near:?}"
    );
    let far = check_source(&source, false, &at(0.5), 1).unwrap();
    assert_eq!(far.fd_skipped_total(), 0, "{far:?}");
}

/// A jump the trace does not record (`aint`) within the step: the entry is
/// counted, not compared (AD says 1, the difference quotient is huge).
#[test]
fn checker_counts_an_unrecorded_jump() {
    let source = shaped("    y(1) = x(1) + aint(4d0*x(1))");
    let jump = check_source(&source, false, &at(0.25 + 1e-7), 1).unwrap();
    assert_eq!(jump.fd_skipped_total(), ROUNDS, "{jump:?}");
}
