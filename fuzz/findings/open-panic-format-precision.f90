! Open: a FORMAT precision of 2^63-1 panics in the formatted-output runtime
! (ir/src/io.rs: "Formatting argument out of range").
subroutine s(x)
  double precision x
  write (*, '(f6.9223372036854775807)') x
end subroutine
