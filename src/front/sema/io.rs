//! I/O statements: PRINT and WRITE to standard output, list-directed READ
//! from standard input, WRITE to and READ from internal files (a CHARACTER
//! variable, element or substring; formatted or list-directed) with
//! IOSTAT=, lowered to the steps of [`adjit_ir::IoOp`].
//!
//! With IOSTAT=, the statement's errors become its status (stored into the
//! IOSTAT= variable after the statement), and an input item keeps its value
//! once the statement has failed, as gfortran leaves it. A value read is a
//! constant for derivatives (the read has no partial).
//!
//! A statement becomes a begin step, one transfer step per item (implied
//! DO loops become loops, whole arrays and sections transfer their elements
//! in column-major order), and an end step. The format (a FORMAT statement
//! of the unit or a constant character expression) is checked here with
//! [`adjit_ir::io::parse_format`], so a malformed one is a located error;
//! its text goes into the begin step. Formatting and reading happen at run
//! time in `adjit_ir::io`, shared by the interpreter and the JIT.
//! Array-valued function references in implied DO output items are
//! called into temporaries on each trip.

use super::super::ast::{Expr, ExprKind, IoControl, IoFormat, Stmt, StmtKind};
use super::consts::ConstVal;
use super::lowerer::{Lowerer, Operand, Reported, R};
use adjit_ir::{CharRef, CmpOp, Inst, IoOp, Span, Type, Value, VarId};

impl Lowerer<'_, '_> {
    /// PRINT / WRITE to standard output or to an internal file.
    pub(super) fn write_stmt(
        &mut self,
        format: &IoFormat,
        items: &[Expr],
        control: &IoControl,
        span: Span,
    ) -> R<()> {
        let format = self.io_format(format, span)?;
        let file = match &control.unit {
            Some(unit) => self.internal_file(unit, false)?,
            None => None,
        };
        for item in items {
            self.hoist_items(item)?;
        }
        self.emit(Inst::Io(IoOp::BeginWrite(format)), None);
        if control.iostat.is_some() {
            self.emit(Inst::Io(IoOp::CatchErrors), None);
        }
        let mut result = Ok(());
        for item in items {
            result = result.and(self.io_item(item, false));
        }
        match file {
            Some(r) => self.emit(Inst::Io(IoOp::EndWriteTo(r)), None),
            None => self.emit(Inst::Io(IoOp::EndWrite), None),
        };
        result.and(self.store_status(control))
    }

    /// List-directed READ from standard input; list-directed or formatted
    /// READ from an internal file.
    pub(super) fn read_stmt(
        &mut self,
        format: &IoFormat,
        items: &[Expr],
        control: &IoControl,
        span: Span,
    ) -> R<()> {
        let file = match &control.unit {
            Some(unit) => self.internal_file(unit, true)?,
            None => None,
        };
        let begin = match file {
            Some(file) => {
                let format = self.io_format(format, span)?;
                IoOp::BeginReadFrom(file, format)
            }
            None if !matches!(format, IoFormat::List) => {
                return Err(self.err(
                    span,
                    "unsupported Fortran: formatted READ from standard input (only \
                     list-directed `READ *` and `READ(*,*)`, or any READ from a CHARACTER \
                     variable)",
                ))
            }
            None => IoOp::BeginRead,
        };
        self.emit(Inst::Io(begin), None);
        if control.iostat.is_some() {
            self.emit(Inst::Io(IoOp::CatchErrors), None);
        }
        let caught = std::mem::replace(&mut self.io_caught, control.iostat.is_some());
        let mut result = Ok(());
        for item in items {
            result = result.and(self.io_item(item, true));
        }
        self.io_caught = caught;
        self.emit(Inst::Io(IoOp::EndRead), None);
        result.and(self.store_status(control))
    }

