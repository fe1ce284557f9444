! adjit-error: 4:35: assumed-shape
subroutine m(a, s)
  double precision s
  double precision, intent(in) :: a(:, :)
  s = a(1, 1)
end subroutine m
