c adjit-error: 5:7: executable statement in BLOCK DATA
      block data init
      double precision t
      common /c/ t
      t = 1
      end
