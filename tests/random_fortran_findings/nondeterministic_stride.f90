! random program, seed 1039
module rfmod
  type gstate
    double precision :: g2 = (-0.25d0)
  end type gstate
  type(gstate) :: gs
  double precision :: ga(4) = 1.0d0
  double precision, allocatable :: ma(:)
  integer :: epoch = 0
  type pt
    double precision :: a = (-1.0d0)
    double precision :: v(4) = 0.25d0
    integer :: k = 1
  end type pt
  type(pt) :: gp
contains
  subroutine stsub(n, din, dio)
    integer, intent(in) :: n
    type(pt), intent(in) :: din
    type(pt), intent(inout) :: dio
  dio%a = 0.5d0*dio%a + 0.5d0*tanh(din%a*dio%v(1) + 0.5d0)
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
    r = 0.578125d0*cos(x) + 0.421875d0
  else
    r = 0.5d0*(-1.0d0)*rec2(n - 1, 0.859375d0*x + 0.5d0*0.125d0) + 0.421875d0*tanh(x)
  end if
  end function rec1
  recursive function rec2(n, x) result(r)
    integer, intent(in) :: n
    double precision, intent(in) :: x
    double precision :: r
  if (n <= 1) then
    r = 0.953125d0*tanh(x) + 0.640625d0
  else
    r = 0.5d0*(-0.765625d0)*rec1(n - 1, 0.640625d0*x + 0.5d0*(-0.375d0)) + 0.640625d0*sin(x)
  end if
  end function rec2
  subroutine sub1(u1)
    double precision, intent(in) :: u1
    double precision :: t1
    double precision :: t2
    integer :: i1, i2, i9, k1, k2, k3
    double precision, save :: acc = 0.625d0
    integer, save :: seen = -1
  if (seen /= epoch) then
    acc = 0.625d0
    gp%a = 0.5d0*tanh(gp%a*((t2)**2))
  end if
  end subroutine sub1
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
    double precision :: m2(n, 3)
    double precision :: sq(n, n)
    integer :: il(n), im(n, n)
  if (mode == 1) then
    g1 = (-1.0d0)
    gs%g2 = (-0.25d0)
    ga = 1.0d0
    cnt = 0d0
    epoch = epoch + 1
    gp = pt((-1.0d0), [0.25d0, 0.25d0, 0.25d0, 0.25d0], 1)
  end if
  m2(:, 1) = 0.25d0*x(1:n:1) + 0.25d0*sin((x(n) + s))
  m2(:, 2) = 0.25d0*ga(n:1:-1) + 0.25d0*sin(abs(max(dble(n), 0d0))*(x(1)))
  m2(:, 3) = 0.5d0*x(1:n) + 0.25d0*sin((x(1))**3)
  sq = 4d0*tanh(0.25d0*(spread(x(1:n:1), 1, n) - 0.5d0*spread(x(1:n:1), 2, n) + 0.25d0*sin( &
      sin(x(n)))))
  associate (z0 => t2)
    z0 = 4d0*tanh(0.25d0*(0.0625d0*sum(matmul(x(1:n:1), sq(n:1:-1, :))*tanh(w(1:n:1))) +  &
        gp%a))
    block
      character(len=8) :: cw
      cw = 'deadbeef'
      cw(6:6) = char(ichar('a') + int(4d0 + 4d0*tanh(0.25d0*(gp%a))))
      k1 = index(cw, 'a') + ichar(cw(6:6)) - ichar('a')
      trace = mod(trace*7 + k1, 1000003)
      do i1 = 1, mod(k1, 5)
        gp%a = sin(max(exp(ma(n)), (x(n))*(dble(n))))
        t1 = 4d0*tanh(0.25d0*(0.5d0 * t1 + 0.25d0 * (z0)))
      end do
    end block
    gp%a = 2d0*sqrt(max(tanh(sqrt(max((-0.25d0), 0d0))), 0d0))
    if (gp%a <= 0.375d0) then
      trace = mod(trace*7 + 4, 1000003)
      im = merge(1, 0, sq(n:1:-1, :) < gs%g2)
      trace = mod(trace*7 + im(1, 1) + 2*im(min(2, n), 1) + 4*im(min(3, n), 1) + 8*im(n, 1),  &
          1000003)
      trace = mod(trace*7 + im(1, min(2, n)) + 2*im(min(2, n), min(2, n)) + 4*im(min(3, n), min( &
          2, n)) + 8*im(n, min(2, n)), 1000003)
      trace = mod(trace*7 + im(1, min(3, n)) + 2*im(min(2, n), min(3, n)) + 4*im(min(3, n), min( &
          3, n)) + 8*im(n, min(3, n)), 1000003)
      trace = mod(trace*7 + im(1, n) + 2*im(min(2, n), n) + 4*im(min(3, n), n) + 8*im(n, n),  &
          1000003)
      ma(1:n:1) = 4d0*tanh(0.25d0*(0.25d0*sum(spread(ga(1:n), 1, n), dim=1, mask=sq(n:1:-1, :)  &
          < gs%g2)))
    else
      trace = mod(trace*7 + 3, 1000003)
      gp%a = 0.5d0*tanh(gp%a*(sin(g1)))
    end if
  end associate
  g1 = x(1)
  gs%g2 = 4d0*tanh(0.25d0*(dot_product(y(1:n) + ((m2(n:1:-1, 2) - w(1:n))), ga(1:n) + ((( &
      max(cnt, y(n))) + y(n:1:-1)))) + cos(gs%g2)))
  il = merge(1, 0, (x(n:1:-1) + max(y(n), gp%a)) > (-(r)))
  trace = mod(trace*7 + il(1) + 5*il(min(2, n)) + 25*il(min(3, n)) + 125*il(n), 1000003)
  if (all((x(n:1:-1) + max(y(n), gp%a)) > (-(r)))) then
    r = 4d0*tanh(0.25d0*(sqrt(1d0 + ((-(ma(n))))**2)))
  else
    r = 4d0*tanh(0.25d0*(cnt))
  end if
  r = 4d0*tanh(0.25d0*(0.5d0*dble(count((sq - sq(n:1:-1, :)) >= spread(sq(n, n:1:-1), 2,  &
      n))) + (t1)*(t2)))
  k1 = 0
  do while (t2 < 0.25d0 .and. k1 < 4)
    k1 = k1 + 1
    if (rec1(n, (t1)) <= tanh(t1)) then
      trace = mod(trace*7 + 1, 1000003)
      do i1 = 2, n
        if ((w(i1))*((y(i1))**3) > (gs%g2)**3) then
          trace = mod(trace*7 + i1, 1000003)
        end if
      end do
      trace = mod(trace*7 + count(x(n:1:-2) + ((ga(n:1:-2) - y(n:1:-2))) >= ma(n)), 1000003)
      where (x(n:1:-2) + ((ga(n:1:-2) - y(n:1:-2))) >= ma(n))
        w(1:n:2) = 4d0*tanh(0.25d0*(tanh((m2(n:1:-2, 2) + ga(n:1:-2)))))
      end where
    end if
    t2 = t2 + 0.5d0 + 0.25d0*sin(cos(w(1)))
  end do
  t2 = 4d0*tanh(0.25d0*t2)
  end subroutine top
end module rfmod