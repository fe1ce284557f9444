//! Tests of the adjoint's cost-saving choices: `foo_b` never runs the
//! primal again, and counted loops undo their index increments instead of
//! recording the index every iteration (results checked by the dot product,
//! finite differences and the split/combined agreement of `run`).

use super::*;

/// Loops with a step variable, a downward step and a nest whose inner
/// index is a subscript: every index update is an invertible increment.
const LOOPS: &str = "
subroutine loops(n, k, x, y)
  integer n, k, i, j
  double precision x(n), y
  y = 1
  do i = 1, n, k
    y = y*x(i)
  end do
  do i = n, 1, -1
    y = y + sin(x(i))*y
  end do
  do i = 1, 3
    do j = i, n
      y = y + x(j)*x(i)*1d-2
    end do
  end do
end subroutine
";

fn loops_case(n: usize, k: i32) -> Case {
    let x: Vec<f64> = (0..n).map(|i| 0.9 + 0.05 * (i % 5) as f64).collect();
    fortran_case(
        compile_fortran(LOOPS, SourceForm::Free),
        "loops",
        &["x"],
        &["y"],
        vec![
            Buffer::I32(vec![n as i32]),
            Buffer::I32(vec![k]),
            Buffer::F64(x),
            scalar(0.0),
        ],
    )
}

#[test]
fn counted_loops_undo_their_index_instead_of_recording_it() {
    for k in [1, 2] {
        let case = loops_case(7, k);
        check_dot_product(&case, 1e-13);
        check_gradient(&case, 1e-6);
    }
    // With TBR, the integer stack holds what the loops hand over (their
    // indices and steps once), whatever the trip counts.
    let tbr = AdjointOptions::default();
    let seeds: HashMap<usize, Buffer> = [(3, scalar(1.0))].into_iter().collect();
    let small = run(&loops_case(10, 1), tbr, &seeds).tape;
    let large = run(&loops_case(400, 1), tbr, &seeds).tape;
    assert_eq!(small[1], large[1], "integer entries grow with n");
    assert!(small[1] < 20, "{} integer entries", small[1]);
    // The value stack still records `y` once per iteration.
    assert!(large[0] >= 2 * 400);
}

#[test]
fn combined_adjoint_does_not_run_the_primal_again() {
    for case in [bratu(20), griewank(9), loops_case(9, 2)] {
        for options in all_options() {
            let (module, procs) = adjoint(
                &case.module,
                case.proc,
                &case.independents,
                &case.dependents,
                &options,
            )
            .expect("adjoint");
            let combined = module.proc(procs.combined);
            let calls: Vec<ProcId> = combined
                .insts
                .iter()
                .filter_map(|i| match &i.kind {
                    adjit_ir::Inst::Call(p, _) => Some(*p),
                    _ => None,
                })
                .collect();
            assert_eq!(
                calls,
                vec![procs.forward, procs.reverse],
                "{options:?}: foo_b calls exactly the two sweeps"
            );
            // And still gives the primal outputs (checked by `run`).
            let seeds = random_seeds(&case, &mut Lcg(7));
            run(&case, options, &seeds);
        }
    }
}

/// An output of assumed size that the reverse sweep restores cannot be
/// copied into a local: `foo_b` falls back to saving the entry values and
/// running the primal after the sweeps.
#[test]
fn assumed_size_outputs_restored_by_the_reverse_sweep() {
    let src = "
subroutine scale(n, x, y)
  integer n, i
  double precision x(*), y(*)
  do i = 1, n
    y(i) = y(i)*sin(x(i))
    y(i) = y(i)*y(i)
  end do
end subroutine
";
    let case = fortran_case(
        compile_fortran(src, SourceForm::Free),
        "scale",
        &["x", "y"],
        &["y"],
        vec![
            Buffer::I32(vec![4]),
            Buffer::F64(vec![0.3, 0.5, 0.7, 1.1]),
            Buffer::F64(vec![1.5, -0.5, 2.0, 0.25]),
        ],
    );
    check_dot_product(&case, 1e-13);
    check_gradient(&case, 1e-6);
}

/// The reverse sweep tests the seed of each nonlinear array-element store
/// once and skips its recomputation and guarded products when it is zero
/// (strong zeros on): each of Bratu's eight element stores gets one (even
/// `F(dim) = F(dim) - 2*x(dim)`, whose constant partial is a product),
/// none without strong zeros, and Griewank's scalar accumulations none. With
/// one seeded output most tests skip, and the gradient is bit for bit the
/// one of the plain products (no singular partial on this path).
#[test]
fn zero_seeds_skip_the_reversal_of_nonlinear_statements() {
    use crate::ad::rules::StrongZero;
    let case = bratu(20);
    let zero_tests_of = |case: &Case, strong_zero: StrongZero| {
        let options = AdjointOptions {
            strong_zero,
            ..AdjointOptions::default()
        };
        let (module, procs) = adjoint(
            &case.module,
            case.proc,
            &case.independents,
            &case.dependents,
            &options,
        )
        .expect("adjoint");
        let reverse = module.proc(procs.reverse);
        reverse
            .blocks
            .iter()
            .filter(|b| match b.term {
                adjit_ir::Terminator::Branch { cond, .. } => matches!(
                    reverse.inst(cond).kind,
                    adjit_ir::Inst::Cmp(CmpOp::Eq, a, _)
                        if reverse.value_type(a).is_some_and(Type::is_float)
                ),
                _ => false,
            })
            .count()
    };
    assert_eq!(zero_tests_of(&case, StrongZero::All), 8);
    assert_eq!(zero_tests_of(&case, StrongZero::Off), 0);
    // Scalar stores (Griewank's sum and product) never get the test.
    assert_eq!(zero_tests_of(&griewank(20), StrongZero::All), 0);
    for seeded in [0, 1, 10, 19] {
        let mut f_b = vec![0.0; 20];
        f_b[seeded] = 1.0;
        let seeds: HashMap<usize, Buffer> = [(4, Buffer::F64(f_b))].into_iter().collect();
        let gradient = |strong_zero| {
            let options = AdjointOptions {
                strong_zero,
                ..AdjointOptions::default()
            };
            let adjoints = run(&case, options, &seeds).adjoints;
            [2, 3].map(|p| match &adjoints[&p] {
                Buffer::F64(v) => v.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                other => panic!("adjoint of a double precision array: {other:?}"),
            })
        };
        assert_eq!(
            gradient(StrongZero::All),
            gradient(StrongZero::Off),
            "seed at f({})",
            seeded + 1
        );
    }
}
