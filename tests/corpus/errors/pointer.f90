! adjit-error: 3:33: POINTER
subroutine p(x)
  double precision, target :: x
  double precision, pointer :: q
  q => x
  q = 2*q
end subroutine p
