//! Front-end throughput: parse and lower a large generated Fortran file,
//! reported by criterion in lines per second (`cargo bench --bench frontend`).

use adjit::front::diag::SourceMap;
use adjit::front::parser::parse_file;
use adjit::front::sema::compile;
use adjit::front::source::SourceForm;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

/// A free-form file of `units` subroutines, each with loops, branches,
/// array arithmetic and intrinsics; returns the text and its line count.
fn generated_source(units: usize) -> (String, usize) {
    let mut text = String::new();
    for u in 0..units {
        text.push_str(&format!(
            "subroutine unit{u}(n, x, y, s)\n  implicit none\n  integer, intent(in) :: n\n  double precision, intent(in) :: x(n)\n  double precision, intent(out) :: y(n), s\n  integer i, k\n  double precision t\n  s = 0\n"
        ));
        for k in 0..20 {
            text.push_str(&format!(
                "  do i = 1, n\n    t = sin(x(i)) * {k}.5d0 + exp(-x(i)**2) / (1 + abs(x(i)))\n    if (t > s) then\n      s = max(s, t) - 0.25d0 * t\n    else if (t < -{k}) then\n      s = s + sqrt(abs(t))\n    else\n      y(i) = y(i) + t * {k}\n    end if\n  end do\n"
            ));
        }
        text.push_str("  k = n / 2\n  s = s + sum(y) + dot_product(x, y)\nend subroutine\n\n");
    }
    let lines = text.lines().count();
    (text, lines)
}

fn frontend(c: &mut Criterion) {
    let (text, lines) = generated_source(100);
    let mut group = c.benchmark_group("frontend");
    group.throughput(Throughput::Elements(lines as u64));
    group.sample_size(10);
    group.bench_function(format!("parse {lines} lines"), |b| {
        let mut map = SourceMap::new();
        let file = map.add("generated.f90", text.clone());
        b.iter(|| parse_file(&map, file, SourceForm::Free))
    });
    group.bench_function(format!("parse and lower {lines} lines"), |b| {
        let mut map = SourceMap::new();
        let file = map.add("generated.f90", text.clone());
        b.iter(|| {
            let (ast, _) = parse_file(&map, file, SourceForm::Free);
            compile(&map, &[ast]).expect("generated source compiles")
        })
    });
    group.finish();
}

criterion_group!(benches, frontend);
criterion_main!(benches);
