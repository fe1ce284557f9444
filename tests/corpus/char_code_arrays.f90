! ICHAR / IACHAR of character arrays and of array sections (elemental use:
! `codes = ichar(letters)`), in array expressions and reductions, ACHAR of
! an integer array compared element by element, and the codes of a
! string's characters gathered by an implied DO; the codes weight real
! arithmetic.
! adjit-test: --entry weigh --set word=gauss --set x=1.5
! adjit-test: --entry weigh --set word=Euler --set x=-0.5
subroutine weigh(word, x, y, codes, back)
  implicit none
  character(len=*), intent(in) :: word
  real(8), intent(in) :: x
  real(8), intent(out) :: y
  integer, intent(out) :: codes(5), back(5)
  character(len=1) :: letters(5)
  integer :: i, lower(5)
  do i = 1, 5
    letters(i) = word(i:i)
  end do
  codes = ichar(letters)
  lower = iachar(letters) + 32 * merge(1, 0, letters >= 'A' .and. letters <= 'Z')
  back(1:3) = ichar(letters(3:5)) - ichar('a')
  back(4:5) = [(iachar(word(i:i)), i = 1, 2)]
  y = sum(codes * x) + count(achar(lower) == 'u') * x**2 + maxval(ichar(letters)) * sin(x)
  print *, codes, lower, count(achar(codes) > 'e')
end subroutine weigh
