! random program, seed 79 (reduced by hand: the call of fun2 dropped)
module rfmod
  implicit none
  double precision :: g1 = 0.625d0
  type gstate
    double precision :: g2 = 0.125d0
  end type gstate
  type(gstate) :: gs
  double precision :: ga(4) = 0.25d0
  double precision, allocatable :: ma(:)
  double precision, allocatable :: mb(:, :)
  double precision :: cnt = 0d0
  integer :: trace = 0
  integer :: epoch = 0
  type pt
    double precision :: a = (-0.25d0)
    double precision :: v(4) = 0.25d0
    integer :: k = 1
  end type pt
  type(pt) :: gp
contains
  subroutine stsub(n, din, dio)
    integer, intent(in) :: n
    type(pt), intent(in) :: din
    type(pt), intent(inout) :: dio
  dio%a = 0.5d0*dio%a + 0.5d0*tanh(din%a*dio%v(1) + 0.25d0)
  dio%v(1:n) = 0.5d0*dio%v(1:n) + 0.5d0*sin(din%v(n:1:-1)*din%a)
  dio%k = mod(din%k + 1, 3)
  end subroutine stsub
  double precision function stfun(n, d)
    integer, intent(in) :: n
    type(pt), intent(in) :: d
  stfun = 4d0*tanh(0.5d0*(d%a*d%v(n) + sum(d%v(1:n)) + dble(d%k)))
  end function stfun
  recursive function rec1(n, x) result(r)
    integer, intent(in) :: n
    double precision, intent(in) :: x
    double precision :: r
  if (n <= 1) then
    r = (-0.90625d0)*exp(-(x)*(x)) + (-0.25d0)
  else
    r = 0.5d0*0.6875d0*rec1(n - 1, (-0.984375d0)*x + 0.5d0*(-0.265625d0)) + (-0.25d0)*tanh(x)
  end if
  end function rec1
  subroutine sub1(n, v1, a2, a3)
    integer, intent(in) :: n
    double precision, intent(inout) :: v1
    double precision, intent(in) :: a2(:)
    double precision, intent(in) :: a3(*)
    double precision :: t1
    type(pt) :: p1, p2, q(2)
    double precision :: sq(n, n)
    integer :: il(n), im(n, n)
    integer :: i1, i2, i9, k1, k2, k3
    double precision, save :: acc = (-1.25d0)
    integer, save :: seen = -1
  t1 = sin((1d0 + ((1d0 + (dble(n))**2)**(0.5d0*sin(dble(1))))**2)**(0.5d0*sin((( &
      -1.625d0))*(v1))))
  p1 = pt(4d0*tanh(0.25d0*(cos(v1))), [4d0*tanh(0.25d0*(cos(v1))), 4d0*tanh(0.25d0*(dble( &
      1))), 4d0*tanh(0.25d0*(a2(1))), 4d0*tanh(0.25d0*(v1))], 1)
  p2 = pt(4d0*tanh(0.25d0*(max(dble(n), 0d0)**(2d0 + 0.5d0*sin(v1)))), [4d0*tanh(0.25d0*( &
      abs(max(v1, 0d0))*(dble(1)))), 4d0*tanh(0.25d0*(v1)), 4d0*tanh(0.25d0*(abs(max(v1, 0d0))*( &
      dble(1)))), 4d0*tanh(0.25d0*((a3(n))/(1.0d0 + (v1)**2)))], 0)
  q(1) = p2
  q(2) = pt(4d0*tanh(0.25d0*(rec1(n, (v1)))), [4d0*tanh(0.25d0*(max(a2(1), v1))), 4d0*tanh( &
      0.25d0*((v1)/(1.0d0 + (v1)**2))), 4d0*tanh(0.25d0*(atan(v1))), 4d0*tanh(0.25d0*((1d0 + ( &
      a3(1))**2)**(0.5d0*sin(v1))))], 1)
  sq = 4d0*tanh(0.25d0*(spread(a2(1:n:1), 1, n) - 0.5d0*spread(a3(n:1:-1), 2, n) +  &
      0.25d0*sin(min(v1, a2(1)))))
  if (seen /= epoch) then
    acc = (-1.25d0)
    seen = epoch
  end if
  acc = 0.5d0*acc + 2d0*tanh(t1)
  cnt = 0.5d0*cnt + 0.25d0
  if ((tanh(acc))**3 < cos(p1%a)) then
    trace = mod(trace*7 + 1, 1000003)
    p1%v(n - 1:1:-2) = 4d0*tanh(0.25d0*((tanh((a3(n - 1:1:-2) + p2%v(n - 1:1:-2))) - (ga( &
        2:n:2) - a3(2:n:2)))))
  else
    trace = mod(trace*7 + 2, 1000003)
    p2 = pt(4d0*tanh(0.25d0*((1d0 + (v1)**2)**(0.5d0*sin(0.25d0)))), [4d0*tanh(0.25d0*(sqrt( &
        max(ma(1), 0d0)))), 4d0*tanh(0.25d0*(acc)), 4d0*tanh(0.25d0*(cnt)), 4d0*tanh(0.25d0*(max( &
        acc, gp%a)))], 2)
  end if
  k1 = min(n, 1 + int(abs(tanh(min(cnt, q(2)%v(1))))))
  trace = mod(trace*7 + k1, 1000003)
  do i1 = 1, k1
    if (log(1d0 + (cos(ma(n)))**2) <= abs(max(a3(1), 0d0))*(q(2)%a)) then
      trace = mod(trace*7 + 1, 1000003)
    else
      trace = mod(trace*7 + 2, 1000003)
      trace = mod(trace*7 + maxloc(sin((p2%v(n:1:-1) + p2%v(n:1:-1))), dim=1), 1000003)
      g1 = 4d0*tanh(0.25d0*(ga(maxloc(sin((p2%v(n:1:-1) + p2%v(n:1:-1))), dim=1)) + (p2%a)/( &
          1.5d0 + (gs%g2)**2)))
    end if
    im = merge(1, 0, (spread(p2%v(1:n), 2, n))*(spread(ma(n:1:-1), 1, n)) <= sqrt(1d0 + ( &
        gp%a)**2))
    trace = mod(trace*7 + im(1, 1) + 2*im(min(2, n), 1) + 4*im(min(3, n), 1) + 8*im(n, 1),  &
        1000003)
    trace = mod(trace*7 + im(1, min(2, n)) + 2*im(min(2, n), min(2, n)) + 4*im(min(3, n), min( &
        2, n)) + 8*im(n, min(2, n)), 1000003)
    trace = mod(trace*7 + im(1, min(3, n)) + 2*im(min(2, n), min(3, n)) + 4*im(min(3, n), min( &
        3, n)) + 8*im(n, min(3, n)), 1000003)
    trace = mod(trace*7 + im(1, n) + 2*im(min(2, n), n) + 4*im(min(3, n), n) + 8*im(n, n),  &
        1000003)
    v1 = 4d0*tanh(0.25d0*(0.25d0*sum(((transpose(sq) - sq) + sq(n:1:-1, :)), (spread(p2%v( &
        1:n), 2, n))*(spread(ma(n:1:-1), 1, n)) <= sqrt(1d0 + (gp%a)**2)) + abs(gp%a)))
    p1 = q(1)
  end do
  t1 = tanh((acc)*(abs(dble(n))))
  ma = 0.5d0*ma + 0.5d0*(4d0*tanh(0.25d0*(tanh(exp(p1%v(n))))))
  end subroutine sub1
  double precision function fun2(n, u1, a2)
    integer, intent(in) :: n
    double precision, intent(in) :: u1
    double precision, intent(in) :: a2(n)
    double precision :: t1
    double precision :: w(n)
    double precision, allocatable, save :: h(:)
    double precision :: m2(n, 3)
    type(pt) :: p1, p2, q(2)
    integer :: i1, i2, i9, k1, k2, k3
  t1 = sin((u1)**2)
  do i9 = 1, n
    w(i9) = min(max(dble(1), dble(n)), dble(n))
  end do
  allocate(h(0:n + 1), source=4d0*tanh(0.25d0*(u1)))
  m2(:, 1) = 0.75d0*a2(1:n:1) + 0.25d0*sin(u1)
  m2(:, 2) = 0.5d0*ga(n:1:-1) + 0.25d0*sin((1d0 + (u1)**2)**(0.5d0*sin(u1)))
  m2(:, 3) = 0.5d0*ga(1:n) + 0.25d0*sin(exp(u1))
  p1 = pt(4d0*tanh(0.25d0*((u1 + u1))), [4d0*tanh(0.25d0*(a2(1))), 4d0*tanh(0.25d0*((a2( &
      1))*(a2(n)))), 4d0*tanh(0.25d0*((a2(1))*(dble(1)))), 4d0*tanh(0.25d0*(rec1(n, (u1))))], 1)
  p2 = pt(4d0*tanh(0.25d0*(abs(max(u1, 0d0))*(u1))), [4d0*tanh(0.25d0*(cos(a2(n)))),  &
      4d0*tanh(0.25d0*(atan(u1))), 4d0*tanh(0.25d0*(log(1d0 + (u1)**2))), 4d0*tanh(0.25d0*(( &
      u1)**2))], 0)
  q(1) = p2
  q(2) = pt(4d0*tanh(0.25d0*(min(u1, u1))), [4d0*tanh(0.25d0*((u1)**3)), 4d0*tanh(0.25d0*( &
      dble(1))), 4d0*tanh(0.25d0*(abs(1.375d0))), 4d0*tanh(0.25d0*(abs(1.25d0)))], 2)
  q(2)%a = 4d0*tanh(0.25d0*(maxval(ma(1:n)) + gs%g2))
  p2%a = 4d0*tanh(0.25d0*(dot_product(mb(1, 1:2), mb(1, 1:2))*0.25d0 + max(u1, 0d0)**(2d0 +  &
      0.5d0*sin(abs(max(dble(1), 0d0))*(a2(1))))))
  t1 = 2d0*sqrt(max(tanh(((g1)*(p1%v(1)) - (ma(1))**2)), 0d0))
  if (t1 <= 0.375d0) then
    q(2)%a = 4d0*tanh(0.25d0*(mb(n, 1)*(ma(1))))
  else
    t1 = 0.5d0*tanh(t1*(min(q(2)%a, h(1))))
  end if
  p1 = pt(4d0*tanh(0.25d0*(cnt)), [4d0*tanh(0.25d0*(dble(n))), 4d0*tanh(0.25d0*(min(ma(1),  &
      dble(1)))), 4d0*tanh(0.25d0*((ma(n) + ma(1)))), 4d0*tanh(0.25d0*(sqrt(1d0 + (u1)**2)))],  &
      1)
  q(1)%a = 4d0*tanh(0.25d0*(maxval(((q(1)%v(1:n:1) + g1) + exp(p2%a))) + a2(1)))
  fun2 = tanh(tanh(atan(dble(1))))
  deallocate(h)
  end function fun2
  subroutine sub3(n, v1, a2, b3)
    integer, intent(in) :: n
    double precision, intent(inout) :: v1
    double precision, intent(in) :: a2(n)
    double precision, intent(inout) :: b3(n)
    double precision :: t1
    double precision :: w(n)
    double precision, allocatable :: h(:)
    double precision :: m2(n, 3)
    type(pt) :: p1, p2, q(2)
    double precision :: sq(n, n)
    integer :: il(n), im(n, n)
    integer :: i1, i2, i9, k1, k2, k3
    double precision, save :: acc = (-2.0d0)
    integer, save :: seen = -1
  t1 = v1
  do i9 = 1, n
    w(i9) = v1
  end do
  allocate(h(0:n + 1), source=4d0*tanh(0.25d0*(b3(n))))
  m2(:, 1) = 0.25d0*b3(1:n:1) + 0.25d0*sin(v1)
  m2(:, 2) = 0.75d0*b3(n:1:-1) + 0.25d0*sin(min(dble(n), b3(n)))
  m2(:, 3) = 0.25d0*ga(n:1:-1) + 0.25d0*sin(log(1d0 + (a2(n))**2))
  p1 = pt(4d0*tanh(0.25d0*(min(v1, v1))), [4d0*tanh(0.25d0*(min(a2(1), v1))), 4d0*tanh( &
      0.25d0*(max(a2(n), b3(1)))), 4d0*tanh(0.25d0*(abs(max(a2(n), 0d0))*(b3(n)))), 4d0*tanh( &
      0.25d0*((1d0 + (v1)**2)**(0.5d0*sin(v1))))], 1)
  p2 = pt(4d0*tanh(0.25d0*(sqrt(max(v1, 0d0)))), [4d0*tanh(0.25d0*(dble(n))), 4d0*tanh( &
      0.25d0*(max(1.125d0, 0d0)**(2d0 + 0.5d0*sin(a2(n))))), 4d0*tanh(0.25d0*(v1)), 4d0*tanh( &
      0.25d0*((v1)/(1.5d0 + (v1)**2)))], 1)
  q(1) = p2
  q(2) = pt(4d0*tanh(0.25d0*(sqrt(max(1.125d0, 0d0)))), [4d0*tanh(0.25d0*(max(v1, 0d0)**( &
      2d0 + 0.5d0*sin(v1)))), 4d0*tanh(0.25d0*(v1)), 4d0*tanh(0.25d0*(log(1d0 + (v1)**2))),  &
      4d0*tanh(0.25d0*(v1))], 2)
  sq = 4d0*tanh(0.25d0*(spread(b3(n:1:-1), 1, n) - 0.5d0*spread(b3(n:1:-1), 2, n) +  &
      0.25d0*sin((1d0 + (0.5d0)**2)**(0.5d0*sin(b3(1))))))
  if (seen /= epoch) then
    acc = (-2.0d0)
    seen = epoch
  end if
  acc = 0.5d0*acc + 2d0*tanh(cos(dble(n)))
  cnt = 0.5d0*cnt + 0.25d0
  q(1)%a = (0.625d0 - 1.75d0)
  end subroutine sub3
  double precision function fun4(n, u1)
    integer, intent(in) :: n
    double precision, intent(in) :: u1
    double precision :: t1
    double precision :: t2
    double precision, allocatable, save :: h(:)
    type(pt) :: p1, p2, q(2)
    integer :: i1, i2, i9, k1, k2, k3
  t1 = min(cos(dble(n)), u1)
  t2 = min(min(u1, u1), u1)
  h = 0.5d0*ga(1:n) + 0.5d0*(4d0*tanh(0.25d0*((abs(u1))*(((-1.625d0))*((-0.875d0))))))
  p1 = pt(4d0*tanh(0.25d0*(u1)), [4d0*tanh(0.25d0*(u1)), 4d0*tanh(0.25d0*(u1)), 4d0*tanh( &
      0.25d0*(u1)), 4d0*tanh(0.25d0*(1.375d0))], 2)
  p2 = pt(4d0*tanh(0.25d0*(u1)), [4d0*tanh(0.25d0*(tanh(dble(1)))), 4d0*tanh(0.25d0*(u1)),  &
      4d0*tanh(0.25d0*(atan(0.625d0))), 4d0*tanh(0.25d0*(atan(u1)))], 2)
  q(1) = p2
  q(2) = pt(4d0*tanh(0.25d0*(u1)), [4d0*tanh(0.25d0*(sqrt(1d0 + (0.5d0)**2))), 4d0*tanh( &
      0.25d0*((dble(1))*(u1))), 4d0*tanh(0.25d0*((dble(n) + (-0.25d0)))), 4d0*tanh(0.25d0*(tanh( &
      2.0d0)))], 0)
  fun4 = 4d0*tanh(0.25d0*((sin(sqrt(max(p2%v(1), 0d0))))*((tanh(t2) - (h(n))*(g1)))))
  deallocate(h)
  end function fun4
  double precision function via(f, x)
  double precision, external :: f
  double precision, intent(in) :: x
  via = f(x)
  end function via
  subroutine top(n, mode, x, s, y, r, path)
    integer, intent(in) :: n, mode
    double precision, intent(in) :: x(n), s
    double precision, intent(out) :: y(n), r
    integer, intent(out) :: path
    double precision :: t1, t2, w(n)
    integer :: i1, i2, i9, k1, k2, k3
    double precision :: e4(4), t3
    equivalence (e4(2), t3)
    double precision :: sq(n, n)
    integer :: il(n), im(n, n)
  if (mode == 1) then
    g1 = 0.625d0
    gs%g2 = 0.125d0
    ga = 0.25d0
    cnt = 0d0
    epoch = epoch + 1
    gp = pt((-0.25d0), [0.25d0, 0.25d0, 0.25d0, 0.25d0], 1)
  end if
  cnt = 0.5d0*cnt + 1d0
  trace = 0
  ma = 0.5d0*x(1:n) + 0.5d0*(4d0*tanh(0.25d0*(cos(s))))
  allocate(mb(0:n, 3), source=4d0*tanh(0.25d0*((x(1))/(1.0d0 + (exp(dble(n)))**2))))
  t1 = fun4(n, (dble(n)))
  t2 = 0.875d0
  r = tanh(x(n))
  e4 = 0.5d0*s
  t3 = t3*x(1)
  do i9 = 1, n
    w(i9) = s
    y(i9) = s
  end do
  sq = 4d0*tanh(0.25d0*(spread(x(1:n), 1, n) - 0.5d0*spread(x(n:1:-1), 2, n) + 0.25d0*sin( &
      s)))
  g1 = 4d0*tanh(0.25d0*(((rec1(n, (g1)))*(gs%g2))/(1.0d0 + ((x(n))/(1.0d0 + ((g1)/(2.0d0 + ( &
      g1)**2))**2))**2)))
  associate (z1 => 4d0*tanh(0.25d0*(sqrt(max(x(n), 0d0)))))
    gp%a = 4d0*tanh(0.25d0*(0.0625d0*sum(matmul(ga(1:n:1), (transpose(sq) + sin(spread(ga( &
        n:1:-1), 2, n))))*sq(:, 1)) + max(s, 0d0)**(2d0 + 0.5d0*sin(t2))))
  end associate
  r = 2d0*sqrt(max(tanh(sqrt(max(fun4(n, (r)), 0d0))), 0d0))
  if (r <= 0.75d0) then
    trace = mod(trace*7 + 4, 1000003)
    trace = mod(trace*7 + maxloc(sin(sq(1, :)), dim=1), 1000003)
    g1 = 4d0*tanh(0.25d0*(ga(maxloc(sin(sq(1, :)), dim=1)) + max(dble(1), dble(1))))
  else
    trace = mod(trace*7 + 3, 1000003)
    r = 0.5d0*r
  end if
  do i1 = 2, n
    if (t1 > max(t2, 0d0)**(2d0 + 0.5d0*sin((-0.375d0)))) then
      trace = mod(trace*7 + i1, 1000003)
    end if
  end do
  forall (i1 = 2:n, t1 > max(t2, 0d0)**(2d0 + 0.5d0*sin((-0.375d0)))) y(i1) = 4d0*tanh( &
      0.25d0*(exp(gp%a)))
  ma(2:n:2) = (max(max(y(2:n:2), y(2:n:2)), sin(((-(s))))))*(sin(((log(1d0 + (ma(n))**2)) -  &
      ma(n - 1:1:-2))))
  associate (z2 => 4d0*tanh(0.25d0*(sin(log(1d0 + (ma(n))**2)))))
    t2 = 4d0*tanh(0.25d0*(max((t1)/(2.0d0 + ((t1)**3)**2), ((dble(1))*(1.375d0))*((r)/(1.5d0  &
        + (ga(n))**2)))))
  end associate
  mb = 0.5d0*spread(mb(1:n, 2), 2, 3) + 0.5d0*(4d0*tanh(0.25d0*(max((cnt + cnt), t1))))
  do i9 = 1, n
    y(i9) = y(i9) + 0.5d0*w(i9) + 0.25d0*tanh(gs%g2) + 0.125d0*cnt*x(i9)**2
  end do
  r = r + t1*t2 + g1 + gs%g2 + gp%a + cnt*x(n)**2 + ga(1)*ga(n) + e4(1) + e4(2)*t3
  path = trace
  deallocate(ma)
  deallocate(mb)
  end subroutine top
end module rfmod
