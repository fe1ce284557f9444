! adjit-error: 5:7: complex
subroutine c(x)
  double precision x
  complex z
  z = (1.0, 2.0)
  x = real(z)
end subroutine c
