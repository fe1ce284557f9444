//! The text form of code lists: `Display` for [`Module`] and
//! [`print_proc`] for one procedure.
//!
//! Text output only: it has no parser and knows nothing of Fortran.
//!
//! The listing reads like the code lists of the source papers:
//!
//! ```text
//! proc f(x: f64, n: i32, a: f64(1:n))
//!   var i: i32
//! bb0:
//!   ; line 3
//!   v0 = load x
//!   v1 = sin v0
//!   v2 = load i
//!   store a(v2), v1
//!   return
//! ```
//!
//! Variables are printed by name (a name shared by several variables gets
//! its id appended, `t%4`); a comment `; line N` starts each run of
//! instructions from one source line. The output is deterministic.

use crate::ir::{
    BinaryOp, Bound, CallArg, CharBase, CharRef, CmpOp, Const, Dim, Inst, IoOp, Module, Proc,
    ProcId, Rounding, StackKind, Storage, Terminator, Type, UnaryOp, Value, Var, VarId,
};
use std::collections::HashMap;
use std::fmt::{self, Write};

/// The listing of one procedure of a module (callees are named by their
/// procedure names, globals by their global names).
pub fn print_proc(module: &Module, proc: ProcId) -> String {
    let mut out = String::new();
    if let Some(p) = module.procs.get(proc.index()) {
        // Writing to a String cannot fail.
        let _ = write_proc(&mut out, module, p);
    }
    out
}

impl fmt::Display for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, g) in self.globals.iter().enumerate() {
            write!(f, "global g{i} {}: {}", g.name, g.ty.name())?;
            if g.ty == Type::Char {
                write!(f, "*{}", g.char_len)?;
            }
            if !g.dims.is_empty() {
                let dims: Vec<String> = g.dims.iter().map(|(l, u)| format!("{l}:{u}")).collect();
                write!(f, "({})", dims.join(", "))?;
            }
            if !g.init.is_empty() {
                let init: Vec<String> = g.init.iter().map(const_text).collect();
                write!(f, " = [{}]", init.join(", "))?;
            }
            writeln!(f)?;
        }
        for (i, p) in self.procs.iter().enumerate() {
            if i > 0 || !self.globals.is_empty() {
                writeln!(f)?;
            }
            write_proc(f, self, p)?;
        }
        Ok(())
    }
}

/// Display names of the variables of a procedure: the name when unique,
/// else `name%id`.
fn var_names(proc: &Proc) -> Vec<String> {
    let mut count: HashMap<&str, usize> = HashMap::new();
    for v in &proc.vars {
        *count.entry(v.name.as_str()).or_default() += 1;
    }
    proc.vars
        .iter()
        .enumerate()
        .map(|(i, v)| {
            if count[v.name.as_str()] > 1 {
                format!("{}%{i}", v.name)
            } else {
                v.name.clone()
            }
        })
        .collect()
}

struct Names<'a> {
    module: &'a Module,
    vars: Vec<String>,
}

impl Names<'_> {
    fn var(&self, v: VarId) -> &str {
        self.vars.get(v.index()).map_or("<bad var>", |s| s.as_str())
    }
    fn proc(&self, p: ProcId) -> String {
        self.module
            .procs
            .get(p.index())
            .map_or_else(|| format!("<bad {p}>"), |p| p.name.clone())
    }
}

