//! Differential test: the Cranelift JIT (`adjit_jit::codegen`) against the
//! reference interpreter (`adjit::ir::interp`) on the same IR modules and
//! randomized inputs. Outputs must agree bit for bit (any NaN matches any
//! NaN), and failing calls must fail with the same error.

use adjit::ir::builder::ProcBuilder;
use adjit::ir::interp::Interpreter;
use adjit::ir::Buffer;
use adjit::ir::{
    BinaryOp, CallArg, CmpOp, Module, Proc, ProcId, Rounding, Span, StackKind, Type, UnaryOp, VarId,
};
use adjit::jit::codegen::{CompiledModule, JitOptions};
use adjit::jit::runtime::Runtime;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    fn float(&mut self) -> f64 {
        const SPECIAL: [f64; 12] = [
            0.0,
            -0.0,
            0.5,
            -2.5,
            1.0,
            -1.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            0.49999999999999994,
            1e300,
            3.0,
        ];
        let r = self.next();
        if r.is_multiple_of(4) {
            SPECIAL[(r >> 8) as usize % SPECIAL.len()]
        } else {
            let mag = ((r >> 16) % 2000) as f64 / 100.0 - 10.0;
            let sign = if r & (1 << 40) != 0 { -1.0 } else { 1.0 };
            sign * mag.exp() * ((r >> 20) % 1000) as f64 / 997.0
        }
    }
    fn int(&mut self) -> i64 {
        const SPECIAL: [i64; 9] = [0, 1, -1, 2, -2, 7, i64::MIN, i64::MAX, 63];
        let r = self.next();
        match r % 4 {
            0 => SPECIAL[(r >> 8) as usize % SPECIAL.len()],
            1 => (r >> 3) as i64,
            _ => ((r >> 8) % 41) as i64 - 20,
        }
    }
    /// A random scalar buffer of a type.
    fn buffer(&mut self, ty: Type, len: usize) -> Buffer {
        match ty {
            Type::F64 => Buffer::F64((0..len).map(|_| self.float()).collect()),
            Type::F32 => Buffer::F32((0..len).map(|_| self.float() as f32).collect()),
            Type::I64 => Buffer::I64((0..len).map(|_| self.int()).collect()),
            Type::I32 => Buffer::I32((0..len).map(|_| self.int() as i32).collect()),
            Type::Bool => Buffer::Bool((0..len).map(|_| (self.next() & 1) as u8).collect()),
            Type::Char => Buffer::Char((0..len).map(|_| b'a' + (self.next() % 26) as u8).collect()),
        }
    }
}

/// Bitwise equality of buffers, any NaN matching any NaN.
fn same(a: &Buffer, b: &Buffer) -> bool {
    match (a, b) {
        (Buffer::F64(x), Buffer::F64(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|(p, q)| p.to_bits() == q.to_bits() || (p.is_nan() && q.is_nan()))
        }
        (Buffer::F32(x), Buffer::F32(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|(p, q)| p.to_bits() == q.to_bits() || (p.is_nan() && q.is_nan()))
        }
        _ => a == b,
    }
}

/// Runs `proc` on both engines with copies of `args` and compares.
fn agree(m: &Module, jit: &CompiledModule, proc: ProcId, args: &[Buffer], what: &str) {
    let mut ia = args.to_vec();
    let mut ja = args.to_vec();
    let mut interp = Interpreter::new(m);
    let ir = interp.call(proc, &mut ia);
    let jr = jit.call(proc, &mut ja);
    match (&ir, &jr) {
        (Ok(()), Ok(())) => {
            for (k, (x, y)) in ia.iter().zip(&ja).enumerate() {
                assert!(
                    same(x, y),
                    "{what}: argument {k} differs\ninputs {args:?}\ninterp {x:?}\njit    {y:?}"
                );
            }
        }
        (Err(a), Err(b)) => {
            assert_eq!(
                (&a.kind, &a.var, &a.span, a.proc),
                (&b.kind, &b.var, &b.span, b.proc),
                "{what}: errors differ\n{a}\n{b}"
            );
            assert_eq!(a.detail, b.detail, "{what}: error details differ");
        }
        _ => panic!("{what}: interpreter {ir:?}, jit {jr:?} on {args:?}"),
    }
}

