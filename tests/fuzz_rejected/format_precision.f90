! A FORMAT precision of 2^63 - 1 (a mutated MINPACK-style report): the
! formatted-output runtime panicked ("Formatting argument out of range").
! Refused in the front end, as any format asking for more than 2^24
! characters.
! expect: invalid format: its counts, widths and precisions ask for more than 16777216 characters
subroutine s(x)
  double precision x
  write (*, '(f6.9223372036854775807)') x
end subroutine s
