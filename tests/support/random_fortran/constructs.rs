//! Constructs of generated programs beyond the base statements:
//!
//! * array intrinsics inside functions
//!   ([`GenOptions::function_intrinsics`](super::GenOptions)): SUM,
//!   PRODUCT, DOT_PRODUCT, NORM2, MAXVAL / MINVAL, MATMUL and MERGE of
//!   rank-1 expressions of `n` elements, stored in a local of the
//!   function (a function records no decision, so only intrinsics whose
//!   decisions are those of MAX / MIN, or whose masks are passive, appear:
//!   MERGE and SUM take masks of the index, never of active values);
//! * ASSOCIATE and BLOCK constructs
//!   ([`GenOptions::block_constructs`](super::GenOptions)) around generated
//!   statements: an associate name for an expression (read only) or for a
//!   local scalar (written through it, the local itself hidden inside), a
//!   BLOCK with a local of its own (every construct name is new in its
//!   program: adjit refuses a BLOCK variable shadowing another name);
//! * character data feeding integer control flow
//!   ([`GenOptions::character_control`](super::GenOptions)): a BLOCK with
//!   a CHARACTER local built with CHAR from active values, read back with
//!   ICHAR and INDEX into an integer that decides a branch or a trip count
//!   (folded into `trace`, as every decision).
//!
//! Validity: every stored value goes through a bounded function; PRODUCT
//! and NORM2 see values bounded away from zero; the character codes stay
//! in `a`..`h`.

use super::sections::bounded;
use super::{lit, Gen, PickStr, Scope, Stmt};

/// Words the character locals start from (8 characters, letters `a`..`h`
/// at different places, so INDEX finds them at different positions).
const WORDS: [&str; 4] = ["hgfedcba", "badcfehg", "cabbage!", "deadbeef"];

