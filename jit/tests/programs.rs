//! Whole procedures compiled and run: loops, switches, arrays, calls,
//! globals, characters, local storage and runtime errors.

mod common;

use adjit_ir::builder::ProcBuilder;
use adjit_ir::Buffer;
use adjit_ir::{
    BinaryOp, Bound, CallArg, CharBase, CharRef, CmpOp, Const, Dim, Global, Module, Proc, ProcId,
    Rounding, RuntimeErrorKind, Span, Storage, Type, UnaryOp, Var,
};
use adjit_jit::codegen::{CompiledModule, JitOptions};
use adjit_jit::globals::GlobalStore;
use adjit_jit::runtime::Runtime;
use common::*;

fn span(line: u32) -> Span {
    Span {
        file: 0,
        line,
        col: 7,
    }
}

/// `subroutine wsum(a, n, s)`: `s = sum(i * a(i), i = 1..n)` with a DO loop.
fn wsum_proc() -> Proc {
    let mut proc = Proc::new("wsum");
    let mut b = ProcBuilder::new(&mut proc);
    let n = b.param("n", Type::I32, vec![]);
    let a = b.param("a", Type::F64, vec![ProcBuilder::var_dim(n)]);
    let s = b.param("s", Type::F64, vec![]);
    let i = b.local("i", Type::I32);
    let zero = b.fconst(Type::F64, 0.0);
    b.store(s, zero);
    let one = b.iconst(Type::I32, 1);
    b.store(i, one);
    let header = b.create_block();
    let body = b.create_block();
    let exit = b.create_block();
    b.jump(header);
    b.switch_to_block(header);
    let iv = b.load(i);
    let nv = b.load(n);
    let c = b.cmp(CmpOp::Le, iv, nv);
    b.branch(c, body, exit);
    b.switch_to_block(body);
    b.set_span(span(4));
    let iv = b.load(i);
    let x = b.load_elem(a, vec![iv]);
    let fi = b.convert(iv, Type::F64, Rounding::Trunc);
    let t = b.binary(BinaryOp::Mul, x, fi);
    let sv = b.load(s);
    let sv = b.binary(BinaryOp::Add, sv, t);
    b.store(s, sv);
    let one = b.iconst(Type::I32, 1);
    let inext = b.binary(BinaryOp::Add, iv, one);
    b.store(i, inext);
    b.jump(header);
    b.switch_to_block(exit);
    b.ret();
    proc
}

fn single(proc: Proc) -> (Module, ProcId) {
    let mut m = Module {
        files: vec!["test.f90".into()],
        ..Module::default()
    };
    let id = m.add_proc(proc);
    (m, id)
}

#[test]
fn do_loop_over_an_explicit_shape_array() {
    let (m, id) = single(wsum_proc());
    let c = compile(&m);
    let mut args = vec![
        Buffer::I32(vec![4]),
        Buffer::F64(vec![1.0, 2.0, 3.0, 4.0, 99.0]),
        Buffer::F64(vec![0.0]),
    ];
    c.call(id, &mut args).unwrap();
    assert_eq!(args[2], Buffer::F64(vec![1.0 + 4.0 + 9.0 + 16.0]));
}

#[test]
fn argument_buffer_too_small_is_an_error() {
    let (m, id) = single(wsum_proc());
    let c = compile(&m);
    let mut args = vec![
        Buffer::I32(vec![10]),
        Buffer::F64(vec![1.0; 3]),
        Buffer::F64(vec![0.0]),
    ];
    // The compiled entry checks the size (a host's argument must hold the
    // whole declared array, though a Fortran caller's may be shorter).
    let e = c.call(id, &mut args).unwrap_err();
    assert_eq!(e.kind, RuntimeErrorKind::ArgumentSize);
    assert_eq!(e.var.as_deref(), Some("a"));
    assert_eq!(e.detail, "`a` needs 10 elements, the argument has 3");
    // Wrong type and wrong count.
    let mut args = vec![
        Buffer::I64(vec![1]),
        Buffer::F64(vec![1.0]),
        Buffer::F64(vec![0.0]),
    ];
    assert_eq!(
        c.call(id, &mut args).unwrap_err().kind,
        RuntimeErrorKind::ArgumentSize
    );
    let mut args = vec![Buffer::I32(vec![1])];
    assert_eq!(
        c.call(id, &mut args).unwrap_err().kind,
        RuntimeErrorKind::ArgumentSize
    );
}

#[test]
fn out_of_bounds_is_reported_with_variable_index_and_span() {
    // a(2:4), read a(k).
    let mut proc = Proc::new("oob");
    let mut b = ProcBuilder::new(&mut proc);
    let k = b.param("k", Type::I64, vec![]);
    let a = b.param("a", Type::F64, vec![ProcBuilder::const_dim(2, 4)]);
    let r = b.param("r", Type::F64, vec![]);
    b.set_span(span(12));
    let kv = b.load(k);
    let x = b.load_elem(a, vec![kv]);
    b.store(r, x);
    b.ret();
    let (m, id) = single(proc);
    let c = compile(&m);
    for good in 2..=4 {
        let mut args = vec![
            Buffer::I64(vec![good]),
            Buffer::F64(vec![10.0, 20.0, 30.0]),
            Buffer::F64(vec![0.0]),
        ];
        c.call(id, &mut args).unwrap();
        assert_eq!(args[2], Buffer::F64(vec![10.0 * (good - 1) as f64]));
    }
    for bad in [1, 5, i64::MIN, -1] {
        let mut args = vec![
            Buffer::I64(vec![bad]),
            Buffer::F64(vec![1.0; 3]),
            Buffer::F64(vec![0.0]),
        ];
        let e = c.call(id, &mut args).unwrap_err();
        assert_eq!(e.kind, RuntimeErrorKind::IndexOutOfBounds);
        assert_eq!(e.var.as_deref(), Some("a"));
        assert_eq!(e.span, span(12));
        assert_eq!(e.detail, format!("index {bad} outside 2:4 in dimension 1"));
    }
    // With checks off, in-range accesses still work.
    let c = CompiledModule::compile(
        &m,
        &JitOptions {
            bounds_checks: false,
            ..JitOptions::default()
        },
    )
    .unwrap();
    let mut args = vec![
        Buffer::I64(vec![3]),
        Buffer::F64(vec![10.0, 20.0, 30.0]),
        Buffer::F64(vec![0.0]),
    ];
    c.call(id, &mut args).unwrap();
    assert_eq!(args[2], Buffer::F64(vec![20.0]));
}

