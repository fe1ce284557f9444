! adjit-error: 5:3: type-bound procedures
module m
  type t
    double precision :: a
  contains
    procedure :: get
  end type t
contains
  double precision function get(self)
    type(t) :: self
    get = self%a
  end function get
end module m
