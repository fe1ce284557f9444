! The Euclidean norm of MINPACK (ENORM: the three sums of small,
! intermediate and large components with rdwarf / rgiant), as
! fortran-lang/minpack writes it in a module (kinds from iso_fortran_env,
! PRIVATE by default, PURE functions, an abstract interface for the
! user's function), and the MINPACK test functions of the least-squares
! test set (SSQFCN: Rosenbrock, Powell singular, Bard with its DATA
! table, Freudenstein and Roth) selected by problem number.
! adjit-test: --entry residual_norm --set nprob=1 --set x=-1.2,1,0,0
! adjit-test: --entry residual_norm --set nprob=2 --set x=3,-1,0,1
! adjit-test: --entry residual_norm --set nprob=3 --set x=1,1,1,0
! adjit-test: --entry residual_norm --set nprob=4 --set x=0.5,-2,0,0
module minpack_module
    use iso_fortran_env, only: wp => real64
    implicit none
    private

    abstract interface
        subroutine func2(m, n, x, fvec, iflag)
            import :: wp
            implicit none
            integer, intent(in) :: m
            integer, intent(in) :: n
            real(wp), intent(in) :: x(n)
            real(wp), intent(out) :: fvec(m)
            integer, intent(inout) :: iflag
        end subroutine func2
    end interface

    real(wp), parameter :: zero = 0.0_wp, one = 1.0_wp
    real(wp), parameter :: rdwarf = 3.834e-20_wp
    real(wp), parameter :: rgiant = 1.304e19_wp

    public :: enorm, func2, eval_norm

contains

    pure real(wp) function enorm(n, x)
        implicit none
        integer, intent(in) :: n
        real(wp), intent(in) :: x(n)

        integer :: i
        real(wp) :: agiant, s1, s2, s3, xabs, x1max, x3max

        s1 = zero
        s2 = zero
        s3 = zero
        x1max = zero
        x3max = zero
        agiant = rgiant/real(n, wp)
        do i = 1, n
            xabs = abs(x(i))
            if (xabs > rdwarf .and. xabs < agiant) then
                ! sum for intermediate components.
                s2 = s2 + xabs**2
            elseif (xabs <= rdwarf) then
                ! sum for small components.
                if (xabs <= x3max) then
                    if (xabs /= zero) s3 = s3 + (xabs/x3max)**2
                else
                    s3 = one + s3*(x3max/xabs)**2
                    x3max = xabs
                end if
            ! sum for large components.
            elseif (xabs <= x1max) then
                s1 = s1 + (xabs/x1max)**2
            else
                s1 = one + s1*(x1max/xabs)**2
                x1max = xabs
            end if
        end do

        ! calculation of norm.
        if (s1 /= zero) then
            enorm = x1max*sqrt(s1 + (s2/x1max)/x1max)
        elseif (s2 == zero) then
            enorm = x3max*sqrt(s3)
        else
            if (s2 >= x3max) enorm = sqrt(s2*(one + (x3max/s2)*(x3max*s3)))
            if (s2 < x3max) enorm = sqrt(x3max*((s2/x3max) + (x3max*s3)))
        end if
    end function enorm

    !> The norm of the residuals of `fcn` at `x`, with the count of calls.
    subroutine eval_norm(fcn, m, n, x, fvec, fnorm, nfev)
        procedure(func2) :: fcn
        integer, intent(in) :: m, n
        real(wp), intent(in) :: x(n)
        real(wp), intent(out) :: fvec(m)
        real(wp), intent(out) :: fnorm
        integer, intent(inout), optional :: nfev
        integer :: iflag
        iflag = 1
        call fcn(m, n, x, fvec, iflag)
        fnorm = enorm(m, fvec)
        if (present(nfev)) nfev = nfev + 1
    end subroutine eval_norm

end module minpack_module

module test_problems
    use iso_fortran_env, only: wp => real64
    implicit none
    integer :: nprob_ = 1
    real(wp), parameter :: y(15) = [1.4e-1_wp, 1.8e-1_wp, 2.2e-1_wp, 2.5e-1_wp, &
        2.9e-1_wp, 3.2e-1_wp, 3.5e-1_wp, 3.9e-1_wp, 3.7e-1_wp, 5.8e-1_wp, &
        7.3e-1_wp, 9.6e-1_wp, 1.34_wp, 2.1_wp, 4.39_wp]
contains
    subroutine ssqfcn(m, n, x, fvec, iflag)
        integer, intent(in) :: m
        integer, intent(in) :: n
        real(wp), intent(in) :: x(n)
        real(wp), intent(out) :: fvec(m)
        integer, intent(inout) :: iflag
        integer :: i
        real(wp) :: tmp1, tmp2, tmp3
        real(wp), parameter :: five = 5.0_wp, ten = 10.0_wp, two = 2.0_wp

        fvec = 0.0_wp
        select case (nprob_)
        case (1)
            ! rosenbrock function.
            fvec(1) = ten*(x(2) - x(1)**2)
            fvec(2) = 1.0_wp - x(1)
        case (2)
            ! powell singular function.
            fvec(1) = x(1) + ten*x(2)
            fvec(2) = sqrt(five)*(x(3) - x(4))
            fvec(3) = (x(2) - two*x(3))**2
            fvec(4) = sqrt(ten)*(x(1) - x(4))**2
        case (3)
            ! bard function.
            do i = 1, 15
                tmp1 = real(i, wp)
                tmp2 = real(16 - i, wp)
                tmp3 = tmp1
                if (i > 8) tmp3 = tmp2
                fvec(i) = y(i) - (x(1) + tmp1/(x(2)*tmp2 + x(3)*tmp3))
            end do
        case default
            ! freudenstein and roth function.
            fvec(1) = -13.0_wp + x(1) + ((five - x(2))*x(2) - two)*x(2)
            fvec(2) = -29.0_wp + x(1) + ((1.0_wp + x(2))*x(2) - 14.0_wp)*x(2)
        end select
        iflag = 0
    end subroutine ssqfcn
end module test_problems

subroutine residual_norm(nprob, x, fnorm, nfev)
    use iso_fortran_env, only: wp => real64
    use minpack_module, only: eval_norm
    use test_problems, only: ssqfcn, nprob_
    implicit none
    integer, intent(in) :: nprob
    real(wp), intent(in) :: x(4)
    real(wp), intent(out) :: fnorm
    integer, intent(out) :: nfev
    real(wp) :: fvec(15)
    integer :: m
    nprob_ = nprob
    m = 2
    if (nprob == 2) m = 4
    if (nprob == 3) m = 15
    nfev = 0
    call eval_norm(ssqfcn, m, 4, x, fvec, fnorm, nfev)
    call eval_norm(ssqfcn, m, 4, x, fvec, fnorm)
end subroutine residual_norm
