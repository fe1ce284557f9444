//! Helpers shared by the integration tests.
#![allow(dead_code)]

use adjit::engine::{Args, Backend, Engine, Error, ErrorKind, Options};

pub mod check;
pub mod cli;
pub mod corpus;
pub mod scalar;

/// The located message of the compile-time error of `source`, compiled as
/// the file `file`; panics (naming the source) if it compiles.
pub fn compile_error_in(file: &str, source: &str) -> String {
    match Engine::from_source(file, source) {
        Ok(_) => panic!("must be rejected:\n{source}"),
        Err(e) => {
            assert_eq!(e.kind, ErrorKind::Compile, "{e}");
            e.message
        }
    }
}

/// Each `(source, at, what)` is rejected at compile time with a message
/// holding the location `at` and the text `what` (`source` compiled as the
/// file `file`).
pub fn assert_compile_errors<S: AsRef<str>>(file: &str, cases: &[(S, &str, &str)]) {
    for (source, at, what) in cases {
        let message = compile_error_in(file, source.as_ref());
        assert!(message.contains(at), "{message}");
        assert!(message.contains(what), "{message}");
    }
}

/// Compiles `source` as the file `file` for the executor `backend`
/// (other options default); panics with the error if it does not compile.
pub fn engine_on(backend: Backend, file: &str, source: &str) -> Engine {
    let options = Options {
        backend,
        ..Options::default()
    };
    Engine::from_sources(&[(file.to_string(), source.to_string())], options)
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Compiles `source` (as `e.f90`) on each executor and hands `body` the
/// executor and a call of its `f(n, k, s)`: the call sets `n` and `k` and
/// gives `s`, or the error.
pub fn each_backend_calls(
    source: &str,
    mut body: impl FnMut(Backend, &dyn Fn(f64, f64) -> Result<f64, Error>),
) {
    for backend in [Backend::Jit, Backend::Interpreter] {
        let e = engine_on(backend, "e.f90", source);
        let f = e.procedure(Some("f")).unwrap();
        let call = |n: f64, k: f64| {
            let mut args = f.args();
            args.set_scalar("n", n).unwrap();
            args.set_scalar("k", k).unwrap();
            f.call(&mut args).map(|()| args.scalar("s").unwrap())
        };
        body(backend, &call);
    }
}

/// `source` compiled as the file `name` (JIT) and the arguments of its
/// procedure `entry` set from `sets`: a one-value entry of a scalar
/// argument sets the scalar, any other the array (column-major).
pub fn engine_with_args(
    name: &str,
    source: &str,
    entry: &str,
    sets: &[(&str, &[f64])],
) -> (Engine, Args) {
    let engine = Engine::from_source(name, source).unwrap();
    let mut args = engine.procedure(Some(entry)).unwrap().args();
    for (n, v) in sets {
        if v.len() == 1 && args.rank(n).unwrap() == 0 {
            args.set_scalar(n, v[0]).unwrap();
        } else {
            args.set_array(n, v).unwrap();
        }
    }
    (engine, args)
}
