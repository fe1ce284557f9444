c adjit-error: 9:30: `mcheps` in EQUIVALENCE in `dpmpar` has type integer(4) but shares its storage with `dmach` of type real(8)
c A machine-constant routine in the style of MINPACK's dpmpar: integer bit
c patterns read as doubles through EQUIVALENCE are rejected, not
c reinterpreted differently from gfortran.
      double precision function dpmpar(i)
      integer i
      integer mcheps(2), minmag(2), maxmag(2)
      double precision dmach(3)
      equivalence (dmach(1), mcheps(1))
      equivalence (dmach(2), minmag(1))
      equivalence (dmach(3), maxmag(1))
      data mcheps(1), mcheps(2) / 0, 1018167296 /
      data minmag(1), minmag(2) / 0, 1048576 /
      data maxmag(1), maxmag(2) / -1, 2146435071 /
      dpmpar = dmach(i)
      end