fn write_proc(f: &mut dyn Write, module: &Module, proc: &Proc) -> fmt::Result {
    let names = Names {
        module,
        vars: var_names(proc),
    };
    let params: Vec<String> = proc
        .params
        .iter()
        .map(|&p| match proc.vars.get(p.index()) {
            Some(var) => format!("{}: {}", names.var(p), var_type_text(var, &names)),
            None => format!("<bad {p}>"),
        })
        .collect();
    write!(f, "proc {}({})", proc.name, params.join(", "))?;
    if let Some(r) = proc.result {
        write!(f, " result {}", names.var(r))?;
    }
    if !proc.zeroed_params.is_empty() {
        let zeroed: Vec<String> = proc
            .zeroed_params
            .iter()
            .map(|&z| names.var(z).to_string())
            .collect();
        write!(f, " zeroed {}", zeroed.join(", "))?;
    }
    writeln!(f)?;
    for (i, var) in proc.vars.iter().enumerate() {
        let id = VarId(i as u32);
        match var.storage {
            Storage::Param(_) => {}
            Storage::AllocatableParam(_) => writeln!(
                f,
                "  allocatable param {}: {}",
                names.var(id),
                var_type_text(var, &names)
            )?,
            Storage::Local => {
                writeln!(f, "  var {}: {}", names.var(id), var_type_text(var, &names))?
            }
            Storage::Allocatable => writeln!(
                f,
                "  allocatable {}: {}",
                names.var(id),
                var_type_text(var, &names)
            )?,
            Storage::Global(g, at) => {
                let gname = module
                    .globals
                    .get(g.index())
                    .map_or("<bad global>", |g| g.name.as_str());
                let from = if at == 0 {
                    String::new()
                } else {
                    format!(" from element {at}")
                };
                writeln!(
                    f,
                    "  global {}: {} = {g} {gname}{from}",
                    names.var(id),
                    var_type_text(var, &names)
                )?
            }
        }
    }
    for (b, block) in proc.blocks.iter().enumerate() {
        writeln!(f, "bb{b}:")?;
        let mut line = 0;
        for &v in &block.insts {
            let Some(data) = proc.insts.get(v.index()) else {
                writeln!(f, "  <bad {v}>")?;
                continue;
            };
            if data.span.line != line && data.span.line != 0 {
                line = data.span.line;
                writeln!(f, "  ; line {line}")?;
            }
            writeln!(f, "  {}", inst_text(v, &data.kind, data.ty, &names))?;
        }
        if block.term_span.line != line && block.term_span.line != 0 {
            writeln!(f, "  ; line {}", block.term_span.line)?;
        }
        writeln!(f, "  {}", term_text(&block.term))?;
    }
    Ok(())
}

/// `f64`, `f64(1:n, 0:*)`, `char*8`, `char*(n)(1:3)`.
fn var_type_text(var: &Var, names: &Names) -> String {
    let mut s = var.ty.name().to_string();
    if var.ty == Type::Char {
        match &var.char_len {
            Some(Bound::Const(c)) => write!(s, "*{c}").unwrap_or(()),
            Some(b) => write!(s, "*({})", bound_text(b, names)).unwrap_or(()),
            None => s.push_str("*(*)"),
        }
    }
    if !var.dims.is_empty() {
        let dims: Vec<String> = var.dims.iter().map(|d| dim_text(d, names)).collect();
        write!(s, "({})", dims.join(", ")).unwrap_or(());
    }
    s
}

fn dim_text(d: &Dim, names: &Names) -> String {
    let upper = d
        .upper
        .as_ref()
        .map_or_else(|| "*".to_string(), |u| bound_text(u, names));
    format!("{}:{upper}", bound_text(&d.lower, names))
}

fn bound_text(b: &Bound, names: &Names) -> String {
    let bin = |op: &str, x: &Bound, y: &Bound| {
        format!("({} {op} {})", bound_text(x, names), bound_text(y, names))
    };
    let call = |fun: &str, x: &Bound, y: &Bound| {
        format!("{fun}({}, {})", bound_text(x, names), bound_text(y, names))
    };
    match b {
        Bound::Const(c) => c.to_string(),
        Bound::Var(v) => names.var(*v).to_string(),
        Bound::Neg(x) => format!("-{}", bound_text(x, names)),
        Bound::Add(x, y) => bin("+", x, y),
        Bound::Sub(x, y) => bin("-", x, y),
        Bound::Mul(x, y) => bin("*", x, y),
        Bound::Div(x, y) => bin("/", x, y),
        Bound::Max(x, y) => call("max", x, y),
        Bound::Min(x, y) => call("min", x, y),
    }
}

fn const_text(c: &Const) -> String {
    match c {
        Const::Float(x) => format!("{x:?}"),
        Const::Int(i) => i.to_string(),
        Const::Bool(b) => b.to_string(),
        Const::Char(c) => format!("'{}'", c.escape_ascii()),
    }
}

