//! The host never dies: runaway recursion, deep recursion on a small
//! native stack, sizes that overflow or exceed the memory limit, loops that
//! never end and out-of-storage subscripts without bounds checks each come
//! back as a located `Err` through the API and as exit status 1 with a
//! located message through the command line (run as a subprocess, so a
//! crash would fail the test instead of killing the test binary). Also: one
//! compiled program called from many threads at once agrees with one
//! thread.

mod common;

use adjit::engine::{Engine, ErrorKind, Options};
use adjit::ir::RuntimeErrorKind;
use common::cli::adjit;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Writes `text` to a fresh file under the target directory (the CLI
/// reads files) and gives its path.
fn source_file(name: &str, text: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("host");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write source");
    path
}

/// Compiles `text` with `options` and calls its only procedure after the
/// `--set`-style `settings`.
fn call(text: &str, options: Options, settings: &[&str]) -> Result<(), adjit::engine::Error> {
    let engine = Engine::from_sources(&[("host.f90".into(), text.into())], options)?;
    let proc = engine.procedure(None)?;
    let mut args = proc.args();
    args.apply_settings(settings)?;
    proc.call(&mut args)
}

/// The runtime error kind behind an API error.
fn runtime_kind(e: &adjit::engine::Error) -> Option<RuntimeErrorKind> {
    e.runtime.as_ref().map(|r| r.kind.clone())
}

/// Runs the CLI on `text` (`adjit run FILE ARGS...`): asserts exit status
/// 1 (a program error) and a message containing each of `expect`; gives
/// standard error.
fn cli_fails(name: &str, text: &str, args: &[&str], expect: &[&str]) -> String {
    cli_fails_with(1, name, text, args, expect)
}

/// [`cli_fails`] for a request the engine refuses: exit status 2.
fn cli_usage_error(name: &str, text: &str, args: &[&str], expect: &[&str]) -> String {
    cli_fails_with(2, name, text, args, expect)
}

/// [`cli_fails`] with the exit status `status`.
fn cli_fails_with(status: i32, name: &str, text: &str, args: &[&str], expect: &[&str]) -> String {
    let path = source_file(name, text);
    let path = path.to_str().expect("utf-8 path");
    let mut all = vec!["run", path];
    all.extend_from_slice(args);
    let (code, out, err) = adjit(&all);
    assert_eq!(code, status, "adjit {all:?}\nstdout: {out}\nstderr: {err}");
    for e in expect {
        assert!(err.contains(e), "`{e}` missing from: {err}");
    }
    err
}

const INFINITE_RECURSION: &str = "\
recursive subroutine r(x)
  real(8) :: x
  x = x + 1
  call r(x)
end subroutine
";

/// Recursion `n` deep with a local array in every frame.
const DEEP_RECURSION: &str = "\
recursive subroutine r(n, x)
  integer :: n, i
  real(8) :: x, w(100)
  do i = 1, 100
    w(i) = x + i
  end do
  if (n > 0) call r(n - 1, x)
  x = x + w(mod(n, 100) + 1)
end subroutine
";

#[test]
fn infinite_recursion_is_an_error() {
    let e = call(INFINITE_RECURSION, Options::default(), &["x=1"]).unwrap_err();
    assert_eq!(runtime_kind(&e), Some(RuntimeErrorKind::CallDepthExceeded));
    assert!(e.location.is_some(), "{e}");
    cli_fails(
        "infinite.f90",
        INFINITE_RECURSION,
        &["--set", "x=1"],
        &["infinite.f90:4:", "nested calls"],
    );
}

/// On a native stack too small for the recursion, the procedure entry that
/// would overflow it fails with the procedure's name and the depth (the
/// old code ran off the end of the stack: SIGSEGV).
#[test]
fn deep_recursion_on_a_small_stack_is_an_error() {
    let options = Options {
        stack_size: Some(320 << 10),
        ..Options::default()
    };
    let e = call(DEEP_RECURSION, options.clone(), &["n=999", "x=1"]).unwrap_err();
    assert_eq!(runtime_kind(&e), Some(RuntimeErrorKind::StackOverflow));
    assert!(e.message.contains("entering `r` at call depth"), "{e}");
    assert!(e.location.is_some(), "{e}");
    // A shallower recursion runs to the end on the same stack.
    call(DEEP_RECURSION, options, &["n=100", "x=1"]).expect("fits the stack");
    cli_fails(
        "deep.f90",
        DEEP_RECURSION,
        &["--set", "n=999", "--set", "x=1", "--stack-size", "320K"],
        &["deep.f90:1:", "stack overflow", "call depth"],
    );
}

/// A stack size the machine cannot map is an error of the call, not a
/// crash of the host (stack switching used to panic here).
#[test]
fn a_stack_that_cannot_be_mapped_is_an_error() {
    let options = Options {
        stack_size: Some(1 << 62),
        ..Options::default()
    };
    let e = call(DEEP_RECURSION, options, &["n=3", "x=1"]).unwrap_err();
    assert_eq!(runtime_kind(&e), Some(RuntimeErrorKind::TooLarge), "{e}");
    assert!(e.message.contains("native stack"), "{e}");
}

/// Without a stack size the code runs on the caller's stack, and the limit
/// comes from that thread's bounds.
#[test]
fn deep_recursion_on_a_small_thread_stack_is_an_error() {
    // Compiled here; called on a thread whose whole stack is 320 KiB.
    let engine = Engine::from_sources(
        &[("deep.f90".into(), DEEP_RECURSION.into())],
        Options::default(),
    )
    .expect("compiles");
    let proc = engine.procedure(None).expect("entry");
    let mut args = proc.args();
    args.apply_settings(&["n=999", "x=1"]).expect("settings");
    let result = std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(320 << 10)
            .spawn_scoped(s, || proc.call(&mut args))
            .expect("thread")
            .join()
            .expect("the thread survives")
    });
    let e = result.unwrap_err();
    assert_eq!(
        runtime_kind(&e),
        Some(RuntimeErrorKind::StackOverflow),
        "{e}"
    );
}

