//! Every unary, binary, comparison and conversion operation of the IR,
//! compiled and compared bit for bit with the documented semantics on
//! randomized and edge-case inputs.

mod common;

use adjit_ir::builder::ProcBuilder;
use adjit_ir::special::Special;
use adjit_ir::Buffer;
use adjit_ir::{BinaryOp, CmpOp, Module, Proc, Rounding, RuntimeErrorKind, Type, UnaryOp};
use common::*;

const FLOAT_OPS: [BinaryOp; 12] = [
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

const INT_OPS: [BinaryOp; 10] = [
    BinaryOp::Add,
    BinaryOp::Sub,
    BinaryOp::Mul,
    BinaryOp::Div,
    BinaryOp::Mod,
    BinaryOp::Modulo,
    BinaryOp::Pow,
    BinaryOp::Min,
    BinaryOp::Max,
    BinaryOp::Sign,
];

#[test]
fn float_binary_ops_f64_match_reference() {
    let mut rng = Rng(0x9e3779b97f4a7c15);
    for op in FLOAT_OPS.into_iter().chain([BinaryOp::Dim]) {
        let (m, id) = binary_module(op, Type::F64, Type::F64);
        let c = compile(&m);
        for _ in 0..400 {
            let (a, b) = (rng.float(), rng.float());
            let mut args = vec![
                Buffer::F64(vec![a]),
                Buffer::F64(vec![b]),
                Buffer::F64(vec![0.0]),
            ];
            c.call(id, &mut args).unwrap();
            let Buffer::F64(r) = &args[2] else {
                unreachable!()
            };
            let want = ref_float(op, a, b);
            assert!(
                same_f64(r[0], want),
                "{op:?}({a:e}, {b:e}) = {:e}, want {want:e}",
                r[0]
            );
        }
    }
}

#[test]
fn float_binary_ops_f32_match_reference() {
    let mut rng = Rng(12345);
    for op in FLOAT_OPS {
        let (m, id) = binary_module(op, Type::F32, Type::F32);
        let c = compile(&m);
        for _ in 0..300 {
            let (a, b) = (rng.float() as f32, rng.float() as f32);
            let mut args = vec![
                Buffer::F32(vec![a]),
                Buffer::F32(vec![b]),
                Buffer::F32(vec![0.0]),
            ];
            c.call(id, &mut args).unwrap();
            let Buffer::F32(r) = &args[2] else {
                unreachable!()
            };
            let want = ref_float32(op, a, b);
            assert!(
                same_f32(r[0], want),
                "{op:?}({a:e}, {b:e}) = {:e}, want {want:e}",
                r[0]
            );
        }
    }
}

#[test]
fn int_binary_ops_match_reference() {
    let mut rng = Rng(777);
    for ty in [Type::I64, Type::I32] {
        for op in INT_OPS {
            let (m, id) = binary_module(op, ty, ty);
            let c = compile(&m);
            for _ in 0..300 {
                let (mut a, mut b) = (rng.int(), rng.int());
                if op == BinaryOp::Pow {
                    b = b.clamp(-5, 70);
                }
                let mut args = if ty == Type::I64 {
                    vec![
                        Buffer::I64(vec![a]),
                        Buffer::I64(vec![b]),
                        Buffer::I64(vec![0]),
                    ]
                } else {
                    a = a as i32 as i64;
                    b = b as i32 as i64;
                    vec![
                        Buffer::I32(vec![a as i32]),
                        Buffer::I32(vec![b as i32]),
                        Buffer::I32(vec![0]),
                    ]
                };
                let got = c.call(id, &mut args);
                let want = if ty == Type::I64 {
                    ref_int(op, a, b)
                } else {
                    ref_i32(op, a as i32, b as i32).map(|x| x as i64)
                };
                match want {
                    None => {
                        let e = got.expect_err("division by zero must fail");
                        assert_eq!(e.kind, RuntimeErrorKind::DivideByZero);
                    }
                    Some(w) => {
                        got.unwrap();
                        let r = match &args[2] {
                            Buffer::I64(v) => v[0],
                            Buffer::I32(v) => v[0] as i64,
                            _ => unreachable!(),
                        };
                        assert_eq!(r, w, "{ty:?} {op:?}({a}, {b})");
                    }
                }
            }
        }
    }
}

/// The I32 reference: the I64 reference computed in i32 arithmetic.
fn ref_i32(op: BinaryOp, a: i32, b: i32) -> Option<i32> {
    Some(match op {
        BinaryOp::Add => a.wrapping_add(b),
        BinaryOp::Sub => a.wrapping_sub(b),
        BinaryOp::Mul => a.wrapping_mul(b),
        BinaryOp::Sign => {
            if b >= 0 {
                a.wrapping_abs()
            } else {
                a.wrapping_abs().wrapping_neg()
            }
        }
        BinaryOp::Dim => a.wrapping_sub(b).max(0),
        BinaryOp::Div | BinaryOp::Mod | BinaryOp::Modulo if b == 0 => return None,
        BinaryOp::Div => a.wrapping_div(b),
        BinaryOp::Mod => a.wrapping_rem(b),
        BinaryOp::Modulo => {
            let r = a.wrapping_rem(b);
            if r != 0 && (r ^ b) < 0 {
                r.wrapping_add(b)
            } else {
                r
            }
        }
        BinaryOp::Pow => {
            if b < 0 {
                return ref_int(op, a as i64, b as i64).map(|x| x as i32);
            }
            let (mut base, mut e, mut acc) = (a, b as u32, 1i32);
            while e > 0 {
                if e & 1 == 1 {
                    acc = acc.wrapping_mul(base);
                }
                base = base.wrapping_mul(base);
                e >>= 1;
            }
            acc
        }
        BinaryOp::Min => a.min(b),
        BinaryOp::Max => a.max(b),
        _ => unreachable!(),
    })
}

#[test]
fn powi_runtime_and_constant_exponents_match_repeated_squaring() {
    // Runtime exponent.
    let (m, id) = binary_module(BinaryOp::PowI, Type::F64, Type::I32);
    let c = compile(&m);
    let mut rng = Rng(99);
    for _ in 0..300 {
        let x = rng.float();
        let n = (rng.int() % 40) as i32;
        let mut args = vec![
            Buffer::F64(vec![x]),
            Buffer::I32(vec![n]),
            Buffer::F64(vec![0.0]),
        ];
        c.call(id, &mut args).unwrap();
        let Buffer::F64(r) = &args[2] else {
            unreachable!()
        };
        assert!(same_f64(r[0], ref_powi(x, n as i64)), "{x}**{n}");
    }
    // Constant exponents are unrolled: same multiplication sequence.
    for n in [-7i64, -2, -1, 0, 1, 2, 3, 5, 13, 64] {
        let mut proc = Proc::new("p");
        let mut b = ProcBuilder::new(&mut proc);
        let pa = b.param("a", Type::F64, vec![]);
        let pr = b.param("r", Type::F64, vec![]);
        let x = b.load(pa);
        let k = b.iconst(Type::I64, n);
        let z = b.binary(BinaryOp::PowI, x, k);
        b.store(pr, z);
        b.ret();
        let mut m = Module::default();
        let id = m.add_proc(proc);
        let c = compile(&m);
        for x in [1.1f64, -0.7, 3.3333, 1e-3, 0.0, -0.0, f64::INFINITY] {
            let mut args = vec![Buffer::F64(vec![x]), Buffer::F64(vec![0.0])];
            c.call(id, &mut args).unwrap();
            let Buffer::F64(r) = &args[1] else {
                unreachable!()
            };
            assert!(
                same_f64(r[0], ref_powi(x, n)),
                "{x}**{n}: {} vs {}",
                r[0],
                ref_powi(x, n)
            );
        }
    }
}

fn ref_unary(op: UnaryOp, x: f64) -> f64 {
    match op {
        UnaryOp::Neg => -x,
        UnaryOp::Abs => x.abs(),
        UnaryOp::Sqrt => x.sqrt(),
        UnaryOp::Exp => x.exp(),
        UnaryOp::Log => x.ln(),
        UnaryOp::Log10 => x.log10(),
        UnaryOp::Sin => x.sin(),
        UnaryOp::Cos => x.cos(),
        UnaryOp::Tan => x.tan(),
        UnaryOp::Asin => x.asin(),
        UnaryOp::Acos => x.acos(),
        UnaryOp::Atan => x.atan(),
        UnaryOp::Sinh => x.sinh(),
        UnaryOp::Cosh => x.cosh(),
        UnaryOp::Tanh => x.tanh(),
        UnaryOp::Special(s) => s.f64(x),
        UnaryOp::Floor => x.floor(),
        UnaryOp::Ceil => x.ceil(),
        UnaryOp::Trunc => x.trunc(),
        UnaryOp::Round => x.round(),
        UnaryOp::Not => unreachable!(),
    }
}

fn ref_unary32(op: UnaryOp, x: f32) -> f32 {
    match op {
        UnaryOp::Neg => -x,
        UnaryOp::Abs => x.abs(),
        UnaryOp::Sqrt => x.sqrt(),
        UnaryOp::Exp => x.exp(),
        UnaryOp::Log => x.ln(),
        UnaryOp::Log10 => x.log10(),
        UnaryOp::Sin => x.sin(),
        UnaryOp::Cos => x.cos(),
        UnaryOp::Tan => x.tan(),
        UnaryOp::Asin => x.asin(),
        UnaryOp::Acos => x.acos(),
        UnaryOp::Atan => x.atan(),
        UnaryOp::Sinh => x.sinh(),
        UnaryOp::Cosh => x.cosh(),
        UnaryOp::Tanh => x.tanh(),
        UnaryOp::Special(s) => s.f32(x),
        UnaryOp::Floor => x.floor(),
        UnaryOp::Ceil => x.ceil(),
        UnaryOp::Trunc => x.trunc(),
        UnaryOp::Round => x.round(),
        UnaryOp::Not => unreachable!(),
    }
}

const FLOAT_UNARY: [UnaryOp; 27] = [
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
    UnaryOp::Special(Special::Erf),
    UnaryOp::Special(Special::Erfc),
    UnaryOp::Special(Special::Gamma),
    UnaryOp::Special(Special::LogGamma),
    UnaryOp::Special(Special::BesselJ0),
    UnaryOp::Special(Special::BesselJ1),
    UnaryOp::Special(Special::Polygamma(0)),
    UnaryOp::Special(Special::Polygamma(1)),
];

#[test]
fn float_unary_ops_match_reference() {
    let mut rng = Rng(4242);
    for op in FLOAT_UNARY {
        let (m, id) = unary_module(op, Type::F64);
        let c = compile(&m);
        let (m32, id32) = unary_module(op, Type::F32);
        let c32 = compile(&m32);
        for i in 0..300 {
            let x = if i < 8 {
                [
                    0.5,
                    -0.5,
                    2.5,
                    -2.5,
                    0.49999999999999994,
                    -0.0,
                    4503599627370497.0,
                    1e20,
                ][i]
            } else {
                rng.float()
            };
            let mut args = vec![Buffer::F64(vec![x]), Buffer::F64(vec![0.0])];
            c.call(id, &mut args).unwrap();
            let Buffer::F64(r) = &args[1] else {
                unreachable!()
            };
            assert!(
                same_f64(r[0], ref_unary(op, x)),
                "{op:?}({x:e}) = {:e}",
                r[0]
            );
            let x32 = x as f32;
            let mut args = vec![Buffer::F32(vec![x32]), Buffer::F32(vec![0.0])];
            c32.call(id32, &mut args).unwrap();
            let Buffer::F32(r) = &args[1] else {
                unreachable!()
            };
            assert!(
                same_f32(r[0], ref_unary32(op, x32)),
                "f32 {op:?}({x32:e}) = {:e}",
                r[0]
            );
        }
    }
}

#[test]
fn int_unary_and_logical_ops() {
    for (op, x, want) in [
        (UnaryOp::Neg, 5i64, -5i64),
        (UnaryOp::Neg, i64::MIN, i64::MIN),
        (UnaryOp::Abs, -9, 9),
        (UnaryOp::Abs, i64::MIN, i64::MIN),
    ] {
        let (m, id) = unary_module(op, Type::I64);
        let mut args = vec![Buffer::I64(vec![x]), Buffer::I64(vec![0])];
        compile(&m).call(id, &mut args).unwrap();
        assert_eq!(args[1], Buffer::I64(vec![want]), "{op:?}({x})");
    }
    let (m, id) = unary_module(UnaryOp::Not, Type::Bool);
    let c = compile(&m);
    for x in [0u8, 1] {
        let mut args = vec![Buffer::Bool(vec![x]), Buffer::Bool(vec![7])];
        c.call(id, &mut args).unwrap();
        assert_eq!(args[1], Buffer::Bool(vec![1 - x]));
    }
    for (op, f) in [
        (BinaryOp::And, (|a, b| a & b) as fn(u8, u8) -> u8),
        (BinaryOp::Or, |a, b| a | b),
        (BinaryOp::Eqv, |a, b| (a == b) as u8),
        (BinaryOp::Neqv, |a, b| (a != b) as u8),
    ] {
        let (m, id) = binary_module(op, Type::Bool, Type::Bool);
        let c = compile(&m);
        for a in [0u8, 1] {
            for b in [0u8, 1] {
                let mut args = vec![
                    Buffer::Bool(vec![a]),
                    Buffer::Bool(vec![b]),
                    Buffer::Bool(vec![9]),
                ];
                c.call(id, &mut args).unwrap();
                assert_eq!(args[2], Buffer::Bool(vec![f(a, b)]), "{op:?}({a}, {b})");
            }
        }
    }
}

/// `r = a <cmp> b` for one type.
fn cmp_module(op: CmpOp, ty: Type) -> (Module, adjit_ir::ProcId) {
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
    (m, id)
}

#[test]
fn comparisons_are_ordered_and_ne_is_true_for_nan() {
    let ops = [
        CmpOp::Eq,
        CmpOp::Ne,
        CmpOp::Lt,
        CmpOp::Le,
        CmpOp::Gt,
        CmpOp::Ge,
    ];
    let vals = [f64::NAN, -1.0, -0.0, 0.0, 2.0, f64::INFINITY];
    for op in ops {
        let reference = |a: f64, b: f64| match op {
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
        };
        let (m, id) = cmp_module(op, Type::F64);
        let c = compile(&m);
        for a in vals {
            for b in vals {
                let mut args = vec![
                    Buffer::F64(vec![a]),
                    Buffer::F64(vec![b]),
                    Buffer::Bool(vec![9]),
                ];
                c.call(id, &mut args).unwrap();
                assert_eq!(
                    args[2],
                    Buffer::Bool(vec![reference(a, b) as u8]),
                    "{a} {op:?} {b}"
                );
            }
        }
        let (m, id) = cmp_module(op, Type::I32);
        let c = compile(&m);
        for a in [-3i32, 0, 5, i32::MIN] {
            for b in [-3i32, 0, 5, i32::MAX] {
                let mut args = vec![
                    Buffer::I32(vec![a]),
                    Buffer::I32(vec![b]),
                    Buffer::Bool(vec![9]),
                ];
                c.call(id, &mut args).unwrap();
                let want = reference(a as f64, b as f64);
                assert_eq!(args[2], Buffer::Bool(vec![want as u8]), "{a} {op:?} {b}");
            }
        }
    }
}

/// `r = convert(a)` from `from` to `to`.
fn convert_module(from: Type, to: Type, rounding: Rounding) -> (Module, adjit_ir::ProcId) {
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
    (m, id)
}

#[test]
fn float_to_int_conversions_round_and_saturate() {
    let mut rng = Rng(31337);
    for rounding in [
        Rounding::Trunc,
        Rounding::Nearest,
        Rounding::Floor,
        Rounding::Ceil,
    ] {
        let round = |x: f64| match rounding {
            Rounding::Trunc => x,
            Rounding::Nearest => x.round(),
            Rounding::Floor => x.floor(),
            Rounding::Ceil => x.ceil(),
        };
        let (m, id) = convert_module(Type::F64, Type::I32, rounding);
        let c32 = compile(&m);
        let (m, id64) = convert_module(Type::F64, Type::I64, rounding);
        let c64 = compile(&m);
        for i in 0..300 {
            let x = if i < 6 {
                [2.5, -2.5, 0.5, f64::NAN, 1e30, -1e30][i]
            } else {
                rng.float()
            };
            let mut args = vec![Buffer::F64(vec![x]), Buffer::I32(vec![0])];
            c32.call(id, &mut args).unwrap();
            assert_eq!(
                args[1],
                Buffer::I32(vec![round(x) as i32]),
                "{rounding:?} {x}"
            );
            let mut args = vec![Buffer::F64(vec![x]), Buffer::I64(vec![0])];
            c64.call(id64, &mut args).unwrap();
            assert_eq!(
                args[1],
                Buffer::I64(vec![round(x) as i64]),
                "{rounding:?} {x}"
            );
        }
    }
}

#[test]
fn other_conversions() {
    let cases: Vec<(Type, Type, Buffer, Buffer)> = vec![
        (
            Type::I64,
            Type::I32,
            Buffer::I64(vec![(1 << 40) + 5]),
            Buffer::I32(vec![5]),
        ),
        (
            Type::I32,
            Type::I64,
            Buffer::I32(vec![-7]),
            Buffer::I64(vec![-7]),
        ),
        (
            Type::I64,
            Type::F64,
            Buffer::I64(vec![(1 << 53) + 1]),
            Buffer::F64(vec![((1i64 << 53) + 1) as f64]),
        ),
        (
            Type::I32,
            Type::F32,
            Buffer::I32(vec![16777217]),
            Buffer::F32(vec![16777217i32 as f32]),
        ),
        (
            Type::F64,
            Type::F32,
            Buffer::F64(vec![0.1]),
            Buffer::F32(vec![0.1f32]),
        ),
        (
            Type::F32,
            Type::F64,
            Buffer::F32(vec![0.1]),
            Buffer::F64(vec![0.1f32 as f64]),
        ),
        (
            Type::Bool,
            Type::I32,
            Buffer::Bool(vec![1]),
            Buffer::I32(vec![1]),
        ),
    ];
    for (from, to, input, want) in cases {
        let (m, id) = convert_module(from, to, Rounding::Trunc);
        let mut args = vec![input, Buffer::zeros(to, 1)];
        compile(&m).call(id, &mut args).unwrap();
        assert_eq!(args[1], want, "{from:?} -> {to:?}");
    }
}

#[test]
fn select_picks_by_condition() {
    let mut proc = Proc::new("sel");
    let mut b = ProcBuilder::new(&mut proc);
    let pc = b.param("c", Type::Bool, vec![]);
    let pa = b.param("a", Type::F64, vec![]);
    let pb = b.param("b", Type::F64, vec![]);
    let cv = b.load(pc);
    let x = b.load(pa);
    let y = b.load(pb);
    let z = b.select(cv, x, y);
    b.store(pa, z);
    b.ret();
    let mut m = Module::default();
    let id = m.add_proc(proc);
    let c = compile(&m);
    for (cond, want) in [(1u8, 1.0), (0, 2.0)] {
        let mut args = vec![
            Buffer::Bool(vec![cond]),
            Buffer::F64(vec![1.0]),
            Buffer::F64(vec![2.0]),
        ];
        c.call(id, &mut args).unwrap();
        assert_eq!(args[1], Buffer::F64(vec![want]));
    }
}
