! adjit-error: 12:10: argument `w` of `a` is an ALLOCATABLE f64 array of rank 1 that `a` allocates
module alloc_out
contains
  subroutine a(w)
    double precision, allocatable, intent(out) :: w(:)
    allocate(w(3))
  end subroutine a
end module alloc_out
subroutine b(s)
  use alloc_out
  double precision s, v(3)
  call a(v)
  s = sum(v)
end subroutine b
