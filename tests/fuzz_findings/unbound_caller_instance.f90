! A procedure taking a dummy procedure (`a`), not bound, calls one that
! takes another (`newton`) with an actual procedure: the instance of
! `newton` made while `roots` was lowered for its diagnostics only has no
! lowered procedure (the module order indexed past the end: a panic).
subroutine newton(f, x)
  external f
  real(8) x, f
  x = f(x)
end subroutine newton

real(8) function cubic(x)
  real(8) x
  cubic = x**3
end function cubic

subroutine roots(a, r)
  real(8) r, cubic
  external a, cubic
  call newton(cubic, r)
  call a(r)
end subroutine roots
