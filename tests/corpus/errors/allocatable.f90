! adjit-error: 4:21: ALLOCATABLE
subroutine a(n, s)
  integer n
  double precision, allocatable :: w(:)
  double precision s
  allocate(w(n))
  w = 1
  s = sum(w)
end subroutine a
