! Neville's polynomial interpolation as Numerical Recipes in Fortran 90
! writes it (POLINT with the nrtype / nrutil helpers, rewritten): kind
! parameters SP / DP / I4B in a module, ASSERT_EQ as a generic interface
! over 2 and 3 sizes, IMINLOC through MINLOC's array result, NRERROR
! with STOP, whole-array arithmetic on work arrays, ANY as a guard, and
! assumed-shape dummies. The interpolated value and its error estimate
! are differentiated with respect to the abscissas, the samples and x.
! adjit-test: --entry interp --set xa=0,0.4,1,1.7,2.5 --set ya=1,1.5,0.8,-0.2,0.3 --set x=1.3
! adjit-test: --entry interp --set xa=-1,-0.3,0.2,0.9,1.4 --set ya=2,-1,0.5,0.25,3 --set x=-0.6
module nrtype
    integer, parameter :: i4b = selected_int_kind(9)
    integer, parameter :: sp = kind(1.0)
    integer, parameter :: dp = kind(1.0d0)
end module nrtype

module nrutil
    use nrtype
    implicit none
    interface assert_eq
        module procedure assert_eq2, assert_eq3
    end interface
contains
    function assert_eq2(n1, n2, string)
        character(len=*), intent(in) :: string
        integer, intent(in) :: n1, n2
        integer :: assert_eq2
        if (n1 == n2) then
            assert_eq2 = n1
        else
            write (*, *) 'nrerror: an assert_eq failed with this tag:', string
            stop 'program terminated by assert_eq2'
        end if
    end function assert_eq2

    function assert_eq3(n1, n2, n3, string)
        character(len=*), intent(in) :: string
        integer, intent(in) :: n1, n2, n3
        integer :: assert_eq3
        if (n1 == n2 .and. n2 == n3) then
            assert_eq3 = n1
        else
            write (*, *) 'nrerror: an assert_eq failed with this tag:', string
            stop 'program terminated by assert_eq3'
        end if
    end function assert_eq3

    function iminloc(arr)
        real(dp), dimension(:), intent(in) :: arr
        integer(i4b), dimension(1) :: imin
        integer(i4b) :: iminloc
        imin = minloc(arr(:))
        iminloc = imin(1)
    end function iminloc

    subroutine nrerror(string)
        character(len=*), intent(in) :: string
        write (*, *) 'nrerror: ', string
        stop 'program terminated by nrerror'
    end subroutine nrerror
end module nrutil

module interpolation
    use nrtype
    use nrutil, only: assert_eq, iminloc, nrerror
    implicit none
contains
    subroutine polint(xa, ya, x, y, dy)
        real(dp), dimension(:), intent(in) :: xa, ya
        real(dp), intent(in) :: x
        real(dp), intent(out) :: y, dy
        integer(i4b) :: m, n, ns
        real(dp), dimension(size(xa)) :: c, d, den, ho
        n = assert_eq(size(xa), size(ya), 'polint')
        c = ya
        d = ya
        ho = xa - x
        ns = iminloc(abs(x - xa))
        y = ya(ns)
        ns = ns - 1
        do m = 1, n - 1
            den(1:n - m) = ho(1:n - m) - ho(1 + m:n)
            if (any(den(1:n - m) == 0.0)) &
                call nrerror('polint: calculation failure')
            den(1:n - m) = (c(2:n - m + 1) - d(1:n - m))/den(1:n - m)
            d(1:n - m) = ho(1 + m:n)*den(1:n - m)
            c(1:n - m) = ho(1:n - m)*den(1:n - m)
            if (2*ns < n - m) then
                dy = c(ns + 1)
            else
                dy = d(ns)
                ns = ns - 1
            end if
            y = y + dy
        end do
    end subroutine polint
end module interpolation

subroutine interp(xa, ya, x, y, dy)
    use nrtype
    use interpolation, only: polint
    implicit none
    real(dp), intent(in) :: xa(5), ya(5), x
    real(dp), intent(out) :: y, dy
    call polint(xa, ya, x, y, dy)
end subroutine interp