const ARGUMENT_EXTENT: &str = "\
subroutine s(n, x)
  integer(8) :: n
  real(8) :: x(n)
  x(1) = 1
end subroutine
";

#[test]
fn an_argument_of_ten_billion_elements_is_a_usage_error() {
    for limit in [1usize << 30, adjit::jit::runtime::default_memory_limit()] {
        let options = Options {
            memory_limit: limit,
            ..Options::default()
        };
        let e = call(ARGUMENT_EXTENT, options, &["n=10000000000"]).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Usage, "{e}");
        assert!(e.message.contains("`x`"), "{e}");
        assert!(e.message.contains("80000000000 bytes"), "{e}");
    }
    cli_usage_error(
        "extent.f90",
        ARGUMENT_EXTENT,
        &["--set", "n=10000000000"],
        &["argument `x`", "memory limit"],
    );
}

#[test]
fn integer_settings_out_of_range_or_fractional_are_usage_errors() {
    let text = ARGUMENT_EXTENT.replace("integer(8)", "integer");
    for (value, says) in [
        ("3000000000", "out of range"),
        ("3.5", "not a whole number"),
    ] {
        let setting = format!("n={value}");
        let e = call(&text, Options::default(), &[&setting]).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Usage, "{e}");
        assert!(e.message.contains("`n`") && e.message.contains(says), "{e}");
        cli_usage_error("range.f90", &text, &["--set", &setting], &["`n`", says]);
    }
}

/// `w(n, n)` with `n = 2^32`: 2^64 elements wrapped to 0 and the code
/// wrote through a zero-byte allocation ("double free or corruption").
const OVERFLOWING_LOCAL: &str = "\
subroutine s(n, x)
  integer(8) :: n
  real(8) :: x, w(n, n)
  w(1, 1) = x
  w(n, n) = x
  x = w(1, 1)
end subroutine
";

#[test]
fn element_and_byte_counts_that_overflow_are_errors() {
    // 2^32 x 2^32 elements, and 2^31 x 2^31 elements of 8 bytes: the
    // element count fits, the byte count does not.
    for n in ["4294967296", "2147483648"] {
        let setting = format!("n={n}");
        let e = call(OVERFLOWING_LOCAL, Options::default(), &[&setting, "x=1"]).unwrap_err();
        assert_eq!(runtime_kind(&e), Some(RuntimeErrorKind::TooLarge), "{e}");
        assert!(e.message.contains("`w`"), "{e}");
        cli_fails(
            "overflow.f90",
            OVERFLOWING_LOCAL,
            &["--set", &setting, "--set", "x=1"],
            &["overflow.f90:1:", "`w`"],
        );
    }
}