    /// The character data of an internal file: a CHARACTER scalar
    /// variable, array element or substring (`read`: the statement reads
    /// it, else it writes it, which needs a definable variable); `None`
    /// for a named constant naming standard input or output (5 for READ,
    /// 6 for WRITE, ISO_FORTRAN_ENV's `input_unit` and `output_unit`).
    /// Another integer unit is file I/O, refused.
    fn internal_file(&mut self, unit: &Expr, read: bool) -> R<Option<CharRef>> {
        let (statement, preposition) = if read {
            ("READ", "from")
        } else {
            ("WRITE", "to")
        };
        if let Ok(ConstVal::Int(k, _)) = self.fold_quiet(unit) {
            let standard = if read { 5 } else { 6 };
            if k == standard {
                return Ok(None);
            }
            return Err(self.err(
                unit.span,
                format!(
                    "unsupported Fortran: {statement} {preposition} unit {k}, a unit other \
                     than `*` or {standard} (file I/O)"
                ),
            ));
        }
        let name = match &unit.kind {
            ExprKind::Name(n) | ExprKind::Apply { name: n, .. } => Some(n),
            _ => None,
        };
        if let Some(n) = name {
            let v = self.var_of(n)?;
            if !read {
                self.check_writable(v, n)?;
            }
            let ty = self.proc.var(v).ty;
            if ty.is_int() {
                return Err(self.err(
                    unit.span,
                    format!(
                        "unsupported Fortran: {statement} {preposition} unit `{}` (file I/O; \
                         internal files, CHARACTER variables, are supported)",
                        n.text
                    ),
                ));
            }
            if ty != Type::Char {
                return Err(self.err(
                    unit.span,
                    format!(
                        "the unit of {statement} must be an integer or a CHARACTER variable, \
                         not `{}`",
                        n.text
                    ),
                ));
            }
        }
        if self.deferred_string_ref(unit).is_some() {
            return Err(self.err(
                unit.span,
                format!(
                    "unsupported Fortran: {statement} {preposition} a deferred-length CHARACTER \
                     variable (`character(len=:)`); an internal file of constant or assumed \
                     length is supported"
                ),
            ));
        }
        if self.array_source(unit).is_some() {
            return Err(self.err(
                unit.span,
                format!(
                    "unsupported Fortran: {statement} {preposition} a CHARACTER array (an \
                     internal file of several records); an element or a scalar is supported"
                ),
            ));
        }
        match self.expr(unit)? {
            Operand::Char(r) => Ok(Some(r)),
            Operand::Num(..) => Err(self.err(
                unit.span,
                format!("the unit of {statement} must be a CHARACTER variable here"),
            )),
        }
    }

    /// Stores the status of the statement just ended into its IOSTAT=
    /// variable, if it has one.
    fn store_status(&mut self, control: &IoControl) -> R<()> {
        let Some(target) = &control.iostat else {
            return Ok(());
        };
        self.store_read(target, &mut |this, ty, _| {
            let status = this.emit(Inst::Io(IoOp::Status), Some(Type::I32));
            this.convert(status, Type::I32, ty)
        })
        .and_then(|ty| {
            if ty.is_int() {
                Ok(())
            } else {
                Err(self.err(target.span, "the IOSTAT= variable must be an integer"))
            }
        })
    }

    /// The format text of an I/O statement (`None`: list-directed),
    /// checked.
    fn io_format(&mut self, format: &IoFormat, span: Span) -> R<Option<Vec<u8>>> {
        let (text, at) = match format {
            IoFormat::List => return Ok(None),
            IoFormat::Label(label, at) => {
                let found = self
                    .u()
                    .ast
                    .formats
                    .iter()
                    .find(|f| f.label == *label)
                    .map(|f| f.text.clone().into_bytes());
                match found {
                    Some(text) => (text, *at),
                    None => {
                        return Err(self.err(*at, format!("no FORMAT statement with label {label}")))
                    }
                }
            }
            IoFormat::Expr(e) => match self.fold(e) {
                Ok(ConstVal::Str(s)) => (s.into_bytes(), e.span),
                _ => {
                    return Err(self.err(
                        e.span,
                        "unsupported Fortran: a format that is not a constant character \
                         expression or FORMAT label",
                    ))
                }
            },
        };
        let _ = span;
        match adjit_ir::io::parse_format(&text) {
            Ok(f) if format_width(&f) > MAX_FORMAT_WIDTH => Err(self.err(
                at,
                format!(
                    "invalid format: its counts, widths and precisions ask for more than {MAX_FORMAT_WIDTH} characters"
                ),
            )),
            Ok(_) => Ok(Some(text)),
            Err(m) => Err(self.err(at, format!("invalid format: {m}"))),
        }
    }

