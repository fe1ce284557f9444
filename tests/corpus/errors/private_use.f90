! adjit-error: 10:20: `secret` is PRIVATE in module `vault`
module vault
  implicit none
  private
  public :: open_value
  double precision :: secret = 42
  double precision :: open_value = 1
end module vault
subroutine peek(x)
  use vault, only: secret
  double precision x
  x = secret
end subroutine peek
