! A network library keeps models in arrays of structures whose type
! holds arrays of structures (`ms(i)%layers(j)%w(k)`): a module array of
! them (`kept`), an assumed-shape dummy (`init`), a whole-array copy
! (`kept = ms`), elements passed to a scalar structure dummy
! (`energy(ms(1))`), a section of the inner component (`kept(1)%layers%b`)
! and a rank-2 array of structures inside a rank-1 one
! (`grids(i)%g(p, q)%v`). Derivatives in `a` and `c` run through the
! weights and the scales.
! adjit-test: --entry run --set a=0.5 --set c=1.25
! adjit-test: --entry run --set a=-1.5 --set c=0.75
module layered
  implicit none
  type :: layer
    double precision :: w(2)
    double precision :: b = 0
  end type
  type :: model
    type(layer) :: layers(3)
    double precision :: scale
  end type
  type :: node
    double precision :: v
  end type
  type :: grid
    type(node) :: g(2, 2)
  end type
  type(model), save :: kept(2)
  type(grid), save :: grids(2)
contains
  ! Sets the models' layers from the weights `x` (one per layer).
  subroutine init(ms, x)
    type(model), intent(out) :: ms(:)
    double precision, intent(in) :: x(3)
    integer :: i, j
    do i = 1, size(ms)
      do j = 1, 3
        ms(i)%layers(j)%w(1) = x(j) * i
        ms(i)%layers(j)%w(2) = x(j) ** 2
        ms(i)%layers(j)%b = j
      end do
      ms(i)%scale = x(i)
    end do
  end subroutine init

  ! The scaled weights of one model plus its biases.
  double precision function energy(m)
    type(model), intent(in) :: m
    integer :: j
    energy = 0
    do j = 1, size(m%layers)
      energy = energy + m%scale * (m%layers(j)%w(1) + m%layers(j)%w(2)) &
        + m%layers(j)%b
    end do
  end function energy

  subroutine run(a, c, y)
    double precision, intent(in) :: a, c
    double precision, intent(out) :: y(4)
    type(model) :: ms(2)
    integer :: i, p, q
    call init(ms, [a, c, a * c])
    kept = ms
    kept(2)%layers(3)%w(2) = a * c
    y(1) = energy(ms(1)) + energy(ms(2)) + kept(2)%layers(3)%w(2) * kept(2)%scale
    y(2) = sum(kept(1)%layers%b) + kept(2)%layers(1)%w(1) * kept(1)%scale
    do i = 1, 2
      do q = 1, 2
        do p = 1, 2
          grids(i)%g(p, q)%v = a * p + c * q * i
        end do
      end do
    end do
    y(3) = grids(2)%g(1, 2)%v * grids(1)%g(2, 1)%v
    y(4) = sum(grids(2)%g%v)
  end subroutine run
end module layered
