! A FORMAT X count of 9223372008 (from `-9223372008x` in a mutated report):
! the output runtime wrote blanks without end, past the call's time limit
! (a hang). Refused in the front end.
! expect: invalid format: its counts, widths and precisions ask for more than 16777216 characters
subroutine s(x)
  double precision x
  write (*, 1010) x
 1010 format (-9223372008x, 'solution', d15.7)
end subroutine s