/// Every subscript of one access is checked by a single branch on the
/// disjunction of the checks; the error reported is still the first failing
/// dimension's, and an element addressed twice in a block (a read, then a
/// write back) is right and checked once.
#[test]
fn one_branch_per_access_reports_the_first_failing_dimension() {
    // a(1:2, 1:3): a(i, j) = a(i, j) + 1; r = a(i, j).
    let mut proc = Proc::new("twice");
    let mut b = ProcBuilder::new(&mut proc);
    let i = b.param("i", Type::I64, vec![]);
    let j = b.param("j", Type::I64, vec![]);
    let a = b.param(
        "a",
        Type::F64,
        vec![ProcBuilder::const_dim(1, 2), ProcBuilder::const_dim(1, 3)],
    );
    let r = b.param("r", Type::F64, vec![]);
    b.set_span(span(5));
    let (iv, jv) = (b.load(i), b.load(j));
    let x = b.load_elem(a, vec![iv, jv]);
    let one = b.fconst(Type::F64, 1.0);
    let y = b.binary(BinaryOp::Add, x, one);
    b.store_elem(a, vec![iv, jv], y);
    let z = b.load_elem(a, vec![iv, jv]);
    b.store(r, z);
    b.ret();
    let (m, id) = single(proc);
    let c = compile(&m);
    let run = |i: i64, j: i64| {
        let mut args = vec![
            Buffer::I64(vec![i]),
            Buffer::I64(vec![j]),
            Buffer::F64((0..6).map(f64::from).collect()),
            Buffer::F64(vec![0.0]),
        ];
        c.call(id, &mut args).map(|()| args)
    };
    let args = run(2, 3).unwrap();
    assert_eq!(args[3], Buffer::F64(vec![6.0]));
    assert_eq!(args[2], Buffer::F64(vec![0.0, 1.0, 2.0, 3.0, 4.0, 6.0]));
    for (i, j, detail) in [
        (3, 4, "index 3 outside 1:2 in dimension 1"),
        (0, 2, "index 0 outside 1:2 in dimension 1"),
        (1, 4, "index 4 outside 1:3 in dimension 2"),
        (2, 0, "index 0 outside 1:3 in dimension 2"),
    ] {
        let e = run(i, j).unwrap_err();
        assert_eq!(e.kind, RuntimeErrorKind::IndexOutOfBounds);
        assert_eq!(e.var.as_deref(), Some("a"));
        assert_eq!(e.span, span(5));
        assert_eq!(e.detail, detail);
    }
}

/// A block taking both the sine and the cosine of one `f64` gets them from
/// one fused call; the bits are those of the C library's `sin` and `cos`
/// (what the interpreter computes) over many magnitudes, signs and the
/// special values.
#[test]
fn fused_sine_and_cosine_give_the_bits_of_sin_and_cos() {
    // s = sin(x) ; c = cos(x) ; t = sin(x) (the pair reused).
    let mut proc = Proc::new("sc");
    let mut b = ProcBuilder::new(&mut proc);
    let x = b.param("x", Type::F64, vec![]);
    let out = b.param("out", Type::F64, vec![ProcBuilder::const_dim(1, 3)]);
    let xv = b.load(x);
    let s = b.unary(UnaryOp::Sin, xv);
    let c = b.unary(UnaryOp::Cos, xv);
    let t = b.unary(UnaryOp::Sin, xv);
    for (k, v) in [s, c, t].into_iter().enumerate() {
        let kv = b.iconst(Type::I64, k as i64 + 1);
        b.store_elem(out, vec![kv], v);
    }
    b.ret();
    let (m, id) = single(proc);
    let c = compile(&m);
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut xs = vec![0.0, -0.0, f64::INFINITY, f64::NAN, 1e300, -1e-300, 1e22];
    for k in 0..20_000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        xs.push(if k % 2 == 0 {
            f64::from_bits(state)
        } else {
            (state as f64 / u64::MAX as f64 - 0.5) * 10f64.powi(k % 12)
        });
    }
    for x in xs {
        let mut args = vec![Buffer::F64(vec![x]), Buffer::F64(vec![0.0; 3])];
        c.call(id, &mut args).unwrap();
        let Buffer::F64(got) = &args[1] else {
            panic!("f64 output")
        };
        let want = [x.sin(), x.cos(), x.sin()];
        for (g, w) in got.iter().zip(want) {
            assert!(
                g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                "x = {x:e}: {g:e} != {w:e}"
            );
        }
    }
}

