! An array PARAMETER of 4 elements given by an implied DO of 2^31 + 5
! trips: the values were expanded (seconds, gigabytes) up to 2^24 before
! the constructor was found too large. Refused at the implied DO at once.
! expect: array constructor gives more than 4 values
module weights
  implicit none
  integer :: k
  real(8), parameter :: w(4) = (/ (0.5d0 * k, k = -2147483648, 4) /)
end module weights

subroutine s(t, y)
  use weights
  real(8) t, y
  y = w(1) * t
end subroutine s
