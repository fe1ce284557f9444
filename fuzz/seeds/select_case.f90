subroutine f(k, x, y)
  integer k
  double precision x, y
  select case (k)
  case (0)
    y = x
  case (1:3)
    y = x * k
  case default
    y = exp(-x*x)
  end select
end subroutine
