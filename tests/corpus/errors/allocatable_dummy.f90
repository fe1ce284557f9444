! adjit-error: 4:21: ALLOCATABLE dummy argument
subroutine a(w, s)
  double precision s
  double precision, allocatable :: w(:)
  s = sum(w)
end subroutine a
