! adjit-error: 4:19: undefined label
subroutine g(x)
  double precision x
  if (x > 0) goto 99
  x = -x
end subroutine g
