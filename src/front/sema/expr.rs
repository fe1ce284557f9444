//! Lowering of scalar expressions: literals, variables, array elements,
//! operators with Fortran's mixed-mode rules, function references and
//! statement functions.
//!
//! Whole-array expressions are [`super::array`]'s, intrinsics
//! [`super::intrinsics`]'s.

use super::super::ast::Intent;
use super::super::ast::{Arg, ArgValue, BinOp, Expr, ExprKind, KindParam, Name, UnOp};
use super::super::diag::literal_bytes;
use super::consts::{int_kind, promote, real_kind, real_literal, type_name, ConstVal};
use super::lowerer::{Lowerer, Operand, Reported, Resolved, R};
use super::scope::StmtFn;
use super::{Dummy, Sig, Target};
use adjit_ir::{
    BinaryOp, CallArg, CharBase, CharRef, CmpOp, Const, Inst, Type, UnaryOp, Value, VarId,
};
use std::collections::HashMap;

/// What a generic interface matches an actual argument by: `None` for a
/// procedure, else its derived type or its type and rank.
type ActualKind = Option<(Option<String>, Option<(Type, usize)>)>;

impl Lowerer<'_, '_> {
    /// Lowers an expression.
    pub fn expr(&mut self, e: &Expr) -> R<Operand> {
        if let Some(&v) = self.hoisted.get(e) {
            let ty = self.proc.var(v).ty;
            return Ok(Operand::Num(self.val(Inst::Load(v), ty), ty));
        }
        match &e.kind {
            ExprKind::Int { value, kind } => {
                let ty = match kind {
                    None => Type::I32,
                    Some(k) => {
                        let k = self.kind_param(e, k)?;
                        int_kind(k).ok_or_else(|| {
                            self.err(e.span, format!("unsupported INTEGER kind {k}"))
                        })?
                    }
                };
                Ok(Operand::Num(self.int(*value, ty), ty))
            }
            ExprKind::Real { text, double, kind } => {
                let ty = match kind {
                    Some(k) => {
                        let k = self.kind_param(e, k)?;
                        real_kind(k)
                            .ok_or_else(|| self.err(e.span, format!("unsupported REAL kind {k}")))?
                    }
                    None if *double => Type::F64,
                    None => Type::F32,
                };
                let v = real_literal(text, ty)
                    .ok_or_else(|| self.err(e.span, "malformed real literal"))?;
                Ok(Operand::Num(self.konst(Const::Float(v), ty), ty))
            }
            ExprKind::Logical(b) => Ok(Operand::Num(
                self.konst(Const::Bool(*b), Type::Bool),
                Type::Bool,
            )),
            ExprKind::Str(s) => Ok(Operand::Char(CharRef {
                base: CharBase::Literal(literal_bytes(s)),
                start: None,
                end: None,
            })),
            ExprKind::Name(n) => self.name_value(n),
            ExprKind::Apply { name, args } => self.apply(e, name, args),
            ExprKind::Substring { base, start, end } => {
                let Operand::Char(mut r) = self.expr(base)? else {
                    return Err(self.err(e.span, "substring of a non-character value"));
                };
                if r.start.is_some() {
                    return Err(self.err(e.span, "substring of a substring"));
                }
                r.start = start.as_ref().map(|s| self.index_value(s)).transpose()?;
                r.end = end.as_ref().map(|s| self.index_value(s)).transpose()?;
                Ok(Operand::Char(r))
            }
            ExprKind::Paren(x) => self.expr(x),
            ExprKind::Unary(op, x) => {
                let (v, t) = self.num(x)?;
                match op {
                    UnOp::Plus if t != Type::Bool => Ok(Operand::Num(v, t)),
                    UnOp::Neg if t != Type::Bool => {
                        if let Some(c) = self.const_of(v) {
                            let neg = match c {
                                Const::Int(i) => Const::Int(i.wrapping_neg()),
                                Const::Float(f) => Const::Float(-f),
                                other => other,
                            };
                            return Ok(Operand::Num(self.konst(neg, t), t));
                        }
                        Ok(Operand::Num(self.val(Inst::Unary(UnaryOp::Neg, v), t), t))
                    }
                    UnOp::Not if t == Type::Bool => {
                        Ok(Operand::Num(self.val(Inst::Unary(UnaryOp::Not, v), t), t))
                    }
                    _ => Err(self.err(
                        e.span,
                        format!(
                            "invalid operand of type {} for a unary operator",
                            type_name(t)
                        ),
                    )),
                }
            }
            ExprKind::Binary(op, a, b) => self.binary(e, *op, a, b),
            ExprKind::ArrayConstructor(items) => match self.elem.clone() {
                Some(pos) if pos.len() == 1 => self.constructor_element(e, items, pos[0]),
                _ => Err(self.err(e.span, "unsupported Fortran: array constructor")),
            },
            ExprKind::ImpliedDo { .. } => {
                Err(self.err(e.span, "unsupported Fortran: implied DO outside DATA"))
            }
            ExprKind::CharArrayConstructor { .. } => Err(self.err(
                e.span,
                "unsupported Fortran: a `[character(len=n) :: ...]` constructor anywhere but assigned to an array of deferred-length strings or given as an actual argument",
            )),
        }
    }

    fn kind_param(&mut self, e: &Expr, k: &KindParam) -> R<i64> {
        match k {
            KindParam::Int(v) => Ok(*v),
            KindParam::Name(n) => match self.resolve(n)? {
                Resolved::Const(ConstVal::Int(v, _)) => Ok(v),
                _ => Err(self.err(
                    e.span,
                    format!("kind `{}` is not an integer constant", n.text),
                )),
            },
        }
    }

    /// A numeric or logical expression.
    pub fn num(&mut self, e: &Expr) -> R<(Value, Type)> {
        match self.expr(e)? {
            Operand::Num(v, t) => Ok((v, t)),
            Operand::Char(_) => Err(self.err(e.span, "character value where a number is expected")),
        }
    }

    /// A logical expression.
    pub fn logical(&mut self, e: &Expr) -> R<Value> {
        let (v, t) = self.num(e)?;
        if t != Type::Bool {
            return Err(self.err(
                e.span,
                format!("expected a logical expression, found {}", type_name(t)),
            ));
        }
        Ok(v)
    }

    /// An integer expression (any width).
    pub fn integer(&mut self, e: &Expr) -> R<(Value, Type)> {
        let (v, t) = self.num(e)?;
        if !t.is_int() {
            return Err(self.err(
                e.span,
                format!("expected an integer expression, found {}", type_name(t)),
            ));
        }
        Ok((v, t))
    }

    /// A subscript or substring bound: an integer value.
    pub fn index_value(&mut self, e: &Expr) -> R<Value> {
        Ok(self.integer(e)?.0)
    }

    /// An expression converted to a type (numeric conversion as in
    /// assignment).
    pub fn num_as(&mut self, e: &Expr, to: Type) -> R<Value> {
        let (v, t) = self.num(e)?;
        self.coerce(v, t, to, e)
    }

    /// Converts a value to a type, reporting logical/numeric mismatches.
    pub fn coerce(&mut self, v: Value, t: Type, to: Type, e: &Expr) -> R<Value> {
        if (t == Type::Bool) != (to == Type::Bool) || to == Type::Char {
            return Err(self.err(
                e.span,
                format!("cannot convert {} to {}", type_name(t), type_name(to)),
            ));
        }
        Ok(self.convert(v, t, to))
    }

