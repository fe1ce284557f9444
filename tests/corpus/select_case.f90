! SELECT CASE on an integer (single values, lists, ranges lo:hi, open
! ranges :hi and lo:, DEFAULT) and on a character expression.
! adjit-test: --entry grade --set n=8 --set score=-5,0,42,59,60,75,90,101 --set unit=cm
! adjit-test: --entry grade --set n=3 --set score=100,1,77 --set unit=in
! adjit-test: --entry grade --set n=1 --set score=64 --set unit=furlong
subroutine grade(n, score, unit, band, weight, factor)
  implicit none
  integer, intent(in) :: n
  integer, intent(in) :: score(n)
  character(len=*), intent(in) :: unit
  integer, intent(out) :: band(n)
  double precision, intent(out) :: weight, factor
  integer :: i
  weight = 0
  do i = 1, n
    select case (score(i))
    case (:-1)
      band(i) = -1
    case (0)
      band(i) = 0
    case (1:59)
      band(i) = 1
      weight = weight + 0.5d0
    case (60, 61, 62:74)
      band(i) = 2
      weight = weight + 1
    case (75:89)
      band(i) = 3
      weight = weight + 1.5d0
    case (90:)
      band(i) = 4
      weight = weight + 2
    end select
  end do
  select case (unit)
  case ('cm')
    factor = 0.01d0
  case ('in', 'inch')
    factor = 0.0254d0
  case ('a':'c')
    factor = -1
  case default
    factor = 0
  end select
end subroutine grade