/// The mnemonic of a unary operation.
pub fn unary_name(op: UnaryOp) -> &'static str {
    match op {
        UnaryOp::Neg => "neg",
        UnaryOp::Abs => "abs",
        UnaryOp::Sqrt => "sqrt",
        UnaryOp::Exp => "exp",
        UnaryOp::Log => "log",
        UnaryOp::Log10 => "log10",
        UnaryOp::Sin => "sin",
        UnaryOp::Cos => "cos",
        UnaryOp::Tan => "tan",
        UnaryOp::Asin => "asin",
        UnaryOp::Acos => "acos",
        UnaryOp::Atan => "atan",
        UnaryOp::Sinh => "sinh",
        UnaryOp::Cosh => "cosh",
        UnaryOp::Tanh => "tanh",
        UnaryOp::Special(s) => s.name(),
        UnaryOp::Floor => "floor",
        UnaryOp::Ceil => "ceil",
        UnaryOp::Trunc => "trunc",
        UnaryOp::Round => "round",
        UnaryOp::Not => "not",
    }
}

/// The mnemonic of a binary operation.
pub fn binary_name(op: BinaryOp) -> &'static str {
    match op {
        BinaryOp::Add => "add",
        BinaryOp::Sub => "sub",
        BinaryOp::Mul => "mul",
        BinaryOp::Div => "div",
        BinaryOp::Pow => "pow",
        BinaryOp::PowI => "powi",
        BinaryOp::Min => "min",
        BinaryOp::Max => "max",
        BinaryOp::Atan2 => "atan2",
        BinaryOp::Sign => "sign",
        BinaryOp::Dim => "dim",
        BinaryOp::Mod => "mod",
        BinaryOp::Modulo => "modulo",
        BinaryOp::And => "and",
        BinaryOp::Or => "or",
        BinaryOp::Eqv => "eqv",
        BinaryOp::Neqv => "neqv",
    }
}

/// The mnemonic of a comparison.
pub fn cmp_name(op: CmpOp) -> &'static str {
    match op {
        CmpOp::Eq => "eq",
        CmpOp::Ne => "ne",
        CmpOp::Lt => "lt",
        CmpOp::Le => "le",
        CmpOp::Gt => "gt",
        CmpOp::Ge => "ge",
    }
}

/// The name of a runtime stack.
pub fn stack_name(stack: StackKind) -> &'static str {
    match stack {
        StackKind::Value => "value",
        StackKind::Integer => "integer",
        StackKind::Control => "control",
    }
}

fn rounding_name(r: Rounding) -> &'static str {
    match r {
        Rounding::Trunc => "trunc",
        Rounding::Nearest => "nearest",
        Rounding::Floor => "floor",
        Rounding::Ceil => "ceil",
    }
}

fn values_text(vs: &[Value]) -> String {
    let vs: Vec<String> = vs.iter().map(|v| v.to_string()).collect();
    vs.join(", ")
}

fn elem_text(var: VarId, index: &[Value], names: &Names) -> String {
    format!("{}({})", names.var(var), values_text(index))
}

fn char_ref_text(r: &CharRef, names: &Names) -> String {
    let mut s = match &r.base {
        CharBase::Var { var, index } if index.is_empty() => names.var(*var).to_string(),
        CharBase::Var { var, index } => elem_text(*var, index, names),
        CharBase::Literal(bytes) => {
            let escaped: String = bytes
                .escape_ascii()
                .to_string()
                .replace("\\'", "'")
                .replace('"', "\\\"");
            format!("\"{escaped}\"")
        }
    };
    if r.start.is_some() || r.end.is_some() {
        let part = |v: Option<Value>| v.map_or(String::new(), |v| v.to_string());
        write!(s, "[{}:{}]", part(r.start), part(r.end)).unwrap_or(());
    }
    s
}

fn type_suffix(ty: Option<Type>) -> &'static str {
    ty.map_or("?", Type::name)
}

