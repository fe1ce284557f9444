! adjit-error: 11:16: is an assumed-shape array of rank 2: pass an array of that rank
module m
contains
  subroutine first(a, s)
    double precision, intent(out) :: s
    double precision, intent(in) :: a(:, :)
    s = a(1, 1)
  end subroutine first
  subroutine caller(v, s)
    double precision v(4), s
    call first(v, s)
  end subroutine caller
end module m
