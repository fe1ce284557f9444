//! Tests of the parser: whole files, each statement kind, error positions
//! and recovery, fuzzed and large inputs.

use super::*;
use crate::front::diag::Severity;

/// Parses `text` in the given form; returns the file and diagnostics.
fn parse(text: &str, form: SourceForm) -> (SourceFile, Vec<Diagnostic>) {
    let mut map = SourceMap::new();
    let file = map.add("test", text);
    parse_file(&map, file, form)
}

/// Parses free-form text that must produce no diagnostics at all.
fn parse_ok(text: &str) -> SourceFile {
    let (file, diags) = parse(text, SourceForm::Free);
    assert!(diags.is_empty(), "unexpected diagnostics: {diags:#?}");
    file
}

fn errors(text: &str, form: SourceForm) -> Vec<Diagnostic> {
    parse(text, form)
        .1
        .into_iter()
        .filter(|d| d.severity == Severity::Error)
        .collect()
}

fn procedure(unit: &ProgramUnit) -> &Procedure {
    match unit {
        ProgramUnit::Procedure(p) => p,
        ProgramUnit::Module(m) => panic!("expected a procedure, got module {}", m.name.text),
    }
}

/// The body of the only procedure of a free-form subroutine.
fn body_of(text: &str) -> Vec<Stmt> {
    let file = parse_ok(text);
    procedure(&file.units[0]).body.clone()
}

/// Wraps statements in a subroutine and returns its body.
fn stmts(lines: &str) -> Vec<Stmt> {
    body_of(&format!("subroutine s\n{lines}\nend subroutine s\n"))
}

fn decls(lines: &str) -> Vec<DeclKind> {
    let file = parse_ok(&format!("subroutine s\n{lines}\nend subroutine s\n"));
    procedure(&file.units[0])
        .decls
        .iter()
        .map(|d| d.kind.clone())
        .collect()
}

/// A compact prefix rendering of an expression.
fn sx(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Int { value, kind } => match kind {
            None => value.to_string(),
            Some(k) => format!("{value}_{}", kind_text(k)),
        },
        ExprKind::Real { text, double, kind } => format!(
            "{text}{}{}",
            if *double { "D" } else { "" },
            kind.as_ref()
                .map_or(String::new(), |k| format!("_{}", kind_text(k)))
        ),
        ExprKind::Logical(b) => format!(".{b}."),
        ExprKind::Str(s) => format!("{s:?}"),
        ExprKind::Name(n) => n.text.clone(),
        ExprKind::Apply { name, args } => format!(
            "{}[{}]",
            name.text,
            args.iter().map(sx_arg).collect::<Vec<_>>().join(" ")
        ),
        ExprKind::Substring { base, start, end } => format!(
            "(substr {} {} {})",
            sx(base),
            start.as_ref().map_or("_".to_string(), |e| sx(e)),
            end.as_ref().map_or("_".to_string(), |e| sx(e))
        ),
        ExprKind::Unary(op, a) => {
            let op = match op {
                UnOp::Neg => "neg",
                UnOp::Plus => "pos",
                UnOp::Not => "not",
            };
            format!("({op} {})", sx(a))
        }
        ExprKind::Binary(op, a, b) => {
            format!("({} {} {})", op.symbol().trim_matches('.'), sx(a), sx(b))
        }
        ExprKind::Paren(a) => format!("(paren {})", sx(a)),
        ExprKind::ArrayConstructor(items) => {
            format!("{{{}}}", items.iter().map(sx).collect::<Vec<_>>().join(" "))
        }
        ExprKind::CharArrayConstructor { len, items } => format!(
            "{{char*{} :: {}}}",
            sx(len),
            items.iter().map(sx).collect::<Vec<_>>().join(" ")
        ),
        ExprKind::ImpliedDo {
            items,
            var,
            start,
            end,
            step,
        } => format!(
            "(do {} {}={} {}{})",
            items.iter().map(sx).collect::<Vec<_>>().join(" "),
            var.text,
            sx(start),
            sx(end),
            step.as_ref()
                .map_or(String::new(), |s| format!(" {}", sx(s)))
        ),
    }
}

fn kind_text(k: &KindParam) -> String {
    match k {
        KindParam::Int(i) => i.to_string(),
        KindParam::Name(n) => n.text.clone(),
    }
}

fn sx_arg(a: &Arg) -> String {
    if let Some(k) = a.marked_part() {
        return format!("|{k}");
    }
    let value = match &a.value {
        ArgValue::Expr(e) => sx(e),
        ArgValue::Range { lo, hi, stride } => {
            let part = |e: &Option<Expr>| e.as_ref().map_or(String::new(), sx);
            match stride {
                Some(s) => format!("{}:{}:{}", part(lo), part(hi), sx(s)),
                None => format!("{}:{}", part(lo), part(hi)),
            }
        }
    };
    match &a.keyword {
        Some(k) => format!("{}={value}", k.text),
        None => value,
    }
}

/// The value expression of `x = <text>`.
fn expr_of(text: &str) -> String {
    let body = stmts(&format!("x = {text}"));
    match &body[0].kind {
        StmtKind::Assign { value, .. } => sx(value),
        other => panic!("not an assignment: {other:?}"),
    }
}

fn assign_parts(stmt: &Stmt) -> (String, String) {
    match &stmt.kind {
        StmtKind::Assign { target, value } => (sx(target), sx(value)),
        other => panic!("not an assignment: {other:?}"),
    }
}

fn pos(span: Span) -> (u32, u32) {
    (span.line, span.col)
}

const BRATU: &str = include_str!("../testdata/bratu.f");

