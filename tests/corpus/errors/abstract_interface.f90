! adjit-error: 21:15: argument 1 of `half` (`n`) is integer(4) but argument `x` of the interface `fun` is real(8)
module m
  abstract interface
    double precision function fun(x)
      double precision, intent(in) :: x
    end function fun
  end interface
contains
  double precision function apply(f, x)
    procedure(fun) :: f
    double precision, intent(in) :: x
    apply = f(x)
  end function apply
  double precision function half(n)
    integer, intent(in) :: n
    half = n / 2.0d0
  end function half
  subroutine driver(x, y)
    double precision, intent(in) :: x
    double precision, intent(out) :: y
    y = apply(half, x)
  end subroutine driver
end module m
