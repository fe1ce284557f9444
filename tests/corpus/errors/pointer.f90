! adjit-error: 4:21: POINTER
subroutine p(x)
  double precision, target :: x
  double precision, pointer :: q
  q => x
  q = 2*q
end subroutine p
