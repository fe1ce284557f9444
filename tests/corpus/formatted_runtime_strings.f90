! Formatted output of character values whose length is known only at run
! time, as a solver's progress report writes them: elements of an array
! of deferred-length names, a deferred-length scalar, a trimmed label
! joined with `//` to a suffix, REPEAT with a run-time count, and such
! values inside an implied DO. Each value is one item of the format (one
! `a` edit descriptor), as gfortran transfers it; before, the pieces of a
! value were transferred as separate items, one per character, so that
! `'(a,1x,a)'` wrote "a b" for "ab". The result depends on the reported
! steps, so the derivative checks run through the same code.
! adjit-test: --entry iterate --set n=3 --set x=0.5
! adjit-test: --entry iterate --set n=4 --set x=1.25
module progress_report
  implicit none
  character(len=:), allocatable :: stage_names(:)
  character(len=:), allocatable :: solver_name
contains
  ! Names the stages of the iteration (lengths chosen at run time).
  subroutine name_stages(n)
    integer, intent(in) :: n
    integer :: i
    if (allocated(stage_names)) deallocate(stage_names)
    allocate(character(len=n + 2) :: stage_names(n))
    do i = 1, n
      stage_names(i) = repeat('s', i)
    end do
    solver_name = 'damped-newton'
  end subroutine name_stages

  ! One line per stage: its name, a rule of run-time width and the value.
  subroutine report(k, v)
    integer, intent(in) :: k
    real(8), intent(in) :: v
    write (*, '(a,1x,a,1x,a,f10.5)') trim(stage_names(k)), repeat('-', k), &
      trim(stage_names(k)) // ':', v
  end subroutine report

  subroutine iterate(n, x, y)
    integer, intent(in) :: n
    real(8), intent(in) :: x
    real(8), intent(out) :: y
    integer :: k
    call name_stages(n)
    write (*, '(a,a,i0,a)') solver_name, ' with ', n, ' stages'
    write (*, '(3(a,"|"))') (trim(stage_names(k)), k = 1, min(n, 3))
    write (*, '(a)') stage_names(n)
    y = x
    do k = 1, n
      y = y - (y * y - 2.0d0) / (2.0d0 * y) * (1.0d0 - 0.5d0 ** k)
      call report(k, y)
    end do
    y = y * len(stage_names(1)) + len_trim(stage_names(n))
  end subroutine iterate
end module progress_report