const AUTOMATIC: &str = "\
subroutine s(n, x)
  integer(8) :: n
  real(8) :: x, w(n)
  w = x
  x = sum(w)
end subroutine
";

#[test]
fn local_arrays_beyond_the_memory_limit_are_errors() {
    let options = Options {
        memory_limit: 1 << 20,
        ..Options::default()
    };
    let e = call(AUTOMATIC, options.clone(), &["n=1000000", "x=1"]).unwrap_err();
    assert_eq!(runtime_kind(&e), Some(RuntimeErrorKind::TooLarge), "{e}");
    assert!(e.message.contains("memory limit of 1048576 bytes"), "{e}");
    call(AUTOMATIC, options, &["n=1000", "x=1"]).expect("fits the limit");
    cli_fails(
        "automatic.f90",
        AUTOMATIC,
        &["--set", "n=1000000000000", "--set", "x=1"],
        &["automatic.f90:1:", "local `w`", "memory limit"],
    );
    // Negative extents stay zero-size arrays.
    call(AUTOMATIC, Options::default(), &["n=-5", "x=1"]).expect("zero-size");
}

const ENDLESS: &str = "\
subroutine s(x)
  real(8) :: x
  do while (x > 0)
    x = x + 1
  end do
end subroutine
";

#[test]
fn a_loop_that_never_ends_stops_at_the_time_limit() {
    let options = Options {
        timeout: Some(Duration::from_millis(200)),
        ..Options::default()
    };
    let start = Instant::now();
    let e = call(ENDLESS, options.clone(), &["x=1"]).unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(10));
    assert_eq!(runtime_kind(&e), Some(RuntimeErrorKind::Timeout), "{e}");
    let line = e.location.as_ref().map(|l| l.line);
    assert!(matches!(line, Some(3..=5)), "{e}");
    // A loop that ends is not affected.
    call(ENDLESS, options, &["x=-1"]).expect("ends at once");
    cli_fails(
        "endless.f90",
        ENDLESS,
        &["--set", "x=1", "--timeout", "0.2"],
        &["endless.f90:", "time limit"],
    );
}

/// A local `w(3:4)` indexed at 5 and at 10^8 with subscript checks off: the
/// storage check stays (the old code returned garbage at 5 and crashed at
/// 10^8).
#[test]
fn without_bounds_checks_the_storage_is_still_checked() {
    let text = "\
subroutine s(k, r)
  integer :: k, r, w(3:4)
  w(k) = 4
  r = w(k)
end subroutine
";
    let options = Options {
        bounds_checks: false,
        ..Options::default()
    };
    for k in ["5", "100000000"] {
        let setting = format!("k={k}");
        let e = call(text, options.clone(), &[&setting]).unwrap_err();
        assert_eq!(runtime_kind(&e), Some(RuntimeErrorKind::IndexOutOfBounds));
        assert!(
            e.message.contains("outside the storage of 2 elements"),
            "{e}"
        );
        cli_fails(
            "unchecked.f90",
            text,
            &["--set", &setting, "--no-bounds-check"],
            &["unchecked.f90:3:", "storage"],
        );
    }
    call(text, options, &["k=4"]).expect("in bounds");
}

