! MINPACK's QRFAC (Householder QR with column pivoting) as
! fortran-lang/minpack writes it in free form, rewritten: a column
! handed to ENORM as its first element (`enorm(m, a(1, j))`, sequence
! association into an explicit-shape dummy), the logical PIVOT, the
! pivot indices' LIPVT, DPMPAR's machine epsilon, the column norms
! downdated with the rescue recomputation when cancellation is feared.
! The R factor's diagonal and the column norms are differentiated with
! respect to the matrix.
! adjit-test: --entry qr --set m=4 --set n=3 --set a=1,2,0.5,-1,0.3,4,1,2,2,-1,3,0.5 --set pivot=T
! adjit-test: --entry qr --set m=4 --set n=3 --set a=3,1,-2,0.5,1,1,1,1,0.2,-0.4,2,5 --set pivot=F
module qrfac_module
    use iso_fortran_env, only: wp => real64
    implicit none
    private
    real(wp), parameter :: zero = 0.0_wp, one = 1.0_wp, p05 = 5.0e-2_wp
    public :: qrfac, enorm
contains
    pure real(wp) function dpmpar(i)
        integer, intent(in) :: i
        real(wp), parameter :: dmach(3) = [epsilon(1.0_wp), tiny(1.0_wp), huge(1.0_wp)]
        dpmpar = dmach(i)
    end function dpmpar

    pure real(wp) function enorm(n, x)
        integer, intent(in) :: n
        real(wp), intent(in) :: x(n)
        enorm = sqrt(sum(x(1:n)**2))
    end function enorm

    subroutine qrfac(m, n, a, lda, pivot, ipvt, lipvt, rdiag, acnorm, wa)
        integer, intent(in) :: m, n, lda, lipvt
        integer, intent(out) :: ipvt(lipvt)
        logical, intent(in) :: pivot
        real(wp), intent(inout) :: a(lda, n)
        real(wp), intent(out) :: rdiag(n), acnorm(n), wa(n)
        integer :: i, j, jp1, k, kmax, minmn
        real(wp) :: ajnorm, epsmch, sum, temp

        epsmch = dpmpar(1)
        ! compute the initial column norms and initialize several arrays.
        do j = 1, n
            acnorm(j) = enorm(m, a(1, j))
            rdiag(j) = acnorm(j)
            wa(j) = rdiag(j)
            if (pivot) ipvt(j) = j
        end do
        ! reduce a to r with householder transformations.
        minmn = min(m, n)
        do j = 1, minmn
            if (pivot) then
                ! bring the column of largest norm into the pivot position.
                kmax = j
                do k = j, n
                    if (rdiag(k) > rdiag(kmax)) kmax = k
                end do
                if (kmax /= j) then
                    do i = 1, m
                        temp = a(i, j)
                        a(i, j) = a(i, kmax)
                        a(i, kmax) = temp
                    end do
                    rdiag(kmax) = rdiag(j)
                    wa(kmax) = wa(j)
                    k = ipvt(j)
                    ipvt(j) = ipvt(kmax)
                    ipvt(kmax) = k
                end if
            end if
            ! compute the householder transformation to reduce the
            ! j-th column of a to a multiple of the j-th unit vector.
            ajnorm = enorm(m - j + 1, a(j, j))
            if (ajnorm /= zero) then
                if (a(j, j) < zero) ajnorm = -ajnorm
                do i = j, m
                    a(i, j) = a(i, j)/ajnorm
                end do
                a(j, j) = a(j, j) + one
                ! apply the transformation to the remaining columns
                ! and update the norms.
                jp1 = j + 1
                if (n >= jp1) then
                    do k = jp1, n
                        sum = zero
                        do i = j, m
                            sum = sum + a(i, j)*a(i, k)
                        end do
                        temp = sum/a(j, j)
                        do i = j, m
                            a(i, k) = a(i, k) - temp*a(i, j)
                        end do
                        if (pivot .and. rdiag(k) /= zero) then
                            temp = a(j, k)/rdiag(k)
                            rdiag(k) = rdiag(k)*sqrt(max(zero, one - temp**2))
                            if (p05*(rdiag(k)/wa(k))**2 <= epsmch) then
                                rdiag(k) = enorm(m - j, a(jp1, k))
                                wa(k) = rdiag(k)
                            end if
                        end if
                    end do
                end if
            end if
            rdiag(j) = -ajnorm
        end do
    end subroutine qrfac
end module qrfac_module

subroutine qr(m, n, a, pivot, rdiag, acnorm, ipvt)
    use iso_fortran_env, only: wp => real64
    use qrfac_module, only: qrfac
    implicit none
    integer, intent(in) :: m, n
    real(wp), intent(inout) :: a(m, n)
    logical, intent(in) :: pivot
    real(wp), intent(out) :: rdiag(n), acnorm(n)
    integer, intent(out) :: ipvt(n)
    real(wp), allocatable :: wa(:)
    allocate (wa(n))
    ipvt = 0
    call qrfac(m, n, a, m, pivot, ipvt, n, rdiag, acnorm, wa)
end subroutine qr
