! adjit-error: 4:3: COMPLEX
subroutine c(x)
  double precision x
  complex z
  z = (1.0, 2.0)
  x = real(z)
end subroutine c
