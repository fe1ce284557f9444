! adjit-error: 4:3: OPEN
subroutine o(x)
  double precision x
  open(unit=10, file='data.txt')
  x = 1
end subroutine o