#[test]
fn two_dimensional_arrays_are_column_major_with_variable_bounds() {
    // b(0:n, 2:m) = 100*i + j ; also report lower/extent of dim 2.
    let mut proc = Proc::new("fill");
    let mut bld = ProcBuilder::new(&mut proc);
    let n = bld.param("n", Type::I64, vec![]);
    let m_ = bld.param("m", Type::I64, vec![]);
    let arr = bld.param(
        "b",
        Type::I64,
        vec![
            Dim {
                lower: Bound::Const(0),
                upper: Some(Bound::Var(n)),
            },
            Dim {
                lower: Bound::Const(2),
                upper: Some(Bound::Var(m_)),
            },
        ],
    );
    let info = bld.param("info", Type::I64, vec![ProcBuilder::const_dim(1, 2)]);
    let i = bld.local("i", Type::I64);
    let j = bld.local("j", Type::I64);
    // Nested loops.
    let two = bld.iconst(Type::I64, 2);
    bld.store(j, two);
    let outer = bld.create_block();
    let init_inner = bld.create_block();
    let inner = bld.create_block();
    let body = bld.create_block();
    let next_j = bld.create_block();
    let done = bld.create_block();
    bld.jump(outer);
    bld.switch_to_block(outer);
    let jv = bld.load(j);
    let mv = bld.load(m_);
    let c = bld.cmp(CmpOp::Le, jv, mv);
    bld.branch(c, init_inner, done);
    bld.switch_to_block(init_inner);
    let z = bld.iconst(Type::I64, 0);
    bld.store(i, z);
    bld.jump(inner);
    bld.switch_to_block(inner);
    let iv = bld.load(i);
    let nv = bld.load(n);
    let c = bld.cmp(CmpOp::Le, iv, nv);
    bld.branch(c, body, next_j);
    bld.switch_to_block(body);
    let iv = bld.load(i);
    let jv = bld.load(j);
    let h = bld.iconst(Type::I64, 100);
    let t = bld.binary(BinaryOp::Mul, iv, h);
    let t = bld.binary(BinaryOp::Add, t, jv);
    bld.store_elem(arr, vec![iv, jv], t);
    let one = bld.iconst(Type::I64, 1);
    let inext = bld.binary(BinaryOp::Add, iv, one);
    bld.store(i, inext);
    bld.jump(inner);
    bld.switch_to_block(next_j);
    let jv = bld.load(j);
    let one = bld.iconst(Type::I64, 1);
    let jn = bld.binary(BinaryOp::Add, jv, one);
    bld.store(j, jn);
    bld.jump(outer);
    bld.switch_to_block(done);
    let lo = bld.dim_lower(arr, 1);
    let ext = bld.dim_extent(arr, 1);
    let one = bld.iconst(Type::I64, 1);
    let two = bld.iconst(Type::I64, 2);
    bld.store_elem(info, vec![one], lo);
    bld.store_elem(info, vec![two], ext);
    bld.ret();
    let (m, id) = single(proc);
    let c = compile(&m);
    let mut args = vec![
        Buffer::I64(vec![2]),
        Buffer::I64(vec![4]),
        Buffer::I64(vec![0; 9]),
        Buffer::I64(vec![0; 2]),
    ];
    c.call(id, &mut args).unwrap();
    assert_eq!(
        args[2],
        Buffer::I64(vec![2, 102, 202, 3, 103, 203, 4, 104, 204])
    );
    assert_eq!(args[3], Buffer::I64(vec![2, 3]));
}

#[test]
fn assumed_size_array_takes_its_extent_from_the_buffer() {
    // s = sum(a(1:extent)) with a(*).
    let mut proc = Proc::new("asum");
    let mut b = ProcBuilder::new(&mut proc);
    let a = b.param("a", Type::F32, vec![ProcBuilder::assumed_dim()]);
    let s = b.param("s", Type::I64, vec![]);
    let e = b.dim_extent(a, 0);
    b.store(s, e);
    b.ret();
    let (m, id) = single(proc);
    let mut args = vec![Buffer::F32(vec![0.0; 7]), Buffer::I64(vec![0])];
    compile(&m).call(id, &mut args).unwrap();
    assert_eq!(args[1], Buffer::I64(vec![7]));
}

#[test]
fn switch_takes_the_first_matching_case_or_default() {
    let mut proc = Proc::new("sw");
    let mut b = ProcBuilder::new(&mut proc);
    let k = b.param("k", Type::I32, vec![]);
    let r = b.param("r", Type::I32, vec![]);
    let kv = b.load(k);
    let blocks: Vec<_> = (0..4).map(|_| b.create_block()).collect();
    b.switch(
        kv,
        vec![(1, blocks[0]), (-5, blocks[1]), (1, blocks[2])],
        blocks[3],
    );
    for (i, &blk) in blocks.iter().enumerate() {
        b.switch_to_block(blk);
        let v = b.iconst(Type::I32, 10 * (i as i64 + 1));
        b.store(r, v);
        b.ret();
    }
    let (m, id) = single(proc);
    let c = compile(&m);
    for (k, want) in [(1, 10), (-5, 20), (3, 40), (0, 40)] {
        let mut args = vec![Buffer::I32(vec![k]), Buffer::I32(vec![0])];
        c.call(id, &mut args).unwrap();
        assert_eq!(args[1], Buffer::I32(vec![want]), "k = {k}");
    }
}