    fn name_value(&mut self, n: &Name) -> R<Operand> {
        match self.resolve(n)? {
            Resolved::Value(v, t) => Ok(Operand::Num(v, t)),
            Resolved::Const(c) => self.const_operand(&c),
            Resolved::Var(v) => self.var_value(v, n),
            Resolved::Unknown | Resolved::Proc(_) => {
                // A name used as a variable is a variable, even when a
                // procedure elsewhere has the same name.
                let v = self.implicit_var(n)?;
                self.var_value(v, n)
            }
            Resolved::StmtFunc(_) | Resolved::Generic(_) | Resolved::Dummy(_) => {
                Err(self.err(n.span, format!("procedure `{}` used as a variable", n.text)))
            }
            Resolved::Struct(_) => Err(self.err(
                n.span,
                format!(
                    "derived-type variable `{}` used as a value (only whole-structure assignment and actual arguments take structures)",
                    n.text
                ),
            )),
        }
    }

    /// A constant as an operand.
    pub fn const_operand(&mut self, c: &ConstVal) -> R<Operand> {
        Ok(match c {
            ConstVal::Str(s) => Operand::Char(CharRef {
                base: CharBase::Literal(literal_bytes(s)),
                start: None,
                end: None,
            }),
            other => {
                let t = other.ty();
                let k = other.to_ir().expect("numeric constant");
                Operand::Num(self.konst(k, t), t)
            }
        })
    }

    /// The value of a whole variable (an element when inside an array
    /// expression).
    fn var_value(&mut self, v: VarId, n: &Name) -> R<Operand> {
        let var = self.proc.var(v).clone();
        if var.is_array() {
            let Some(pos) = self.elem.clone() else {
                return Err(self.err(
                    n.span,
                    format!("array `{}` used where a scalar is expected", n.text),
                ));
            };
            let idx = self.whole_array_index(v, &pos, n.span)?;
            return Ok(self.element_value(v, idx));
        }
        if var.ty == Type::Char {
            return Ok(Operand::Char(CharRef {
                base: CharBase::Var {
                    var: v,
                    index: Vec::new(),
                },
                start: None,
                end: None,
            }));
        }
        Ok(Operand::Num(self.val(Inst::Load(v), var.ty), var.ty))
    }

    /// Loads one array element (or references it, for characters).
    pub fn element_value(&mut self, v: VarId, idx: Vec<Value>) -> Operand {
        let ty = self.proc.var(v).ty;
        if ty == Type::Char {
            return Operand::Char(CharRef {
                base: CharBase::Var { var: v, index: idx },
                start: None,
                end: None,
            });
        }
        Operand::Num(self.val(Inst::LoadElem(v, idx), ty), ty)
    }

    /// Scalar subscripts of an array element.
    pub fn subscripts(&mut self, v: VarId, args: &[Arg], name: &Name) -> R<Vec<Value>> {
        let rank = self.proc.var(v).dims.len();
        if args.len() != rank {
            return Err(self.err(
                name.span,
                format!(
                    "`{}` has {rank} dimension(s) but {} subscript(s) are given{}",
                    name.text,
                    args.len(),
                    if name.text.contains('%') {
                        " (unsupported Fortran: a subscripted array component of a whole array of structures, `a%v(1)`, or an unsubscripted one of an element, `a(i)%v`)"
                    } else {
                        ""
                    }
                ),
            ));
        }
        let mut idx = Vec::new();
        let mut failed = false;
        for a in args {
            match &a.value {
                ArgValue::Expr(e) => match self.index_value(e) {
                    Ok(v) => idx.push(v),
                    Err(Reported) => failed = true,
                },
                ArgValue::Range { .. } => {
                    return Err(self.err(
                        name.span,
                        format!(
                            "array section of `{}` used where a scalar is expected",
                            name.text
                        ),
                    ))
                }
            }
        }
        if failed {
            return Err(Reported);
        }
        Ok(idx)
    }

    fn apply(&mut self, e: &Expr, name: &Name, args: &[Arg]) -> R<Operand> {
        if let Some(p) = self.typed_function(name)? {
            return self.function_operand(p, name, args);
        }
        let is_array = self.is_array_name(&name.text);
        let resolved = self.resolve(name)?;
        match resolved {
            Resolved::Var(v) if is_array => {
                if args.iter().any(|a| self.is_section_subscript(a)) {
                    let Some(pos) = self.elem.clone() else {
                        return Err(self.err(
                            e.span,
                            format!(
                                "array section of `{}` used where a scalar is expected",
                                name.text
                            ),
                        ));
                    };
                    let idx = self.section_index(v, args, &pos, name)?;
                    return Ok(self.element_value(v, idx));
                }
                let idx = self.subscripts(v, args, name)?;
                Ok(self.element_value(v, idx))
            }
            Resolved::Var(v) if self.proc.var(v).ty == Type::Char => {
                let [Arg {
                    value:
                        ArgValue::Range {
                            lo,
                            hi,
                            stride: None,
                        },
                    ..
                }] = args
                else {
                    return Err(self.err(e.span, format!("`{}` is not an array", name.text)));
                };
                let start = lo.as_ref().map(|x| self.index_value(x)).transpose()?;
                let end = hi.as_ref().map(|x| self.index_value(x)).transpose()?;
                Ok(Operand::Char(CharRef {
                    base: CharBase::Var {
                        var: v,
                        index: Vec::new(),
                    },
                    start,
                    end,
                }))
            }
            Resolved::StmtFunc(f) => self.inline_stmt_fn(f, name, args),
            Resolved::Generic(specifics) => {
                let p = self.specific(name, specifics, args)?;
                self.function_operand(p, name, args)
            }
            Resolved::Struct(_) => Err(self.err(
                e.span,
                format!(
                    "`{}` is a derived-type variable, not an array or function",
                    name.text
                ),
            )),
            Resolved::Proc(p) if !self.shadows_proc(name) => self.function_operand(p, name, args),
            Resolved::Dummy(target) => self.dummy_function(e, name, args, target),
            Resolved::Value(..) | Resolved::Const(_) => Err(self.err(
                e.span,
                format!("`{}` is not an array or function", name.text),
            )),
            _ => {
                if name.text == "present" && !self.declared_external(&name.text) {
                    return self.present(e, args);
                }
                if self.find_type(&name.text).is_some() {
                    return Err(self.err(
                        e.span,
                        format!(
                            "structure constructor `{}(...)` is supported only as the whole right-hand side of an assignment",
                            name.text
                        ),
                    ));
                }
                if self.is_intrinsic_name(&name.text) && !self.declared_external(&name.text) {
                    return self.intrinsic(e, name, args);
                }
                if self.declared_external(&name.text) {
                    return Err(self.err(name.span, format!("unknown procedure `{}`", name.text)));
                }
                if let Resolved::Var(_) = resolved {
                    return Err(self.err_declared(
                        name.span,
                        format!("`{}` is not an array", name.text),
                        &name.text,
                    ));
                }
                if super::intrinsics::is_unsupported_intrinsic(&name.text) {
                    return Err(self.err(
                        name.span,
                        format!(
                            "unsupported Fortran: intrinsic {}",
                            name.text.to_uppercase()
                        ),
                    ));
                }
                Err(self.err(
                    name.span,
                    format!("unknown function or array `{}`", name.text),
                ))
            }
        }
    }