#[test]
fn bratu_fixed_form() {
    let (file, diags) = parse(BRATU, SourceForm::Fixed);
    assert!(diags.is_empty(), "{diags:#?}");
    assert_eq!(file.units.len(), 1);
    let p = procedure(&file.units[0]);
    assert_eq!(p.kind, ProcKind::Subroutine);
    assert_eq!(p.name.text, "bratu");
    assert_eq!(pos(p.span), (1, 7));
    let args: Vec<&str> = p.args.iter().map(|a| a.text.as_str()).collect();
    assert_eq!(args, ["dim", "parmax", "x", "prm", "f"]);
    assert_eq!(p.decls.len(), 5);
    match &p.decls[1].kind {
        DeclKind::Type { ty, entities, .. } => {
            assert_eq!(ty.base, BaseType::DoublePrecision);
            assert_eq!(entities.len(), 2);
            assert_eq!(entities[0].name.text, "x");
            assert_eq!(
                entities[0].dims,
                Some(vec![DimSpec::Explicit {
                    lower: None,
                    upper: Expr {
                        kind: ExprKind::Name(Name {
                            text: "dim".into(),
                            span: Span {
                                file: 0,
                                line: 4,
                                col: 26
                            }
                        }),
                        span: Span {
                            file: 0,
                            line: 4,
                            col: 26
                        }
                    }
                }])
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(p.body.len(), 7);
    assert_eq!(pos(p.body[0].span), (11, 7));
    assert_eq!(
        assign_parts(&p.body[0]),
        ("h".into(), "(/ 2.0 (paren (+ dim 1)))".into())
    );
    assert_eq!(
        assign_parts(&p.body[1]).1,
        "(+ (neg (* 2 x[1])) (* (/ (* (* h h) prm[1]) 12.0) (paren (+ 1 (* 10 exp[(/ x[1] (paren (+ 1.0 (* prm[2] x[1]))))])))))"
    );
    match &p.body[3].kind {
        StmtKind::Do {
            var,
            start,
            end,
            step,
            body,
            ..
        } => {
            assert_eq!(var.text, "i");
            assert_eq!(sx(start), "2");
            assert_eq!(sx(end), "(- dim 1)");
            assert!(step.is_none());
            assert_eq!(body.len(), 4);
            assert_eq!(
                assign_parts(&body[1]).1,
                "(+ (- f[i] (* 2 x[i])) (* (/ (* (* h h) prm[1]) 1.2) exp[(/ x[i] (paren (+ 1.0 (* prm[2] x[i]))))]))"
            );
            assert_eq!(body[3].kind, StmtKind::Continue);
            assert_eq!(body[3].label, Some(1));
            assert_eq!(pos(body[3].span), (19, 7));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(pos(p.body[3].span), (15, 7));
    // The continued statement spans two lines.
    let (target, value) = assign_parts(&p.body[4]);
    assert_eq!(target, "f[(- dim 1)]");
    assert_eq!(
        value,
        "(+ (+ f[(- dim 1)] x[dim]) (* (/ (* (* h h) prm[1]) 12.0) exp[(/ x[dim] (paren (+ 1.0 (* prm[2] x[dim]))))]))"
    );
    match &p.body[4].kind {
        StmtKind::Assign { value, .. } => {
            // `prm(2)` on the continuation line is at line 22, column 18.
            let ExprKind::Binary(_, _, rhs) = &value.kind else {
                panic!()
            };
            let ExprKind::Binary(_, _, call) = &rhs.kind else {
                panic!()
            };
            let ExprKind::Apply { args, .. } = &call.kind else {
                panic!()
            };
            let ArgValue::Expr(quot) = &args[0].value else {
                panic!()
            };
            let ExprKind::Binary(_, _, paren) = &quot.kind else {
                panic!()
            };
            let ExprKind::Paren(sum) = &paren.kind else {
                panic!()
            };
            let ExprKind::Binary(_, _, product) = &sum.kind else {
                panic!()
            };
            assert_eq!(pos(product.span), (22, 18));
        }
        _ => unreachable!(),
    }
    assert_eq!(pos(p.body[6].span), (24, 7));
}

#[test]
fn operator_precedence() {
    for (text, expected) in [
        ("-a**2", "(neg (** a 2))"),
        ("2**-1", "(** 2 (neg 1))"),
        ("2.0**-1*4", "(* (** 2.0 (neg 1)) 4)"),
        ("a**b**c", "(** a (** b c))"),
        ("a*b/c", "(/ (* a b) c)"),
        ("-a*b", "(neg (* a b))"),
        ("-a+b", "(+ (neg a) b)"),
        ("a*-b+c", "(+ (* a (neg b)) c)"),
        ("8/-2*2", "(* (/ 8 (neg 2)) 2)"),
        ("a - -b*c", "(- a (neg (* b c)))"),
        ("a-b-c", "(- (- a b) c)"),
        ("a//b//c", "(// (// a b) c)"),
        ("a+b .lt. c*d", "(< (+ a b) (* c d))"),
        ("a == -1", "(== a (neg 1))"),
        (
            ".not. a .and. b .or. c .eqv. d",
            "(eqv (or (and (not a) b) c) d)",
        ),
        ("a .neqv. b .and. .not. c", "(neqv a (and b (not c)))"),
        ("1.eq.2", "(== 1 2)"),
        ("a.and.b", "(and a b)"),
        ("x.gt.1.e5", "(> x 1.e5)"),
        ("a /= b", "(/= a b)"),
        ("(a+b)*c", "(* (paren (+ a b)) c)"),
    ] {
        assert_eq!(expr_of(text), expected, "{text}");
    }
}

#[test]
fn literals() {
    for (text, expected) in [
        ("1", "1"),
        ("1.0", "1.0"),
        (".5", ".5"),
        ("1.", "1."),
        ("1.e5", "1.e5"),
        ("1.0d0", "1.0e0D"),
        ("1.d-3", "1.e-3D"),
        ("1.0_dp", "1.0_dp"),
        ("1_8", "1_8"),
        ("2.5e3_8", "2.5e3_8"),
        (".true.", ".true."),
        (".false._1", ".false."),
        ("'It''s'", "\"It's\""),
        ("\"a\"\"b\"", "\"a\\\"b\""),
    ] {
        assert_eq!(expr_of(text), expected, "{text}");
    }
    let body = stmts("x = 1.0d0");
    let StmtKind::Assign { value, .. } = &body[0].kind else {
        panic!()
    };
    let ExprKind::Real { text, double, .. } = &value.kind else {
        panic!()
    };
    assert!(*double);
    assert_eq!(text.parse::<f64>().unwrap(), 1.0);
}

#[test]
fn designators_sections_and_keywords() {
    for (text, expected) in [
        ("a(1:n, j)", "a[1:n j]"),
        ("a(:, j)", "a[: j]"),
        ("a(2:)", "a[2:]"),
        ("a(::2)", "a[::2]"),
        ("a(1:n:2)", "a[1:n:2]"),
        ("a(1::2)", "a[1::2]"),
        ("c(i)(1:2)", "(substr c[i] 1 2)"),
        ("c(i)(:k)", "(substr c[i] _ k)"),
        ("int(x, kind=8)", "int[x kind=8]"),
        ("f()", "f[]"),
        ("(/ 1, 2, 3 /)", "{1 2 3}"),
        ("[ 1.0, x ]", "{1.0 x}"),
        ("(/ (i, i = 1, n) /)", "{(do i i=1 n)}"),
        (
            "[((i*j, i=1,3), j=1,3, 2)]",
            "{(do (do (* i j) i=1 3) j=1 3 2)}",
        ),
        ("[ (a(i), b(i), i = 1, n) ]", "{(do a[i] b[i] i=1 n)}"),
        ("(/ /)", "{}"),
    ] {
        assert_eq!(expr_of(text), expected, "{text}");
    }
    let body = stmts("c(1:2) = 'ab'\nc(i)(2:3) = 'xy'\na(i, j) = 0");
    assert_eq!(assign_parts(&body[0]).0, "c[1:2]");
    assert_eq!(assign_parts(&body[1]).0, "(substr c[i] 2 3)");
    assert_eq!(assign_parts(&body[2]).0, "a[i j]");
}

#[test]
fn program_units_free_form() {
    let file = parse_ok(
        "module consts\n\
           implicit none\n\
           integer, parameter :: dp = kind(1.0d0)\n\
         contains\n\
           pure real(dp) function sq(x)\n\
             real(dp), intent(in) :: x\n\
             sq = x*x\n\
           end function sq\n\
         end module consts\n\
         \n\
         recursive integer function fact(n) result(r)\n\
           integer :: n\n\
           if (n <= 1) then\n\
             r = 1\n\
           else\n\
             r = n * fact(n - 1)\n\
           end if\n\
         end function\n\
         double precision function g(x)\n\
           double precision x\n\
           g = h(x)\n\
         contains\n\
           double precision function h(y)\n\
             double precision y\n\
             h = 2*y\n\
           end function h\n\
         end\n\
         subroutine noargs\n\
         end subroutine noargs\n\
         program main\n\
           call noargs\n\
         end program main\n",
    );
    assert_eq!(file.units.len(), 5);
    let ProgramUnit::Module(m) = &file.units[0] else {
        panic!()
    };
    assert_eq!(m.name.text, "consts");
    assert_eq!(m.decls.len(), 2);
    assert_eq!(m.contains.len(), 1);
    match &m.contains[0].kind {
        ProcKind::Function {
            prefix_type: Some(ty),
            result: None,
        } => {
            assert_eq!(ty.base, BaseType::Real);
            assert_eq!(ty.kind.as_ref().map(sx), Some("dp".into()));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(pos(m.contains[0].span), (5, 15));
    let fact = procedure(&file.units[1]);
    match &fact.kind {
        ProcKind::Function {
            prefix_type: Some(ty),
            result: Some(r),
        } => {
            assert_eq!(ty.base, BaseType::Integer);
            assert_eq!(r.text, "r");
        }
        other => panic!("{other:?}"),
    }
    let g = procedure(&file.units[2]);
    assert_eq!(g.contains.len(), 1);
    assert_eq!(g.contains[0].name.text, "h");
    let noargs = procedure(&file.units[3]);
    assert_eq!(noargs.kind, ProcKind::Subroutine);
    assert!(noargs.args.is_empty() && noargs.body.is_empty());
    let main = procedure(&file.units[4]);
    assert_eq!(main.kind, ProcKind::Program);
    assert!(
        matches!(&main.body[0].kind, StmtKind::Call { name, args } if name.text == "noargs" && args.is_empty())
    );
}

#[test]
fn implicit_main_program() {
    let file = parse_ok(
        "x = 1\nprint *, x\nend\n"
            .replace("print *, x\n", "")
            .as_str(),
    );
    let p = procedure(&file.units[0]);
    assert_eq!(p.kind, ProcKind::Program);
    assert_eq!(p.body.len(), 1);
}

#[test]
fn type_declarations() {
    let d = decls(
        "integer n, m\n\
         real*8 a\n\
         real(8) b\n\
         real(kind=8) :: c\n\
         real(dp) d\n\
         integer*8 i8\n\
         integer(8) :: j8\n\
         logical flag\n\
         character(len=10) s1\n\
         character*10 s2\n\
         character(*) s3\n\
         character*(*) s4\n\
         character c5*5, c6*(*)\n\
         character(len=*, kind=1) s7\n\
         complex z\n\
         double complex dz\n\
         type(point) :: p\n\
         doubleprecision e\n",
    );
    let tys: Vec<(BaseType, Option<String>, Option<String>)> = d
        .iter()
        .map(|k| match k {
            DeclKind::Type { ty, .. } => (
                ty.base.clone(),
                ty.kind.as_ref().map(sx),
                ty.len.as_ref().map(|l| match l {
                    CharLen::Assumed => "*".to_string(),
                    CharLen::Deferred => ":".to_string(),
                    CharLen::Expr(e) => sx(e),
                }),
            ),
            other => panic!("{other:?}"),
        })
        .collect();
    let n = |s: &str| Some(s.to_string());
    assert_eq!(tys[0], (BaseType::Integer, None, None));
    assert_eq!(tys[1], (BaseType::Real, n("8"), None));
    assert_eq!(tys[2], (BaseType::Real, n("8"), None));
    assert_eq!(tys[3], (BaseType::Real, n("8"), None));
    assert_eq!(tys[4], (BaseType::Real, n("dp"), None));
    assert_eq!(tys[5], (BaseType::Integer, n("8"), None));
    assert_eq!(tys[6], (BaseType::Integer, n("8"), None));
    assert_eq!(tys[7], (BaseType::Logical, None, None));
    assert_eq!(tys[8], (BaseType::Character, None, n("10")));
    assert_eq!(tys[9], (BaseType::Character, None, n("10")));
    assert_eq!(tys[10], (BaseType::Character, None, n("*")));
    assert_eq!(tys[11], (BaseType::Character, None, n("*")));
    assert_eq!(tys[13], (BaseType::Character, n("1"), n("*")));
    assert_eq!(tys[14], (BaseType::Complex, None, None));
    assert_eq!(tys[15], (BaseType::Complex, None, None));
    assert!(matches!(&tys[16].0, BaseType::Derived(n) if n.text == "point"));
    assert_eq!(tys[17], (BaseType::DoublePrecision, None, None));
    let DeclKind::Type { entities, .. } = &d[12] else {
        panic!()
    };
    assert_eq!(
        entities[0].char_len.as_ref().map(|l| match l {
            CharLen::Expr(e) => sx(e),
            CharLen::Assumed => "*".into(),
            CharLen::Deferred => ":".into(),
        }),
        Some("5".into())
    );
    assert_eq!(entities[1].char_len, Some(CharLen::Assumed));
}

#[test]
fn attributes_and_entities() {
    let d = decls(
        "real(8), dimension(n, 0:m), intent(in out) :: a, b\n\
         integer, parameter :: k = 3, l = k + 1\n\
         real, save, external :: f\n\
         real, allocatable, target :: q(:)\n\
         real :: w(*), v(2:*), u(:, 3:), t(n) = 0.0\n\
         real, intent(inout) :: r\n\
         real, intent(out) :: o\n\
         real x /1.5/\n",
    );
    let DeclKind::Type {
        attrs, entities, ..
    } = &d[0]
    else {
        panic!()
    };
    assert_eq!(attrs.len(), 2);
    let Attr::Dimension(dims) = &attrs[0] else {
        panic!()
    };
    assert_eq!(dims.len(), 2);
    assert!(
        matches!(&dims[1], DimSpec::Explicit { lower: Some(l), upper } if sx(l) == "0" && sx(upper) == "m")
    );
    assert_eq!(attrs[1], Attr::Intent(Intent::InOut));
    assert_eq!(entities.len(), 2);
    let DeclKind::Type {
        attrs, entities, ..
    } = &d[1]
    else {
        panic!()
    };
    assert_eq!(attrs[0], Attr::Parameter);
    assert_eq!(entities[1].init.as_ref().map(sx), Some("(+ k 1)".into()));
    let DeclKind::Type { attrs, .. } = &d[2] else {
        panic!()
    };
    assert_eq!(attrs, &vec![Attr::Save, Attr::External]);
    let DeclKind::Type { attrs, .. } = &d[3] else {
        panic!()
    };
    assert!(matches!(&attrs[0], Attr::Other(n) if n.text == "allocatable"));
    assert!(matches!(&attrs[1], Attr::Other(n) if n.text == "target"));
    let DeclKind::Type { entities, .. } = &d[4] else {
        panic!()
    };
    assert_eq!(
        entities[0].dims,
        Some(vec![DimSpec::AssumedSize { lower: None }])
    );
    assert!(matches!(
        &entities[1].dims.as_ref().unwrap()[0],
        DimSpec::AssumedSize { lower: Some(_) }
    ));
    let u = entities[2].dims.as_ref().unwrap();
    assert_eq!(u[0], DimSpec::AssumedShape { lower: None });
    assert!(matches!(&u[1], DimSpec::AssumedShape { lower: Some(_) }));
    assert_eq!(entities[3].init.as_ref().map(sx), Some("0.0".into()));
    let DeclKind::Type { attrs, .. } = &d[5] else {
        panic!()
    };
    assert_eq!(attrs[0], Attr::Intent(Intent::InOut));
    let DeclKind::Type { attrs, .. } = &d[6] else {
        panic!()
    };
    assert_eq!(attrs[0], Attr::Intent(Intent::Out));
    let DeclKind::Type { entities, .. } = &d[7] else {
        panic!()
    };
    assert_eq!(entities[0].init.as_ref().map(sx), Some("1.5".into()));
}

#[test]
fn specification_statements() {
    let d = decls(
        "use m\n\
         use other, only: a, b\n\
         use, intrinsic :: iso_fortran_env, only: real64\n\
         implicit none\n\
         implicit double precision (a-h, o-z), integer (i-n)\n\
         implicit real*8 (x), real(8) (y)\n\
         dimension p(10), q(n, m)\n\
         parameter (pi = 3.14159, two = 2)\n\
         save\n\
         save s, t\n\
         external f, g\n\
         intrinsic sin\n\
         intent(in) :: x, y\n\
         intent(in out) z\n\
         common /blk/ a, b\n\
         equivalence (a, b)\n\
         namelist /nl/ a\n\
         pointer p\n\
         allocatable :: w(:), v\n",
    );
    assert_eq!(
        d[0],
        DeclKind::Use {
            module: Name {
                text: "m".into(),
                span: Span {
                    file: 0,
                    line: 2,
                    col: 5
                }
            },
            only: None,
            renames: Vec::new(),
        }
    );
    assert!(matches!(&d[1], DeclKind::Use { only: Some(names), .. } if names.len() == 2));
    assert!(
        matches!(&d[2], DeclKind::Use { module, only: Some(names), .. } if module.text == "iso_fortran_env" && names[0].0.text == "real64")
    );
    assert_eq!(d[3], DeclKind::ImplicitNone);
    let DeclKind::Implicit(rules) = &d[4] else {
        panic!("{:?}", d[4])
    };
    assert_eq!(rules[0].0.base, BaseType::DoublePrecision);
    assert_eq!(rules[0].1, vec![('a', 'h'), ('o', 'z')]);
    assert_eq!(rules[1].0.base, BaseType::Integer);
    assert_eq!(rules[1].1, vec![('i', 'n')]);
    let DeclKind::Implicit(rules) = &d[5] else {
        panic!()
    };
    assert_eq!(rules[0].0.kind.as_ref().map(sx), Some("8".into()));
    assert_eq!(rules[1].0.kind.as_ref().map(sx), Some("8".into()));
    assert_eq!(rules[1].1, vec![('y', 'y')]);
    let DeclKind::Dimension(ents) = &d[6] else {
        panic!()
    };
    assert_eq!(ents.len(), 2);
    let DeclKind::Parameter(pairs) = &d[7] else {
        panic!()
    };
    assert_eq!(pairs[0].0.text, "pi");
    assert_eq!(sx(&pairs[1].1), "2");
    assert_eq!(d[8], DeclKind::Save(vec![]));
    assert!(matches!(&d[9], DeclKind::Save(n) if n.len() == 2));
    assert!(matches!(&d[10], DeclKind::External(n) if n.len() == 2));
    assert!(matches!(&d[11], DeclKind::Intrinsic(n) if n[0].text == "sin"));
    assert!(matches!(&d[12], DeclKind::Intent(Intent::In, n) if n.len() == 2));
    assert!(matches!(&d[13], DeclKind::Intent(Intent::InOut, _)));
    let DeclKind::Common(groups) = &d[14] else {
        panic!("{:?}", d[14])
    };
    assert_eq!(groups.len(), 1);
    let DeclKind::Equivalence(sets) = &d[15] else {
        panic!("{:?}", d[15])
    };
    assert_eq!((sets.len(), sets[0].len()), (1, 2));
    let unsupported: Vec<&str> = d[16..18]
        .iter()
        .map(|k| match k {
            DeclKind::Unsupported(s) => s.as_str(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(unsupported, ["NAMELIST", "POINTER"]);
    let DeclKind::Allocatable(ents) = &d[18] else {
        panic!("{:?}", d[18])
    };
    assert_eq!(ents.len(), 2);
    assert!(ents[0].dims.is_some() && ents[1].dims.is_none());
}

#[test]
fn unsupported_blocks_are_skipped() {
    let file = parse_ok(
        "subroutine s(x)\n\
           interface operator(+)\n\
             module procedure add\n\
           end interface\n\
           type, abstract :: point\n\
             real :: x, y\n\
           end type point\n\
           real x\n\
           where (x > 0) x = 1\n\
           where (x > 0)\n\
             x = 2\n\
           elsewhere\n\
             x = 3\n\
           end where\n\
           x = 4\n\
         end subroutine s\n",
    );
    let p = procedure(&file.units[0]);
    let kinds: Vec<&DeclKind> = p.decls.iter().map(|d| &d.kind).collect();
    // An operator interface is a generic interface named `operator(+)`.
    assert!(
        matches!(kinds[0], DeclKind::Interface(b) if b.generic.as_ref().is_some_and(|g| g.text == "operator(+)"))
    );
    assert!(matches!(kinds[1], DeclKind::Unsupported(k) if k.contains("ABSTRACT")));
    assert!(matches!(kinds[2], DeclKind::Type { .. }));
    assert_eq!(p.body.len(), 3);
    assert!(
        matches!(&p.body[0].kind, StmtKind::Where { arms, else_body: None, .. }
        if arms.len() == 1 && arms[0].1.len() == 1)
    );
    assert!(
        matches!(&p.body[1].kind, StmtKind::Where { arms, else_body: Some(e), .. }
        if arms.len() == 1 && e.len() == 1)
    );
    assert_eq!(assign_parts(&p.body[2]).1, "4");
}

#[test]
fn where_forall_and_do_concurrent() {
    let file = parse_ok(
        "subroutine s(x, m, n)
           real x(n), m(n, n)
           w: where (x > 0)
             x = 2
           elsewhere (x < -1) w
             x = 3
           elsewhere w
             x = 4
           end where w
           forall (i = 1:n, j = 1:n:2, i /= j) m(i, j) = x(i)
           forall (i = 1:n)
             x(i) = i
           end forall
           do concurrent (integer :: k = 1:n)
             x(k) = 0
           end do
         end subroutine s
",
    );
    let p = procedure(&file.units[0]);
    assert_eq!(p.body.len(), 4);
    match &p.body[0].kind {
        StmtKind::Where {
            name,
            arms,
            else_body,
        } => {
            assert_eq!(name.as_ref().unwrap().text, "w");
            assert_eq!(arms.len(), 2);
            assert_eq!(else_body.as_ref().unwrap().len(), 1);
        }
        other => panic!("{other:?}"),
    }
    match &p.body[1].kind {
        StmtKind::Forall {
            concurrent: false,
            indices,
            mask: Some(_),
            body,
            ..
        } => {
            assert_eq!(indices.len(), 2);
            assert!(indices[1].stride.is_some());
            assert_eq!(body.len(), 1);
        }
        other => panic!("{other:?}"),
    }
    assert!(
        matches!(&p.body[2].kind, StmtKind::Forall { concurrent: false, mask: None, body, .. } if body.len() == 1)
    );
    assert!(
        matches!(&p.body[3].kind, StmtKind::Forall { concurrent: true, indices, .. } if indices[0].var.text == "k")
    );
}

#[test]
fn unclosed_where_and_forall_are_located_errors() {
    for (src, msg) in [
        (
            "subroutine s(x)\n real x(3)\n where (x > 0)\n x = 1\nend subroutine\n",
            "WHERE construct is not closed",
        ),
        (
            "subroutine s(x)\n real x(3)\n forall (i = 1:3)\n x(i) = 1\nend subroutine\n",
            "FORALL construct is not closed",
        ),
        (
            "subroutine s(x)\n real x(3)\n forall (i = 1:3) call f(x)\nend subroutine\n",
            "expected an assignment",
        ),
    ] {
        let errs = errors(src, SourceForm::Free);
        assert!(
            errs.iter().any(|e| e.message.contains(msg)),
            "{src}: {errs:?}"
        );
    }
}

#[test]
fn fortran90_module_syntax() {
    let d = decls(
        "use m, only: a, b => c\n\
         use n, x => y, z => w\n\
         private\n\
         public :: a, f\n\
         real, private, optional :: q\n\
         optional r\n\
         interface g\n\
           module procedure g1, g2\n\
           function g3(x)\n\
             import :: dp\n\
             real(dp) :: x, g3\n\
           end function g3\n\
         end interface g\n\
         abstract interface\n\
           subroutine cb(x)\n\
             real x\n\
           end subroutine\n\
         end interface\n\
         type, public :: pt\n\
           sequence\n\
           real :: x = 1.0, v(3)\n\
           type(other) :: o\n\
         end type pt\n\
         type(pt) :: p\n",
    );
    let DeclKind::Use {
        only: Some(only),
        renames,
        ..
    } = &d[0]
    else {
        panic!("{:?}", d[0])
    };
    assert_eq!(
        (only[1].0.text.as_str(), only[1].1.text.as_str()),
        ("b", "c")
    );
    assert_eq!(
        (only[0].0.text.as_str(), only[0].1.text.as_str()),
        ("a", "a")
    );
    assert!(renames.is_empty());
    let DeclKind::Use {
        only: None,
        renames,
        ..
    } = &d[1]
    else {
        panic!("{:?}", d[1])
    };
    assert_eq!(renames.len(), 2);
    assert_eq!(
        (renames[1].0.text.as_str(), renames[1].1.text.as_str()),
        ("z", "w")
    );
    assert!(matches!(&d[2], DeclKind::Access { public: false, names } if names.is_empty()));
    assert!(matches!(&d[3], DeclKind::Access { public: true, names } if names.len() == 2));
    assert!(matches!(&d[4], DeclKind::Type { attrs, .. }
        if attrs.contains(&Attr::Access(false)) && attrs.contains(&Attr::Optional)));
    assert!(matches!(&d[5], DeclKind::Optional(n) if n[0].text == "r"));
    let DeclKind::Interface(g) = &d[6] else {
        panic!("{:?}", d[6])
    };
    assert_eq!(g.generic.as_ref().map(|n| n.text.as_str()), Some("g"));
    assert_eq!(g.procedures.len(), 2);
    assert_eq!(g.bodies.len(), 1);
    assert!(matches!(&g.bodies[0].decls[0].kind, DeclKind::Import(n) if n[0].text == "dp"));
    let DeclKind::Interface(a) = &d[7] else {
        panic!("{:?}", d[7])
    };
    assert!(a.is_abstract && a.generic.is_none() && a.bodies.len() == 1);
    let DeclKind::TypeDef(t) = &d[8] else {
        panic!("{:?}", d[8])
    };
    assert_eq!(t.name.text, "pt");
    assert_eq!(t.access, Some(true));
    assert_eq!(t.components.len(), 2);
    assert!(
        matches!(&d[9], DeclKind::Type { ty, .. } if matches!(&ty.base, BaseType::Derived(n) if n.text == "pt"))
    );
}

#[test]
fn defined_operators_reference_their_generic() {
    // Binary defined operators bind loosest, unary ones tightest.
    assert_eq!(expr_of("a .dot. b + c"), "operator(.dot.)[a (+ b c)]");
    assert_eq!(
        expr_of(".neg. a ** 2 .x. b"),
        "operator(.x.)[(** operator(.neg.)[a] 2) b]"
    );
    let file = parse_ok(
        "module m
           public :: operator(.eq.), assignment(=), operator(/)
           interface operator(/)
             module procedure d
           end interface operator(/)
         end module m
",
    );
    let ProgramUnit::Module(m) = &file.units[0] else {
        panic!("a module")
    };
    let names: Vec<String> = m
        .decls
        .iter()
        .flat_map(|d| match &d.kind {
            DeclKind::Access { names, .. } => names.iter().map(|n| n.text.clone()).collect(),
            DeclKind::Interface(b) => b.generic.iter().map(|n| n.text.clone()).collect(),
            _ => Vec::new(),
        })
        .collect();
    assert_eq!(
        names,
        [
            "operator(==)",
            "assignment(=)",
            "operator(/)",
            "operator(/)"
        ]
    );
}

#[test]
fn component_references_are_one_name() {
    let file = parse_ok(
        "subroutine s(p)\n\
           p%a%b = p%v(2) + f(x=p%c)\n\
         end subroutine s\n",
    );
    let p = procedure(&file.units[0]);
    let (target, value) = assign_parts(&p.body[0]);
    assert_eq!(target, "p%a%b");
    // Each part's subscripts follow a marker naming the part (`|1`).
    assert_eq!(value, "(+ p%v[|1 2] f[x=p%c])");
}

#[test]
fn statement_functions_versus_array_assignments() {
    let file = parse_ok(
        "subroutine s(n)\n\
           real a(10), f, g\n\
           dimension b(5)\n\
           f(x, y) = x + y\n\
           g(z) = z * 2\n\
           a(1) = 1.0\n\
           b(2) = 2.0\n\
           h(q) = q\n\
         end subroutine s\n",
    );
    let p = procedure(&file.units[0]);
    let fns: Vec<(String, usize)> = p
        .decls
        .iter()
        .filter_map(|d| match &d.kind {
            DeclKind::StmtFunction { name, args, .. } => Some((name.text.clone(), args.len())),
            _ => None,
        })
        .collect();
    assert_eq!(fns, vec![("f".into(), 2), ("g".into(), 1)]);
    // After the first executable statement, `h(q) = q` is an assignment.
    assert_eq!(p.body.len(), 3);
    assert_eq!(assign_parts(&p.body[0]).0, "a[1]");
    assert_eq!(assign_parts(&p.body[1]).0, "b[2]");
    assert_eq!(assign_parts(&p.body[2]).0, "h[q]");
    // Non-name arguments make an assignment even first.
    let body = stmts("real c(3)\nc(1) = 2");
    assert_eq!(assign_parts(&body[0]).0, "c[1]");
}

#[test]
fn host_arrays_are_not_statement_functions() {
    let file = parse_ok(
        "subroutine outer\n\
           real a(10)\n\
           call inner\n\
         contains\n\
           subroutine inner\n\
             a(i) = 1.0\n\
           end subroutine inner\n\
         end subroutine outer\n",
    );
    let inner = &procedure(&file.units[0]).contains[0];
    assert!(inner.decls.is_empty());
    assert_eq!(assign_parts(&inner.body[0]).0, "a[i]");
}

#[test]
fn data_statements() {
    let d = decls(
        "real a(3), b, c(2)\n\
         data a /3*0.0/, b /-1.5/\n\
         data (c(i), i = 1, 2) / 1.0, 2.0 /, s /'x'/\n\
         data x, y / n*1, .true. /\n",
    );
    let DeclKind::Data(groups) = &d[1] else {
        panic!()
    };
    assert_eq!(groups.len(), 2);
    assert_eq!(groups[0].objects.iter().map(sx).collect::<Vec<_>>(), ["a"]);
    assert_eq!(groups[0].values.len(), 1);
    assert_eq!(groups[0].values[0].0.as_ref().map(sx), Some("3".into()));
    assert_eq!(sx(&groups[0].values[0].1), "0.0");
    assert_eq!(sx(&groups[1].values[0].1), "(neg 1.5)");
    let DeclKind::Data(groups) = &d[2] else {
        panic!()
    };
    assert_eq!(sx(&groups[0].objects[0]), "(do c[i] i=1 2)");
    assert_eq!(groups[0].values.len(), 2);
    assert_eq!(sx(&groups[1].values[0].1), "\"x\"");
    let DeclKind::Data(groups) = &d[3] else {
        panic!()
    };
    assert_eq!(groups[0].objects.len(), 2);
    assert_eq!(groups[0].values[0].0.as_ref().map(sx), Some("n".into()));
    assert_eq!(sx(&groups[0].values[1].1), ".true.");
}

#[test]
fn data_after_executable_statements_is_a_declaration() {
    let file = parse_ok("subroutine s\nx = 1\ndata y /2.0/\nend\n");
    let p = procedure(&file.units[0]);
    assert_eq!(p.body.len(), 1);
    assert!(matches!(p.decls[0].kind, DeclKind::Data(_)));
}

#[test]
fn if_constructs() {
    let body = stmts(
        "if (a > 0) then\n\
           x = 1\n\
         else if (a < 0) then\n\
           x = 2\n\
         elseif (a == 0) then\n\
           x = 3\n\
           x = 4\n\
         else\n\
           x = 5\n\
         endif\n\
         outer: if (b) then\n\
           y = 1\n\
         end if outer\n\
         if (c) y = 2\n\
         if (c) go to 10\n\
         if (d) 10, 20, 30\n\
         10 continue\n",
    );
    match &body[0].kind {
        StmtKind::If {
            name,
            arms,
            else_body,
        } => {
            assert!(name.is_none());
            assert_eq!(arms.len(), 3);
            assert_eq!(sx(&arms[1].0), "(< a 0)");
            assert_eq!(arms[2].1.len(), 2);
            assert_eq!(else_body.as_ref().map(|b| b.len()), Some(1));
        }
        other => panic!("{other:?}"),
    }
    assert!(
        matches!(&body[1].kind, StmtKind::If { name: Some(n), else_body: None, .. } if n.text == "outer")
    );
    match &body[2].kind {
        StmtKind::LogicalIf { cond, stmt } => {
            assert_eq!(sx(cond), "c");
            assert_eq!(assign_parts(stmt).0, "y");
            assert_eq!(pos(stmt.span), (15, 8));
        }
        other => panic!("{other:?}"),
    }
    assert!(
        matches!(&body[3].kind, StmtKind::LogicalIf { stmt, .. } if stmt.kind == StmtKind::Goto(10))
    );
    assert!(
        matches!(&body[4].kind, StmtKind::ArithmeticIf { value, labels } if labels == &[10, 20, 30] && sx(value) == "d"),
        "{:?}",
        body[4].kind
    );
    assert_eq!(body[5].label, Some(10));
}

#[test]
fn do_loops() {
    let body = stmts(
        "do i = 1, n, 2\n\
           x = x + i\n\
         end do\n\
         do while (x > 0)\n\
           x = x - 1\n\
         enddo\n\
         dowhile (x < 5)\n\
           x = x + 1\n\
         end do\n\
         do\n\
           exit\n\
         end do\n\
         outer: do j = 1, m\n\
           inner: do k = 1, m\n\
             cycle outer\n\
             exit inner\n\
           end do inner\n\
         end do outer\n\
         do 10, i = 1, n\n\
           x = i\n\
         10 y = i\n\
         do 20 i = 1, n\n\
           do 20 j = 1, n\n\
             a(i, j) = 0\n\
         20 continue\n\
         do 30 i = 1, n\n\
           x = i\n\
         30 end do\n",
    );
    assert_eq!(body.len(), 8);
    assert!(
        matches!(&body[0].kind, StmtKind::Do { step: Some(s), body, .. } if sx(s) == "2" && body.len() == 1)
    );
    assert!(matches!(&body[1].kind, StmtKind::DoWhile { cond, .. } if sx(cond) == "(> x 0)"));
    assert!(matches!(&body[2].kind, StmtKind::DoWhile { cond, .. } if sx(cond) == "(< x 5)"));
    assert!(
        matches!(&body[3].kind, StmtKind::DoForever { body, .. } if body[0].kind == StmtKind::Exit(None))
    );
    match &body[4].kind {
        StmtKind::Do {
            name: Some(n),
            body,
            ..
        } => {
            assert_eq!(n.text, "outer");
            let StmtKind::Do {
                name: Some(inner),
                body,
                ..
            } = &body[0].kind
            else {
                panic!()
            };
            assert_eq!(inner.text, "inner");
            assert!(matches!(&body[0].kind, StmtKind::Cycle(Some(n)) if n.text == "outer"));
            assert!(matches!(&body[1].kind, StmtKind::Exit(Some(n)) if n.text == "inner"));
        }
        other => panic!("{other:?}"),
    }
    // The labelled terminal statement belongs to the body.
    match &body[5].kind {
        StmtKind::Do { body, .. } => {
            assert_eq!(body.len(), 2);
            assert_eq!(body[1].label, Some(10));
            assert_eq!(assign_parts(&body[1]).0, "y");
        }
        other => panic!("{other:?}"),
    }
    // Two loops sharing label 20 are nested; the CONTINUE is innermost.
    match &body[6].kind {
        StmtKind::Do { var, body, .. } => {
            assert_eq!(var.text, "i");
            assert_eq!(body.len(), 1);
            let StmtKind::Do { var, body, .. } = &body[0].kind else {
                panic!()
            };
            assert_eq!(var.text, "j");
            assert_eq!(body.len(), 2);
            assert_eq!(body[1].kind, StmtKind::Continue);
            assert_eq!(body[1].label, Some(20));
        }
        other => panic!("{other:?}"),
    }
    match &body[7].kind {
        StmtKind::Do { body, .. } => {
            assert_eq!(body.len(), 2);
            assert_eq!(body[1].label, Some(30));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn fixed_form_loops_and_blank_insensitive_keywords() {
    let src = "      SUBROUTINE S(A, N)\n\
               \x20     DOUBLEPRECISION A(N)\n\
               \x20     INTEGER I, J\n\
               \x20     DO 10 I = 1, N\n\
               \x20        DO 10 J = 1, N\n\
               \x20           IF (A(I) .GT. 0.D0) GOTO 10\n\
               \x20           A(I) = -A(I)\n\
               \x20  10 CONTINUE\n\
               \x20     GO TO (20, 30), I\n\
               \x20  20 ENDIF = 1\n\
               \x20  30 IF (N .EQ. 1) THEN\n\
               \x20        RETURN\n\
               \x20     ELSEIF (N .EQ. 2) THEN\n\
               \x20        STOP 'two'\n\
               \x20     END IF\n\
               \x20     SELECTCASE (N)\n\
               \x20     CASE DEFAULT\n\
               \x20     ENDSELECT\n\
               \x20     END\n";
    let (file, diags) = parse(src, SourceForm::Fixed);
    assert!(diags.is_empty(), "{diags:#?}");
    let p = procedure(&file.units[0]);
    assert!(
        matches!(&p.decls[0].kind, DeclKind::Type { ty, .. } if ty.base == BaseType::DoublePrecision)
    );
    assert_eq!(p.body.len(), 5);
    let StmtKind::Do { body, .. } = &p.body[0].kind else {
        panic!()
    };
    let StmtKind::Do { body, .. } = &body[0].kind else {
        panic!()
    };
    assert_eq!(body.len(), 3);
    assert!(
        matches!(&body[0].kind, StmtKind::LogicalIf { stmt, .. } if stmt.kind == StmtKind::Goto(10))
    );
    assert!(
        matches!(&p.body[1].kind, StmtKind::ComputedGoto { labels, index } if labels == &vec![20, 30] && sx(index) == "i")
    );
    // No reserved words: `ENDIF = 1` assigns to a variable.
    assert_eq!(p.body[2].label, Some(20));
    assert_eq!(assign_parts(&p.body[2]).0, "endif");
    assert!(matches!(&p.body[3].kind, StmtKind::If { arms, .. } if arms.len() == 2));
    assert!(matches!(&p.body[4].kind, StmtKind::SelectCase { cases, .. } if cases.len() == 1));
}

#[test]
fn select_case() {
    let body = stmts(
        "sel: select case (k)\n\
         case (1)\n\
           x = 1\n\
         case (2, 4:6, :0, 10:) sel\n\
           x = 2\n\
         case default\n\
           x = 3\n\
         end select sel\n\
         select case (c)\n\
         case ('a':'z')\n\
         end select\n",
    );
    match &body[0].kind {
        StmtKind::SelectCase {
            name,
            selector,
            cases,
        } => {
            assert_eq!(name.as_ref().map(|n| n.text.as_str()), Some("sel"));
            assert_eq!(sx(selector), "k");
            assert_eq!(cases.len(), 3);
            let CaseSelector::Items(items) = &cases[1].0 else {
                panic!()
            };
            assert_eq!(items.len(), 4);
            assert!(
                matches!(&items[1], CaseItem::Range(Some(a), Some(b)) if sx(a) == "4" && sx(b) == "6")
            );
            assert!(matches!(&items[2], CaseItem::Range(None, Some(b)) if sx(b) == "0"));
            assert!(matches!(&items[3], CaseItem::Range(Some(a), None) if sx(a) == "10"));
            assert_eq!(cases[2].0, CaseSelector::Default);
            assert_eq!(cases[2].1.len(), 1);
        }
        other => panic!("{other:?}"),
    }
    assert!(
        matches!(&body[1].kind, StmtKind::SelectCase { cases, .. } if cases.len() == 1 && cases[0].1.is_empty())
    );
}

#[test]
fn simple_statements() {
    let body = stmts(
        "call f\n\
         call g()\n\
         call h(a, b(1:2), n=3)\n\
         go to 100\n\
         goto (10, 20, 30) k\n\
         go to (10, 20), k + 1\n\
         continue\n\
         return\n\
         stop\n\
         stop 2\n\
         stop 'done'\n\
         inquire (10)\n\
         allocate (a(n))\n\
         deallocate (a)\n\
         open (unit=10, file='f')\n\
         close (10)\n\
         assign 10 to k\n\
         go to k\n\
         10 20 30 100 continue\n"
            .replace(
                "10 20 30 100 continue\n",
                "100 continue\n10 continue\n20 continue\n30 continue\n",
            )
            .as_str(),
    );
    assert!(
        matches!(&body[0].kind, StmtKind::Call { name, args } if name.text == "f" && args.is_empty())
    );
    assert!(matches!(&body[1].kind, StmtKind::Call { args, .. } if args.is_empty()));
    match &body[2].kind {
        StmtKind::Call { args, .. } => {
            assert_eq!(
                args.iter().map(sx_arg).collect::<Vec<_>>(),
                ["a", "b[1:2]", "n=3"]
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(body[3].kind, StmtKind::Goto(100));
    assert!(
        matches!(&body[4].kind, StmtKind::ComputedGoto { labels, index } if labels.len() == 3 && sx(index) == "k")
    );
    assert!(
        matches!(&body[5].kind, StmtKind::ComputedGoto { index, .. } if sx(index) == "(+ k 1)")
    );
    assert_eq!(body[6].kind, StmtKind::Continue);
    assert_eq!(body[7].kind, StmtKind::Return);
    assert_eq!(body[8].kind, StmtKind::Stop(None));
    assert!(matches!(&body[9].kind, StmtKind::Stop(Some(e)) if sx(e) == "2"));
    assert!(matches!(&body[10].kind, StmtKind::Stop(Some(e)) if sx(e) == "\"done\""));
    assert!(
        matches!(&body[12].kind, StmtKind::Allocate { objects, stat: None, .. } if objects.len() == 1 && sx(&objects[0]) == "a[n]"),
        "{:?}",
        body[12].kind
    );
    assert!(
        matches!(&body[13].kind, StmtKind::Deallocate { objects, .. } if sx(&objects[0]) == "a")
    );
    let unsupported: Vec<String> = body[11..18]
        .iter()
        .filter(|s| {
            !matches!(
                s.kind,
                StmtKind::Allocate { .. } | StmtKind::Deallocate { .. }
            )
        })
        .map(|s| match &s.kind {
            StmtKind::Unsupported(k) => k.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        unsupported,
        ["INQUIRE", "OPEN", "CLOSE", "ASSIGN", "assigned GO TO"]
    );
}

#[test]
fn print_write_read_and_format_statements_are_parsed() {
    let (file, diags) = parse(
        "subroutine s\n\
           print *, 'x = ', x\n\
           write (*, '(a, f10.3)') 'y', y\n\
           write (6, 100) (a(i), i = 1, n)\n\
         100 format (1x, 'A b', f10.3, e12.4e3, /)\n\
           if (x > 0) print *, x\n\
           read (*, *) n, (a(i), i = 1, n)\n\
           read *, k\n\
         end\n",
        SourceForm::Free,
    );
    assert!(diags.is_empty(), "{diags:?}");
    let p = procedure(&file.units[0]);
    assert_eq!(p.body.len(), 6);
    let StmtKind::Write {
        format: IoFormat::List,
        items,
        ..
    } = &p.body[0].kind
    else {
        panic!("{:?}", p.body[0].kind)
    };
    assert_eq!(items.len(), 2);
    assert!(matches!(
        &p.body[1].kind,
        StmtKind::Write {
            format: IoFormat::Expr(_),
            ..
        }
    ));
    let StmtKind::Write {
        format: IoFormat::Label(100, _),
        items,
        ..
    } = &p.body[2].kind
    else {
        panic!("{:?}", p.body[2].kind)
    };
    assert!(matches!(items[0].kind, ExprKind::ImpliedDo { .. }));
    let StmtKind::Read {
        format: IoFormat::List,
        items,
        ..
    } = &p.body[4].kind
    else {
        panic!("{:?}", p.body[4].kind)
    };
    assert_eq!(items.len(), 2);
    assert!(matches!(&p.body[5].kind, StmtKind::Read { .. }));
    assert_eq!(p.formats.len(), 1);
    assert_eq!(p.formats[0].label, 100);
    assert_eq!(p.formats[0].text, "(1x, 'A b', f10.3, e12.4e3, /)");
}

#[test]
fn file_io_is_a_located_error() {
    for (text, message) in [
        ("write (10, *) x", "unit other than"),
        ("write (*, *, advance='no') x", "specifiers other than"),
        ("read (1, *) x", "unit other than"),
        ("write (6) x", "unformatted WRITE"),
    ] {
        let (_, diags) = parse(&format!("subroutine s\n{text}\nend\n"), SourceForm::Free);
        assert!(
            diags.iter().any(|d| d.severity == Severity::Error
                && d.span.line == 2
                && d.message.contains(message)),
            "{text}: {diags:?}"
        );
    }
}

#[test]
fn free_form_continuations_and_semicolons() {
    let body = stmts(
        "x = a + &\n\
         \x20     & b; y = 'abc&\n\
         &def' ! comment\n\
         z = f(1, &  ! comment after the marker\n\
         \n\
         \x20      2)\n",
    );
    assert_eq!(body.len(), 3);
    assert_eq!(assign_parts(&body[0]).1, "(+ a b)");
    assert_eq!(assign_parts(&body[1]).1, "\"abcdef\"");
    assert_eq!(pos(body[1].span), (3, 12));
    assert_eq!(assign_parts(&body[2]).1, "f[1 2]");
}

#[test]
fn fixed_form_tabs_long_lines_and_comments() {
    let mut long = String::from("      X = 1.0 + Y");
    while long.len() < 72 {
        long.push(' ');
    }
    long.push_str("IGNORED1");
    let src = format!(
        "C comment\n*star\n\tSUBROUTINE T(X, Y)\n{long}\n\tX = X +\n\t1 2.0 ! tail\n10\tCONTINUE\n\tEND\n"
    );
    let (file, diags) = parse(&src, SourceForm::Fixed);
    assert!(diags.is_empty(), "{diags:#?}");
    let p = procedure(&file.units[0]);
    assert_eq!(assign_parts(&p.body[0]).1, "(+ 1.0 y)");
    assert_eq!(assign_parts(&p.body[1]).1, "(+ x 2.0)");
    assert_eq!(p.body[2].label, Some(10));
    assert_eq!(pos(p.body[2].span), (7, 4));
}

#[test]
fn errors_have_precise_positions_and_recovery_continues() {
    let errs = errors(
        "subroutine s(x)\n\
           real x\n\
           x = (1 +\n\
           call\n\
           x = 2 *\n\
           y = 3 3\n\
           do i = 1\n\
             x = 1\n\
           end do\n\
           x = 4\n\
         end subroutine s\n",
        SourceForm::Free,
    );
    let found: Vec<((u32, u32), &str)> = errs
        .iter()
        .map(|d| (pos(d.span), d.message.as_str()))
        .collect();
    assert_eq!(found.len(), 5, "{found:#?}");
    assert_eq!(found[0].0, (3, 9));
    assert!(
        found[0].1.contains("expected an expression in assignment"),
        "{}",
        found[0].1
    );
    assert_eq!(found[1].0, (4, 5));
    assert!(found[1].1.contains("CALL statement"));
    assert_eq!(found[2].0, (5, 8));
    assert_eq!(found[3].0, (6, 7));
    assert!(found[3].1.contains("unexpected '3' after the assignment"));
    assert_eq!(found[4].0, (7, 9));
    assert!(found[4].1.contains("DO statement"));
}

#[test]
fn construct_mismatches_are_reported() {
    let errs = errors(
        "subroutine s\n\
           if (x) then\n\
             y = 1\n\
           end do\n\
           do i = 1, 2\n\
           end if\n\
           end do\n\
           a: do\n\
           end do b\n\
           else\n\
         end function s\n",
        SourceForm::Free,
    );
    let found: Vec<((u32, u32), &str)> = errs
        .iter()
        .map(|d| (pos(d.span), d.message.as_str()))
        .collect();
    assert_eq!(
        found,
        vec![
            ((4, 1), "END DO without a matching DO"),
            ((5, 1), "DO loop is not closed by END DO"),
            ((7, 1), "END DO without a matching DO"),
            (
                (9, 8),
                "construct name 'b' does not match the DO loop name 'a'"
            ),
            ((10, 1), "ELSE without a matching IF THEN"),
            ((11, 1), "END FUNCTION does not close SUBROUTINE s"),
        ]
    );
}

#[test]
fn unterminated_units_and_loops() {
    let errs = errors("subroutine s\n do 10 i = 1, n\n x = 1\n", SourceForm::Free);
    let found: Vec<((u32, u32), &str)> = errs
        .iter()
        .map(|d| (pos(d.span), d.message.as_str()))
        .collect();
    assert_eq!(
        found,
        vec![
            (
                (2, 2),
                "DO loop is not terminated: no statement with label 10 follows"
            ),
            ((1, 1), "SUBROUTINE s is not closed by an END statement"),
        ]
    );
}

#[test]
fn header_errors_keep_constructs_matched() {
    // The broken IF and DO headers still open constructs, so their ENDs
    // match and only the header errors are reported.
    let errs = errors(
        "subroutine s\n\
           if (x .eq. ) then\n\
             y = 1\n\
           else if (x # 2) then\n\
           end if\n\
           do 10 i = 1,\n\
         10 continue\n\
           select case (x +)\n\
           case (1)\n\
           end select\n\
         end\n",
        SourceForm::Free,
    );
    let lines: Vec<u32> = errs.iter().map(|d| d.span.line).collect();
    assert_eq!(lines, vec![2, 4, 6, 8], "{errs:#?}");
}

#[test]
fn lexical_errors_are_reported_with_positions() {
    let errs = errors(
        "subroutine s\n  x = 'abc\n  y = a . b\nend\n",
        SourceForm::Free,
    );
    assert_eq!(errs.len(), 2);
    assert_eq!(pos(errs[0].span), (2, 7));
    assert_eq!(pos(errs[1].span), (3, 9));
}

#[test]
fn empty_and_comment_only_files() {
    for text in ["", "\n\n", "! only a comment\n"] {
        let (file, diags) = parse(text, SourceForm::Free);
        assert!(file.units.is_empty() && diags.is_empty());
    }
    let (file, diags) = parse("C comment\n      \n", SourceForm::Fixed);
    assert!(file.units.is_empty() && diags.is_empty());
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let deep = format!("x = {}1{}", "(".repeat(5000), ")".repeat(5000));
    let errs = errors(&format!("subroutine s\n{deep}\nend\n"), SourceForm::Free);
    assert_eq!(errs.len(), 1);
    assert!(errs[0].message.contains("nested too deeply"));
    let long = format!("x = 1{}", "+1".repeat(10000));
    let errs = errors(&format!("subroutine s\n{long}\nend\n"), SourceForm::Free);
    assert_eq!(errs.len(), 1);
    let minus = format!("x = {}1", "-".repeat(10000));
    assert_eq!(
        errors(&format!("subroutine s\n{minus}\nend\n"), SourceForm::Free).len(),
        1
    );
    let ifs = "if (x) then\n".repeat(1000) + &"end if\n".repeat(1000);
    let errs = errors(&format!("subroutine s\n{ifs}end\n"), SourceForm::Free);
    assert!(!errs.is_empty());
    let units = "subroutine a\ncontains\n".repeat(100);
    let _ = parse(&units, SourceForm::Free);
}

/// A small deterministic PRNG (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

const FUZZ_FREE: &str = "module m\n\
    integer, parameter :: dp = kind(1.d0)\n\
    contains\n\
    subroutine s(a, n, c)\n\
      real(dp), intent(inout) :: a(n)\n\
      character(len=*) :: c\n\
      data q /3*0.0/\n\
      f(x) = x**2 + 1\n\
      outer: do i = 1, n\n\
        if (a(i) > 0 .and. .not. (i == 2)) then\n\
          a(i) = -a(i)**2 + f(1.5_dp) * sum([1, (j, j=1,3)])\n\
        else if (a(i) < 0) then\n\
          cycle outer\n\
        else\n\
          c(1:2) = 'x''y' // \"z\"\n\
        end if\n\
      end do outer\n\
      select case (n)\n\
      case (1:3, 5)\n\
        call t(a, n=n)\n\
      case default\n\
        print *, 'n = ', n; go to (10, 20) n\n\
      end select\n\
   10 continue\n\
   20 return\n\
    end subroutine s\n\
    end module m\n";

/// Applies `count` random character and token mutations to `src`.
fn mutate(src: &str, rng: &mut Rng, count: usize) -> String {
    const PIECES: [&str; 24] = [
        "(", ")", "(/", "/)", "&", "!", "'", "\"", ";", "\n", "\t", "=", ",", ":", "::", ".and.",
        "1.e", "end", "do", "if", "then", " ", "*", "10",
    ];
    let mut chars: Vec<char> = src.chars().collect();
    for _ in 0..count {
        let at = rng.below(chars.len() + 1);
        match rng.below(6) {
            0 if !chars.is_empty() => {
                let at = at.min(chars.len() - 1);
                chars.remove(at);
            }
            1 if !chars.is_empty() => {
                let at = at.min(chars.len() - 1);
                let c = chars[at];
                chars.insert(at, c);
            }
            2 if chars.len() > 1 => {
                let a = rng.below(chars.len());
                let b = rng.below(chars.len());
                chars.swap(a, b);
            }
            3 => {
                let piece = PIECES[rng.below(PIECES.len())];
                for (k, c) in piece.chars().enumerate() {
                    chars.insert(at + k, c);
                }
            }
            4 => chars.truncate(at),
            _ => {
                // Duplicate a random slice (lines, tokens).
                if !chars.is_empty() {
                    let start = rng.below(chars.len());
                    let len = rng.below(40).min(chars.len() - start);
                    let slice: Vec<char> = chars[start..start + len].to_vec();
                    let at = at.min(chars.len());
                    chars.splice(at..at, slice);
                }
            }
        }
    }
    chars.into_iter().collect()
}

#[test]
fn fuzzed_sources_never_panic() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for case in 0..3000 {
        let (base, form) = if case % 2 == 0 {
            (FUZZ_FREE, SourceForm::Free)
        } else {
            (BRATU, SourceForm::Fixed)
        };
        let count = 1 + rng.below(8);
        let text = mutate(base, &mut rng, count);
        let (file, diags) = parse(&text, form);
        // Every diagnostic points into the file.
        let lines = text.split('\n').count() as u32;
        for d in &diags {
            assert!(
                d.span.line >= 1 && d.span.line <= lines.max(1),
                "case {case}: {d:?}\n{text}"
            );
        }
        let _ = file;
    }
}

#[test]
fn unmutated_fuzz_base_is_valid() {
    let (_, diags) = parse(FUZZ_FREE, SourceForm::Free);
    let errs: Vec<_> = diags.iter().filter(|d| d.is_error()).collect();
    assert!(errs.is_empty(), "{errs:#?}");
}

#[test]
fn large_files_parse_in_linear_time() {
    let mut text = String::from("subroutine big(x, n)\n  real x(n)\n");
    for i in 0..20000 {
        text.push_str(&format!(
            "  x({}) = x({}) * 2.0 + sin(x(1)) / 3.0\n",
            i % 7 + 1,
            i % 5 + 1
        ));
    }
    text.push_str("end subroutine big\n");
    let start = std::time::Instant::now();
    let (file, diags) = parse(&text, SourceForm::Free);
    assert!(diags.is_empty());
    assert_eq!(procedure(&file.units[0]).body.len(), 20000);
    // Generous even for unoptimized builds on a loaded machine.
    assert!(start.elapsed().as_secs() < 20);
}

/// Throughput check on 100k lines (run with `--release --ignored`).
#[test]
#[ignore]
fn parses_100k_lines_quickly() {
    let mut text = String::new();
    for unit in 0..1000 {
        text.push_str(&format!(
            "subroutine s{unit}(x, y, n)\n  integer n, i\n  double precision x(n), y(n)\n"
        ));
        for i in 0..24 {
            text.push_str(&format!(
                "  do i = 1, n\n    y(i) = y(i) + {i}.0d0*x(i)**2 - sin(x(i))/(1.0 + x(i)*x(i))\n  end do\n  if (y(1) > 0) y(1) = -y(1)\n"
            ));
        }
        text.push_str("end subroutine\n");
    }
    let lines = text.lines().count();
    // CPU time of this process in clock ticks (the machine may be busy).
    let cpu_ticks = || -> u64 {
        let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
        let fields: Vec<&str> = stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .split_whitespace()
            .collect();
        fields
            .get(11)
            .and_then(|u| u.parse::<u64>().ok())
            .unwrap_or(0)
            + fields
                .get(12)
                .and_then(|s| s.parse::<u64>().ok())
                .unwrap_or(0)
    };
    let cpu_start = cpu_ticks();
    let start = std::time::Instant::now();
    let (file, diags) = parse(&text, SourceForm::Free);
    let elapsed = start.elapsed();
    let cpu = cpu_ticks() - cpu_start;
    eprintln!(
        "{lines} lines in {elapsed:?} wall, {cpu} CPU ticks (1/100 s); sizes: Expr {} Arg {} Stmt {}",
        std::mem::size_of::<Expr>(),
        std::mem::size_of::<Arg>(),
        std::mem::size_of::<Stmt>()
    );
    assert!(diags.is_empty());
    assert_eq!(file.units.len(), 1000);
}

#[test]
fn common_statements_blocks_and_block_data() {
    let d = decls(
        "common a, b /x/ c(3), d // e\n\
         common /p/ u, /q/ v(2, 2)\n\
         save /p/, w\n\
         save /q/\n",
    );
    let shape = |k: &DeclKind| -> Vec<(Option<String>, Vec<String>)> {
        let DeclKind::Common(groups) = k else {
            panic!("{k:?}")
        };
        groups
            .iter()
            .map(|g| {
                (
                    g.block.as_ref().map(|b| b.text.clone()),
                    g.members.iter().map(|m| m.name.text.clone()).collect(),
                )
            })
            .collect()
    };
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_eq!(
        shape(&d[0]),
        vec![
            (None, s(&["a", "b"])),
            (Some("x".into()), s(&["c", "d"])),
            (None, s(&["e"])),
        ]
    );
    assert_eq!(
        shape(&d[1]),
        vec![(Some("p".into()), s(&["u"])), (Some("q".into()), s(&["v"]))]
    );
    assert!(matches!(&d[2], DeclKind::SaveCommon(b, n) if b[0].text == "p" && n[0].text == "w"));
    assert!(matches!(&d[3], DeclKind::SaveCommon(b, n) if b.len() == 1 && n.is_empty()));

    let file = parse_ok(
        "      block data init\n      common /p/ u\n      data u /1.0/\n      end block data\n",
    );
    let ProgramUnit::Procedure(p) = &file.units[0] else {
        panic!()
    };
    assert_eq!(p.kind, ProcKind::BlockData);
    assert_eq!(p.name.text, "init");
    assert_eq!(p.decls.len(), 2);
}

#[test]
fn associate_and_block_constructs() {
    let file = parse_ok(
        "subroutine s(x, n)\n\
           outer: associate (a => x(1), b => 2*n)\n\
             block\n\
               real :: t\n\
               t = a + b\n\
             end block\n\
           end associate outer\n\
         end subroutine s\n",
    );
    let p = procedure(&file.units[0]);
    let StmtKind::Associate { name, pairs, body } = &p.body[0].kind else {
        panic!("{:?}", p.body[0].kind)
    };
    assert_eq!(name.as_ref().map(|n| n.text.as_str()), Some("outer"));
    assert_eq!(pairs.len(), 2);
    assert_eq!(
        (pairs[1].0.text.as_str(), sx(&pairs[1].1).as_str()),
        ("b", "(* 2 n)")
    );
    let StmtKind::Block { body: inner, .. } = &body[0].kind else {
        panic!("{:?}", body[0].kind)
    };
    assert_eq!(assign_parts(&inner[0]), ("t".into(), "(+ a b)".into()));
    // The BLOCK's declarations belong to the procedure.
    assert!(matches!(&p.decls[0].kind, DeclKind::Block(d) if d.len() == 1));
}

#[test]
fn unclosed_associate_is_an_error() {
    let (_, diags) = parse(
        "subroutine s(x)\n\
           associate (a => x)\n\
             a = 1\n\
         end subroutine s\n",
        SourceForm::Free,
    );
    assert!(
        diags
            .iter()
            .any(|d| d.message.contains("not closed by END ASSOCIATE")),
        "{diags:?}"
    );
}

#[test]
fn components_of_array_elements_are_elements_of_component_arrays() {
    // The component's subscripts come first: `a(i)%w(j)` is `a%w(j, i)`;
    // each part's subscripts follow a marker naming the part (`|k`), since
    // `a(i)%v` and `a%v(i)` differ.
    assert_eq!(expr_of("a(i)%x"), "a%x[|0 i]");
    assert_eq!(expr_of("a(i)%w(j)"), "a%w[|1 j |0 i]");
    assert_eq!(expr_of("a%w(j)"), "a%w[|1 j]");
    assert_eq!(expr_of("s(k)%b%v(2, j) + 1"), "(+ s%b%v[|2 2 j |0 k] 1)");
    assert_eq!(expr_of("a%x"), "a%x");
    assert_eq!(expr_of("v(2)"), "v[2]");
}

#[test]
fn procedure_declarations_name_their_interface() {
    let d = decls("procedure(fun), intent(in) :: f, g");
    let [DeclKind::Procedure {
        interface: Some(i),
        attrs,
        names,
    }] = d.as_slice()
    else {
        panic!("{d:?}")
    };
    assert_eq!(i.text, "fun");
    assert_eq!(attrs, &[Attr::Intent(Intent::In)]);
    let names: Vec<&str> = names.iter().map(|n| n.text.as_str()).collect();
    assert_eq!(names, ["f", "g"]);
    assert!(matches!(
        decls("procedure(fun), pointer :: p").as_slice(),
        [DeclKind::Procedure { attrs, .. }] if matches!(&attrs[..], [Attr::Other(n)] if n.text == "pointer")
    ));
}

#[test]
fn entry_statements_split_a_procedure_into_one_per_entry_point() {
    let file = parse_ok(
        "real(8) function f(x)\n\
         real(8) :: x, z, r, p\n\
         save p\n\
         f = x*p\n\
         return\n\
         entry g(z) result(r)\n\
         r = z\n\
         p = z\n\
         f = f + 1\n\
         end function f\n",
    );
    assert_eq!(file.units.len(), 2);
    let (f, g) = (procedure(&file.units[0]), procedure(&file.units[1]));
    assert_eq!((f.name.text.as_str(), g.name.text.as_str()), ("f", "g"));
    assert_eq!(f.entry_of, None);
    assert_eq!(g.entry_of.as_ref().map(|n| n.text.as_str()), Some("f"));
    assert_eq!(
        g.args.iter().map(|a| a.text.as_str()).collect::<Vec<_>>(),
        ["z"]
    );
    // `f` stops at its RETURN (what follows is reached from `g` only).
    assert_eq!(f.body.len(), 2);
    assert_eq!(f.body[1].kind, StmtKind::Return);
    // In `g` the function's result `f` is the entry's result `r`.
    assert_eq!(g.body.len(), 3);
    match &g.body[2].kind {
        StmtKind::Assign { target, value } => {
            assert_eq!((sx(target).as_str(), sx(value).as_str()), ("r", "(+ r 1)"));
        }
        other => panic!("{other:?}"),
    }
    assert!(
        matches!(&g.kind, ProcKind::Function { result: Some(r), prefix_type: None } if r.text == "r")
    );
    // `x` (a dummy of `f` only) is not declared in `g`, nor `z` in `f`.
    let declared = |p: &Procedure| -> Vec<String> {
        p.decls
            .iter()
            .flat_map(|d| match &d.kind {
                DeclKind::Type { entities, .. } => {
                    entities.iter().map(|e| e.name.text.clone()).collect()
                }
                _ => Vec::new(),
            })
            .collect()
    };
    assert_eq!(declared(f), ["x", "p"]);
    assert_eq!(declared(g), ["z", "r", "p"]);
}

#[test]
fn an_entry_jumping_back_keeps_the_body_behind_a_jump() {
    let (file, diags) = parse(
        "      SUBROUTINE S(X)\n      X = 1\n   20 X = X + 1\n      RETURN\n      ENTRY T(X)\n      GO TO 20\n      END\n",
        SourceForm::Fixed,
    );
    assert!(diags.is_empty(), "{diags:?}");
    let t = procedure(&file.units[1]);
    // GO TO entry; 20 X = X + 1; RETURN; entry: CONTINUE; GO TO 20.
    let kinds: Vec<_> = t.body.iter().map(|s| (s.label, s.kind.clone())).collect();
    assert_eq!(kinds.len(), 5, "{kinds:?}");
    assert_eq!(kinds[0].1, StmtKind::Goto(21));
    assert_eq!(kinds[1].0, Some(20));
    assert_eq!(kinds[3], (Some(21), StmtKind::Continue));
    assert_eq!(kinds[4].1, StmtKind::Goto(20));
}

/// An array constructor with a CHARACTER type specification keeps its
/// length; another type specification is a located error.
#[test]
fn typed_character_constructors() {
    assert_eq!(
        expr_of("[character(len=5) :: 'ab', s // 't']"),
        "{char*5 :: \"ab\" (// s \"t\")}"
    );
    assert_eq!(expr_of("[character(n + 1) :: a]"), "{char*(+ n 1) :: a}");
    let e = errors("x = [integer :: 1, 2]\nend\n", SourceForm::Free);
    assert!(
        e.iter().any(|d| d
            .message
            .contains("type specification in an array constructor")),
        "{e:?}"
    );
}