/// `subroutine addone(x)`: `x = x + 1`.
fn addone() -> Proc {
    let mut proc = Proc::new("addone");
    let mut b = ProcBuilder::new(&mut proc);
    let x = b.param("x", Type::F64, vec![]);
    let v = b.load(x);
    let one = b.fconst(Type::F64, 1.0);
    let v = b.binary(BinaryOp::Add, v, one);
    b.store(x, v);
    b.ret();
    proc
}

/// `subroutine sum3(v, s)`: `s = v(1) + v(2) + v(3)` with `v(3)`.
fn sum3() -> Proc {
    let mut proc = Proc::new("sum3");
    let mut b = ProcBuilder::new(&mut proc);
    let v = b.param("v", Type::F64, vec![ProcBuilder::const_dim(1, 3)]);
    let s = b.param("s", Type::F64, vec![]);
    let mut acc = b.fconst(Type::F64, 0.0);
    for i in 1..=3 {
        let iv = b.iconst(Type::I32, i);
        let x = b.load_elem(v, vec![iv]);
        acc = b.binary(BinaryOp::Add, acc, x);
    }
    b.store(s, acc);
    b.ret();
    proc
}

#[test]
fn calls_pass_variables_elements_and_values_by_reference() {
    let mut m = Module::default();
    let add = m.add_proc(addone());
    let s3 = m.add_proc(sum3());
    let mut proc = Proc::new("caller");
    let mut b = ProcBuilder::new(&mut proc);
    let s = b.param("s", Type::F64, vec![]);
    let arr = b.param("arr", Type::F64, vec![ProcBuilder::const_dim(1, 5)]);
    let out = b.param("out", Type::F64, vec![]);
    let l = b.local("l", Type::F64);
    // s (a promoted scalar parameter) modified by the callee, then read.
    b.call(add, vec![CallArg::Var(s)]);
    let sv = b.load(s);
    let two = b.fconst(Type::F64, 2.0);
    let sv = b.binary(BinaryOp::Mul, sv, two);
    b.store(s, sv);
    b.call(add, vec![CallArg::Var(s)]);
    // arr(3) += 1 through an element argument.
    let three = b.iconst(Type::I64, 3);
    b.call(add, vec![CallArg::Elem(arr, vec![three])]);
    // A value argument: the callee's write is lost.
    let k = b.fconst(Type::F64, 7.0);
    b.call(add, vec![CallArg::Value(k)]);
    // A local passed by reference twice.
    b.call(add, vec![CallArg::Var(l)]);
    b.call(add, vec![CallArg::Var(l)]);
    // out = arr(2) + arr(3) + arr(4) via sequence association, plus l.
    let two_i = b.iconst(Type::I64, 2);
    b.call(s3, vec![CallArg::Elem(arr, vec![two_i]), CallArg::Var(out)]);
    let o = b.load(out);
    let lv = b.load(l);
    let o = b.binary(BinaryOp::Add, o, lv);
    b.store(out, o);
    b.ret();
    let caller = m.add_proc(proc);
    let c = compile(&m);
    let mut args = vec![
        Buffer::F64(vec![1.0]),
        Buffer::F64(vec![1.0, 2.0, 3.0, 4.0, 5.0]),
        Buffer::F64(vec![0.0]),
    ];
    c.call(caller, &mut args).unwrap();
    assert_eq!(args[0], Buffer::F64(vec![5.0]));
    assert_eq!(args[1], Buffer::F64(vec![1.0, 2.0, 4.0, 4.0, 5.0]));
    assert_eq!(args[2], Buffer::F64(vec![2.0 + 4.0 + 4.0 + 2.0]));
}

#[test]
fn compiling_from_entries_leaves_out_the_procedures_they_never_call() {
    // caller calls addone; sum3 is called by nobody.
    let mut m = Module::default();
    let add = m.add_proc(addone());
    let s3 = m.add_proc(sum3());
    let mut proc = Proc::new("caller");
    let mut b = ProcBuilder::new(&mut proc);
    let s = b.param("s", Type::F64, vec![]);
    b.call(add, vec![CallArg::Var(s)]);
    b.call(add, vec![CallArg::Var(s)]);
    b.ret();
    let caller = m.add_proc(proc);
    let options = JitOptions {
        inline: false,
        ..JitOptions::default()
    };
    let globals = GlobalStore::new(&m.globals).unwrap();
    let c =
        CompiledModule::compile_reachable(&std::sync::Arc::new(m), &options, globals, &[caller])
            .unwrap();
    assert!(c.raw_function(caller).is_some());
    assert!(c.raw_function(add).is_some(), "called by the entry");
    assert!(c.raw_function(s3).is_none(), "called by no entry");
    let mut args = vec![Buffer::F64(vec![1.0])];
    c.call(caller, &mut args).unwrap();
    assert_eq!(args[0], Buffer::F64(vec![3.0]));
    let mut args = vec![Buffer::F64(vec![1.0; 3]), Buffer::F64(vec![0.0])];
    let e = c.call(s3, &mut args).unwrap_err();
    assert_eq!(e.proc, s3);
    assert!(e.detail.contains("not compiled"), "{}", e.detail);
    assert_eq!(args[1], Buffer::F64(vec![0.0]), "nothing ran");
}

