! Open: a FORMAT X repeat count of -9223372008 writes without end (the
! call's time limit does not reach the output runtime): a hang.
subroutine s(x)
  double precision x
  write (*, 1010) x
 1010 format (-9223372008x, 'solution', d15.7)
end subroutine
