! adjit-error: 4:3: READ
subroutine r(x)
  double precision x
  read(*, *) x
end subroutine r