#[test]
fn callee_errors_propagate_and_sequence_association_is_checked() {
    let mut m = Module::default();
    let s3 = m.add_proc(sum3());
    let mut proc = Proc::new("caller");
    let mut b = ProcBuilder::new(&mut proc);
    let arr = b.param("arr", Type::F64, vec![ProcBuilder::const_dim(1, 4)]);
    let out = b.param("out", Type::F64, vec![]);
    // The tail from arr(3) has 2 elements: sum3 needs 3.
    let three = b.iconst(Type::I64, 3);
    b.call(s3, vec![CallArg::Elem(arr, vec![three]), CallArg::Var(out)]);
    let big = b.fconst(Type::F64, 1e9);
    b.store(out, big);
    b.ret();
    let caller = m.add_proc(proc);
    let c = compile(&m);
    let mut args = vec![Buffer::F64(vec![1.0; 4]), Buffer::F64(vec![0.0])];
    let e = c.call(caller, &mut args).unwrap_err();
    // v(3) is declared but lies beyond the storage passed: an error when
    // sum3 references it (Fortran 77 allows the declaration).
    assert_eq!(e.kind, RuntimeErrorKind::IndexOutOfBounds);
    assert_eq!(e.proc, s3);
    assert_eq!(e.var.as_deref(), Some("v"));
    assert_eq!(
        e.detail,
        "element offset 2 outside the storage of 2 elements"
    );
    assert_eq!(
        args[1],
        Buffer::F64(vec![0.0]),
        "the caller stopped at the failing call"
    );
}

#[test]
fn recursion_and_integer_division_by_zero() {
    // recursive fact(n, r): if n <= 1 { r = 1 } else { fact(n-1, r); r = r * n }; then r = r / d.
    let mut m = Module::default();
    let mut proc = Proc::new("fact");
    let mut b = ProcBuilder::new(&mut proc);
    let n = b.param("n", Type::I64, vec![]);
    let r = b.param("r", Type::I64, vec![]);
    let nv = b.load(n);
    let one = b.iconst(Type::I64, 1);
    let c = b.cmp(CmpOp::Le, nv, one);
    let base = b.create_block();
    let rec = b.create_block();
    b.branch(c, base, rec);
    b.switch_to_block(base);
    let one = b.iconst(Type::I64, 1);
    b.store(r, one);
    b.ret();
    b.switch_to_block(rec);
    let nv = b.load(n);
    let one = b.iconst(Type::I64, 1);
    let nm1 = b.binary(BinaryOp::Sub, nv, one);
    b.call(ProcId(0), vec![CallArg::Value(nm1), CallArg::Var(r)]);
    let rv = b.load(r);
    let nv = b.load(n);
    let p = b.binary(BinaryOp::Mul, rv, nv);
    b.store(r, p);
    b.ret();
    let fact = m.add_proc(proc);
    let mut proc = Proc::new("divide");
    let mut b = ProcBuilder::new(&mut proc);
    let a = b.param("a", Type::I64, vec![]);
    let d = b.param("d", Type::I64, vec![]);
    b.set_span(span(30));
    let av = b.load(a);
    let dv = b.load(d);
    let q = b.binary(BinaryOp::Div, av, dv);
    b.store(a, q);
    b.ret();
    let div = m.add_proc(proc);
    let c = compile(&m);
    let mut args = vec![Buffer::I64(vec![10]), Buffer::I64(vec![0])];
    c.call(fact, &mut args).unwrap();
    assert_eq!(args[1], Buffer::I64(vec![3628800]));
    let mut args = vec![Buffer::I64(vec![10]), Buffer::I64(vec![0])];
    let e = c.call(div, &mut args).unwrap_err();
    assert_eq!(e.kind, RuntimeErrorKind::DivideByZero);
    assert_eq!(e.span, span(30));
    assert_eq!(e.proc, div);
    assert_eq!(e.detail, "Div by zero");
}

#[test]
fn runaway_recursion_is_an_error_not_a_crash() {
    // forever(n): n = n + 1; call forever(n) -- with a local array in the frame.
    let mut proc = Proc::new("forever");
    let mut b = ProcBuilder::new(&mut proc);
    let n = b.param("n", Type::I64, vec![]);
    let w = b.local_array("w", Type::F64, vec![ProcBuilder::const_dim(1, 64)]);
    let nv = b.load(n);
    let one = b.iconst(Type::I64, 1);
    let nv = b.binary(BinaryOp::Add, nv, one);
    b.store(n, nv);
    let two = b.fconst(Type::F64, 2.0);
    b.store_elem(w, vec![one], two);
    b.set_span(span(3));
    b.call(ProcId(0), vec![CallArg::Var(n)]);
    b.ret();
    let (m, id) = single(proc);
    let c = compile(&m);
    let mut args = vec![Buffer::I64(vec![0])];
    let e = c.call(id, &mut args).unwrap_err();
    assert_eq!(e.kind, RuntimeErrorKind::CallDepthExceeded);
    assert_eq!(e.span, span(3));
    assert_eq!(e.detail, "more than 1000 nested calls");
    assert_eq!(args[0], Buffer::I64(vec![1000]), "1000 activations ran");
    // The runtime is usable again afterwards.
    let mut args = vec![Buffer::I64(vec![0])];
    assert!(c.call(id, &mut args).is_err());
}

