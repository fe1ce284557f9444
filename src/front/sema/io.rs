//! I/O statements: PRINT and WRITE to standard output, list-directed READ
//! from standard input, lowered to the steps of [`adjit_ir::IoOp`].
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

use super::super::ast::{Expr, ExprKind, IoFormat, Stmt, StmtKind};
use super::consts::ConstVal;
use super::lowerer::{Lowerer, Operand, Reported, R};
use adjit_ir::{Inst, IoOp, Span, Type};

impl Lowerer<'_, '_> {
    /// PRINT / WRITE to standard output.
    pub(super) fn write_stmt(&mut self, format: &IoFormat, items: &[Expr], span: Span) -> R<()> {
        let format = self.io_format(format, span)?;
        for item in items {
            self.hoist_items(item)?;
        }
        self.emit(Inst::Io(IoOp::BeginWrite(format)), None);
        let mut result = Ok(());
        for item in items {
            result = result.and(self.io_item(item, false));
        }
        self.emit(Inst::Io(IoOp::EndWrite), None);
        result
    }

    /// List-directed READ from standard input.
    pub(super) fn read_stmt(&mut self, format: &IoFormat, items: &[Expr], span: Span) -> R<()> {
        if !matches!(format, IoFormat::List) {
            return Err(self.err(
                span,
                "unsupported Fortran: formatted READ (only list-directed `READ *` and \
                 `READ(*,*)`)",
            ));
        }
        self.emit(Inst::Io(IoOp::BeginRead), None);
        let mut result = Ok(());
        for item in items {
            result = result.and(self.io_item(item, true));
        }
        self.emit(Inst::Io(IoOp::EndRead), None);
        result
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
        let name = match &item.kind {
            ExprKind::Name(n) | ExprKind::Apply { name: n, .. } => n,
            ExprKind::Substring { .. } => {
                let Operand::Char(r) = self.expr(item)? else {
                    return Err(self.err(item.span, "substring of a non-character value"));
                };
                self.emit(Inst::Io(IoOp::GetChar(r)), None);
                return Ok(());
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
            return Ok(());
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
        // not depend on values read by the same item).
        let x = self.io_get(ty);
        match index {
            None => self.emit(Inst::Store(v, x), None),
            Some(idx) => self.emit(Inst::StoreElem(v, idx, x), None),
        };
        Ok(())
    }

    fn io_get(&mut self, ty: Type) -> adjit_ir::Value {
        self.emit(Inst::Io(IoOp::Get), Some(ty))
    }
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
