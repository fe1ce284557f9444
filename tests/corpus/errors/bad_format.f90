! adjit-error: 4:12: invalid format: unsupported edit descriptor `q`
subroutine b(n)
  integer n
  write(*, '(i5, q3)') n
end subroutine b
