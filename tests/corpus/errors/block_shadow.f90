! adjit-error: 6:25: BLOCK variable `t` shadows
subroutine s(x)
  double precision x, t
  t = x
  block
    double precision :: t
    t = 2*x
    x = t
  end block
end subroutine s
