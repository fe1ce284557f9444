! adjit-error: 4:7: PRESENT takes one OPTIONAL dummy argument
subroutine s(x)
  double precision x
  if (present(x)) x = 1
end subroutine s
