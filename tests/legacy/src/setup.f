c State set here and read in use.f through COMMON blocks whose members
c have other names and shapes there; blank COMMON is longer in use.f.
      subroutine setup(x, y)
      double precision x(2), y
      double precision a, b(2), c
      integer n
      common /par/ a, b, n
      common c
      a = x(1)
      b(1) = x(2)
      b(2) = x(1)*x(2)
      n = 3
      c = 10
      call use(y)
      end