    /// True when the name is the current function's own result variable
    /// (a reference `f(x)` inside `f` would be recursion).
    pub(super) fn shadows_proc(&self, name: &Name) -> bool {
        self.vars
            .get(&name.text)
            .is_some_and(|&v| self.proc.result == Some(v))
    }

    /// The procedure a name typed in a declaration but not declared
    /// EXTERNAL stands for when it is referenced with arguments
    /// (`double precision enorm` then `enorm(n, x)`): a scalar local of this
    /// unit that is no dummy, result, COMMON member or initialised
    /// variable, named like a procedure of the program (in any file). Its
    /// declared type must be the function's.
    fn typed_function(&mut self, name: &Name) -> R<Option<usize>> {
        let Some(super::scope::Sym::Var(d)) = self.u().scope.syms.get(&name.text) else {
            return Ok(None);
        };
        let Some(ti) = &d.ty else { return Ok(None) };
        let plain_local = d.dims.is_none()
            && d.arg.is_none()
            && d.global.is_none()
            && d.init.is_none()
            && !d.save
            && ti.ty != Type::Char;
        if !plain_local || self.shadows_proc(name) || self.u().ast.name.text == name.text {
            return Ok(None);
        }
        let Some(p) = self.prog.find_proc(self.unit, &name.text) else {
            return Ok(None);
        };
        let declared = ti.ty;
        match self.prog.sigs[p].result {
            Some(rt) if rt != declared => Err(self.err(
                name.span,
                format!(
                    "`{}` is declared {} here but the function returns {}",
                    name.text,
                    type_name(declared),
                    type_name(rt)
                ),
            )),
            _ => Ok(Some(p)),
        }
    }

    /// PRESENT(x) of an OPTIONAL dummy: its presence flag.
    fn present(&mut self, e: &Expr, args: &[Arg]) -> R<Operand> {
        if let [Arg {
            keyword: None,
            value:
                ArgValue::Expr(Expr {
                    kind: ExprKind::Name(n),
                    ..
                }),
        }] = args
        {
            if let Some(p) = self.present_procedure(n) {
                return Ok(p);
            }
            let flag = super::present_flag(&n.text);
            if let Some(&v) = self.vars.get(&flag) {
                return Ok(Operand::Num(
                    self.val(Inst::Load(v), Type::Bool),
                    Type::Bool,
                ));
            }
        }
        Err(self.err(
            e.span,
            "PRESENT takes one OPTIONAL dummy argument of this procedure",
        ))
    }

    /// True when the name was declared EXTERNAL.
    pub fn declared_external(&self, name: &str) -> bool {
        matches!(
            self.u().scope.syms.get(name),
            Some(super::scope::Sym::External(_))
        )
    }

    fn binary(&mut self, e: &Expr, op: BinOp, a: &Expr, b: &Expr) -> R<Operand> {
        if op == BinOp::Concat {
            return self.concat_value(e, false);
        }
        let relational = matches!(
            op,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        );
        let cmp = match op {
            BinOp::Eq => CmpOp::Eq,
            BinOp::Ne => CmpOp::Ne,
            BinOp::Lt => CmpOp::Lt,
            BinOp::Le => CmpOp::Le,
            BinOp::Gt => CmpOp::Gt,
            _ => CmpOp::Ge,
        };
        if relational && (self.is_built_char(a) || self.is_built_char(b)) {
            return self.compare_built(cmp, a, b);
        }
        let (lhs, rhs) = if relational {
            (self.char_unpadded(a), self.char_unpadded(b))
        } else {
            (self.expr(a), self.expr(b))
        };
        let (lhs, rhs) = (lhs?, rhs?);
        let (x, tx, y, ty) = match (lhs, rhs) {
            (Operand::Char(l), Operand::Char(r)) if relational => {
                return Ok(Operand::Num(
                    self.val(Inst::CharCompare(cmp, l, r), Type::Bool),
                    Type::Bool,
                ));
            }
            (Operand::Num(x, tx), Operand::Num(y, ty)) => (x, tx, y, ty),
            _ if op == BinOp::Concat => {
                return Err(self.err(
                    e.span,
                    "unsupported Fortran: character concatenation (//) in this context",
                ))
            }
            _ => return Err(self.err(e.span, "character and numeric operands mixed")),
        };
        let logical = matches!(op, BinOp::And | BinOp::Or | BinOp::Eqv | BinOp::Neqv);
        if logical || (relational && tx == Type::Bool && ty == Type::Bool) {
            if tx != Type::Bool || ty != Type::Bool {
                return Err(self.err(e.span, "logical operator applied to non-logical operands"));
            }
            let bop = match op {
                BinOp::And => BinaryOp::And,
                BinOp::Or => BinaryOp::Or,
                BinOp::Eqv | BinOp::Eq => BinaryOp::Eqv,
                BinOp::Neqv | BinOp::Ne => BinaryOp::Neqv,
                _ => return Err(self.err(e.span, "logical values cannot be ordered")),
            };
            return Ok(Operand::Num(
                self.val(Inst::Binary(bop, x, y), Type::Bool),
                Type::Bool,
            ));
        }
        if tx == Type::Bool || ty == Type::Bool {
            return Err(self.err(e.span, "arithmetic on logical values"));
        }
        if relational {
            let t = promote(tx, ty);
            let (x, y) = (self.convert(x, tx, t), self.convert(y, ty, t));
            return Ok(Operand::Num(
                self.val(Inst::Cmp(cmp, x, y), Type::Bool),
                Type::Bool,
            ));
        }
        let (v, t) = match op {
            BinOp::Pow => self.power(x, tx, y, ty),
            BinOp::Add => self.arith(BinaryOp::Add, x, tx, y, ty),
            BinOp::Sub => self.arith(BinaryOp::Sub, x, tx, y, ty),
            BinOp::Mul => self.arith(BinaryOp::Mul, x, tx, y, ty),
            BinOp::Div => self.arith(BinaryOp::Div, x, tx, y, ty),
            _ => {
                return Err(self.err(
                    e.span,
                    "unsupported Fortran: character concatenation (//) in this context",
                ))
            }
        };
        Ok(Operand::Num(v, t))
    }

    /// A binary arithmetic operation after mixed-mode promotion.
    pub fn arith(&mut self, op: BinaryOp, x: Value, tx: Type, y: Value, ty: Type) -> (Value, Type) {
        let t = promote(tx, ty);
        let (x, y) = (self.convert(x, tx, t), self.convert(y, ty, t));
        (self.val(Inst::Binary(op, x, y), t), t)
    }

    /// `x ** y`: small constant integer exponents become products.
    fn power(&mut self, x: Value, tx: Type, y: Value, ty: Type) -> (Value, Type) {
        if ty.is_int() && tx.is_float() {
            if let Some(Const::Int(n)) = self.const_of(y) {
                if (1..=4).contains(&n) {
                    let mut acc = x;
                    for _ in 1..n {
                        acc = self.val(Inst::Binary(BinaryOp::Mul, acc, x), tx);
                    }
                    return (acc, tx);
                }
            }
            return (self.val(Inst::Binary(BinaryOp::PowI, x, y), tx), tx);
        }
        if tx.is_int() && ty.is_int() {
            if let Some(Const::Int(2)) = self.const_of(y) {
                return (self.val(Inst::Binary(BinaryOp::Mul, x, x), tx), tx);
            }
        }
        self.arith(BinaryOp::Pow, x, tx, y, ty)
    }

