! Character searches: LEN_TRIM, SCAN and VERIFY (with BACK=), INDEX with
! BACK= (also a run-time BACK), on variables, substrings, array elements
! and literals, in expressions, comparisons and conditions.
! adjit-test: --entry words --set line=alpha_beta,gamma --set x=1.5
! adjit-test: --entry words --set line=____ --set x=-2
! adjit-test: --entry words --set line=trailing_blanks_______ --set x=0.25
subroutine words(line, x, lt, sc, sb, vf, vb, ib, ifw, iv, k, y)
  implicit none
  character(len=24), intent(in) :: line
  double precision, intent(in) :: x
  integer, intent(out) :: lt, sc, sb, vf, vb, ib, ifw, iv, k
  double precision, intent(out) :: y
  character(len=8) :: names(2)
  logical :: back
  names(1) = 'abc  '
  names(2) = '  x y'
  lt = len_trim(line)
  sc = scan(line, ',_')
  sb = scan(line, ',_', back=.true.)
  vf = verify(line, '_')
  vb = verify(line, ' _', .true.)
  ib = index(line, 'a', back=.true.)
  back = x > 0
  ifw = index(line(2:), 'a', back)
  iv = verify(names(2), ' ') + 10*len_trim(names(1)) + 100*scan(names(2), 'y', back=.true.)
  k = 0
  if (len_trim(line) > 10 .and. scan(line, ',') == 0) k = 1
  if (verify('12a4', '0123456789') == 3) k = k + 10
  if (index('banana', 'an', back=.true.) == 4) k = k + 100
  if (index('banana', '', back=.true.) == 7) k = k + 1000
  y = x * len_trim(line) + scan('xyz', 'z')
end subroutine words