/// One compiled procedure and one adjoint called from 8 threads at once
/// give the single-threaded results bit for bit.
#[test]
fn concurrent_calls_agree_with_one_thread() {
    let text = "\
subroutine f(n, x, y)
  integer :: n, i
  real(8) :: x(n), y, w(n)
  y = 0
  do i = 1, n
    w(i) = sin(x(i)) * x(i)
    y = y + w(i) * w(max(1, i - 1))
  end do
end subroutine
";
    let engine = Engine::from_sources(&[("f.f90".into(), text.into())], Options::default())
        .expect("compiles");
    let proc = engine.procedure(None).expect("entry");
    let sel = |s: &str| vec![adjit::engine::Selection::parse(s).expect("selection")];
    let adjoint = engine
        .adjoint(None, &sel("y"), &sel("x"), &Default::default())
        .expect("adjoint");
    let input = |k: usize| {
        let mut args = proc.args();
        let xs: Vec<String> = (0..50)
            .map(|i| format!("{}", 0.01 * (i * k + 1) as f64))
            .collect();
        args.apply_settings(&["n=50".to_string(), format!("x={}", xs.join(","))])
            .expect("settings");
        args
    };
    let run = |k: usize| {
        let mut args = input(k);
        proc.call(&mut args).expect("runs");
        let y = args.scalar("y").expect("y");
        let (_, g) = adjoint.gradient(&input(k)).expect("gradient");
        (
            y.to_bits(),
            g.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        )
    };
    let expected: Vec<_> = (0..8).map(run).collect();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|t| {
                let run = &run;
                s.spawn(move || (0..20).map(|r| run((t + r) % 8)).collect::<Vec<_>>())
            })
            .collect();
        for (t, h) in handles.into_iter().enumerate() {
            for (r, got) in h.join().expect("thread").into_iter().enumerate() {
                assert_eq!(got, expected[(t + r) % 8], "thread {t}, round {r}");
            }
        }
    });
}