    fn inline_stmt_fn(&mut self, f: &StmtFn, name: &Name, args: &[Arg]) -> R<Operand> {
        if args.len() != f.args.len() {
            return Err(self.err(
                name.span,
                format!(
                    "statement function `{}` takes {} argument(s), {} given",
                    name.text,
                    f.args.len(),
                    args.len()
                ),
            ));
        }
        if self.inline.len() > 32 {
            return Err(self.err(name.span, "statement functions nested too deeply"));
        }
        let scope = &self.prog.units[self.unit].scope;
        let mut frame = HashMap::new();
        for (a, dummy) in args.iter().zip(&f.args) {
            let ArgValue::Expr(x) = &a.value else {
                return Err(self.err(name.span, "a range is not a statement function argument"));
            };
            let Some(ti) = scope.var_type(dummy) else {
                return Err(self.err(
                    f.span,
                    format!("statement function dummy `{dummy}` has no type"),
                ));
            };
            let v = self.num_as(x, ti.ty)?;
            frame.insert(dummy.clone(), (v, ti.ty));
        }
        let Some(rt) = f.ty.clone().or_else(|| scope.implicit_type(&name.text)) else {
            return Err(self.err(
                f.span,
                format!("statement function `{}` has no type", name.text),
            ));
        };
        self.inline.push(frame);
        let body = self.num(&f.body);
        self.inline.pop();
        let (v, t) = body?;
        let v = self.coerce(v, t, rt.ty, &f.body)?;
        Ok(Operand::Num(v, rt.ty))
    }

    /// A function reference of any result type: a CHARACTER result is
    /// the temporary of its length the call fills.
    fn function_operand(&mut self, unit: usize, name: &Name, args: &[Arg]) -> R<Operand> {
        if self.prog.sigs[unit].result != Some(Type::Char) {
            let (v, t) = self.call_function(unit, name, args)?;
            return Ok(Operand::Num(v, t));
        }
        let Some(len) = self.prog.sigs[unit].result_len else {
            return Err(self.err(
                name.span,
                format!("unsupported Fortran: character function `{}` whose result length is not a constant used here (supported in assignments, comparisons, SELECT CASE selectors, `//`, actual arguments, PRINT, LEN, TRIM and LEN_TRIM)", name.text),
            ));
        };
        let (mut call_args, callee, copies) = self.call_args_copied(unit, name, args)?;
        let tmp = self.char_temp(len);
        call_args.push(CallArg::Var(tmp));
        if let Some(callee) = callee {
            self.emit(Inst::Call(callee, call_args), None);
        }
        self.copy_back_after(copies)?;
        Ok(Operand::Char(whole_char(tmp)))
    }

    /// A function reference: call with a fresh result temporary, then load.
    pub fn call_function(&mut self, unit: usize, name: &Name, args: &[Arg]) -> R<(Value, Type)> {
        let Some(rt) = self.prog.sigs[unit].result else {
            if self.prog.sigs[unit].array_result.is_some() {
                return Err(self.err(
                    name.span,
                    format!(
                        "unsupported Fortran: array-valued function `{}` other than as the whole right-hand side of an array assignment (`y = {}(...)`)",
                        name.text, name.text
                    ),
                ));
            }
            if self.prog.sigs[unit].struct_result.is_some() {
                return Err(self.err(
                    name.span,
                    format!(
                        "function `{}` returns a structure: assign it whole (`p = {}(...)`) or pass it as an actual argument",
                        name.text, name.text
                    ),
                ));
            }
            return Err(self.err(
                name.span,
                format!("subroutine `{}` used as a function", name.text),
            ));
        };
        if rt == Type::Char {
            return Err(self.err(
                name.span,
                format!(
                    "unsupported Fortran: character function `{}` passed as an actual argument",
                    name.text
                ),
            ));
        }
        let (mut call_args, callee, copies) = self.call_args_copied(unit, name, args)?;
        let tmp = self.temp("r", rt);
        call_args.push(CallArg::Var(tmp));
        if let Some(callee) = callee {
            self.emit(Inst::Call(callee, call_args), None);
        }
        self.copy_back_after(copies)?;
        Ok((self.val(Inst::Load(tmp), rt), rt))
    }

    /// A reference `f(x)` to a dummy function `f`: a call of the function
    /// bound to it (whose result type must be the one `f` is declared
    /// with), or the intrinsic bound to it.
    fn dummy_function(
        &mut self,
        e: &Expr,
        name: &Name,
        args: &[Arg],
        target: Target,
    ) -> R<Operand> {
        let declared = self
            .dummy_scope(&name.text)
            .proc_types
            .get(&name.text)
            .cloned()
            .or_else(|| self.dummy_scope(&name.text).implicit_type(&name.text));
        let (unit, what) = match target.clone() {
            Target::Proc(i) => {
                let inst = &self.prog.instances.borrow()[i];
                (inst.unit, inst.name.clone())
            }
            // Called like the procedure itself: the call binds its dummies.
            Target::Template(u, _) => (u, self.prog.units[u].ir_name.clone()),
            Target::Intrinsic(n) => {
                let real = Name {
                    text: n,
                    span: name.span,
                };
                return self.intrinsic(e, &real, args);
            }
            Target::Unbound | Target::Absent => {
                // A template lowered for its diagnostics (no call to make),
                // or an absent OPTIONAL dummy procedure.
                if target == Target::Absent {
                    self.absent_procedure(name);
                }
                if let Some(d) = declared.as_ref().filter(|d| d.ty == Type::Char) {
                    let len = match d.char_len {
                        super::scope::CharLenInfo::Const(n) => n,
                        _ => 1,
                    };
                    return Ok(Operand::Char(whole_char(self.char_temp(len))));
                }
                let ty = declared.map_or(Type::F64, |d| d.ty);
                let zero = self.konst(super::lowerer::zero_const(ty), ty);
                return Ok(Operand::Num(zero, ty));
            }
        };
        let result = self.prog.sigs[unit].result;
        if let (Some(d), Some(rt)) = (&declared, result) {
            if d.ty != rt {
                return Err(self.err(
                    name.span,
                    format!(
                        "dummy function `{}` is {} here but `{what}`, passed for it, returns {}",
                        name.text,
                        type_name(d.ty),
                        type_name(rt)
                    ),
                ));
            }
        }
        if matches!(target, Target::Proc(_) | Target::Template(..)) {
            self.via_slot = self
                .u()
                .dummy_procs
                .iter()
                .position(|d| d.text == name.text);
        }
        let called = self.function_operand(unit, name, args);
        self.via_slot = None;
        called
    }

