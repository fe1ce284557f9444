! adjit-error: 13:11: returns a structure
module m
  type pt
    double precision :: x, y
  end type pt
contains
  type(pt) function mk(a)
    double precision, intent(in) :: a
    mk = pt(a, 2 * a)
  end function mk
  double precision function bad(a)
    double precision, intent(in) :: a
    bad = mk(a) + 1
  end function bad
end module m
