! Derived types across modules (a type from one module used by another and
! by a procedure), a SAVE module structure, host association of local
! structures in internal procedures, selected_real_kind / selected_int_kind.
! The module structure is reset from its component defaults (`vec2()`) at
! entry, so that every evaluation starts from the same state.
! adjit-test: --entry entry --set px=1.5 --set py=2
! adjit-test: --entry entry --set px=-0.5 --set py=0.75
module a_m
  implicit none
  integer, parameter :: wp = selected_real_kind(15, 307)
  integer, parameter :: ik = selected_int_kind(12)
  type vec2
    real(wp) :: x = 0, y = 0
  end type vec2
end module a_m
module b_m
  use a_m
  implicit none
  type(vec2), save :: acc
contains
  subroutine add(v)
    type(vec2), intent(in) :: v
    acc%x = acc%x + v%x
    acc%y = acc%y + v%y
  end subroutine add
end module b_m
subroutine entry(px, py, s, n)
  use b_m
  implicit none
  real(wp), intent(inout) :: px, py
  real(wp), intent(out) :: s
  integer(ik), intent(out) :: n
  type(vec2) :: loc, p
  acc = vec2()
  p = vec2(y=py, x=px)
  loc = vec2(1.0_wp, 2.0_wp)
  call scale_it(3.0_wp)
  call add(loc)
  call add(p)
  s = acc%x*acc%y + norm()
  n = 2_ik**40
  px = p%x
  py = p%y
contains
  subroutine scale_it(f)
    real(wp), intent(in) :: f
    loc%x = loc%x*f
    p%y = p%y*f
  end subroutine scale_it
  real(wp) function norm()
    norm = sqrt(p%x**2 + p%y**2)
  end function norm
end subroutine entry
