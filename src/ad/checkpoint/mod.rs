//! Binomial checkpointing of loops marked `!$AD BINOMIAL-CKP`: the revolve
//! schedule ([`revolve`]), the outlining of a marked loop into a loop
//! procedure and a step procedure ([`outline`]), and the IR procedure that
//! evaluates the schedule's split point at run time ([`split_procedure`]).
//! The adjoint transform generates the sweeps that follow the schedule
//! (`crate::ad::adjoint`).

pub mod live;
pub mod outline;
pub mod probe;
pub mod revolve;

use adjit_ir::builder::ProcBuilder;
use adjit_ir::{BinaryOp, CmpOp, Proc, Type};

/// `name(l, s, m)`: stores into `m` the split of [`revolve::split`] for
/// `l ≥ 2` trips and `s` snapshots (all I64 parameters), by the same integer
/// arithmetic: the repetition number `r` from `β(s, 0) = 1` and
/// `β(s, r) = β(s, r−1)·(s+r)/r`, then `β(s−1, r) = β(s, r)·s/(s+r)`,
/// `β(s, r−1) = β(s, r)·r/(s+r)` and `β(s, r−2) = β(s, r−1)·(r−1)/(s+r−1)`,
/// all exact.
pub fn split_procedure(name: String) -> Proc {
    let mut proc = Proc::new(name);
    let mut b = ProcBuilder::new(&mut proc);
    let w = Type::I64;
    let l = b.param("l", w, Vec::new());
    let s = b.param("s", w, Vec::new());
    let m = b.param("m", w, Vec::new());
    let r = b.local("r", w);
    let range = b.local("range", w);
    let (one_snap, many, head, body, done) = (
        b.create_block(),
        b.create_block(),
        b.create_block(),
        b.create_block(),
        b.create_block(),
    );
    let sv = b.load(s);
    let one = b.iconst(w, 1);
    let le = b.cmp(CmpOp::Le, sv, one);
    b.branch(le, one_snap, many);
    // One snapshot: advance all but the last trip.
    b.switch_to_block(one_snap);
    let lv = b.load(l);
    let one = b.iconst(w, 1);
    let x = b.binary(BinaryOp::Sub, lv, one);
    b.store(m, x);
    b.ret();
    b.switch_to_block(many);
    let zero = b.iconst(w, 0);
    b.store(r, zero);
    let one = b.iconst(w, 1);
    b.store(range, one);
    b.jump(head);
    b.switch_to_block(head);
    let rg = b.load(range);
    let lv = b.load(l);
    let lt = b.cmp(CmpOp::Lt, rg, lv);
    b.branch(lt, body, done);
    b.switch_to_block(body);
    let rv = b.load(r);
    let one = b.iconst(w, 1);
    let r1 = b.binary(BinaryOp::Add, rv, one);
    b.store(r, r1);
    let sv = b.load(s);
    let sr = b.binary(BinaryOp::Add, sv, r1);
    let rg = b.load(range);
    let prod = b.binary(BinaryOp::Mul, rg, sr);
    let q = b.binary(BinaryOp::Div, prod, r1);
    b.store(range, q);
    b.jump(head);
    b.switch_to_block(done);
    let (lv, sv, rv, rg) = (b.load(l), b.load(s), b.load(r), b.load(range));
    let sr = b.binary(BinaryOp::Add, sv, rv);
    // β(s-1, r)
    let t = b.binary(BinaryOp::Mul, rg, sv);
    let beta_s1_r = b.binary(BinaryOp::Div, t, sr);
    // β(s, r-1)
    let t = b.binary(BinaryOp::Mul, rg, rv);
    let beta_s_r1 = b.binary(BinaryOp::Div, t, sr);
    // β(s, r-2) (0 when r < 2)
    let one = b.iconst(w, 1);
    let r_1 = b.binary(BinaryOp::Sub, rv, one);
    let sr1 = b.binary(BinaryOp::Sub, sr, one);
    let t = b.binary(BinaryOp::Mul, beta_s_r1, r_1);
    let beta_s_r2 = b.binary(BinaryOp::Div, t, sr1);
    let zero = b.iconst(w, 0);
    let beta_s_r2 = b.binary(BinaryOp::Max, beta_s_r2, zero);
    let a = b.binary(BinaryOp::Sub, lv, beta_s1_r);
    let x = b.binary(BinaryOp::Max, a, beta_s_r2);
    let x = b.binary(BinaryOp::Max, x, one);
    let last = b.binary(BinaryOp::Sub, lv, one);
    let x = b.binary(BinaryOp::Min, x, last);
    b.store(m, x);
    b.ret();
    proc
}

#[cfg(test)]
mod tests {
    use super::*;
    use adjit_ir::interp::Interpreter;
    use adjit_ir::{Buffer, Module};

    /// The generated split agrees with [`revolve::split`].
    #[test]
    fn split_procedure_matches_revolve() {
        let mut module = Module::default();
        let id = module.add_proc(split_procedure("split".into()));
        adjit_ir::verify::verify_module(&module).expect("verifies");
        let mut interp = Interpreter::new(&module);
        for s in 1..=12u64 {
            for l in (2..200u64).chain([1000, 99_999, 100_000]) {
                let mut args = vec![
                    Buffer::I64(vec![l as i64]),
                    Buffer::I64(vec![s as i64]),
                    Buffer::I64(vec![0]),
                ];
                interp.call(id, &mut args).expect("runs");
                let Buffer::I64(m) = &args[2] else {
                    panic!("an I64 buffer")
                };
                assert_eq!(m[0] as u64, revolve::split(l, s), "l={l} s={s}");
            }
        }
    }
}
