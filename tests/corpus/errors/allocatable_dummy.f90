! adjit-error: 4:21: ALLOCATABLE dummy argument `w` with INTENT(OUT)
subroutine a(w, s)
  double precision s
  double precision, allocatable, intent(out) :: w(:)
  allocate(w(3))
  w = 1
  s = sum(w)
end subroutine a