#[test]
fn globals_persist_across_calls_and_start_from_their_initial_values() {
    let mut m = Module::default();
    let g = m.add_global(Global {
        name: "counter".into(),
        ty: Type::I32,
        dims: vec![],
        char_len: 1,
        init: vec![Const::Int(40)],
    });
    let table = m.add_global(Global {
        name: "table".into(),
        ty: Type::F64,
        dims: vec![(1, 3)],
        char_len: 1,
        init: vec![Const::Float(0.5), Const::Float(1.5)],
    });
    let mut proc = Proc::new("tick");
    let mut b = ProcBuilder::new(&mut proc);
    let out = b.param("out", Type::F64, vec![]);
    let cv = b.declare_var(Var {
        name: "counter".into(),
        ty: Type::I32,
        dims: vec![],
        char_len: None,
        storage: Storage::Global(g, 0),
    });
    let tv = b.declare_var(Var {
        name: "table".into(),
        ty: Type::F64,
        dims: vec![ProcBuilder::const_dim(1, 3)],
        char_len: None,
        storage: Storage::Global(table, 0),
    });
    let x = b.load(cv);
    let one = b.iconst(Type::I32, 1);
    let x = b.binary(BinaryOp::Add, x, one);
    b.store(cv, x);
    let two = b.iconst(Type::I32, 2);
    let t2 = b.load_elem(tv, vec![two]);
    let three = b.iconst(Type::I32, 3);
    let t3 = b.load_elem(tv, vec![three]);
    let sum = b.binary(BinaryOp::Add, t2, t3);
    b.store_elem(tv, vec![three], sum);
    b.store(out, sum);
    b.ret();
    let tick = m.add_proc(proc);
    let c = compile(&m);
    for k in 1..=3 {
        let mut args = vec![Buffer::F64(vec![0.0])];
        c.call(tick, &mut args).unwrap();
        assert_eq!(args[0], Buffer::F64(vec![1.5 * k as f64]));
    }
    assert_eq!(c.global(g), Some(Buffer::I32(vec![43])));
    assert_eq!(c.global(table), Some(Buffer::F64(vec![0.5, 1.5, 4.5])));
    c.set_global(g, &Buffer::I32(vec![0])).unwrap();
    assert_eq!(c.global(g), Some(Buffer::I32(vec![0])));
    assert!(c.set_global(g, &Buffer::F64(vec![0.0])).is_err());
}

fn char_var(name: &str, len: i64, storage: Storage) -> Var {
    Var {
        name: name.into(),
        ty: Type::Char,
        dims: vec![],
        char_len: Some(Bound::Const(len)),
        storage,
    }
}

fn whole(var: adjit_ir::VarId) -> CharRef {
    CharRef {
        base: CharBase::Var { var, index: vec![] },
        start: None,
        end: None,
    }
}

#[test]
fn character_assignment_comparison_and_substrings() {
    // task (assumed length) = 'FG' ; eq = task(1:2) == 'FG' ; local buf*4 = task ; task(3:) = buf(1:1)
    let mut proc = Proc::new("chars");
    let mut b = ProcBuilder::new(&mut proc);
    let task = b.param_var(Var {
        name: "task".into(),
        ty: Type::Char,
        dims: vec![],
        char_len: None,
        storage: Storage::Local,
    });
    let eq = b.param("eq", Type::Bool, vec![]);
    let buf = b.declare_var(char_var("buf", 4, Storage::Local));
    let lit = |s: &str| CharRef {
        base: CharBase::Literal(s.as_bytes().to_vec()),
        start: None,
        end: None,
    };
    b.char_assign(whole(task), lit("FG"));
    let one = b.iconst(Type::I32, 1);
    let two = b.iconst(Type::I32, 2);
    let head = CharRef {
        start: Some(one),
        end: Some(two),
        ..whole(task)
    };
    let e = b.char_compare(CmpOp::Eq, head, lit("FG  "));
    b.store(eq, e);
    b.char_assign(whole(buf), whole(task));
    let three = b.iconst(Type::I32, 3);
    let one = b.iconst(Type::I32, 1);
    let tail = CharRef {
        start: Some(three),
        end: None,
        ..whole(task)
    };
    let first = CharRef {
        start: None,
        end: Some(one),
        ..whole(buf)
    };
    b.char_assign(tail, first);
    b.ret();
    let (m, id) = single(proc);
    let c = compile(&m);
    let mut args = vec![Buffer::Char(b"START".to_vec()), Buffer::Bool(vec![0])];
    c.call(id, &mut args).unwrap();
    assert_eq!(args[0], Buffer::Char(b"FGF  ".to_vec()));
    assert_eq!(args[1], Buffer::Bool(vec![1]));
}

#[test]
fn substring_out_of_range_is_an_error() {
    let mut proc = Proc::new("sub");
    let mut b = ProcBuilder::new(&mut proc);
    let s = b.param_var(char_var("s", 3, Storage::Local));
    let k = b.param("k", Type::I64, vec![]);
    let kv = b.load(k);
    let r = CharRef {
        start: Some(kv),
        end: Some(kv),
        ..whole(s)
    };
    let lit = CharRef {
        base: CharBase::Literal(b"x".to_vec()),
        start: None,
        end: None,
    };
    b.char_assign(r, lit);
    b.ret();
    let (m, id) = single(proc);
    let c = compile(&m);
    let mut args = vec![Buffer::Char(b"abc".to_vec()), Buffer::I64(vec![2])];
    c.call(id, &mut args).unwrap();
    assert_eq!(args[0], Buffer::Char(b"axc".to_vec()));
    let mut args = vec![Buffer::Char(b"abc".to_vec()), Buffer::I64(vec![4])];
    let e = c.call(id, &mut args).unwrap_err();
    assert_eq!(e.kind, RuntimeErrorKind::SubstringOutOfRange);
    assert_eq!(e.var.as_deref(), Some("s"));
}

