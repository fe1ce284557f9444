! adjit-error: 3:3: ABSTRACT INTERFACE
module m
  abstract interface
    double precision function fun(x)
      double precision, intent(in) :: x
    end function fun
  end interface
end module m
