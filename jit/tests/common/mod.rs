//! Helpers shared by the JIT integration tests: small IR modules built with
//! the ProcBuilder, a deterministic random source and reference semantics.
#![allow(dead_code)]

use adjit_ir::builder::ProcBuilder;
use adjit_ir::{BinaryOp, CmpOp, Module, Proc, ProcId, StackKind, Type, UnaryOp};
use adjit_jit::codegen::{CompiledModule, JitOptions};

/// A deterministic xorshift generator.
pub struct Rng(pub u64);

impl Rng {
    /// Next 64 random bits.
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    /// A float from a mix of special values and random magnitudes.
    pub fn float(&mut self) -> f64 {
        const SPECIAL: [f64; 16] = [
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.5,
            -2.5,
            1.0,
            -1.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            0.49999999999999994,
            1e300,
            -3e-310,
            4503599627370497.0,
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
    /// An integer from a mix of special values and random ones.
    pub fn int(&mut self) -> i64 {
        const SPECIAL: [i64; 10] = [0, 1, -1, 2, -2, 7, -7, i64::MIN, i64::MAX, 63];
        let r = self.next();
        match r % 4 {
            0 => SPECIAL[(r >> 8) as usize % SPECIAL.len()],
            1 => (r >> 3) as i64,
            _ => ((r >> 8) % 41) as i64 - 20,
        }
    }
}

/// Equal bits, or both NaN.
pub fn same_f64(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// Equal bits, or both NaN.
pub fn same_f32(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// A module with one procedure `op(a, b, r)` computing `r = a <op> b` with
/// `a` of type `ty`, `b` of type `ty_b` and `r` of the result type.
pub fn binary_module(op: BinaryOp, ty: Type, ty_b: Type) -> (Module, ProcId) {
    let mut proc = Proc::new("op");
    let mut b = ProcBuilder::new(&mut proc);
    let pa = b.param("a", ty, vec![]);
    let pb = b.param("b", ty_b, vec![]);
    let pr = b.param("r", ty, vec![]);
    let x = b.load(pa);
    let y = b.load(pb);
    let z = b.binary(op, x, y);
    b.store(pr, z);
    b.ret();
    let mut m = Module::default();
    let id = m.add_proc(proc);
    (m, id)
}

/// A module with one procedure `op(a, r)` computing `r = <op> a`.
pub fn unary_module(op: UnaryOp, ty: Type) -> (Module, ProcId) {
    let mut proc = Proc::new("op");
    let mut b = ProcBuilder::new(&mut proc);
    let pa = b.param("a", ty, vec![]);
    let pr = b.param("r", ty, vec![]);
    let x = b.load(pa);
    let z = b.unary(op, x);
    b.store(pr, z);
    b.ret();
    let mut m = Module::default();
    let id = m.add_proc(proc);
    (m, id)
}

/// Compiles with default options, panicking with the error text on failure.
pub fn compile(m: &Module) -> CompiledModule {
    CompiledModule::compile(m, &JitOptions::default()).unwrap_or_else(|e| panic!("{e}"))
}

/// Reference MIN / MAX of the IR (NaN in `a` yields `b`).
pub fn ref_min_max(max: bool, a: f64, b: f64) -> f64 {
    let pick_b = if max { b > a } else { b < a };
    if pick_b || a.is_nan() {
        b
    } else {
        a
    }
}

/// Reference float binary semantics documented on `BinaryOp` (f64).
pub fn ref_float(op: BinaryOp, a: f64, b: f64) -> f64 {
    match op {
        BinaryOp::Add => a + b,
        BinaryOp::Sub => a - b,
        BinaryOp::Mul => a * b,
        BinaryOp::Div => a / b,
        BinaryOp::Pow => a.powf(b),
        BinaryOp::Min => ref_min_max(false, a, b),
        BinaryOp::Max => ref_min_max(true, a, b),
        BinaryOp::Atan2 => a.atan2(b),
        BinaryOp::Sign => a.abs().copysign(b),
        BinaryOp::Dim => ref_min_max(true, a - b, 0.0),
        BinaryOp::Mod => a % b,
        BinaryOp::Modulo => {
            let r = a % b;
            if r != 0.0 && (r < 0.0) != (b < 0.0) {
                r + b
            } else {
                r
            }
        }
        _ => unreachable!("not a float op"),
    }
}

/// Reference float binary semantics in f32.
pub fn ref_float32(op: BinaryOp, a: f32, b: f32) -> f32 {
    let mm = |max: bool, a: f32, b: f32| {
        let pick_b = if max { b > a } else { b < a };
        if pick_b || a.is_nan() {
            b
        } else {
            a
        }
    };
    match op {
        BinaryOp::Add => a + b,
        BinaryOp::Sub => a - b,
        BinaryOp::Mul => a * b,
        BinaryOp::Div => a / b,
        BinaryOp::Pow => a.powf(b),
        BinaryOp::Min => mm(false, a, b),
        BinaryOp::Max => mm(true, a, b),
        BinaryOp::Atan2 => a.atan2(b),
        BinaryOp::Sign => a.abs().copysign(b),
        BinaryOp::Dim => mm(true, a - b, 0.0),
        BinaryOp::Mod => a % b,
        BinaryOp::Modulo => {
            let r = a % b;
            if r != 0.0 && (r < 0.0) != (b < 0.0) {
                r + b
            } else {
                r
            }
        }
        _ => unreachable!("not a float op"),
    }
}

/// Reference PowI: repeated squaring, `x**-n = 1/x**n`.
pub fn ref_powi(x: f64, n: i64) -> f64 {
    let (mut base, mut e, mut acc) = (x, n.unsigned_abs(), 1.0f64);
    while e > 0 {
        if e & 1 == 1 {
            acc *= base;
        }
        base *= base;
        e >>= 1;
    }
    if n < 0 {
        1.0 / acc
    } else {
        acc
    }
}

/// Reference integer semantics; `None` for a divide-by-zero error.
pub fn ref_int(op: BinaryOp, a: i64, b: i64) -> Option<i64> {
    Some(match op {
        BinaryOp::Add => a.wrapping_add(b),
        BinaryOp::Sub => a.wrapping_sub(b),
        BinaryOp::Mul => a.wrapping_mul(b),
        BinaryOp::Div => {
            if b == 0 {
                return None;
            }
            a.wrapping_div(b)
        }
        BinaryOp::Mod => {
            if b == 0 {
                return None;
            }
            a.wrapping_rem(b)
        }
        BinaryOp::Modulo => {
            if b == 0 {
                return None;
            }
            let r = a.wrapping_rem(b);
            if r != 0 && (r ^ b) < 0 {
                r.wrapping_add(b)
            } else {
                r
            }
        }
        BinaryOp::Pow => {
            if b < 0 {
                match a {
                    0 => return None,
                    1 => 1,
                    -1 => {
                        if b % 2 == 0 {
                            1
                        } else {
                            -1
                        }
                    }
                    _ => 0,
                }
            } else {
                let (mut base, mut e, mut acc) = (a, b as u64, 1i64);
                while e > 0 {
                    if e & 1 == 1 {
                        acc = acc.wrapping_mul(base);
                    }
                    base = base.wrapping_mul(base);
                    e >>= 1;
                }
                acc
            }
        }
        BinaryOp::Min => a.min(b),
        BinaryOp::Max => a.max(b),
        BinaryOp::Sign => {
            if b >= 0 {
                a.wrapping_abs()
            } else {
                a.wrapping_abs().wrapping_neg()
            }
        }
        BinaryOp::Dim => a.wrapping_sub(b).max(0),
        _ => unreachable!("not an integer op"),
    })
}

/// Emits `for i = 1..=n { body(i) }` with `i` a local I64 and `n` an I64
/// variable; leaves the builder in the exit block.
pub fn counted_loop(
    b: &mut ProcBuilder,
    i: adjit_ir::VarId,
    n: adjit_ir::VarId,
    body: &mut dyn FnMut(&mut ProcBuilder, adjit_ir::Value),
) {
    let one = b.iconst(Type::I64, 1);
    b.store(i, one);
    let header = b.create_block();
    let blk = b.create_block();
    let exit = b.create_block();
    b.jump(header);
    b.switch_to_block(header);
    let iv = b.load(i);
    let nv = b.load(n);
    let c = b.cmp(CmpOp::Le, iv, nv);
    b.branch(c, blk, exit);
    b.switch_to_block(blk);
    let iv = b.load(i);
    body(b, iv);
    let iv = b.load(i);
    let one = b.iconst(Type::I64, 1);
    let next = b.binary(BinaryOp::Add, iv, one);
    b.store(i, next);
    b.jump(header);
    b.switch_to_block(exit);
}

/// `forward(n, x)`: pushes x(i) (value), i (integer) and i*3 (control) for
/// i = 1..n. `reverse(n, y, k)`: pops them back into y(i) and k(i) for
/// i = n..1 (so y == x and k(i) == i).
pub fn sweep_module() -> (Module, ProcId, ProcId) {
    let mut m = Module::default();
    let mut proc = Proc::new("forward");
    let mut b = ProcBuilder::new(&mut proc);
    let n = b.param("n", Type::I64, vec![]);
    let x = b.param("x", Type::F32, vec![ProcBuilder::var_dim(n)]);
    let i = b.local("i", Type::I64);
    counted_loop(&mut b, i, n, &mut |b, iv| {
        let xv = b.load_elem(x, vec![iv]);
        b.push(StackKind::Value, xv);
        b.push(StackKind::Integer, iv);
        let three = b.iconst(Type::I64, 3);
        let c = b.binary(BinaryOp::Mul, iv, three);
        b.push(StackKind::Control, c);
    });
    b.ret();
    let fwd = m.add_proc(proc);

    let mut proc = Proc::new("reverse");
    let mut b = ProcBuilder::new(&mut proc);
    let n = b.param("n", Type::I64, vec![]);
    let y = b.param("y", Type::F32, vec![ProcBuilder::var_dim(n)]);
    let k = b.param("k", Type::I32, vec![ProcBuilder::var_dim(n)]);
    let i = b.local("i", Type::I64);
    counted_loop(&mut b, i, n, &mut |b, _| {
        let c = b.pop(StackKind::Control, Type::I64);
        let three = b.iconst(Type::I64, 3);
        let idx = b.binary(BinaryOp::Div, c, three);
        let ki = b.pop(StackKind::Integer, Type::I32);
        b.store_elem(k, vec![idx], ki);
        let v = b.pop(StackKind::Value, Type::F32);
        b.store_elem(y, vec![idx], v);
    });
    b.ret();
    let rev = m.add_proc(proc);
    (m, fwd, rev)
}
