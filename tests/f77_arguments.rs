//! Fortran 77 argument habits at the entry: an assumed-size array argument
//! (`x(*)`, `a(2, *)`) takes its extent from the number of values given or
//! from `--extent x=N` (`Args::set_extent`), which also sizes an output
//! array given no values and sets the length of a `CHARACTER*(*)`
//! argument. The gfortran comparison of the habits inside a program
//! (element-start actuals, scalar to a one-element array, another rank) is
//! the corpus program `dummy_procs.f`.

mod common;

use adjit::engine::{Engine, ErrorKind, Options};
use common::cli::adjit;

const SOURCE: &str = "tests/legacy/src/extent.f";

#[test]
fn extents_size_assumed_size_outputs_and_assumed_length_text() {
    let (code, out, err) = adjit(&[
        "run", SOURCE, "--set", "n=3", "--set", "x=1,2,3", "--extent", "y=3", "--extent", "a=3",
        "--set", "a=1", "--extent", "task=5", "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    let outputs = &json["outputs"];
    assert_eq!(outputs["y"], serde_json::json!([3.0, 5.0, 7.0]), "{out}");
    assert_eq!(outputs["a"].as_array().unwrap().len(), 6, "{out}");
    assert_eq!(outputs["task"], "OK   ", "{out}");

    // Without --extent the text gives the length; too short an extent is a
    // located bounds error when the element past it is touched.
    let (code, out, err) = adjit(&[
        "run",
        SOURCE,
        "--set",
        "n=3",
        "--set",
        "x=1,2,3",
        "--extent",
        "y=2",
        "--extent",
        "a=3",
        "--set",
        "task=abcdefg",
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(
        err.contains("extent.f:8:") && err.contains("`y`") && err.contains("outside 1:2"),
        "{err}"
    );

    // An argument with declared extents takes no --extent (a usage error).
    let (code, _, err) = adjit(&["run", SOURCE, "--extent", "n=3"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("`n`") && err.contains("no assumed size"),
        "{err}"
    );
}

#[test]
fn set_extent_follows_the_other_extents_and_keeps_values() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(SOURCE);
    let engine = Engine::from_files(&[path], Options::default()).unwrap();
    let f = engine.procedure(Some("ext")).unwrap();
    let mut args = f.args();
    // a(2, *) with extent 4: 8 elements; y given no values takes 4.
    args.set_extent("a", 4).unwrap();
    args.set_extent("y", 4).unwrap();
    args.set_extent("task", 3).unwrap();
    args.set_array("x", &[1.0, -1.0, 0.5, 2.0]).unwrap();
    args.set_scalar("n", 4.0).unwrap();
    assert_eq!(args.get("a").unwrap().len(), 8);
    args.set_scalar("a", 0.25).unwrap();
    f.call(&mut args).unwrap();
    assert_eq!(args.f64s("y").unwrap(), vec![2.25, -1.75, 1.25, 4.25]);
    assert_eq!(args.get("task").unwrap().len(), 3);
    // Values given later decide the size.
    args.set_array("y", &[0.0; 6]).unwrap();
    assert_eq!(args.get("y").unwrap().len(), 6);
    let e = args
        .set_extent("x", 0)
        .map(|_| ())
        .and(args.set_extent("n", 2));
    assert_eq!(e.unwrap_err().kind, ErrorKind::Usage);
}

/// `fjac(ld, 4)` given 3 elements: fine while only they are referenced; a
/// reference beyond them is a located bounds error (JIT and interpreter).
#[test]
fn a_dummy_declared_larger_than_its_actual_fails_only_beyond_the_storage() {
    let source = "      subroutine drv(k, s)\n      integer k\n      double precision s, w(3)\n      w(1) = 1\n      w(2) = 2\n      w(3) = 3\n      call use2(10, w, s, k)\n      end\n      subroutine use2(ld, fjac, s, k)\n      integer ld, k\n      double precision fjac(ld, 4), s\n      s = fjac(1, 1) + fjac(k, 1)\n      end\n";
    for backend in [
        adjit::engine::Backend::Jit,
        adjit::engine::Backend::Interpreter,
    ] {
        let options = Options {
            backend,
            ..Options::default()
        };
        let sources = [("old.f".to_string(), source.to_string())];
        let engine = Engine::from_sources(&sources, options).unwrap();
        let f = engine.procedure(Some("drv")).unwrap();
        let mut args = f.args();
        args.set_scalar("k", 3.0).unwrap();
        f.call(&mut args).unwrap();
        assert_eq!(args.scalar("s").unwrap(), 4.0);
        args.set_scalar("k", 4.0).unwrap();
        let e = f.call(&mut args).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Runtime);
        assert!(
            e.message.contains("old.f:12:")
                && e.message.contains("`fjac`")
                && e.message
                    .contains("element offset 3 outside the storage of 3 elements"),
            "{backend:?}: {}",
            e.message
        );
    }
}