    /// Hoists the reductions of an output item (see `hoist`).
    fn hoist_items(&mut self, item: &Expr) -> R<()> {
        match &item.kind {
            ExprKind::ImpliedDo { .. } => Ok(()),
            _ => self.hoist(item),
        }
    }

    /// Transfers one item (`read`: into it, else out of it).
    fn io_item(&mut self, item: &Expr, read: bool) -> R<()> {
        if let ExprKind::ImpliedDo {
            items,
            var,
            start,
            end,
            step,
        } = &item.kind
        {
            let mut failed = false;
            self.do_loop(None, var, start, end, step.as_deref(), &mut |l| {
                for it in items {
                    failed |= l.implied_do_item(it, read).is_err();
                }
            })?;
            return if failed { Err(Reported) } else { Ok(()) };
        }
        if let Some(source) = self.array_source(item) {
            let extents = self.extents(&source)?;
            return self.for_positions(&extents, &mut |this, pos| {
                this.at_element(&[(item, pos.to_vec())], |this, _| {
                    this.scalar_item(item, read)
                })
            });
        }
        self.scalar_item(item, read)
    }

    /// Transfers one item of an implied DO loop: the array-valued
    /// function references in it (`(f(x, i), i = 1, n)`, whose arguments
    /// may read the loop's variable) are called into temporaries on each
    /// trip and released after the item.
    fn implied_do_item(&mut self, item: &Expr, read: bool) -> R<()> {
        if read || matches!(item.kind, ExprKind::ImpliedDo { .. }) || !self.has_array_function(item)
        {
            return self.io_item(item, read);
        }
        let mut lifted = item.clone();
        let mut temps = Vec::new();
        self.lift_in(&mut lifted, &mut temps)?;
        // Kept for the lowerer's lifetime (expressions are keyed by
        // address).
        let keep = std::rc::Rc::new(Stmt {
            label: None,
            span: item.span,
            kind: StmtKind::Write {
                format: IoFormat::List,
                items: vec![lifted],
                control: IoControl::default(),
            },
        });
        self.lifted.push(keep.clone());
        let StmtKind::Write { items, .. } = &keep.kind else {
            unreachable!("built as a WRITE")
        };
        self.hoist(&items[0])?;
        let result = self.io_item(&items[0], read);
        self.release_lifted(temps);
        result
    }

    /// Transfers one scalar item (an array element when `self.elem` is
    /// set).
    fn scalar_item(&mut self, item: &Expr, read: bool) -> R<()> {
        if !read && (self.is_built_char(item) || self.is_string_fn_ref(item)) {
            return self.print_pieces(item);
        }
        if !read {
            match self.expr(item)? {
                Operand::Char(r) => self.emit(Inst::Io(IoOp::PutChar(r)), None),
                Operand::Num(v, _) => self.emit(Inst::Io(IoOp::Put(v)), None),
            };
            return Ok(());
        }
        if let ExprKind::Substring { .. } = &item.kind {
            let Operand::Char(r) = self.expr(item)? else {
                return Err(self.err(item.span, "substring of a non-character value"));
            };
            self.emit(Inst::Io(IoOp::GetChar(r)), None);
            return Ok(());
        }
        let caught = self.io_caught;
        self.store_read(item, &mut |this, ty, place| {
            let x = this.io_get(ty);
            if caught {
                this.unless_failed(x, place, ty)
            } else {
                x
            }
        })
        .map(|_| ())
    }

    /// `x` when the input statement in progress has not failed, else the
    /// current value of the numeric variable or element `place` (which
    /// keeps it). The place's subscripts were evaluated once, before the
    /// value was read: evaluating them again could call a function doing
    /// I/O of its own between the read and the status asked here.
    fn unless_failed(&mut self, x: Value, place: &InputPlace, ty: Type) -> Value {
        let old = match &place.index {
            None => self.val(Inst::Load(place.var), ty),
            Some(idx) => self.val(Inst::LoadElem(place.var, idx.clone()), ty),
        };
        let status = self.emit(Inst::Io(IoOp::Status), Some(Type::I32));
        let zero = self.int(0, Type::I32);
        let ok = self.emit(Inst::Cmp(CmpOp::Eq, status, zero), Some(Type::Bool));
        self.emit(Inst::Select(ok, x, old), Some(ty))
    }

