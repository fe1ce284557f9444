! Relational operators in both spellings (.lt. <, .le. <=, .gt. >, .ge. >=,
! .eq. ==, .ne. /=), logical operators .and. .or. .not. .eqv. .neqv., and
! LOGICAL variables: classify points of a grid against a disc and a box.
! adjit-test: --entry classify --set n=5 --set px=-1,0,0.5,1,2 --set py=0,0.5,0.5,1,2 --set r=1
! adjit-test: --entry classify --set n=3 --set px=0,0.7,-0.7 --set py=1,0.7,-0.8 --set r=1
subroutine classify(n, px, py, r, inside, onedge, xor, counts)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: px(n), py(n), r
  logical, intent(out) :: inside(n), onedge(n), xor(n)
  integer, intent(out) :: counts(6)
  logical :: disc, box
  integer :: i
  counts = 0
  do i = 1, n
    disc = px(i)**2 + py(i)**2 .lt. r*r
    box = abs(px(i)) <= 0.5d0 .and. abs(py(i)) .le. 0.5d0
    inside(i) = disc .or. box
    onedge(i) = px(i)**2 + py(i)**2 .eq. r*r .or. px(i) == 0 .and. .not. disc
    xor(i) = disc .neqv. box
    if (disc .eqv. box) counts(1) = counts(1) + 1
    if (px(i) > py(i)) counts(2) = counts(2) + 1
    if (px(i) .gt. 0 .and. py(i) >= 0) counts(3) = counts(3) + 1
    if (px(i) .ge. py(i)) counts(4) = counts(4) + 1
    if (px(i) /= py(i)) counts(5) = counts(5) + 1
    if (px(i) .ne. 0 .or. .not. (py(i) < 0)) counts(6) = counts(6) + 1
  end do
end subroutine classify
