! adjit-error: 4:36: must have a deferred shape
subroutine a(n, s)
  integer n
  double precision, allocatable :: w(10)
  double precision s
  allocate(w(n))
  w = 1
  s = sum(w)
end subroutine a