#[test]
fn stop_reports_its_message_and_span() {
    let mut proc = Proc::new("halt");
    let mut b = ProcBuilder::new(&mut proc);
    b.param("x", Type::F64, vec![]);
    b.set_span(span(9));
    b.fail(RuntimeErrorKind::Stop(Some("'bad input'".into())));
    let (m, id) = single(proc);
    let e = compile(&m)
        .call(id, &mut [Buffer::F64(vec![0.0])])
        .unwrap_err();
    assert_eq!(e.kind, RuntimeErrorKind::Stop(Some("'bad input'".into())));
    assert_eq!(e.span, span(9));
}

/// `subroutine locals(n, out)`: local arrays (small fixed, large fixed,
/// automatic `w(n)`) must start zeroed on every call; out = sum of all
/// three after writing element 1 of each.
fn locals_proc() -> Proc {
    let mut proc = Proc::new("locals");
    let mut b = ProcBuilder::new(&mut proc);
    let n = b.param("n", Type::I64, vec![]);
    let out = b.param("out", Type::F64, vec![]);
    let small = b.local_array("small", Type::F64, vec![ProcBuilder::const_dim(1, 4)]);
    let large = b.local_array("large", Type::F64, vec![ProcBuilder::const_dim(1, 100_000)]);
    let auto = b.local_array("w", Type::F64, vec![ProcBuilder::var_dim(n)]);
    let i = b.local("i", Type::I64);
    let acc = b.local("acc", Type::F64);
    let one = b.iconst(Type::I64, 1);
    let nv = b.load(n);
    let big = b.iconst(Type::I64, 100_000);
    for (arr, last) in [(small, None), (large, Some(big)), (auto, Some(nv))] {
        // acc += sum(arr(1..last)); arr(1) = 1; (only element 1 and last)
        let first = b.load_elem(arr, vec![one]);
        let a = b.load(acc);
        let a = b.binary(BinaryOp::Add, a, first);
        let a = match last {
            Some(l) => {
                let x = b.load_elem(arr, vec![l]);
                b.binary(BinaryOp::Add, a, x)
            }
            None => a,
        };
        b.store(acc, a);
        let onef = b.fconst(Type::F64, 1.0);
        b.store_elem(arr, vec![one], onef);
        if let Some(l) = last {
            b.store_elem(arr, vec![l], onef);
        }
    }
    b.store(i, nv);
    let a = b.load(acc);
    b.store(out, a);
    b.ret();
    proc
}

#[test]
fn local_arrays_are_zeroed_per_call_and_the_arena_does_not_grow() {
    let (m, id) = single(locals_proc());
    let c = compile(&m);
    let mut rt = Runtime::new();
    let mut high = 0;
    for k in 0..200 {
        let n = 1000 + (k % 7) * 10_000;
        let mut args = vec![Buffer::I64(vec![n]), Buffer::F64(vec![-1.0])];
        c.call_with(id, &mut args, &mut rt).unwrap();
        assert_eq!(args[1], Buffer::F64(vec![0.0]), "locals start at zero");
        if k == 10 {
            high = rt.arena_bytes();
        }
    }
    assert!(high > 0);
    assert_eq!(rt.arena_bytes(), high, "the arena is reused, not grown");
}

#[test]
fn send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    fn assert_send<T: Send>() {}
    assert_send_sync::<CompiledModule>();
    assert_send::<Runtime>();
}