/// A tape that must spill into a directory where no file can be created
/// fails with the reason, and leaves nothing behind.
#[test]
fn a_spill_file_that_cannot_be_created_is_an_error() {
    use adjit::ir::StackKind;
    use adjit::jit::runtime::Runtime;
    use adjit::jit::stack::StackConfig;
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("host-spill");
    std::fs::create_dir_all(&dir).expect("dir");
    let missing = dir.join("missing");
    let mut rt = Runtime::with_config(StackConfig {
        ram_budget: 0,
        spill_dir: Some(missing.clone()),
        ..StackConfig::default()
    });
    let e = rt.push_word(StackKind::Value, 1).unwrap_err();
    assert!(e.contains("cannot create spill file"), "{e}");
    assert!(e.contains(missing.to_str().expect("utf-8")), "{e}");
    // Spilling into a real directory works and leaves no file there.
    let mut rt = Runtime::with_config(StackConfig {
        ram_budget: 0,
        spill_dir: Some(dir.clone()),
        ..StackConfig::default()
    });
    for k in 0..100_000 {
        rt.push_word(StackKind::Value, k).expect("spills");
    }
    assert!(rt.stats().value.spilled_bytes > 0);
    let left: Vec<_> = std::fs::read_dir(&dir)
        .expect("dir")
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("adjit-tape"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A module array of 10^11 elements: the engine refuses it before
/// allocating (the old code aborted on a failed allocation).
#[test]
fn a_global_beyond_the_memory_limit_is_an_error() {
    let text = "\
module m
  real(8) :: big(100000000000_8)
end module
subroutine s(x)
  use m
  real(8) :: x
  big(1) = x
  x = big(1)
end subroutine
";
    let e = call(text, Options::default(), &["x=1"]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Compile, "{e}");
    assert!(
        e.message.contains("global `") && e.message.contains("memory limit"),
        "{e}"
    );
    cli_fails("global.f90", text, &["--set", "x=1"], &["memory limit"]);
}

/// Found by the fuzzer (`fuzz/run.sh adjoint`, 3 hangs): in the adjoint's
/// forward sweep the loop's entry block and its back-edge both read the
/// interrupt flag with no store in between, Cranelift merged the two
/// loads, and the loop only saw the time limit after its 2^31 iterations.
#[test]
fn the_time_limit_stops_a_derivative_sweep() {
    let text = "\
subroutine s(x, y)
  real(8) :: x, y
  integer :: k
  y = 0
  do k = 1, 2147483647
    y = y + x / 3
  end do
end subroutine
";
    let options = Options {
        timeout: Some(Duration::from_millis(100)),
        ..Options::default()
    };
    let engine = Engine::from_sources(&[("t.f90".into(), text.into())], options).expect("compiles");
    let sel = |s: &str| vec![adjit::engine::Selection::parse(s).expect("selection")];
    let adjoint = engine
        .adjoint(None, &sel("y"), &sel("x"), &Default::default())
        .expect("adjoint");
    let mut args = adjoint.args();
    args.apply_settings(&["x=1"]).expect("settings");
    let start = Instant::now();
    let e = adjoint.gradient(&args).unwrap_err();
    assert_eq!(runtime_kind(&e), Some(RuntimeErrorKind::Timeout), "{e}");
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
}

/// Inputs the fuzzer found (`tests/fuzz_findings/`): every procedure of
/// each compiles natively and its tangent Jacobian of the last real
/// argument is computed or refused with an error. Before the fixes the
/// first two panicked in Cranelift (a 1-byte local placed in the frame was
/// cleared with a 16-byte aligned memset), the third aborted the process
/// allocating a 38 TB Jacobian, and the fourth (a procedure with a dummy
/// procedure, never bound, calling one with an actual procedure) panicked
/// in the front end when the procedures were put in module order.
#[test]
fn fuzz_findings_compile_and_differentiate_without_crashing() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_findings");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("findings")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    assert!(files.len() >= 3);
    for path in files {
        let engine = Engine::from_files(&[&path], Options::default()).expect("front end");
        for name in engine.procedure_names() {
            let proc = engine.procedure(Some(&name)).expect("compiles natively");
            let args = proc.args();
            let reals: Vec<String> = (0..args.names().len())
                .filter(|&i| args.ty(i).is_float())
                .map(|i| args.names()[i].clone())
                .collect();
            let Some(last) = reals.last() else { continue };
            let sel = |n: &str| adjit::engine::Selection::parse(n).expect("selection");
            let wrt: Vec<_> = reals.iter().map(|n| sel(n)).collect();
            if let Ok(t) = engine.tangent(Some(&name), &[sel(last)], &wrt, 1) {
                let _ = t.jacobian(&t.args());
            }
        }
    }
}

/// Front-end inputs the fuzzer found hanging or exhausting memory: DATA
/// repeat counts of 2^31 and more were expanded value by value before they
/// were counted, and an initializer of a 2^31-element array was expanded to
/// 16 GB of constants. Each is now a located error, found without
/// expanding anything.
#[test]
fn huge_data_repeat_counts_and_initializers_are_errors() {
    let cases = [
        (
            "repeat.f",
            "      subroutine s(f)\n      double precision f, c(6)\n      save c\n      \
             data c /1.5d0, 2147483648*0.125d0, -0.0625d0/\n      f = c(1)\n      end\n",
            "DATA statement has 6 objects but 2147483650 values",
        ),
        (
            "repeat_max.f",
            "      subroutine s(f)\n      double precision f, c(6)\n      save c\n      \
             data c /9223372036854775807*0.125d0, 1d0/\n      f = c(1)\n      end\n",
            "DATA statement has 6 objects but 9223372036854775808 values",
        ),
        (
            "data_big.f",
            "      subroutine s(f)\n      double precision f\n      integer big(20000000)\n      \
             save big\n      data big /20000000*0/\n      f = big(1)\n      end\n",
            "DATA initializes 20000000 elements; at most 16777216",
        ),
        (
            "init_big.f90",
            "module m\n  double precision :: w(2147483647) = 1\nend module\n\
             subroutine s(f)\n  use m\n  double precision f\n  f = w(1)\nend subroutine\n",
            "`w` initializes 2147483647 elements; at most 16777216",
        ),
    ];
    for (name, text, says) in cases {
        let path = source_file(name, text);
        let e = Engine::from_files(&[&path], Options::default())
            .err()
            .unwrap_or_else(|| panic!("{name} compiled"));
        let shown = e.to_string();
        assert!(shown.contains(says), "{name}: {shown}");
        assert!(
            shown.contains(&format!("{name}:")),
            "{name} not located: {shown}"
        );
    }
}

/// Front-end inputs the fuzzer found hanging or exhausting memory
/// (`tests/fuzz_rejected/`, each reduced to what it tests, which its
/// comment says): each is rejected with a located error, in free form with
/// the message of its `! expect:` line, and as an error in fixed form too.
#[test]
fn fuzz_rejected_inputs_are_located_errors() {
    use adjit::front::source::SourceForm;
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_rejected");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("findings")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    assert!(files.len() >= 2);
    for path in files {
        let text = std::fs::read_to_string(&path).expect("input");
        let expect = text
            .lines()
            .find_map(|l| l.strip_prefix("! expect: "))
            .unwrap_or_else(|| panic!("{}: no `! expect:` line", path.display()));
        let name = path.file_name().expect("name").to_string_lossy();
        for form in [SourceForm::Free, SourceForm::Fixed] {
            let options = Options {
                form: Some(form),
                ..Options::default()
            };
            let e = Engine::from_files(&[&path], options)
                .err()
                .unwrap_or_else(|| panic!("{} compiled", path.display()));
            let shown = e.to_string();
            assert!(shown.contains(&format!("{name}:")), "not located: {shown}");
            if form == SourceForm::Free {
                assert!(shown.contains(expect), "{name}: {shown}");
            }
        }
    }
}

/// What every procedure of `path` computes when compiled at `speed`:
/// per procedure, its outputs (or error) after a call with fixed
/// arguments, and the tangent and adjoint Jacobians of its last real
/// argument with respect to all its real arguments (entries, or the
/// error), as text (`{:?}` of an `f64` is exact). Each runs on a fresh
/// engine, so that module variables a call changes start the same.
fn results_at(
    path: &std::path::Path,
    speed: adjit::jit::codegen::CompileSpeed,
    tiering: adjit::engine::Tiering,
) -> Vec<String> {
    use adjit::engine::{ArgValue, Selection};
    let options = Options {
        compile_speed: speed,
        tiering,
        io: adjit::engine::Channels {
            output: std::sync::Arc::new(std::sync::Mutex::new(std::io::sink())),
            input: std::sync::Arc::new(std::sync::Mutex::new(std::io::empty())),
        },
        timeout: Some(Duration::from_secs(5)),
        ..Options::default()
    };
    let fresh = || Engine::from_files(&[path], options.clone()).expect("front end");
    let mut out = Vec::new();
    for name in fresh().procedure_names() {
        let proc = fresh().procedure(Some(&name)).expect("compiles natively");
        let mut args = proc.args();
        let mut settings = Vec::new();
        let mut reals = Vec::new();
        // Single precision (REAL(4)) derivatives agree to its rounding. A
        // difference quotient (`slope` of optional_procedure.f90 without
        // its Jacobian, step 1e-7) divides the rounding in which the two
        // modes differ by its step.
        let mut tolerance: f64 = if name.starts_with("slope[") {
            1e-8
        } else {
            1e-12
        };
        for (i, n) in args.names().iter().enumerate() {
            let ty = args.ty(i);
            if ty.is_int() && !args.is_array(i) {
                settings.push((n.clone(), ArgValue::Integer(3)));
            } else if ty.is_float() {
                settings.push((n.clone(), ArgValue::Scalar(0.3 + 0.17 * i as f64)));
                reals.push(n.clone());
                if ty == adjit::ir::Type::F32 {
                    tolerance = 1e-5;
                }
            }
        }
        for (n, v) in &settings {
            args.set(n, v.clone()).expect("setting");
        }
        let call = proc.call(&mut args).map_err(|e| e.to_string());
        let values: Vec<String> = args
            .names()
            .iter()
            .map(|n| format!("{:?}", args.get(n).expect("argument")))
            .collect();
        out.push(format!("{name}: {call:?} {values:?}"));
        let Some(last) = reals.last() else { continue };
        let sel = |n: &str| Selection::parse(n).expect("selection");
        let wrt: Vec<Selection> = reals.iter().map(|n| sel(n)).collect();
        let entries = |j: adjit::engine::Jacobian| -> Vec<f64> {
            (0..j.rows())
                .flat_map(|r| (0..j.cols()).map(move |c| (r, c)))
                .map(|(r, c)| j.get(r, c))
                .collect()
        };
        let apply = |a: &mut adjit::engine::Args| {
            for (n, v) in &settings {
                a.set(n, v.clone()).expect("setting");
            }
        };
        let tangent = fresh()
            .tangent(Some(&name), &[sel(last)], &wrt, 1)
            .and_then(|t| {
                let mut a = t.args();
                apply(&mut a);
                t.jacobian(&a)
            })
            .map(entries)
            .map_err(|e| e.to_string());
        let adjoint = fresh()
            .adjoint(Some(&name), &[sel(last)], &wrt, &Default::default())
            .and_then(|t| {
                let mut a = t.args();
                apply(&mut a);
                t.jacobian(&a)
            })
            .map(entries)
            .map_err(|e| e.to_string());
        if let (Ok(t), Ok(a)) = (&tangent, &adjoint) {
            assert_eq!(t.len(), a.len(), "{name}");
            // Where the arguments make the primal singular (equal spline
            // knots, a singular matrix: these arguments fill arrays with
            // one value), NaN and infinity propagate differently in the
            // two modes: only finite Jacobians are compared.
            let finite = t.iter().chain(a).all(|x| x.is_finite());
            for (x, y) in t.iter().zip(a).filter(|_| finite) {
                let scale = x.abs().max(y.abs()).max(1.0);
                assert!(
                    (x - y).abs() <= tolerance * scale,
                    "{name}: tangent {x} adjoint {y}"
                );
            }
            out.push(format!("{name} derivatives: {t:?} {a:?}"));
        } else {
            out.push(format!("{name} refused: {tangent:?} {adjoint:?}"));
        }
    }
    out
}

/// Cranelift's quickest settings (`CompileSpeed::Fast`, which the fuzzer
/// compiles its inputs with) and the baseline tier of tiered compilation
/// (`Tiering::Baseline`: no loop versions, no skipped trips, no
/// speculation) change the machine code, never the results: every
/// procedure of the fuzzer's seed programs and of the corpus gives, bit
/// for bit, the outputs and the tangent and adjoint Jacobians of the
/// optimized code (whose tangent and adjoint agree).
#[test]
fn fast_compilation_gives_the_same_results() {
    use adjit::engine::Tiering;
    use adjit::jit::codegen::CompileSpeed;
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<_> = ["fuzz/seeds", "tests/corpus"]
        .iter()
        .flat_map(|d| std::fs::read_dir(root.join(d)).expect("sources"))
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "f90"))
        .collect();
    files.sort();
    let mut derivatives = 0;
    for path in &files {
        let optimized = results_at(path, CompileSpeed::Optimized, Tiering::Optimized);
        let fast = results_at(path, CompileSpeed::Fast, Tiering::Optimized);
        assert_eq!(optimized, fast, "{}", path.display());
        let baseline = results_at(path, CompileSpeed::Optimized, Tiering::Baseline);
        assert_eq!(optimized, baseline, "baseline tier: {}", path.display());
        derivatives += fast.iter().filter(|r| r.contains(" derivatives: ")).count();
    }
    assert!(
        derivatives >= 8,
        "only {derivatives} procedures differentiated"
    );
}

