! adjit-error: 4:3: EQUIVALENCE
subroutine eq(x)
  double precision x, a(2), b(2)
  equivalence (a(2), b(1))
  a = x
  x = b(2)
end subroutine eq