    /// The actual arguments of a call (declared ones with structures
    /// expanded to their components, presence flags of OPTIONAL dummies,
    /// then host variables; not the function result), checked against the
    /// callee, and the instance called. Keyword arguments are matched to
    /// the dummies by name; an absent OPTIONAL dummy gets a scratch
    /// variable and a false flag. Procedures passed for the callee's dummy
    /// procedures select the instance (`None` when one of them is unbound,
    /// in a template lowered for its diagnostics).
    pub fn call_args(
        &mut self,
        unit: usize,
        name: &Name,
        args: &[Arg],
    ) -> R<(Vec<CallArg>, Option<adjit_ir::ProcId>)> {
        let via = self.via_slot.take();
        let sig = self.prog.sigs[unit].clone();
        let slots = match self.match_args(&sig, args) {
            Ok(slots) => slots,
            Err(msg) => return Err(self.err(name.span, msg.replace("{}", &name.text))),
        };
        let explicit =
            self.prog.units[unit].module.is_some() || self.prog.units[unit].host.is_some();
        let width = sig
            .dummies
            .iter()
            .flat_map(Dummy::all_params)
            .map(|i| i + 1)
            .max()
            .unwrap_or(0);
        let mut out: Vec<Option<CallArg>> = vec![None; width];
        let prog = self.prog;
        let dummy_procs = &prog.units[unit].dummy_procs;
        let mut binding = Vec::new();
        // The name each procedure in `binding` was passed as.
        let mut passed = Vec::new();
        let mut failed = false;
        for (i, (d, slot)) in sig.dummies.iter().zip(&slots).enumerate() {
            let formal = dummy_procs.iter().find(|p| p.text == d.name);
            let r = match (formal, slot) {
                (Some(formal), Some(a)) => self.procedure_arg(a, formal, name).and_then(|t| {
                    let iface = prog.units[unit].scope.proc_interfaces.get(&formal.text);
                    match iface.and_then(|i| prog.interface_mismatch(i, &t)) {
                        Some(m) => Err(self.err(
                            arg_span(a).unwrap_or(name.span),
                            format!(
                                "the procedure passed for `{}` of `{}` does not match its interface: {m}",
                                formal.text, name.text
                            ),
                        )),
                        None => {
                            binding.push(t);
                            passed.push(super::closure::arg_name(a).map(|n| n.text.clone()));
                            Ok(())
                        }
                    }
                }),
                (Some(formal), None)
                    if prog.units[unit].scope.optional_procs.contains(&formal.text) =>
                {
                    binding.push(Target::Absent);
                    passed.push(None);
                    Ok(())
                }
                (Some(formal), None) => Err(self.err(
                    name.span,
                    format!(
                        "dummy procedure `{}` of `{}` is not given",
                        formal.text, name.text
                    ),
                )),
                (None, Some(a)) => {
                    let assumed_shape =
                        super::section_arg::is_assumed_shape_dummy(prog, unit, &d.name);
                    let how = (explicit, assumed_shape);
                    self.check_vector_actual(unit, &d.name, a)
                        .and_then(|()| self.present_actual(&sig, d, a, i, name, how, &mut out))
                }
                (None, None) => self.absent_actual(&sig, d, name, &mut out),
            };
            failed |= r.is_err();
        }
        if failed {
            return Err(Reported);
        }
        let mut out: Vec<CallArg> = out.into_iter().flatten().collect();
        // A call through a dummy procedure bound to a nested subprogram:
        // its environment came with it.
        if let (Some(k), Some(i)) = (via, self.inst) {
            let target = self.prog.instances.borrow()[i].binding.get(k).cloned();
            if let Some(Target::Proc(j)) = target {
                if prog.units[unit].own_dummies == 0 {
                    // Its host variables, its persistent arrays (this
                    // procedure's own), the environments it captured.
                    let mut group = self.env.get(k).cloned().unwrap_or_default();
                    let hosts = prog.units[unit].host_vars.len().min(group.len());
                    let persistent = self.persistent_alloc_args(unit, name.span)?;
                    group.splice(hosts..hosts, persistent);
                    out.extend(group.into_iter().map(CallArg::Var));
                    return Ok((out, Some(adjit_ir::ProcId(j as u32))));
                }
            }
        }
        // A call through a dummy procedure bound to a nested subprogram
        // with dummy procedures: its host variables came with it, then the
        // environments of its hosts' dummy procedures it calls, bound
        // where it was named (`captured`).
        let mut hosts_env = None;
        let mut captured = None;
        if let (Some(k), Some(i)) = (via, self.inst) {
            let target = self.prog.instances.borrow()[i].binding.get(k).cloned();
            if let Some(Target::Template(_, bound)) = target {
                if prog.units[unit].host.is_some() {
                    let mut group = self.env.get(k).cloned().unwrap_or_default();
                    let hosts = prog.units[unit].host_vars.len().min(group.len());
                    captured = Some((group.split_off(hosts), bound));
                    hosts_env = Some(group);
                }
            }
        }
        // The host variables are the callee's host's: a caller below that
        // host whose scope, or a scope in between, declares one of their
        // names (a variable, an EXTERNAL) cannot pass them.
        if let Some(group) = hosts_env {
            out.extend(group.into_iter().map(CallArg::Var));
        } else if let Some(h) = prog.units[unit].host {
            let hides = |hv: &str| {
                let mut u = self.unit;
                while u != h {
                    if prog.units[u].scope.syms.contains_key(hv) {
                        return true;
                    }
                    match prog.units[u].host {
                        Some(p) => u = p,
                        None => return false,
                    }
                }
                false
            };
            let hidden = prog.units[unit].host_vars.iter().find(|hv| hides(hv));
            if let Some(hv) = hidden {
                return Err(self.err(
                    name.span,
                    format!(
                        "unsupported Fortran: `{}` uses the variable `{hv}` of its host, which a declaration of `{hv}` in the calling procedure hides",
                        name.text
                    ),
                ));
            }
            for hv in &prog.units[unit].host_vars {
                let n = Name {
                    text: hv.clone(),
                    span: name.span,
                };
                let v = self.var_of(&n)?;
                out.push(CallArg::Var(v));
            }
        }
        let persistent = self.persistent_alloc_args(unit, name.span)?;
        out.extend(persistent.into_iter().map(CallArg::Var));
        // The environments of the procedures passed, then of the dummy
        // procedures of hosts a nested subprogram uses.
        let unit_ref = &prog.units[unit];
        let captured_names = unit_ref.dummy_procs[unit_ref.own_dummies..].iter();
        let captured_env = match captured {
            Some((env, bound)) => {
                passed.extend(captured_names.map(|_| None));
                binding.extend(bound);
                env
            }
            None => {
                passed.extend(captured_names.map(|d| Some(d.text.clone())));
                binding.extend(self.captured_binding(unit));
                Vec::new()
            }
        };
        for (n, t) in passed.iter().zip(&binding) {
            if let Some(n) = n {
                out.extend(self.env_args(n, t)?);
            }
        }
        out.extend(captured_env.into_iter().map(CallArg::Var));
        let callee = (!binding.contains(&Target::Unbound))
            .then(|| adjit_ir::ProcId(self.prog.instance(unit, binding, None) as u32));
        Ok((out, callee))
    }

    /// What an actual argument passed for the dummy procedure `formal` of
    /// `callee` denotes: a name of a procedure, of an intrinsic declared
    /// INTRINSIC, or of a dummy procedure of this unit (passed on).
    /// True when an actual argument is the bare name of a procedure (a
    /// dummy procedure, an internal or module procedure, an external
    /// one) and not of a variable: what a generic interface matches
    /// with a dummy procedure of a specific.
    fn names_procedure(&self, e: &Expr) -> bool {
        let ExprKind::Name(n) = &e.kind else {
            return false;
        };
        if self.u().scope.var(&n.text).is_some() || self.vars.contains_key(&n.text) {
            return false;
        }
        self.dummy_target(&n.text).is_some() || self.prog.find_proc(self.unit, &n.text).is_some()
    }