/// Peak resident memory of this process (bytes, Linux's `VmHWM`).
fn peak_resident_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM");
    kb * 1024
}

/// Fuzz finding (a hang): building a tangent or an adjoint allocated a
/// probe of the entry's arguments without the engine's memory limit, so a
/// 2 GiB LOGICAL argument under a 256 MB limit was zeroed in full (and at
/// 4 GiB the fuzzer stalled for minutes). The probe now keeps to the limit:
/// the process's peak memory stays far below the argument's size.
#[test]
fn derivative_builds_keep_to_the_memory_limit() {
    let text = "\
subroutine big(x, y, flags)
  real(8), intent(in) :: x
  real(8), intent(out) :: y
  logical, intent(out) :: flags(2147483648_8)
  y = 2 * x
  flags(1) = x > 0
end subroutine
";
    let options = Options {
        memory_limit: 256 << 20,
        ..Options::default()
    };
    let engine =
        Engine::from_sources(&[("big.f90".into(), text.into())], options).expect("compiles");
    let sel = |s: &str| vec![adjit::engine::Selection::parse(s).expect("selection")];
    let before = peak_resident_bytes();
    let tangent = engine.tangent(None, &sel("y"), &sel("x"), 1);
    let adjoint = engine.adjoint(None, &sel("y"), &sel("x"), &Default::default());
    let grown = peak_resident_bytes().saturating_sub(before);
    assert!(grown < 1 << 30, "peak memory grew by {grown} bytes");
    assert!(
        tangent.is_ok() && adjoint.is_ok(),
        "derivatives of y wrt x are built"
    );
}
