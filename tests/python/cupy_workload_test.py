"""A CuPy workload (FFTs, matrix products, reductions, sorts over arrays of varied sizes) under
CuPy's MemoryPool, MemoryAsyncPool and librmm_c; results, time and peak memory compared.

usage: python3 cupy_workload_test.py [--iterations 200] [--allocators cupy_pool,cupy_async,
                                      rmm:pool,rmm:expandable] [--rtol 1e-9] [--json out.json]

Each allocator runs in its own subprocess (``--worker``). The workload is deterministic (fixed
seed, same kernels, same order), so its checksum should not depend on the allocator; it is
compared with ``cupy_pool``'s with a relative tolerance (default 1e-9: summation order inside a
kernel does not depend on addresses, but leave room for cuFFT/cuBLAS choosing another algorithm
for another alignment). Prints a Markdown table; exits 1 on a mismatch or a failed run.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_test_common import finish, mib, print_result, run_worker  # noqa: E402

ALLOCATORS = ["cupy_pool", "cupy_async", "rmm:pool", "rmm:expandable"]


def worker(allocator: str, iterations: int) -> dict:
    import cupy as cp

    pool = None
    if allocator == "cupy_pool":
        pool = cp.cuda.MemoryPool()
        cp.cuda.set_allocator(pool.malloc)
    elif allocator == "cupy_async":
        pool = cp.cuda.MemoryAsyncPool()
        cp.cuda.set_allocator(pool.malloc)
    elif allocator.startswith("rmm:"):
        from rmm_plugins.cupy import use_rmm

        use_rmm(allocator[len("rmm:"):])
    else:
        raise SystemExit(f"unknown allocator {allocator}")

    rng = cp.random.RandomState(1234)
    sizes = [1 << 10, 3000, 1 << 14, 100_003, 1 << 18, 1 << 20, 3 << 20]
    matrix_sizes = [64, 257, 512, 1024, 2048]
    checksum = 0.0
    peak_device_used = 0
    cp.cuda.Device().synchronize()
    t0 = time.perf_counter()
    for i in range(iterations):
        n = sizes[i % len(sizes)]
        x = rng.standard_normal(n, dtype=cp.float64)
        spectrum = cp.fft.rfft(x)
        back = cp.fft.irfft(spectrum, n)
        checksum += float(cp.abs(spectrum).sum()) * 1e-6 + float((back - x).std())
        m = matrix_sizes[i % len(matrix_sizes)]
        a = rng.standard_normal((m, m), dtype=cp.float32)
        b = rng.standard_normal((m, m), dtype=cp.float32)
        c = a @ b
        checksum += float(c.astype(cp.float64).sum()) * 1e-3 + float(cp.linalg.norm(c, axis=0).max())
        s = cp.sort(x)
        checksum += float(s[n // 2]) + float(cp.cumsum(s)[-1]) * 1e-3 + float(x.max() - x.min())
        keep = [cp.empty(int(n * (k + 1) / 3), dtype=cp.uint8) for k in range(4)]  # churn
        del keep, spectrum, back, a, b, c, s
        if i % 10 == 0:
            free, total = cp.cuda.runtime.memGetInfo()
            peak_device_used = max(peak_device_used, total - free)
    cp.cuda.Device().synchronize()
    elapsed = time.perf_counter() - t0
    free, total = cp.cuda.runtime.memGetInfo()
    peak_device_used = max(peak_device_used, total - free)
    result = {"allocator": allocator, "iterations": iterations, "checksum": checksum,
              "seconds": elapsed, "peak_device_used": peak_device_used, "pool_total": None,
              "rmm_stats": None}
    if allocator.startswith("rmm:"):
        from rmm_plugins import stats

        result["rmm_stats"] = stats()
    elif pool is not None:
        result["pool_total"] = pool.total_bytes()  # held now (CuPy keeps no peak)
    return result


def run_one(allocator: str, iterations: int) -> dict:
    return run_worker(__file__, [allocator, iterations], allocator=allocator)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", nargs=2, metavar=("ALLOCATOR", "ITERATIONS"))
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--allocators", default=",".join(ALLOCATORS))
    parser.add_argument("--rtol", type=float, default=1e-9)
    parser.add_argument("--json")
    args = parser.parse_args()
    if args.worker:
        print_result(worker(args.worker[0], int(args.worker[1])))
        return 0

    allocators = args.allocators.split(",")
    if "cupy_pool" not in allocators:
        allocators.insert(0, "cupy_pool")  # the reference
    results, failed, reference = [], False, None
    print("| allocator | checksum | rel. diff vs cupy_pool | verdict | seconds "
          "| pool held MiB (end) | rmm peak reserved MiB | peak device used MiB |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for allocator in allocators:
        r = run_one(allocator, args.iterations)
        results.append(r)
        if "error" in r:
            failed = True
            print(f"| {allocator} | - | - | FAILED | - | - | - | - |")
            print(r["error"], file=sys.stderr)
            continue
        if allocator == "cupy_pool":
            reference = r
        diff = (abs(r["checksum"] - reference["checksum"]) / max(abs(reference["checksum"]), 1e-12)
                if reference else float("nan"))
        ok = reference is not None and diff <= args.rtol
        failed = failed or not ok
        stats = r["rmm_stats"] or {}
        print(f"| {allocator} | {r['checksum']:.10g} | {diff:.2e} | {'ok' if ok else 'MISMATCH'} | "
              f"{r['seconds']:.3f} | {mib(r['pool_total'])} | "
              f"{mib(stats.get('peak_reserved_bytes'))} | {mib(r['peak_device_used'])} |",
              flush=True)
    return finish("checksums", args.rtol, failed, results, args.json)

if __name__ == "__main__":
    sys.exit(main())