    fn procedure_arg(&mut self, a: &Arg, formal: &Name, callee: &Name) -> R<Target> {
        let name = match &a.value {
            ArgValue::Expr(x) => match &x.kind {
                ExprKind::Name(n) => n,
                _ => {
                    return Err(self.err(
                        x.span,
                        format!(
                            "`{}` of `{}` is a dummy procedure: pass the name of a procedure",
                            formal.text, callee.text
                        ),
                    ))
                }
            },
            _ => {
                return Err(self.err(
                    callee.span,
                    format!(
                        "`{}` of `{}` is a dummy procedure: pass the name of a procedure",
                        formal.text, callee.text
                    ),
                ))
            }
        };
        if let Some(t) = self.dummy_target(&name.text) {
            return Ok(t);
        }
        if let Some(t) = self.nested_target(name) {
            return Ok(t);
        }
        self.prog
            .procedure_target(self.unit, &name.text, false)
            .map_err(|m| self.err(name.span, m))
    }

    /// Which actual argument goes to which dummy (positional, then by
    /// keyword). The message names the callee `{}`.
    fn match_args<'x>(&self, sig: &Sig, args: &'x [Arg]) -> Result<Vec<Option<&'x Arg>>, String> {
        let n = sig.dummies.len();
        let relaxed =
            sig.dummies.iter().any(|d| d.optional) || args.iter().any(|a| a.keyword.is_some());
        if args.len() > n || (!relaxed && args.len() != n) {
            return Err(format!(
                "`{{}}` takes {n} argument(s) but {} are given",
                args.len()
            ));
        }
        let mut slots = vec![None; n];
        let mut keywords = false;
        for (i, a) in args.iter().enumerate() {
            let j = match &a.keyword {
                None if keywords => {
                    return Err(
                        "positional argument after a keyword argument in the call of `{}`"
                            .to_string(),
                    )
                }
                None => i,
                Some(k) => {
                    keywords = true;
                    sig.dummies
                        .iter()
                        .position(|d| d.name == k.text)
                        .ok_or_else(|| format!("`{{}}` has no dummy argument `{}`", k.text))?
                }
            };
            if slots[j].is_some() {
                return Err(format!(
                    "argument `{}` of `{{}}` is given twice",
                    sig.dummies[j].name
                ));
            }
            slots[j] = Some(a);
        }
        if let Some(d) = sig
            .dummies
            .iter()
            .zip(&slots)
            .find(|(d, s)| s.is_none() && !d.optional)
        {
            return Err(format!(
                "missing argument `{}` in the call of `{{}}`",
                d.0.name
            ));
        }
        Ok(slots)
    }

    /// The expression of the actual argument `a` (the `i`-th of `callee`);
    /// a located error for a range.
    fn expr_actual<'e>(&mut self, a: &'e Arg, i: usize, callee: &Name) -> R<&'e Expr> {
        match &a.value {
            ArgValue::Expr(e) => Ok(e),
            _ => Err(self.err(
                callee.span,
                format!("argument {} of `{}` is a range", i + 1, callee.text),
            )),
        }
    }

    /// Places an actual argument (a structure's components, or one value)
    /// and the presence flag of an OPTIONAL dummy.
    #[allow(clippy::too_many_arguments)]
    fn present_actual(
        &mut self,
        sig: &Sig,
        d: &Dummy,
        a: &Arg,
        i: usize,
        callee: &Name,
        (explicit, assumed_shape): (bool, bool),
        out: &mut [Option<CallArg>],
    ) -> R<()> {
        let e = self.expr_actual(a, i, callee)?;
        let bare = match &e.kind {
            ExprKind::Name(n) => Some(n),
            _ => None,
        };
        if let Some(tn) = &d.type_name {
            // A MERGE of structures goes through a temporary too.
            let merged = matches!(&e.kind, ExprKind::Apply { name: f, .. } if f.text == "merge");
            let ctor = match &e.kind {
                ExprKind::Apply { name: f, .. } => {
                    self.find_type(&f.text).filter(|t| &t.name == tn)
                }
                _ => None,
            }
            .or_else(|| if merged { self.find_type(tn) } else { None });
            let section = match self.struct_section(e)? {
                Some((st, leaves)) if &st.type_name == tn => Some(leaves),
                _ => None,
            };
            let leaves = match self.struct_ref(e, true)? {
                _ if section.is_some() => Vec::new(),
                Some((st, leaves)) if &st.type_name == tn && !merged => leaves,
                _ if ctor.is_some() => {
                    // A structure constructor goes through a temporary.
                    let (tmp, st) = self.temp_struct(ctor.expect("a type"))?;
                    let tmp = Expr {
                        span: tmp.span,
                        kind: ExprKind::Name(tmp),
                    };
                    self.struct_assign(&tmp, &st, e)?;
                    st.leaves
                        .iter()
                        .map(|l| Expr {
                            kind: ExprKind::Name(Name {
                                text: l.clone(),
                                span: e.span,
                            }),
                            span: e.span,
                        })
                        .collect()
                }
                _ => {
                    return Err(self.err(
                        e.span,
                        format!(
                            "argument `{}` of `{}` must be a variable of type `{tn}`",
                            d.name, callee.text
                        ),
                    ))
                }
            };
            if let Some(leaves) = section {
                // (`leaves` is empty: the loop below places nothing.)
                self.section_leaves(sig, d, &leaves, i, callee, explicit, out)?;
            }
            for (&pi, leaf) in d.params.iter().zip(&leaves) {
                if let Some(ld) = d.leaves.iter().find(|l| l.params.first() == Some(&pi)) {
                    let arg = Arg::positional(leaf.clone());
                    // (Deferred or assumed shape.)
                    self.plain_actual(sig, ld, &arg, i, callee, (explicit, true), out)?;
                    continue;
                }
                out[pi] = Some(match &leaf.kind {
                    ExprKind::Name(n) => {
                        let v = self.var_of(n)?;
                        if sig.params[pi].1 == 0 && self.proc.var(v).is_array() {
                            return Err(self.err(
                                e.span,
                                format!(
                                    "rank mismatch in argument {} of `{}`: array of structures passed to a scalar (only an ELEMENTAL procedure takes arrays for scalar dummies, in an assignment to a whole array of structures)",
                                    i + 1,
                                    callee.text
                                ),
                            ));
                        }
                        CallArg::Var(v)
                    }
                    _ => {
                        let (pty, prank) = sig.params[pi];
                        let arg = Arg::positional(leaf.clone());
                        self.actual_arg(&arg, (pty, prank, false), i, callee)?
                    }
                });
            }
        } else {
            self.plain_actual(sig, d, a, i, callee, (explicit, assumed_shape), out)?;
        }
        if let Some(ps) = d.status {
            out[ps] = Some(self.status_actual(e, d, callee)?);
        }
        if let Some(pf) = d.present {
            // An OPTIONAL dummy of the caller passes its own presence on.
            let caller_flag = bare
                .filter(|n| self.u().scope.is_optional_dummy(&n.text))
                .and_then(|n| self.vars.get(&super::present_flag(&n.text)).copied());
            out[pf] = Some(match caller_flag {
                Some(f) => CallArg::Var(f),
                None => CallArg::Value(self.konst(Const::Bool(true), Type::Bool)),
            });
        }
        Ok(())
    }

    /// Places the actual argument `a` (an expression) of a dummy that is
    /// not a structure, or of an ALLOCATABLE component of one, with its
    /// hidden extents and lower bounds.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn plain_actual(
        &mut self,
        sig: &Sig,
        d: &Dummy,
        a: &Arg,
        i: usize,
        callee: &Name,
        (explicit, assumed_shape): (bool, bool),
        out: &mut [Option<CallArg>],
    ) -> R<()> {
        let e = self.expr_actual(a, i, callee)?;
        if let (Some(&pi), true) = (d.params.first(), d.descriptor) {
            out[pi] = Some(self.descriptor_actual(e, &d.name, sig.params[pi], callee)?);
        } else if let Some(&pi) = d.params.first() {
            let (pty, prank) = sig.params[pi];
            let c = self.actual_arg(a, (pty, prank, assumed_shape), i, callee)?;
            if explicit && matches!(d.intent, Some(Intent::Out | Intent::InOut)) {
                self.check_definable(&c, e, d, callee)?;
            }
            out[pi] = Some(c);
            if !d.extents.is_empty() {
                let shape = match self.array_source(e) {
                    // (The strings' length, then their number.)
                    _ if d.strings => vec![self.string_array_actual_len(e, &d.name, callee)?; 2],
                    Some(r) => self.extents(&r)?,
                    None => Vec::new(),
                };
                if shape.len() != d.extents.len() + 1 {
                    return Err(self.err(
                        e.span,
                        format!(
                            "argument `{}` of `{}` is an assumed-shape array of rank {}: pass an array of that rank",
                            d.name,
                            callee.text,
                            d.extents.len() + 1
                        ),
                    ));
                }
                for (&p, &n) in d.extents.iter().zip(&shape) {
                    out[p] = Some(CallArg::Var(n));
                }
            }
            if !d.lbounds.is_empty() {
                self.allocatable_actual(e, &d.name, &d.lbounds, callee, out)?;
            }
        }
        Ok(())
    }

    /// The allocation status passed with the actual argument `e` of the
    /// ALLOCATABLE scalar dummy `d`: the status variable of `e`, which
    /// must be an ALLOCATABLE scalar variable or component too.
    fn status_actual(&mut self, e: &Expr, d: &Dummy, callee: &Name) -> R<CallArg> {
        match self.scalar_status(e).map(|s| s.kind) {
            Some(ExprKind::Name(status)) => Ok(CallArg::Var(self.var_of(&status)?)),
            _ => Err(self.err(
                e.span,
                format!(
                    "argument `{}` of `{}` is an ALLOCATABLE scalar: pass an ALLOCATABLE scalar variable (or component) of the same type",
                    d.name, callee.text
                ),
            )),
        }
    }

    /// An absent OPTIONAL dummy: scratch storage of its type and rank, and
    /// a false presence flag.
    fn absent_actual(
        &mut self,
        sig: &Sig,
        d: &Dummy,
        callee: &Name,
        out: &mut [Option<CallArg>],
    ) -> R<()> {
        let Some(pf) = d.present else {
            return Err(self.err(
                callee.span,
                format!(
                    "missing argument `{}` in the call of `{}`",
                    d.name, callee.text
                ),
            ));
        };
        for &pi in &d.params {
            let ty = sig.params[pi].0;
            // Storage the callee's declaration accepts: its constant
            // bounds, one element where the extent is assumed or read from
            // other arguments (an absent dummy is never referenced, only
            // passed on absent: the callee never sees its bounds).
            let dims = sig.dims[pi]
                .iter()
                .map(|dim| {
                    let lo = match dim.lower {
                        adjit_ir::Bound::Const(lo) => lo,
                        _ => 1,
                    };
                    let hi = match &dim.upper {
                        Some(adjit_ir::Bound::Const(hi))
                            if dim.lower == adjit_ir::Bound::Const(lo) =>
                        {
                            *hi
                        }
                        _ => lo,
                    };
                    adjit_ir::Dim {
                        lower: adjit_ir::Bound::Const(lo),
                        upper: Some(adjit_ir::Bound::Const(hi.max(lo))),
                    }
                })
                .collect();
            let tmp = self.temp("absent", ty);
            let var = &mut self.proc.vars[tmp.index()];
            var.dims = dims;
            if ty == Type::Char {
                var.char_len = Some(adjit_ir::Bound::Const(1));
            }
            out[pi] = Some(CallArg::Var(tmp));
        }
        if let Some(ps) = d.status {
            out[ps] = Some(CallArg::Var(self.temp("absent", Type::I32)));
        }
        // The extents of an absent assumed-shape dummy: one element.
        for &p in &d.extents {
            let ty = sig.params[p].0;
            out[p] = Some(CallArg::Value(self.konst(Const::Int(1), ty)));
        }
        out[pf] = Some(CallArg::Value(self.konst(Const::Bool(false), Type::Bool)));
        Ok(())
    }

    /// An actual argument associated with an INTENT(OUT) or INTENT(INOUT)
    /// dummy must be definable: a variable, and not an INTENT(IN) dummy.
    fn check_definable(&mut self, c: &CallArg, e: &Expr, d: &Dummy, callee: &Name) -> R<()> {
        let var = match c {
            CallArg::Var(v) | CallArg::Elem(v, _) | CallArg::Slice(v, _, _) => *v,
            CallArg::Value(_) => {
                return Err(self.err(
                    e.span,
                    format!(
                        "argument `{}` of `{}` is INTENT(OUT) or INTENT(INOUT): the actual argument must be a variable",
                        d.name, callee.text
                    ),
                ))
            }
        };
        let name = self.proc.var(var).name.clone();
        let is_in = self.u().scope.var(&name).and_then(|v| v.intent) == Some(Intent::In)
            && matches!(self.proc.var(var).storage, adjit_ir::Storage::Param(_));
        if is_in {
            return Err(self.err(
                e.span,
                format!(
                    "`{name}` is INTENT(IN) and cannot be passed to the INTENT(OUT) or INTENT(INOUT) argument `{}` of `{}`",
                    d.name, callee.text
                ),
            ));
        }
        Ok(())
    }

    /// The specific procedure of a generic interface that the actual
    /// arguments select (by type, kind and rank; structures by type).
    pub fn specific(&mut self, generic: &Name, specifics: &[String], args: &[Arg]) -> R<usize> {
        let mut actuals = Vec::new();
        for a in args {
            let ArgValue::Expr(e) = &a.value else {
                return Err(self.err(generic.span, "a range is not an argument"));
            };
            if self.names_procedure(e) {
                actuals.push(None);
                continue;
            }
            let st = self.struct_type_of(e)?;
            let shape = match st {
                Some(_) => None,
                None => Some(self.type_and_rank(e)?),
            };
            actuals.push(Some((st, shape)));
        }
        // An ELEMENTAL specific takes arrays for its scalar dummies, when
        // no specific matches the ranks (Fortran's rule).
        for elementally in [false, true] {
            if let Some(p) =
                self.specific_matching(generic, specifics, args, &actuals, elementally)?
            {
                return Ok(p);
            }
        }
        Err(self.err(
            generic.span,
            format!(
                "no specific procedure of the generic interface `{}` matches these arguments",
                generic.text
            ),
        ))
    }

    /// The first of `specifics` whose dummies fit `args` (described by
    /// `actuals`: `None` for a procedure, else the derived type or the
    /// type and rank); `elementally`: an array for a scalar dummy of an
    /// ELEMENTAL specific fits.
    fn specific_matching(
        &mut self,
        generic: &Name,
        specifics: &[String],
        args: &[Arg],
        actuals: &[ActualKind],
        elementally: bool,
    ) -> R<Option<usize>> {
        for s in specifics {
            let Some(p) = self.prog.find_proc(self.unit, s) else {
                return Err(self.err(
                    generic.span,
                    format!(
                        "specific procedure `{s}` of generic `{}` is not defined",
                        generic.text
                    ),
                ));
            };
            let sig = &self.prog.sigs[p];
            let Ok(slots) = self.match_args(sig, args) else {
                continue;
            };
            let dummy_procs = &self.prog.units[p].dummy_procs;
            let fits = sig.dummies.iter().zip(&slots).all(|(d, slot)| {
                let Some(a) = slot else { return true };
                let k = args
                    .iter()
                    .position(|x| std::ptr::eq(x, *a))
                    .expect("an argument");
                let formal = dummy_procs.iter().any(|f| f.text == d.name);
                match (&actuals[k], &d.type_name) {
                    // A procedure for a dummy procedure (its interface is
                    // checked when the specific's call is lowered).
                    (None, _) => formal,
                    (Some(_), _) if formal => false,
                    (Some((Some(at), _)), Some(dt)) => at == dt,
                    (Some((None, Some((t, r)))), None) => d.params.first().is_some_and(|&pi| {
                        let (pt, pr) = sig.params[pi];
                        pt == *t && (pr == *r || (elementally && sig.elemental && pr == 0))
                    }),
                    _ => false,
                }
            });
            if fits {
                return Ok(Some(p));
            }
        }
        Ok(None)
    }

    pub(super) fn actual_arg(
        &mut self,
        a: &Arg,
        (pty, prank, assumed_shape): (Type, usize, bool),
        i: usize,
        callee: &Name,
    ) -> R<CallArg> {
        let mismatch = |this: &mut Self, span, got: Type| {
            this.err(
                span,
                format!(
                    "type mismatch in argument {} of `{}`: expected {}, got {}",
                    i + 1,
                    callee.text,
                    type_name(pty),
                    type_name(got)
                ),
            )
        };
        let e = self.expr_actual(a, i, callee)?;
        if let Some(arg) = self.deferred_string_actual(e, (pty, prank), callee)? {
            return Ok(arg);
        }
        match &e.kind {
            _ if self.elementwise_actual(e, prank) => {
                if let Some(a) = self.element_actual(e, pty)? {
                    return Ok(a);
                }
            }
            _ if prank == 0
                && !matches!(e.kind, ExprKind::Name(_))
                && self.array_source(e).is_some() =>
            {
                return Err(self.err(
                    e.span,
                    format!(
                        "rank mismatch in argument {} of `{}`: array passed to a scalar \
                         (only an ELEMENTAL procedure takes arrays for scalar dummies)",
                        i + 1,
                        callee.text
                    ),
                ));
            }
            ExprKind::Name(n) => {
                if let Resolved::Var(v) = self.resolve(n)? {
                    let var = self.proc.var(v).clone();
                    if var.ty != pty {
                        return Err(mismatch(self, e.span, var.ty));
                    }
                    if var.is_array() && prank == 0 {
                        return Err(self.err(
                            e.span,
                            format!(
                                "rank mismatch in argument {} of `{}`: array passed to a scalar",
                                i + 1,
                                callee.text
                            ),
                        ));
                    }
                    return Ok(CallArg::Var(v));
                }
                if matches!(self.resolve(n)?, Resolved::Unknown) {
                    let v = self.implicit_var(n)?;
                    if self.proc.var(v).ty != pty {
                        return Err(mismatch(self, e.span, self.proc.var(v).ty));
                    }
                    return Ok(CallArg::Var(v));
                }
            }
            ExprKind::Apply { name, args } if self.is_array_name(&name.text) => {
                if let Resolved::Var(v) = self.resolve(name)? {
                    if args.iter().any(|x| self.is_section_subscript(x)) {
                        return self.section_actual(e, v, name, args, pty, assumed_shape);
                    }
                    let ty = self.proc.var(v).ty;
                    if ty != pty {
                        return Err(mismatch(self, e.span, ty));
                    }
                    let idx = self.subscripts(v, args, name)?;
                    if ty == Type::Char && prank == 0 {
                        // An element of a CHARACTER array given to a
                        // scalar: exactly its characters (an assumed-length
                        // dummy takes the element's length, not the rest
                        // of the array's).
                        let one = self.int(1, Type::I64);
                        return Ok(CallArg::Slice(v, idx, one));
                    }
                    return Ok(CallArg::Elem(v, idx));
                }
            }
            _ => {}
        }
        if self.arg_temps.iter().any(|t| t.is_for(e)) {
            return self.prepared_actual(e, pty);
        }
        match self.expr(e)? {
            Operand::Num(v, t) => {
                if t != pty {
                    return Err(mismatch(self, e.span, t));
                }
                Ok(CallArg::Value(v))
            }
            Operand::Char(r) => match (&r.base, r.start, r.end) {
                (CharBase::Literal(text), None, None) if pty == Type::Char => {
                    // A literal goes through a temporary of its own length.
                    let tmp = self.char_temp(text.len() as i64);
                    let to = CharRef { base: CharBase::Var { var: tmp, index: Vec::new() }, start: None, end: None };
                    self.emit(Inst::CharAssign(to, r), None);
                    Ok(CallArg::Var(tmp))
                }
                _ if pty != Type::Char => Err(mismatch(self, e.span, Type::Char)),
                // Part of a literal (the character of a code, CHAR / ACHAR)
                // is a value: it goes through a temporary of its length.
                (CharBase::Literal(_), start, end) if start.is_some() && start == end => {
                    let tmp = self.char_temp(1);
                    self.emit(Inst::CharAssign(CharRef::whole(tmp), r), None);
                    Ok(CallArg::Var(tmp))
                }
                // The result of ADJUSTL, ADJUSTR or REPEAT, already in a
                // temporary of its length.
                (CharBase::Var { var, index }, None, None)
                    if index.is_empty() && self.proc.var(*var).name.starts_with("_c") =>
                {
                    Ok(CallArg::Var(*var))
                }
                _ => Err(self.err(e.span, "unsupported Fortran: character expression (other than a literal or a variable) as an actual argument")),
            },
        }
    }
}

/// Where an actual argument is written (`None` for an empty section).
fn arg_span(a: &Arg) -> Option<adjit_ir::Span> {
    match &a.value {
        ArgValue::Expr(x) => Some(x.span),
        ArgValue::Range { lo, hi, stride } => [lo, hi, stride]
            .into_iter()
            .flatten()
            .next()
            .map(|x| x.span),
    }
}

/// The whole of the scalar character variable `var`.
fn whole_char(var: VarId) -> CharRef {
    CharRef {
        base: CharBase::Var {
            var,
            index: Vec::new(),
        },
        start: None,
        end: None,
    }
}
