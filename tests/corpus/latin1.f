c Source bytes that are not UTF-8: this file is Latin-1, as many old
c files are (accents in comments: résultat, dérivée, naïve).
c A Latin-1 character literal counts one character per byte.
c adjit-test: --entry accents --set x=1.5
c adjit-test: --entry accents --set x=-0.25
      subroutine accents(x, y, n, same)
      double precision x, y
      integer n, same
      character*4 word
c     calcul du résultat
      word = 'déjà'
      n = len('café') + len(word)
      same = 0
      if (word .eq. 'déjà') same = 1
      if (word(2:2) .eq. 'é') same = same + 10
      y = x*x*n + same
      end
