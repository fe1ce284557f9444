! adjit-error: 18:8: `helper` is PRIVATE in module `lib`
module lib
  implicit none
  private :: helper
contains
  subroutine helper(x)
    double precision x
    x = 2*x
  end subroutine helper
  subroutine api(x)
    double precision x
    call helper(x)
  end subroutine api
end module lib
subroutine outside(x)
  use lib
  double precision x
  call helper(x)
end subroutine outside
