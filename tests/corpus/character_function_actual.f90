! Character-valued functions passed as actual arguments: through an
! abstract interface (`procedure(namer) :: f`) and through EXTERNAL with a
! declared length (`character(len=8), external :: label`), the result
! assigned, compared, passed to TRIM and LEN_TRIM, concatenated, printed
! and used as a SELECT CASE selector; the choice steers real arithmetic.
! adjit-test: --entry drive --set k=2 --set x=1.5
! adjit-test: --entry drive --set k=5 --set x=-0.75
! adjit-test: --entry tagged --set x=2.5 --set w=0.5
module names
  implicit none
  abstract interface
    function namer(k) result(s)
      integer, intent(in) :: k
      character(len=6) :: s
    end function namer
  end interface
contains
  function small(k) result(s)
    integer, intent(in) :: k
    character(len=6) :: s
    if (k < 3) then
      s = 'low'
    else
      s = 'high'
    end if
  end function small

  function evenness(k) result(s)
    integer, intent(in) :: k
    character(len=6) :: s
    if (mod(k, 2) == 0) then
      s = 'even'
    else
      s = 'odd'
    end if
  end function evenness

  subroutine weigh(f, k, x, y)
    procedure(namer) :: f
    integer, intent(in) :: k
    real(8), intent(in) :: x
    real(8), intent(out) :: y
    character(len=6) :: t
    t = f(k)
    if (t == 'high' .or. t == 'even') then
      y = x**2
    else
      y = 3 * x
    end if
    y = y + len_trim(f(k + 1)) * sin(x)
    select case (f(k + 2))
    case ('low', 'odd')
      y = y - x / 4
    case default
      y = y + exp(x / 2)
    end select
    print *, trim(f(k)), ' ', f(k + 1), '|', trim(f(k)) // '-' // t
  end subroutine weigh
end module names

subroutine drive(k, x, y1, y2)
  use names
  implicit none
  integer, intent(in) :: k
  real(8), intent(in) :: x
  real(8), intent(out) :: y1, y2
  call weigh(small, k, x, y1)
  call weigh(evenness, k, x, y2)
end subroutine drive

function sign_label(x)
  implicit none
  real(8), intent(in) :: x
  character(len=8) :: sign_label
  if (x >= 0) then
    sign_label = 'positive'
  else
    sign_label = 'negative'
  end if
end function sign_label

subroutine scale_by(label, x, w, y)
  implicit none
  character(len=8), external :: label
  real(8), intent(in) :: x, w
  real(8), intent(out) :: y
  if (label(x - 2) == 'positive') then
    y = w * x**3
  else
    y = x / w
  end if
  y = y + len_trim(label(-x)) * w
  print *, label(x - 2), len(label(x))
end subroutine scale_by

subroutine tagged(x, w, y1, y2)
  implicit none
  real(8), intent(in) :: x, w
  real(8), intent(out) :: y1, y2
  character(len=8), external :: sign_label
  call scale_by(sign_label, x, w, y1)
  call scale_by(sign_label, 4 - x, w, y2)
end subroutine tagged