    /// Stores the value `value(type, place)` gives into the variable,
    /// array element or character variable `item` of an input statement
    /// (a character item reads its characters instead); its type.
    fn store_read(
        &mut self,
        item: &Expr,
        value: &mut dyn FnMut(&mut Self, Type, &InputPlace) -> Value,
    ) -> R<Type> {
        let name = match &item.kind {
            ExprKind::Name(n) | ExprKind::Apply { name: n, .. } => n,
            ExprKind::Substring { .. } => {
                let Operand::Char(r) = self.expr(item)? else {
                    return Err(self.err(item.span, "substring of a non-character value"));
                };
                self.emit(Inst::Io(IoOp::GetChar(r)), None);
                return Ok(Type::Char);
            }
            _ => {
                return Err(self.err(
                    item.span,
                    "an input item must be a variable, an array element or a substring",
                ))
            }
        };
        let v = self.var_of(name)?;
        self.check_writable(v, name)?;
        let ty = self.proc.var(v).ty;
        if ty == Type::Char {
            let Operand::Char(r) = self.expr(item)? else {
                return Err(self.err(item.span, "expected a character variable"));
            };
            self.emit(Inst::Io(IoOp::GetChar(r)), None);
            return Ok(ty);
        }
        let index = match (&item.kind, &self.elem) {
            (ExprKind::Name(_), Some(pos)) => {
                let pos = pos.clone();
                Some(self.whole_array_index(v, &pos, name.span)?)
            }
            (ExprKind::Name(_), None) => None,
            (ExprKind::Apply { args, .. }, Some(pos)) => {
                let pos = pos.clone();
                Some(self.section_index(v, args, &pos, name)?)
            }
            (ExprKind::Apply { args, .. }, None) => Some(self.subscripts(v, args, name)?),
            _ => None,
        };
        // Subscripts are evaluated before the value is read (an item may
        // not depend on values read by the same item), and only once.
        let place = InputPlace { var: v, index };
        let x = value(self, ty, &place);
        match place.index {
            None => self.emit(Inst::Store(v, x), None),
            Some(idx) => self.emit(Inst::StoreElem(v, idx, x), None),
        };
        Ok(ty)
    }

    fn io_get(&mut self, ty: Type) -> adjit_ir::Value {
        self.emit(Inst::Io(IoOp::Get), Some(ty))
    }
}

/// The numeric variable or array element an input item is stored into,
/// its subscripts evaluated.
struct InputPlace {
    /// The variable.
    var: VarId,
    /// The element's subscripts (`None`: the whole scalar variable).
    index: Option<Vec<Value>>,
}

/// The most characters one pass through a format may ask for (repeat
/// counts times widths, precisions and X counts): a larger one
/// (`f6.9223372036854775807`, `9223372008x`) is refused, not written.
const MAX_FORMAT_WIDTH: u128 = 1 << 24;

/// An upper bound of the characters one pass through `format` writes.
fn format_width(format: &[(usize, adjit_ir::io::Edit)]) -> u128 {
    use adjit_ir::io::Edit;
    format
        .iter()
        .map(|(r, e)| {
            let one = match e {
                Edit::I(w, m) => *w as u128 + m.unwrap_or(0) as u128,
                Edit::F(w, d) => *w as u128 + *d as u128,
                Edit::E(w, d, x, _) | Edit::G(w, d, x) => {
                    *w as u128 + *d as u128 + x.unwrap_or(0) as u128
                }
                Edit::A(w) => w.unwrap_or(0) as u128,
                Edit::L(w) | Edit::X(w) => *w as u128,
                Edit::Lit(l) => l.len() as u128,
                Edit::Group(g) => format_width(g),
                Edit::P(_) | Edit::Slash | Edit::Colon => 0,
            };
            (*r as u128).saturating_mul(one.max(1))
        })
        .fold(0u128, u128::saturating_add)
}
