subroutine more(n, x, r)
  implicit double precision (a-h, o-z)
  integer n
  dimension x(n)
  dimension work(n + 1)
  integer idx(3)
  data (idx(i), i = 1, 3) / 4, 5, 6 /
  double precision r(6)
  r(1) = total(x(2), n - 1)
  work = 1.5
  work(n + 1) = 2
  r(2) = sum(work)
  r(3) = hostfn(3.0d0)
  r(4) = idx(1) * 100 + idx(3)
  m = 7
  goto (10, 20) m
  r(5) = 1
  goto 30
10 r(5) = 10
  goto 30
20 r(5) = 20
30 continue
  r(6) = acc
contains
  double precision function hostfn(y)
    double precision y
    acc = y + n
    hostfn = y * x(1) + acc
  end function
end subroutine
double precision function total(v, m)
  integer m
  double precision v(*)
  total = 0
  do k = 1, m
    total = total + v(k)
  end do
end function
program p
  double precision x(3), r(6)
  x(1) = 1; x(2) = 2; x(3) = 4
  call more(3, x, r)
  print '(es26.17)', r
end