impl Gen<'_> {
    /// An array-intrinsic statement of a function body (none where there
    /// is no `n` or nothing to write).
    pub(super) fn function_intrinsic_stmt(&mut self, scope: &Scope) -> Vec<Stmt> {
        if !scope.has_n || scope.writable.is_empty() {
            return Vec::new();
        }
        let t = self.rng.pick_str(&scope.writable);
        let (v, _) = self.vector(scope, 2);
        let (w, _) = self.vector(scope, 1);
        // A passive mask: the index is even (an implied DO over `i9`,
        // which functions use for nothing else).
        let even = "[(mod(i9, 2) == 0, i9 = 1, n)]";
        let reduction = match self.rng.below(9) {
            0 => format!("sum({v})"),
            1 => format!("product(1d0 + 0.25d0*tanh({v}))"),
            2 => format!("dot_product({v}, {w})"),
            3 => format!("norm2(exp(0.25d0*tanh({v})))"),
            4 => format!("maxval({v})"),
            5 => format!("minval({v}) + 0.5d0*maxval(abs({w}))"),
            6 => format!("sum(matmul(spread({v}, 1, 2), spread({w}, 2, 2)))"),
            7 => format!("sum(merge({v}, {w}, {even}))"),
            _ => format!("sum({v}, mask={even}) + 0.5d0*sum({w}, mask=.not. {even})"),
        };
        let (e, _) = self.expr(scope, 1);
        vec![Stmt::Line(format!(
            "{t} = {}",
            bounded(&format!("{reduction} + {e}"))
        ))]
    }

    /// An ASSOCIATE or BLOCK construct around a few generated statements
    /// (none when `depth` allows no nesting).
    pub(super) fn block_construct(&mut self, scope: &mut Scope, depth: usize) -> Vec<Stmt> {
        if depth >= self.opt.max_depth {
            return Vec::new();
        }
        let count = self.rng.range(1, 3) as usize;
        // A name of its own (a BLOCK variable may not shadow another).
        self.construct_names += 1;
        let name = format!("z{}", self.construct_names);
        let mut inner = scope.clone();
        let (head, mut body, tail) = match self.rng.below(3) {
            0 => {
                let (e, _) = self.expr(scope, 2);
                inner.reals.push(name.clone());
                (
                    format!("associate ({name} => {})", bounded(&e)),
                    Vec::new(),
                    "end associate",
                )
            }
            // An associate name for a local scalar (`t1`, `t2`), which the
            // body writes through it only.
            1 if scope.writable.iter().any(|v| v.starts_with('t')) => {
                let locals: Vec<String> = scope
                    .writable
                    .iter()
                    .filter(|v| v.starts_with('t'))
                    .cloned()
                    .collect();
                let v = self.rng.pick_str(&locals);
                inner.reals.retain(|r| *r != v);
                inner.writable.retain(|r| *r != v);
                inner.reals.push(name.clone());
                inner.writable.push(name.clone());
                (
                    format!("associate ({name} => {v})"),
                    Vec::new(),
                    "end associate",
                )
            }
            _ => {
                let (e, _) = self.expr(scope, 2);
                inner.reals.push(name.clone());
                inner.writable.push(name.clone());
                let body = vec![
                    Stmt::Keep(format!("double precision :: {name}")),
                    Stmt::Keep(format!("{name} = {}", bounded(&e))),
                ];
                ("block".to_string(), body, "end block")
            }
        };
        body.extend(self.stmts(&mut inner, count, depth + 1));
        // Scratch variables the body took and gave back.
        scope.free_loop_vars = inner.free_loop_vars;
        scope.free_ints = inner.free_ints;
        vec![Stmt::Block {
            head,
            body,
            else_body: None,
            tail: tail.into(),
        }]
    }

    /// A BLOCK whose CHARACTER local, changed by CHAR of an active value,
    /// gives an integer through ICHAR and INDEX that decides a branch or
    /// the trip count of a loop (none where no decision can be recorded).
    pub(super) fn character_control(&mut self, scope: &mut Scope, depth: usize) -> Vec<Stmt> {
        if !scope.may_trace || depth >= self.opt.max_depth || scope.free_ints.is_empty() {
            return Vec::new();
        }
        let Some(k) = scope.free_ints.pop() else {
            return Vec::new();
        };
        let word = WORDS[self.rng.below(WORDS.len())];
        let at = self.rng.range(1, 8);
        let (e, _) = self.expr(scope, 2);
        // 0 <= int(4 + 4 tanh(.)) <= 7: a letter of `a`..`h`.
        let code = format!("char(ichar('a') + int(4d0 + {}))", bounded(&e));
        let probe = ["a", "b", "c", "e"][self.rng.below(4)];
        self.construct_names += 1;
        let cw = format!("cw{}", self.construct_names);
        let mut body = vec![
            Stmt::Keep(format!("character(len=8) :: {cw}")),
            Stmt::Keep(format!("{cw} = '{word}'")),
            Stmt::Keep(format!("{cw}({at}:{at}) = {code}")),
            Stmt::Keep(format!(
                "{k} = index({cw}, '{probe}') + ichar({cw}({at}:{at})) - ichar('a')"
            )),
            self.trace(&k),
        ];
        if self.rng.chance(50) {
            let c = self.rng.range(2, 9);
            let then = self.stmts(scope, 1, depth + 1);
            let otherwise = self.stmts(scope, 1, depth + 1);
            body.push(Stmt::Block {
                head: format!("if ({k} > {c}) then"),
                body: then,
                else_body: Some(otherwise),
                tail: "end if".into(),
            });
        } else if let Some(i) = scope.free_loop_vars.pop() {
            // At most 4 trips (the trip count is in the trace).
            let was_in_loop = scope.in_loop;
            scope.in_loop = true;
            let mut inner = self.stmts(scope, 1, depth + 1);
            scope.in_loop = was_in_loop;
            let (x, _) = self.expr(scope, 1);
            if let Some(t) = scope.writable.first().cloned() {
                inner.push(Stmt::Line(format!(
                    "{t} = {}",
                    bounded(&format!("{} * {t} + {} * ({x})", lit(0.5), lit(0.25)))
                )));
            }
            body.push(Stmt::Block {
                head: format!("do {i} = 1, mod({k}, 5)"),
                body: inner,
                else_body: None,
                tail: "end do".into(),
            });
            scope.free_loop_vars.push(i);
        }
        scope.free_ints.push(k);
        vec![Stmt::Block {
            head: "block".into(),
            body,
            else_body: None,
            tail: "end block".into(),
        }]
    }
}
