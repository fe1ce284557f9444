! Depth-2 structures, as a small neural-network library nests them: a
! model holds a state structure (`type(state) :: s`), a fixed array of
! dense layers (`type(layer) :: layers(3)`, each with its weights and
! bias) and an ALLOCATABLE array of layers (`type(layer), allocatable ::
! extra(:)`) sized at run time. The forward pass reaches weights as
! `m%layers(i)%w(j)` and `m%extra(k)%w(j)`, a whole-model copy is
! perturbed without changing the original, the model is passed to
! routines that fill and evaluate it. The derivative of the output in the
! input and in the scale runs through every level.
! adjit-test: --entry predict --set x=0.5 --set scale=1.5 --set n=2
! adjit-test: --entry predict --set x=-0.75 --set scale=0.25 --set n=3
! adjit-test: --entry predict --set x=1.25 --set scale=-2 --set n=1
module tiny_net
  implicit none
  integer, parameter :: dp = kind(1.d0)
  type :: layer
    real(dp) :: w(2)
    real(dp) :: b = 0.0_dp
  end type layer
  type :: state
    real(dp) :: h
    integer :: calls = 0
  end type state
  type :: model
    type(state) :: s
    type(layer) :: layers(3)
    type(layer), allocatable :: extra(:)
    real(dp) :: scale
  end type model
contains
  ! Gives `m` its weights from `scale` and `n` extra layers.
  subroutine build(m, scale, n)
    type(model), intent(out) :: m
    real(dp), intent(in) :: scale
    integer, intent(in) :: n
    integer :: i
    m%scale = scale
    do i = 1, 3
      m%layers(i)%w(1) = scale / i
      m%layers(i)%w(2) = 0.5_dp * i
      m%layers(i)%b = 0.1_dp * i * scale
    end do
    allocate(m%extra(n))
    do i = 1, n
      m%extra(i)%w = [scale * scale, -1.0_dp / i]
    end do
  end subroutine build

  ! One dense unit: tanh(w1 * h + w2 * h**2 + b).
  real(dp) function apply(l, h)
    type(layer), intent(in) :: l
    real(dp), intent(in) :: h
    apply = tanh(l%w(1) * h + l%w(2) * h * h + l%b)
  end function apply

  ! Runs the model on `x`, keeping the last value in the state.
  subroutine forward(m, x)
    type(model), intent(inout) :: m
    real(dp), intent(in) :: x
    integer :: i
    m%s%h = x
    do i = 1, size(m%layers)
      m%s%h = apply(m%layers(i), m%s%h)
    end do
    do i = 1, size(m%extra)
      m%s%h = m%s%h + m%extra(i)%w(1) * m%extra(i)%w(2) * m%s%h + m%extra(i)%b
    end do
    m%s%calls = m%s%calls + 1
  end subroutine forward

  subroutine predict(x, scale, n, y, k)
    real(dp), intent(in) :: x, scale
    integer, intent(in) :: n
    real(dp), intent(out) :: y
    integer, intent(out) :: k
    type(model) :: m, twin
    call build(m, scale, n)
    call forward(m, x)
    twin = m
    twin%layers(2)%w(2) = 2 * twin%layers(2)%w(2)
    twin%extra(1)%b = 1.0_dp
    call forward(twin, x)
    call forward(twin, x)
    y = m%s%h + 0.5_dp * twin%s%h + m%layers(3)%w(1) * m%scale
    k = 100 * twin%s%calls + 10 * m%s%calls + size(m%extra)
    print *, m%layers(2)%w, twin%layers(2)%w(2), lbound(m%extra), ubound(twin%extra)
  end subroutine predict
end module tiny_net