fn inst_text(v: Value, inst: &Inst, ty: Option<Type>, names: &Names) -> String {
    let body = match inst {
        Inst::Const(c) => format!("const.{} {}", type_suffix(ty), const_text(c)),
        Inst::Load(var) => format!("load {}", names.var(*var)),
        Inst::Store(var, x) => return format!("store {}, {x}", names.var(*var)),
        Inst::LoadElem(var, idx) => format!("load {}", elem_text(*var, idx, names)),
        Inst::StoreElem(var, idx, x) => {
            return format!("store {}, {x}", elem_text(*var, idx, names))
        }
        Inst::Unary(UnaryOp::Special(crate::special::Special::Polygamma(n)), x) => {
            format!("polygamma({n}) {x}")
        }
        Inst::Unary(op, x) => format!("{} {x}", unary_name(*op)),
        Inst::Binary(op, a, b) => format!("{} {a}, {b}", binary_name(*op)),
        Inst::Cmp(op, a, b) => format!("{} {a}, {b}", cmp_name(*op)),
        Inst::Convert(x, r) => {
            let mut s = format!("convert.{} {x}", type_suffix(ty));
            if *r != Rounding::Trunc {
                write!(s, " {}", rounding_name(*r)).unwrap_or(());
            }
            s
        }
        Inst::Select(c, a, b) => format!("select {c}, {a}, {b}"),
        Inst::DimLower(var, d) => format!("dim_lower {}, {d}", names.var(*var)),
        Inst::DimExtent(var, d) => format!("dim_extent {}, {d}", names.var(*var)),
        Inst::Call(p, args) => {
            let args: Vec<String> = args
                .iter()
                .map(|a| match a {
                    CallArg::Var(var) => names.var(*var).to_string(),
                    CallArg::Elem(var, idx) => elem_text(*var, idx, names),
                    CallArg::Slice(var, idx, len) => {
                        format!("{}[..{len}]", elem_text(*var, idx, names))
                    }
                    CallArg::Value(x) => x.to_string(),
                })
                .collect();
            return format!("call {}({})", names.proc(*p), args.join(", "));
        }
        Inst::CharAssign(dst, src) => {
            return format!(
                "char_assign {}, {}",
                char_ref_text(dst, names),
                char_ref_text(src, names)
            )
        }
        Inst::CharCompare(op, a, b) => format!(
            "char_{} {}, {}",
            cmp_name(*op),
            char_ref_text(a, names),
            char_ref_text(b, names)
        ),
        Inst::CharIndex(a, b) => format!(
            "char_index {}, {}",
            char_ref_text(a, names),
            char_ref_text(b, names)
        ),
        Inst::CharSearch(op, back, a, b) => format!(
            "char_{}{} {}, {}",
            op.name(),
            if *back { "_back" } else { "" },
            char_ref_text(a, names),
            char_ref_text(b, names)
        ),
        Inst::CharLen(a) => format!("char_len {}", char_ref_text(a, names)),
        Inst::Io(io) => {
            return match io {
                IoOp::BeginWrite(None) => "io.begin_write *".to_string(),
                IoOp::BeginWrite(Some(f)) => {
                    format!("io.begin_write {:?}", String::from_utf8_lossy(f))
                }
                IoOp::Put(x) => format!("io.put {x}"),
                IoOp::PutChar(r) => format!("io.put_char {}", char_ref_text(r, names)),
                IoOp::EndWrite => "io.end_write".to_string(),
                IoOp::BeginRead => "io.begin_read".to_string(),
                IoOp::Get => format!("{v} = io.get.{}", type_suffix(ty)),
                IoOp::GetChar(r) => format!("io.get_char {}", char_ref_text(r, names)),
                IoOp::EndRead => "io.end_read".to_string(),
                IoOp::EndWriteTo(r) => format!("io.end_write_to {}", char_ref_text(r, names)),
                IoOp::BeginReadFrom(r, f) => format!(
                    "io.begin_read_from {}{}",
                    char_ref_text(r, names),
                    f.as_ref()
                        .map(|f| format!(" {:?}", String::from_utf8_lossy(f)))
                        .unwrap_or_else(|| " *".to_string())
                ),
                IoOp::CatchErrors => "io.catch_errors".to_string(),
                IoOp::JoinChars(true) => "io.begin_join".to_string(),
                IoOp::JoinChars(false) => "io.end_join".to_string(),
                IoOp::Status => format!("{v} = io.status"),
                IoOp::BeginKeep(n) => format!("io.begin_keep {:?}", String::from_utf8_lossy(n)),
                IoOp::BeginRestore(n) => {
                    format!("io.begin_restore {:?}", String::from_utf8_lossy(n))
                }
            }
        }
        Inst::Push(stack, x) => return format!("push.{} {x}", stack_name(*stack)),
        Inst::Allocate(var, bounds) => {
            let bounds: Vec<String> = bounds.iter().map(|(l, u)| format!("{l}:{u}")).collect();
            return format!("allocate {}({})", names.var(*var), bounds.join(", "));
        }
        Inst::Deallocate(var) => return format!("deallocate {}", names.var(*var)),
        Inst::Allocated(var) => format!("allocated {}", names.var(*var)),
        Inst::Pop(stack) => format!("pop.{}.{}", stack_name(*stack), type_suffix(ty)),
    };
    format!("{v} = {body}")
}

