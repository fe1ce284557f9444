! adjit-error: 6:12: ALLOCATE of `w`, which is not ALLOCATABLE
subroutine a(n, s)
  integer n
  double precision w(10)
  double precision s
  allocate(w(n))
  w = 1
  s = sum(w)
end subroutine a
