! Gauss-Legendre quadrature in a module as modern libraries write it:
! the nodes by Newton's iteration on the Legendre recurrence (Numerical
! Recipes' GAULEG, rewritten), a DO WHILE on the Newton step, pi from
! acos(-1), ALLOCATABLE nodes and weights, selected_real_kind for the
! working precision, a generic interface over a function dummy with an
! explicit interface block, OPTIONAL interval ends with keywords, and an
! internal function whose parameters come by host association.
! The integral of exp(-a x) cos(b x) on [lo, hi] is differentiated with
! respect to a, b and the ends.
! adjit-test: --entry damped --set a=0.5 --set b=3 --set lo=0 --set hi=2 --set npts=12
! adjit-test: --entry damped --set a=1.25 --set b=0.5 --set lo=-1 --set hi=1 --set npts=8
module gauss_quadrature
    implicit none
    private
    integer, parameter, public :: dp = selected_real_kind(15, 307)
    real(dp), parameter :: pi = acos(-1.0_dp)
    real(dp), parameter :: eps = 3.0e-14_dp
    public :: gauleg, quad

    interface quad
        module procedure quad_gl
    end interface quad

contains

    subroutine gauleg(x1, x2, x, w)
        real(dp), intent(in) :: x1, x2
        real(dp), dimension(:), intent(out) :: x, w
        integer :: i, j, m, n
        real(dp) :: p1, p2, p3, pp, xl, xm, z, z1
        n = size(x)
        m = (n + 1)/2
        xm = 0.5_dp*(x2 + x1)
        xl = 0.5_dp*(x2 - x1)
        do i = 1, m
            z = cos(pi*(i - 0.25_dp)/(n + 0.5_dp))
            z1 = huge(z)
            do while (abs(z - z1) > eps)
                p1 = 1.0_dp
                p2 = 0.0_dp
                do j = 1, n
                    p3 = p2
                    p2 = p1
                    p1 = ((2.0_dp*j - 1.0_dp)*z*p2 - (j - 1.0_dp)*p3)/j
                end do
                pp = n*(z*p1 - p2)/(z*z - 1.0_dp)
                z1 = z
                z = z1 - p1/pp
            end do
            x(i) = xm - xl*z
            x(n + 1 - i) = xm + xl*z
            w(i) = 2.0_dp*xl/((1.0_dp - z*z)*pp*pp)
            w(n + 1 - i) = w(i)
        end do
    end subroutine gauleg

    function quad_gl(f, n, a, b) result(s)
        interface
            function f(x) result(y)
                import :: dp
                real(dp), intent(in) :: x
                real(dp) :: y
            end function f
        end interface
        integer, intent(in) :: n
        real(dp), intent(in), optional :: a, b
        real(dp) :: s
        real(dp), allocatable :: x(:), w(:)
        real(dp) :: lo, hi
        integer :: i
        lo = -1.0_dp
        hi = 1.0_dp
        if (present(a)) lo = a
        if (present(b)) hi = b
        allocate (x(n), w(n))
        call gauleg(0.0_dp, 1.0_dp, x, w)
        s = 0.0_dp
        do i = 1, n
            s = s + w(i)*f(lo + (hi - lo)*x(i))
        end do
        s = (hi - lo)*s
    end function quad_gl

end module gauss_quadrature

subroutine damped(a, b, lo, hi, npts, integral, sym)
    use gauss_quadrature, only: dp, quad
    implicit none
    real(dp), intent(in) :: a, b, lo, hi
    integer, intent(in) :: npts
    real(dp), intent(out) :: integral, sym
    integral = quad(g, npts, a=lo, b=hi)
    sym = quad(g, npts)
contains
    function g(x) result(y)
        real(dp), intent(in) :: x
        real(dp) :: y
        y = exp(-a*x)*cos(b*x)
    end function g
end subroutine damped
