//! Compile Griewank's function from Fortran source, call it natively, and
//! take its gradient by the adjoint and a Jacobian column by the tangent.
//!
//! `cargo run --release --example gradient`

use adjit::ad::adjoint::{AdjointOptions, RecordPolicy};
use adjit::engine::{Engine, Selection};

const SOURCE: &str = "
subroutine griewank(s, a, c)
  integer s
  double precision a(s), c, d
  integer i
  c = 1
  d = 1.D0
  do i = 1, s
    c = c + (a(i)**2)/400
    d = d*cos(a(i)/sqrt(dble(i)))
  end do
  c = c - d
end subroutine
";

fn main() -> Result<(), adjit::engine::Error> {
    let engine = Engine::from_source("griewank.f90", SOURCE)?;

    // The primal, compiled to native code.
    let griewank = engine.procedure(Some("griewank"))?;
    let mut args = griewank.args();
    args.set_scalar("s", 5.0)?; // sizes a(s)
    args.set_array("a", &[1.0; 5])?;
    griewank.call(&mut args)?;
    println!("c = {}", args.scalar("c")?);

    // The gradient dc/da by the adjoint (one reverse sweep).
    let of = Selection::parse_list("c")?;
    let wrt = Selection::parse_list("a")?;
    let options = AdjointOptions {
        record: RecordPolicy::Tbr,
        activity: true,
        ..AdjointOptions::default()
    };
    let adjoint = engine.adjoint(Some("griewank"), &of, &wrt, &options)?;
    let (value, gradient) = adjoint.gradient(&args)?;
    println!("c = {value}");
    for (i, g) in gradient.iter().enumerate() {
        println!("dc/da({}) = {g:.16e}", i + 1);
    }

    // The same by the tangent, all five directions in one vector sweep.
    let tangent = engine.tangent(Some("griewank"), &of, &wrt, 5)?;
    let jacobian = tangent.jacobian(&args)?;
    println!("tangent row: {:?}", jacobian.matrix);
    Ok(())
}
