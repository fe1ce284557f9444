! A report routine fills a label array per sample (a scalar broadcast,
! WHERE over the residuals, a section copied from a header array of
! another length) and the labels steer a weighted sum of the residuals:
! COUNT and ANY over comparisons of the label array, a label array
! passed to a `character(len=*) :: labels(n)` dummy that is filled
! whole, and labels copied between arrays of different lengths.
! adjit-test: --entry summarize --set x=1,0.2,-0.8,2.5,0.05 --set tol=0.5
! adjit-test: --entry summarize --set x=0.1,0.2,0.3,0.4,0.45 --set tol=0.5
! adjit-test: --entry summarize --set x=-3,1.5,0.5,0.75,2 --set tol=0.2
module report_m
  implicit none
  integer, parameter :: nsamp = 5
  character(len=6), parameter :: header(2) = ['first ', 'second']
contains
  subroutine classify(r, tol, labels, n)
    integer, intent(in) :: n
    real(8), intent(in) :: r(n), tol
    character(len=*), intent(out) :: labels(n)
    labels = 'ok'
    where (abs(r) > tol) labels = 'large'
    where (r < -tol) labels = 'negative-large'
  end subroutine

  real(8) function weight(label)
    character(len=*), intent(in) :: label
    select case (label)
    case ('ok')
      weight = 1.0d0
    case ('large')
      weight = 0.5d0
    case default
      weight = 0.25d0
    end select
  end function
end module

subroutine summarize(x, tol, total, nok, flagged, tags, brief)
  use report_m
  implicit none
  real(8), intent(in) :: x(nsamp), tol
  real(8), intent(out) :: total
  integer, intent(out) :: nok
  logical, intent(out) :: flagged
  character(len=10), intent(out) :: tags(nsamp)
  character(len=3), intent(out) :: brief(nsamp)
  real(8) :: r(nsamp)
  character(len=10) :: lab
  integer :: i
  r = x * x - x
  call classify(r, tol, tags, nsamp)
  nok = count(tags == 'ok')
  flagged = any(tags(2:nsamp) /= 'ok')
  total = 0.0d0
  do i = 1, nsamp
    lab = tags(i)
    total = total + weight(lab) * r(i)
  end do
  brief = tags
  brief(1:2) = header
  tags(nsamp - 1:nsamp) = brief(1:2)
  print '(a, 5(1x, a))', 'labels:', tags
end subroutine
