! adjit-error: 10:21: procedure pointer
module m
  abstract interface
    double precision function fun(x)
      double precision, intent(in) :: x
    end function fun
  end interface
contains
  subroutine solve(f, x)
    procedure(fun), pointer :: f
    double precision x
    x = f(1d0)
  end subroutine solve
end module m
