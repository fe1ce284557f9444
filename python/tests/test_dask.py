"""The Dask example: a Jacobian split over a LocalCluster of 2 worker
processes equals the single-process one."""

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

import adjit  # noqa: E402
import adjit.dask  # noqa: E402
from conftest import EXAMPLES  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        yield client


def bratu_args(dim):
    x = np.sin(np.linspace(0.1, 3.0, dim)) * 4
    return dict(dim=dim, parmax=2, x=x, prm=np.array([1.3, 0.245828]))


@pytest.mark.parametrize("mode", ["adjoint", "tangent"])
@pytest.mark.parametrize("block", [None, 7])
def test_distributed_jacobian_equals_the_single_process_one(client, mode, block):
    program = adjit.compile(EXAMPLES / "bratu.f")
    args = bratu_args(60)
    expected = program.jacobian("f", ["x", "prm"], mode, **args)
    J = adjit.dask.jacobian(program, "f", ["x", "prm"], mode, client=client, block=block,
                            **args)
    assert J.shape == (60, 62)
    np.testing.assert_array_equal(J, expected)


def test_default_client_and_auto_mode(client):
    program = adjit.compile(EXAMPLES / "bratu.f")
    args = bratu_args(20)
    # 20 rows, 22 columns: auto is the adjoint, by rows
    assert program._native.jacobian_plan("f", ["x", "prm"], None, args)[2] == "adjoint"
    J = adjit.dask.jacobian(program, "f", ["x", "prm"], **args)  # the current client
    np.testing.assert_array_equal(J, program.jacobian("f", ["x", "prm"], **args))
    # more rows than columns: auto is the tangent, by columns
    Jp = adjit.dask.jacobian(program, "f", "prm", **args)
    assert Jp.shape == (20, 2)
    np.testing.assert_array_equal(Jp, program.jacobian("f", "prm", "tangent", **args))
    np.testing.assert_allclose(Jp, J[:, 20:], rtol=1e-13, atol=1e-16)


def test_stateful_program_blocks_start_from_the_initial_state(client):
    program = adjit.compile("""
module counter
  integer :: calls = 0
end module
subroutine grow(n, x, y)
  use counter
  integer n
  double precision x(n), y(n)
  integer i
  calls = calls + 1
  do i = 1, n
    y(i) = calls * x(i)**2 + x(max(1, i-1))
  end do
end subroutine
""")
    x = np.linspace(1, 2, 12)
    fresh = adjit.compile(program._native.spec()[0][0][1])
    expected = fresh.jacobian("y", "x", n=12, x=x)
    program.run(n=12, x=x)  # advances this copy's state, not the workers'
    J = adjit.dask.jacobian(program, "y", "x", client=client, block=3, n=12, x=x)
    np.testing.assert_array_equal(J, expected)


def test_worker_errors_reach_the_client(client):
    program = adjit.compile(EXAMPLES / "bratu.f")
    args = bratu_args(10)
    args["x"] = args["x"][:5]  # x(dim) with dim = 10: too short
    with pytest.raises(adjit.RuntimeError) as info:
        adjit.dask.jacobian(program, "f", "x", client=client, **args)
    assert info.value.variable == "x"
