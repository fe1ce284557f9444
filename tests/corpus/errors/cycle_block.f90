! adjit-error: 8:27: CYCLE names `scan`, a BLOCK construct, not a DO construct
subroutine s(n, x, k)
  integer, intent(in) :: n
  double precision, intent(in) :: x(n)
  integer, intent(out) :: k
  scan: block
    do k = 1, n
      if (x(k) < 0) cycle scan
    end do
  end block scan
end subroutine s
