! adjit-error: 9:23: unsupported Fortran: ALLOCATABLE function result `words` that is not a numeric or LOGICAL array of deferred shape
module labels
  implicit none
contains
  ! A CHARACTER array result that is ALLOCATABLE stays out (numeric and
  ! LOGICAL ones are supported).
  function tags(n) result(words)
    integer, intent(in) :: n
    character(len=8), allocatable :: words(:)
    allocate(words(n))
    words = 'none'
  end function tags
end module labels
