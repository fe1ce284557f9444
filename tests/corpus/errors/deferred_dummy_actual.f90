! adjit-error: 14:15: the actual argument `label` passed to `fill` is not a deferred-length CHARACTER variable, as its dummy `key`
module keys
  implicit none
contains
  subroutine fill(key)
    character(len=:), allocatable, intent(out) :: key
    key = 'k'
  end subroutine fill
  subroutine f(x)
    real(8), intent(out) :: x
    character(len=8) :: label
    label = 'abc'
    x = 1.0d0
    call fill(label)
    x = len(label)
  end subroutine f
end module keys