fn jit(m: &Module) -> CompiledModule {
    CompiledModule::compile(m, &JitOptions::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn op_module(
    ty: Type,
    ty_b: Type,
    body: &dyn Fn(&mut ProcBuilder, VarId, VarId, VarId),
) -> (Module, ProcId) {
    let mut proc = Proc::new("op");
    let mut b = ProcBuilder::new(&mut proc);
    b.set_span(Span {
        file: 0,
        line: 2,
        col: 1,
    });
    let pa = b.param("a", ty, vec![]);
    let pb = b.param("b", ty_b, vec![]);
    let pr = b.param("r", ty, vec![]);
    body(&mut b, pa, pb, pr);
    b.ret();
    let mut m = Module::default();
    let id = m.add_proc(proc);
    (m, id)
}

#[test]
fn every_operation_agrees_with_the_interpreter() {
    let mut rng = Rng(0x5eed);
    let float_ops = [
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::Mul,
        BinaryOp::Div,
        BinaryOp::Pow,
        BinaryOp::Min,
        BinaryOp::Max,
        BinaryOp::Atan2,
        BinaryOp::Sign,
        BinaryOp::Dim,
        BinaryOp::Mod,
        BinaryOp::Modulo,
    ];
    let int_ops = [
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::Mul,
        BinaryOp::Div,
        BinaryOp::Pow,
        BinaryOp::Min,
        BinaryOp::Max,
        BinaryOp::Sign,
        BinaryOp::Dim,
        BinaryOp::Mod,
        BinaryOp::Modulo,
    ];
    let mut cases: Vec<(Type, Type, BinaryOp)> = Vec::new();
    for ty in [Type::F64, Type::F32] {
        cases.extend(float_ops.iter().map(|&op| (ty, ty, op)));
        cases.push((ty, Type::I32, BinaryOp::PowI));
        cases.push((ty, Type::I64, BinaryOp::PowI));
    }
    for ty in [Type::I64, Type::I32] {
        cases.extend(int_ops.iter().map(|&op| (ty, ty, op)));
    }
    let logical = Type::Bool;
    cases.extend(
        [BinaryOp::And, BinaryOp::Or, BinaryOp::Eqv, BinaryOp::Neqv]
            .map(|op| (logical, logical, op)),
    );
    for (ty, ty_b, op) in cases {
        let (m, id) = op_module(ty, ty_b, &|b, pa, pb, pr| {
            let x = b.load(pa);
            let y = b.load(pb);
            let z = b.binary(op, x, y);
            b.store(pr, z);
        });
        let c = jit(&m);
        for _ in 0..200 {
            let mut a = rng.buffer(ty, 1);
            let mut bb = rng.buffer(ty_b, 1);
            if op == BinaryOp::Pow && ty.is_int() {
                bb = match bb {
                    Buffer::I64(v) => Buffer::I64(vec![v[0].rem_euclid(70) - 5]),
                    Buffer::I32(v) => Buffer::I32(vec![v[0].rem_euclid(40) - 5]),
                    other => other,
                };
            }
            if op == BinaryOp::PowI {
                bb = match bb {
                    Buffer::I64(v) => Buffer::I64(vec![v[0] % 100]),
                    Buffer::I32(v) => Buffer::I32(vec![v[0] % 100]),
                    other => other,
                };
                a = match a {
                    Buffer::F64(v) if v[0].abs() > 10.0 => Buffer::F64(vec![v[0] / 1e3]),
                    other => other,
                };
            }
            let r = rng.buffer(ty, 1);
            agree(&m, &c, id, &[a, bb, r], &format!("{ty:?} {op:?}"));
        }
    }
    let unary = [
        UnaryOp::Neg,
        UnaryOp::Abs,
        UnaryOp::Sqrt,
        UnaryOp::Exp,
        UnaryOp::Log,
        UnaryOp::Log10,
        UnaryOp::Sin,
        UnaryOp::Cos,
        UnaryOp::Tan,
        UnaryOp::Asin,
        UnaryOp::Acos,
        UnaryOp::Atan,
        UnaryOp::Sinh,
        UnaryOp::Cosh,
        UnaryOp::Tanh,
        UnaryOp::Floor,
        UnaryOp::Ceil,
        UnaryOp::Trunc,
        UnaryOp::Round,
    ];
    for ty in [Type::F64, Type::F32, Type::I64, Type::I32, Type::Bool] {
        for op in unary.iter().copied().chain([UnaryOp::Not]) {
            let valid = match ty {
                Type::Bool => op == UnaryOp::Not,
                t if t.is_int() => matches!(op, UnaryOp::Neg | UnaryOp::Abs),
                _ => op != UnaryOp::Not,
            };
            if !valid {
                continue;
            }
            let (m, id) = op_module(ty, ty, &|b, pa, _, pr| {
                let x = b.load(pa);
                let z = b.unary(op, x);
                b.store(pr, z);
            });
            let c = jit(&m);
            for _ in 0..100 {
                let args = [rng.buffer(ty, 1), rng.buffer(ty, 1), rng.buffer(ty, 1)];
                agree(&m, &c, id, &args, &format!("{ty:?} {op:?}"));
            }
        }
    }
    for ty in [Type::F64, Type::F32, Type::I64, Type::I32] {
        for op in [
            CmpOp::Eq,
            CmpOp::Ne,
            CmpOp::Lt,
            CmpOp::Le,
            CmpOp::Gt,
            CmpOp::Ge,
        ] {
            let mut proc = Proc::new("cmp");
            let mut b = ProcBuilder::new(&mut proc);
            let pa = b.param("a", ty, vec![]);
            let pb = b.param("b", ty, vec![]);
            let pr = b.param("r", Type::Bool, vec![]);
            let x = b.load(pa);
            let y = b.load(pb);
            let z = b.cmp(op, x, y);
            b.store(pr, z);
            b.ret();
            let mut m = Module::default();
            let id = m.add_proc(proc);
            let c = jit(&m);
            for _ in 0..50 {
                let args = [rng.buffer(ty, 1), rng.buffer(ty, 1), Buffer::Bool(vec![0])];
                agree(&m, &c, id, &args, &format!("{ty:?} {op:?}"));
            }
        }
    }
    let conversions = [Type::F64, Type::F32, Type::I64, Type::I32];
    for from in conversions {
        for to in conversions {
            for rounding in [
                Rounding::Trunc,
                Rounding::Nearest,
                Rounding::Floor,
                Rounding::Ceil,
            ] {
                let mut proc = Proc::new("conv");
                let mut b = ProcBuilder::new(&mut proc);
                let pa = b.param("a", from, vec![]);
                let pr = b.param("r", to, vec![]);
                let x = b.load(pa);
                let z = b.convert(x, to, rounding);
                b.store(pr, z);
                b.ret();
                let mut m = Module::default();
                let id = m.add_proc(proc);
                let c = jit(&m);
                for _ in 0..50 {
                    let args = [rng.buffer(from, 1), rng.buffer(to, 1)];
                    agree(&m, &c, id, &args, &format!("{from:?}->{to:?} {rounding:?}"));
                }
            }
        }
    }
}

/// `subroutine prog(n, x, y, k)`: a loop with arrays, calls by element and
/// value, stacks, and an out-of-bounds access when `k` is out of range.
fn program() -> Module {
    let mut m = Module::default();
    let mut proc = Proc::new("scale");
    let mut b = ProcBuilder::new(&mut proc);
    let v = b.param("v", Type::F64, vec![ProcBuilder::const_dim(1, 2)]);
    let f = b.param("f", Type::F64, vec![]);
    let fv = b.load(f);
    for i in 1..=2 {
        let iv = b.iconst(Type::I32, i);
        let x = b.load_elem(v, vec![iv]);
        let y = b.binary(BinaryOp::Mul, x, fv);
        b.push(StackKind::Value, x);
        b.store_elem(v, vec![iv], y);
    }
    b.ret();
    let scale = m.add_proc(proc);

    let mut proc = Proc::new("prog");
    let mut b = ProcBuilder::new(&mut proc);
    b.set_span(Span {
        file: 0,
        line: 10,
        col: 3,
    });
    let n = b.param("n", Type::I64, vec![]);
    let x = b.param("x", Type::F64, vec![ProcBuilder::var_dim(n)]);
    let y = b.param("y", Type::F64, vec![]);
    let k = b.param("k", Type::I64, vec![]);
    let i = b.local("i", Type::I64);
    let one = b.iconst(Type::I64, 1);
    b.store(i, one);
    let header = b.create_block();
    let body = b.create_block();
    let exit = b.create_block();
    b.jump(header);
    b.switch_to_block(header);
    let iv = b.load(i);
    let nv = b.load(n);
    let one = b.iconst(Type::I64, 1);
    let last = b.binary(BinaryOp::Sub, nv, one);
    let c = b.cmp(CmpOp::Le, iv, last);
    b.branch(c, body, exit);
    b.switch_to_block(body);
    b.set_span(Span {
        file: 0,
        line: 11,
        col: 3,
    });
    let iv = b.load(i);
    let xi = b.load_elem(x, vec![iv]);
    let s = b.unary(UnaryOp::Sin, xi);
    let yv = b.load(y);
    let yv = b.binary(BinaryOp::Add, yv, s);
    b.store(y, yv);
    let f = b.fconst(Type::F64, 0.75);
    b.call(scale, vec![CallArg::Elem(x, vec![iv]), CallArg::Value(f)]);
    let one = b.iconst(Type::I64, 1);
    let inext = b.binary(BinaryOp::Add, iv, one);
    b.store(i, inext);
    b.jump(header);
    b.switch_to_block(exit);
    b.set_span(Span {
        file: 0,
        line: 12,
        col: 3,
    });
    let kv = b.load(k);
    let xk = b.load_elem(x, vec![kv]);
    let yv = b.load(y);
    let yv = b.binary(BinaryOp::Mul, yv, xk);
    b.store(y, yv);
    let p = b.pop(StackKind::Value, Type::F64);
    let yv = b.binary(BinaryOp::Add, yv, p);
    b.store(y, yv);
    b.ret();
    m.add_proc(proc);
    m
}

#[test]
fn a_program_with_loops_calls_stacks_and_errors_agrees() {
    let m = program();
    let c = jit(&m);
    let prog = m.find_proc("prog").unwrap();
    let mut rng = Rng(77);
    for _ in 0..200 {
        let n = (rng.next() % 6) as i64;
        let k = (rng.next() % 8) as i64 - 1;
        let args = [
            Buffer::I64(vec![n]),
            rng.buffer(Type::F64, n.max(0) as usize),
            Buffer::F64(vec![0.0]),
            Buffer::I64(vec![k]),
        ];
        agree(&m, &c, prog, &args, &format!("prog n={n} k={k}"));
    }
}

#[test]
fn stacks_shared_between_two_calls_agree() {
    let m = program();
    let c = jit(&m);
    let scale = m.find_proc("scale").unwrap();
    let mut interp = Interpreter::new(&m);
    let mut rt = Runtime::new();
    for round in 0..5 {
        let mut ia = vec![Buffer::F64(vec![round as f64, 2.0]), Buffer::F64(vec![1.5])];
        let mut ja = ia.clone();
        interp.call(scale, &mut ia).unwrap();
        c.call_with(scale, &mut ja, &mut rt).unwrap();
        assert!(same(&ia[0], &ja[0]));
    }
    assert_eq!(
        interp.stack_len(StackKind::Value) as u64,
        rt.depth(StackKind::Value)
    );
}

/// The strong-zero guards of derivative code, `select(p == 0 or d == 0,
/// +0.0, p*d)` and its variants, which the JIT lowers branch-free as vector
/// masks: the same bits as the interpreter's select, including the sign of
/// zero (`+0.0` where a test holds, an underflowed `-0.0` kept where none
/// does), infinities, NaN operands (never equal to zero), `-0.0` as the
/// compared zero, operands in either order, one to three tests, and the
/// shapes that must not be taken for a guard (a `-0.0` or non-zero arm).
#[test]
fn strong_zero_guards_agree_with_the_interpreter() {
    type Guard = fn(&mut ProcBuilder, Type, [adjit::ir::Value; 3]) -> adjit::ir::Value;
    fn zero_test(
        b: &mut ProcBuilder,
        ty: Type,
        x: adjit::ir::Value,
        zero: f64,
    ) -> adjit::ir::Value {
        let z = b.fconst(ty, zero);
        b.cmp(CmpOp::Eq, x, z)
    }
    let shapes: [(&str, Guard); 7] = [
        ("p == 0 or d == 0", |b, ty, [p, d, _]| {
            let t = b.binary(BinaryOp::Mul, p, d);
            let (cd, cp) = (zero_test(b, ty, d, 0.0), zero_test(b, ty, p, 0.0));
            let either = b.binary(BinaryOp::Or, cd, cp);
            let zero = b.fconst(ty, 0.0);
            b.select(either, zero, t)
        }),
        ("d == 0 only", |b, ty, [p, d, _]| {
            let t = b.binary(BinaryOp::Mul, p, d);
            let cd = zero_test(b, ty, d, 0.0);
            let zero = b.fconst(ty, 0.0);
            b.select(cd, zero, t)
        }),
        ("0 == p, -0.0 compared", |b, ty, [p, d, _]| {
            let t = b.binary(BinaryOp::Mul, d, p);
            let z = b.fconst(ty, -0.0);
            let cp = b.cmp(CmpOp::Eq, z, p);
            let cd = zero_test(b, ty, d, 0.0);
            let either = b.binary(BinaryOp::Or, cp, cd);
            let zero = b.fconst(ty, 0.0);
            b.select(either, zero, t)
        }),
        ("three tests, a sum guarded", |b, ty, [p, d, e]| {
            let t = b.binary(BinaryOp::Add, p, e);
            let (cd, cp, ce) = (
                zero_test(b, ty, d, 0.0),
                zero_test(b, ty, p, 0.0),
                zero_test(b, ty, e, 0.0),
            );
            let two = b.binary(BinaryOp::Or, cd, cp);
            let three = b.binary(BinaryOp::Or, two, ce);
            let zero = b.fconst(ty, 0.0);
            b.select(three, zero, t)
        }),
        ("a product of an untested factor", |b, ty, [p, d, e]| {
            let t = b.binary(BinaryOp::Mul, e, d);
            let (cd, cp) = (zero_test(b, ty, d, 0.0), zero_test(b, ty, p, 0.0));
            let either = b.binary(BinaryOp::Or, cd, cp);
            let zero = b.fconst(ty, 0.0);
            b.select(either, zero, t)
        }),
        ("-0.0 arm (not a guard)", |b, ty, [p, d, _]| {
            let t = b.binary(BinaryOp::Mul, p, d);
            let cd = zero_test(b, ty, d, 0.0);
            let zero = b.fconst(ty, -0.0);
            b.select(cd, zero, t)
        }),
        ("a test against 1 (not a guard)", |b, ty, [p, d, _]| {
            let t = b.binary(BinaryOp::Mul, p, d);
            let cd = zero_test(b, ty, d, 1.0);
            let cp = zero_test(b, ty, p, 0.0);
            let either = b.binary(BinaryOp::Or, cp, cd);
            let zero = b.fconst(ty, 0.0);
            b.select(either, zero, t)
        }),
    ];
    let special = [
        0.0,
        -0.0,
        1.0,
        -1e-200,
        1e-200,
        1e300,
        -3.5,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        f64::MIN_POSITIVE / 4.0,
    ];
    for ty in [Type::F64, Type::F32] {
        for (name, shape) in shapes {
            let mut proc = Proc::new("guard");
            let mut b = ProcBuilder::new(&mut proc);
            let params = ["p", "d", "e"].map(|n| b.param(n, ty, vec![]));
            let pr = b.param("r", ty, vec![]);
            let values = params.map(|v| b.load(v));
            let r = shape(&mut b, ty, values);
            b.store(pr, r);
            b.ret();
            let mut m = Module::default();
            let id = m.add_proc(proc);
            let c = jit(&m);
            let buffer = |x: f64| match ty {
                Type::F32 => Buffer::F32(vec![x as f32]),
                _ => Buffer::F64(vec![x]),
            };
            for &p in &special {
                for &d in &special {
                    for e in [0.0, -2.0, f64::NAN] {
                        let args = [buffer(p), buffer(d), buffer(e), buffer(7.0)];
                        agree(
                            &m,
                            &c,
                            id,
                            &args,
                            &format!("{ty:?} {name} p={p} d={d} e={e}"),
                        );
                    }
                }
            }
        }
    }
}

/// A slice argument (`CallArg::Slice`): `fill(v(*))` writes `i + 10 *
/// size(v)` to each of the elements it is given, from element `(s, j)` of
/// a 3 x 2 array, `len` of them. Both engines give the callee the same
/// storage, and report a start outside the array or a slice running past
/// its storage alike; a length of 0 or less passes nothing and checks
/// nothing.
#[test]
fn slices_pass_the_same_storage_and_report_the_same_errors() {
    let mut m = Module::default();
    let mut proc = Proc::new("fill");
    let mut b = ProcBuilder::new(&mut proc);
    let v = b.param("v", Type::F64, vec![ProcBuilder::assumed_dim()]);
    let i = b.local("i", Type::I64);
    let one = b.iconst(Type::I64, 1);
    b.store(i, one);
    let (header, body, exit) = (b.create_block(), b.create_block(), b.create_block());
    b.jump(header);
    b.switch_to_block(header);
    let iv = b.load(i);
    let n = b.dim_extent(v, 0);
    let c = b.cmp(CmpOp::Le, iv, n);
    b.branch(c, body, exit);
    b.switch_to_block(body);
    let iv = b.load(i);
    let n = b.dim_extent(v, 0);
    let ten = b.iconst(Type::I64, 10);
    let tn = b.binary(BinaryOp::Mul, ten, n);
    let x = b.binary(BinaryOp::Add, iv, tn);
    let x = b.convert(x, Type::F64, Rounding::Nearest);
    b.store_elem(v, vec![iv], x);
    let one = b.iconst(Type::I64, 1);
    let next = b.binary(BinaryOp::Add, iv, one);
    b.store(i, next);
    b.jump(header);
    b.switch_to_block(exit);
    b.ret();
    let fill = m.add_proc(proc);

    let mut proc = Proc::new("prog");
    let mut b = ProcBuilder::new(&mut proc);
    b.set_span(Span {
        file: 0,
        line: 20,
        col: 3,
    });
    let a = b.param(
        "a",
        Type::F64,
        vec![ProcBuilder::const_dim(1, 3), ProcBuilder::const_dim(1, 2)],
    );
    let s = b.param("s", Type::I32, vec![]);
    let j = b.param("j", Type::I64, vec![]);
    let len = b.param("len", Type::I64, vec![]);
    let (sv, jv, lv) = (b.load(s), b.load(j), b.load(len));
    b.call(fill, vec![CallArg::Slice(a, vec![sv, jv], lv)]);
    b.ret();
    let prog = m.add_proc(proc);
    adjit::ir::verify::verify_module(&m).unwrap_or_else(|e| panic!("{e:?}"));
    let c = jit(&m);
    let mut outcomes = (0, 0);
    for s in -1..=4 {
        for j in 0..=3 {
            for len in -1..=7 {
                let args = [
                    Buffer::F64(vec![0.5; 6]),
                    Buffer::I32(vec![s]),
                    Buffer::I64(vec![j]),
                    Buffer::I64(vec![len]),
                ];
                agree(&m, &c, prog, &args, &format!("s={s} j={j} len={len}"));
                let mut run = args.to_vec();
                match Interpreter::new(&m).call(prog, &mut run) {
                    Ok(()) => {
                        outcomes.0 += 1;
                        if (1..=3).contains(&s) && (1..=2).contains(&j) && len > 0 {
                            let Buffer::F64(out) = &run[0] else {
                                unreachable!()
                            };
                            let first = (s - 1) as usize + 3 * (j - 1) as usize;
                            for (k, &x) in out.iter().enumerate() {
                                let want = if (first..first + len as usize).contains(&k) {
                                    (k - first + 1) as f64 + 10.0 * len as f64
                                } else {
                                    0.5
                                };
                                assert_eq!(x, want, "s={s} j={j} len={len} element {k}");
                            }
                        }
                    }
                    Err(e) => {
                        outcomes.1 += 1;
                        assert_eq!(e.kind, adjit::ir::RuntimeErrorKind::IndexOutOfBounds, "{e}");
                    }
                }
            }
        }
    }
    assert!(outcomes.0 > 0 && outcomes.1 > 0, "{outcomes:?}");
}