#[test]
fn many_threads_call_one_module() {
    let (m, id) = single(wsum_proc());
    let c = std::sync::Arc::new(compile(&m));
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let c = c.clone();
            std::thread::spawn(move || {
                for k in 0..500 {
                    let n = (k % 50) + t;
                    let a: Vec<f64> = (0..n).map(|i| i as f64).collect();
                    let want: f64 = (0..n).map(|i| i as f64 * (i + 1) as f64).sum();
                    let mut args =
                        vec![Buffer::I32(vec![n]), Buffer::F64(a), Buffer::F64(vec![0.0])];
                    c.call(id, &mut args).unwrap();
                    assert_eq!(args[2], Buffer::F64(vec![want]));
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

#[test]
fn modules_that_fail_verification_give_compile_errors() {
    let mut proc = Proc::new("bad");
    let mut b = ProcBuilder::new(&mut proc);
    let x = b.param("x", Type::F64, vec![]);
    let v = b.iconst(Type::I32, 1);
    b.store(x, v);
    b.ret();
    let (m, _) = single(proc);
    let e = CompiledModule::compile(&m, &JitOptions::default()).unwrap_err();
    assert!(!e.to_string().is_empty());
}

#[test]
fn compile_latency_of_a_small_procedure() {
    let (m, _) = single(wsum_proc());
    let _ = compile(&m); // warm up
    let runs = 20;
    let t = std::time::Instant::now();
    for _ in 0..runs {
        drop(compile(&m));
    }
    let per = t.elapsed() / runs;
    println!(
        "compile latency of `wsum` (debug={}): {per:?}",
        cfg!(debug_assertions)
    );
}

/// Strong-zero products `select(d == 0 [or p == 0], +0, p * d)` give the
/// interpreter's bits (the sign of zero, NaN, underflow to a signed zero)
/// whether lowered without branches or as the product and a branch to the
/// exact select ([`JitOptions::branch_on_zero_products`]), in `f64` and
/// `f32`.
#[test]
fn strong_zero_products_match_the_interpreter_bit_for_bit() {
    let mut proc = Proc::new("guards");
    let mut b = ProcBuilder::new(&mut proc);
    for ty in [Type::F64, Type::F32] {
        let p = b.param(format!("p{}", ty.name()), ty, vec![]);
        let d = b.param(format!("d{}", ty.name()), ty, vec![]);
        let both = b.param(format!("both{}", ty.name()), ty, vec![]);
        let one = b.param(format!("one{}", ty.name()), ty, vec![]);
        let (pv, dv) = (b.load(p), b.load(d));
        let t = b.binary(BinaryOp::Mul, pv, dv);
        let zero = b.fconst(ty, 0.0);
        let d_zero = b.cmp(CmpOp::Eq, dv, zero);
        let p_zero = b.cmp(CmpOp::Eq, zero, pv);
        let either = b.binary(BinaryOp::Or, d_zero, p_zero);
        let strong = b.select(either, zero, t);
        b.store(both, strong);
        let single = b.select(d_zero, zero, t);
        b.store(one, single);
    }
    b.ret();
    let mut m = Module::default();
    let id = m.add_proc(proc);
    let compiled = [false, true].map(|branch| {
        let options = JitOptions {
            branch_on_zero_products: branch,
            ..JitOptions::default()
        };
        CompiledModule::compile(&m, &options).unwrap()
    });
    let specials = [
        0.0,
        -0.0,
        1.5,
        -2.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        1e-200,
        -1e-200,
        1e-30,
        -1e-30,
        1e300,
        f64::from_bits(1),
    ];
    let args = |p: f64, d: f64| {
        vec![
            Buffer::F64(vec![p]),
            Buffer::F64(vec![d]),
            Buffer::F64(vec![7.0]),
            Buffer::F64(vec![7.0]),
            Buffer::F32(vec![p as f32]),
            Buffer::F32(vec![d as f32]),
            Buffer::F32(vec![7.0]),
            Buffer::F32(vec![7.0]),
        ]
    };
    let bits = |bufs: &[Buffer]| -> Vec<u64> {
        bufs.iter()
            .map(|b| match b {
                Buffer::F64(v) => v[0].to_bits(),
                Buffer::F32(v) => u64::from(v[0].to_bits()),
                other => panic!("unexpected buffer {other:?}"),
            })
            .collect()
    };
    for &p in &specials {
        for &d in &specials {
            let mut want = args(p, d);
            adjit_ir::interp::Interpreter::new(&m)
                .call(id, &mut want)
                .unwrap();
            for c in &compiled {
                let mut got = args(p, d);
                c.call(id, &mut got).unwrap();
                assert_eq!(bits(&got), bits(&want), "p = {p:e}, d = {d:e}");
            }
        }
    }
}

/// `subroutine pair(n, a, b, c, s)` with `a(n, n)`, `b(n, n)`, `c(n, n)`
/// declared alike: `s = a(2, 1) + 10 * b(1, 2) + 100 * c(2, 2)`.
fn same_shape_proc() -> Proc {
    let mut proc = Proc::new("pair");
    let mut b = ProcBuilder::new(&mut proc);
    let n = b.param("n", Type::I64, vec![]);
    let square = || vec![ProcBuilder::var_dim(n), ProcBuilder::var_dim(n)];
    let a = b.param("a", Type::F64, square());
    let bb = b.param("b", Type::F64, square());
    let c = b.param("c", Type::F64, square());
    let s = b.param("s", Type::F64, vec![]);
    let (one, two) = (b.iconst(Type::I64, 1), b.iconst(Type::I64, 2));
    let x = b.load_elem(a, vec![two, one]);
    let y = b.load_elem(bb, vec![one, two]);
    let z = b.load_elem(c, vec![two, two]);
    let ten = b.fconst(Type::F64, 10.0);
    let hundred = b.fconst(Type::F64, 100.0);
    let y = b.binary(BinaryOp::Mul, ten, y);
    let z = b.binary(BinaryOp::Mul, hundred, z);
    let t = b.binary(BinaryOp::Add, x, y);
    let t = b.binary(BinaryOp::Add, t, z);
    b.store(s, t);
    b.ret();
    proc
}

/// Arrays declared with the same bounds share one computed shape (one
/// overflow check): each still has its own strides, argument size check
/// and overflow error named after the first of them.
#[test]
fn arrays_declared_alike_share_their_shape_and_keep_their_checks() {
    let (m, id) = single(same_shape_proc());
    let c = compile(&m);
    let square = |k: f64| Buffer::F64((0..4).map(|e| k * (e + 1) as f64).collect());
    let mut args = vec![
        Buffer::I64(vec![2]),
        square(1.0),
        square(2.0),
        square(3.0),
        Buffer::F64(vec![0.0]),
    ];
    c.call(id, &mut args).unwrap();
    // a(2, 1) = 2, b(1, 2) = 2 * 3, c(2, 2) = 3 * 4.
    assert_eq!(args[4], Buffer::F64(vec![2.0 + 10.0 * 6.0 + 100.0 * 12.0]));
    // The third array is short: its own check names it.
    args[3] = Buffer::F64(vec![0.0; 3]);
    let e = c.call(id, &mut args).unwrap_err();
    assert_eq!(e.kind, RuntimeErrorKind::ArgumentSize);
    assert_eq!(e.var.as_deref(), Some("c"));
    // n * n overflows: the first array's check fails and names it.
    args[0] = Buffer::I64(vec![1 << 40]);
    let e = c.call(id, &mut args).unwrap_err();
    assert_eq!(e.kind, RuntimeErrorKind::TooLarge);
    assert_eq!(e.var.as_deref(), Some("a"));
}
