"""A 10 GB expression evaluated chunk by chunk with ggml_cy on a dask cluster.

Five float32 arrays of 10 GB together (2 GB each, made chunk by chunk on the workers, so
they never sit in one process's memory), ``a*b + c*d - e`` computed block by block by
ggml_cy's fused evaluate, and reduced to its sum and maximum (dask's tree reduction), so
only two numbers come back.

    pip install 'ggml_cy[dask]'
    python examples/dask_evaluate.py                    # 10 GB, a LocalCluster here
    python examples/dask_evaluate.py --gb 0.2           # a quick run
    python examples/dask_evaluate.py --scheduler tcp://scheduler-host:8786   # a real cluster

On a real cluster the code is the same: start ``dask scheduler`` on one machine and
``dask worker tcp://scheduler-host:8786 --nworkers N --nthreads T`` on each (ggml_cy
installed there too), then pass the scheduler's address. Each block runs ggml_cy with
``cores // (worker processes x threads on that host)`` threads, so a host is never
oversubscribed; ``--nthreads 1`` with one worker process per host gives each block all the
cores of its host.
"""
import argparse
import time

import dask.array as da
from distributed import Client, LocalCluster

import ggml_cy.dask as gd


def run(gb: float, chunk_mb: float, client: Client) -> tuple[float, float]:
    n = int(gb * 1e9 / 4 / 5)                       # five float32 arrays
    chunk = max(1, int(chunk_mb * 1e6 / 4))
    names = ("a", "b", "c", "d", "e")
    rngs = [da.random.default_rng(i) for i in range(5)]  # type: ignore[no-untyped-call]
    arrays = {name: rng.random(n, chunks=chunk, dtype="float32")
              for rng, name in zip(rngs, names)}
    expr = gd.evaluate("a*b + c*d - e", **arrays)    # lazy: one task per chunk
    total, top = da.sum(expr, dtype="float64"), da.max(expr)
    t0 = time.perf_counter()
    s, m = client.compute([total, top], sync=True)  # type: ignore[no-untyped-call]
    dt = time.perf_counter() - t0
    print(f"{5 * n * 4 / 1e9:.1f} GB of input in {expr.numblocks[0]} chunks of "
          f"{chunk * 4 / 1e6:.0f} MB: sum {float(s):.6g}, max {float(m):.6g}, {dt:.1f} s "
          f"({5 * n * 4 / 1e9 / dt:.2f} GB/s, generating the inputs included)")
    return float(s), float(m)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gb", type=float, default=10.0, help="total input size (GB)")
    ap.add_argument("--chunk-mb", type=float, default=64.0, help="chunk size (MB)")
    ap.add_argument("--scheduler", help="address of a running dask scheduler")
    ap.add_argument("--workers", type=int, default=2, help="local worker processes")
    args = ap.parse_args()
    if args.scheduler:
        with Client(args.scheduler) as client:  # type: ignore[no-untyped-call]
            run(args.gb, args.chunk_mb, client)
        return
    # (distributed ships no type information: its calls are marked for mypy --strict)
    with LocalCluster(n_workers=args.workers,  # type: ignore[no-untyped-call]
                      threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:  # type: ignore[no-untyped-call]
        run(args.gb, args.chunk_mb, client)


if __name__ == "__main__":
    main()
