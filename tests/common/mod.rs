//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod check;
pub mod cli;
pub mod corpus;
pub mod scalar;

/// The located message of the compile-time error of `source`, compiled as
/// the file `file`; panics (naming the source) if it compiles.
pub fn compile_error_in(file: &str, source: &str) -> String {
    match adjit::engine::Engine::from_source(file, source) {
        Ok(_) => panic!("must be rejected:\n{source}"),
        Err(e) => {
            assert_eq!(e.kind, adjit::engine::ErrorKind::Compile, "{e}");
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
