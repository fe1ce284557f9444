! CHARACTER variables as L-BFGS-B uses them: a task string compared by
! substring (task(1:2) == 'FG'), assigned (padded and truncated), a
! character array, and comparisons of strings of different lengths.
! adjit-test: --entry driver_step --set task=START --set x=2
! adjit-test: --entry driver_step --set task=FG_LNSRCH --set x=2
! adjit-test: --entry driver_step --set task=NEW_X --set x=0.5
! adjit-test: --entry driver_step --set task=CONVERGENCE --set x=1
subroutine driver_step(task, x, f, g, code, word)
  implicit none
  character(len=60), intent(inout) :: task
  double precision, intent(inout) :: x
  double precision, intent(out) :: f, g
  integer, intent(out) :: code
  character(len=4), intent(out) :: word
  character(len=8) :: names(3)
  names(1) = 'START'
  names(2) = 'FG'
  names(3) = 'NEW_X'
  f = 0
  g = 0
  code = 0
  word = 'none'
  if (task == names(1)) then
    task = 'FG_START'
    code = 1
  else if (task(1:2) .eq. 'FG') then
    f = (x - 1)**2
    g = 2*(x - 1)
    task = 'NEW_X'
    code = 2
    word = task
  else if (task(1:5) == names(3)(1:5)) then
    x = x - 0.5d0
    task = 'FG'
    code = 3
  else
    task(1:4) = 'STOP'
    code = 4
  end if
  if (word /= 'none    ') code = code + 10
  if ('ab' < 'abc') code = code + 100
end subroutine driver_step