fn term_text(term: &Terminator) -> String {
    match term {
        Terminator::Jump(b) => format!("jump {b}"),
        Terminator::Branch {
            cond,
            then_dest,
            else_dest,
        } => format!("br {cond}, {then_dest}, {else_dest}"),
        Terminator::Switch {
            value,
            cases,
            default,
        } => {
            let cases: Vec<String> = cases.iter().map(|(k, b)| format!("{k}: {b}")).collect();
            format!("switch {value} [{}] default {default}", cases.join(", "))
        }
        Terminator::Return => "return".to_string(),
        Terminator::Fail(kind) => format!("fail {kind}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::ProcBuilder;
    use crate::ir::{RuntimeErrorKind, Span};

    fn line(n: u32) -> Span {
        Span {
            file: 0,
            line: n,
            col: 1,
        }
    }

    #[test]
    fn prints_a_loop_like_the_papers() {
        let mut module = Module::default();
        let mut proc = Proc::new("f");
        let mut b = ProcBuilder::new(&mut proc);
        let n = b.param("n", Type::I32, Vec::new());
        let a = b.param("a", Type::F64, vec![ProcBuilder::var_dim(n)]);
        let s = b.param("s", Type::Char, Vec::new());
        let i = b.local("i", Type::I32);
        let body = b.create_block();
        let exit = b.create_block();
        b.set_span(line(3));
        let one = b.iconst(Type::I32, 1);
        b.store(i, one);
        b.jump(body);
        b.switch_to_block(body);
        b.set_span(line(4));
        let vi = b.load(i);
        let x = b.load_elem(a, vec![vi]);
        let y = b.unary(UnaryOp::Sin, x);
        b.store_elem(a, vec![vi], y);
        b.set_span(line(5));
        let vn = b.load(n);
        let c = b.cmp(CmpOp::Lt, vi, vn);
        b.branch(c, body, exit);
        b.switch_to_block(exit);
        b.char_assign(
            CharRef {
                base: CharBase::Var {
                    var: s,
                    index: Vec::new(),
                },
                start: Some(one),
                end: None,
            },
            CharRef {
                base: CharBase::Literal(b"it's".to_vec()),
                start: None,
                end: None,
            },
        );
        let k = b.convert(vi, Type::I64, Rounding::Trunc);
        b.switch(k, vec![(1, body), (2, exit)], exit);
        module.add_proc(proc);
        let mut p2 = Proc::new("g");
        let mut b = ProcBuilder::new(&mut p2);
        b.fail(RuntimeErrorKind::Stop(Some("1".into())));
        module.add_proc(p2);
        let expected = "\
proc f(n: i32, a: f64(1:n), s: char*(*))
  var i: i32
bb0:
  ; line 3
  v0 = const.i32 1
  store i, v0
  jump bb1
bb1:
  ; line 4
  v2 = load i
  v3 = load a(v2)
  v4 = sin v3
  store a(v2), v4
  ; line 5
  v6 = load n
  v7 = lt v2, v6
  br v7, bb1, bb2
bb2:
  ; line 5
  char_assign s[v0:], \"it's\"
  v9 = convert.i64 v2
  switch v9 [1: bb1, 2: bb2] default bb2

proc g()
bb0:
  fail STOP 1
";
        assert_eq!(module.to_string(), expected);
        assert_eq!(
            print_proc(&module, ProcId(1)),
            "proc g()\nbb0:\n  fail STOP 1\n"
        );
    }

    #[test]
    fn duplicate_names_are_disambiguated() {
        let mut module = Module::default();
        let mut proc = Proc::new("h");
        let mut b = ProcBuilder::new(&mut proc);
        let t1 = b.local("t", Type::F64);
        let t2 = b.local("t", Type::F64);
        let x = b.load(t1);
        b.store(t2, x);
        let id = module.add_proc(proc);
        let text = print_proc(&module, id);
        assert!(text.contains("v0 = load t%0\n  store t%1, v0\n"), "{text}");
    }
}
