"""The CUDA import's cost on a GPU (BENCHMARKS.md, issue 38): `dlpack_abi.from_dlpack` of a
PyTorch CUDA tensor, against `torch.from_dlpack` of the same tensor, interleaved (7 rounds of
20 000 calls each), printed as JSON. Run by scripts/gpu-test.sh after the tests; not a test
(timings are figures, not verdicts). The wheel gpu-test.sh builds has the `counters` feature and
the stable ABI: compare figures only with a run of the same build.

    python python/gpu_tests/bench_cuda_import.py
"""
import json
import statistics
import sys
import time


def main():
    try:
        import torch
        if not torch.cuda.is_available():
            raise RuntimeError("no CUDA device")
    except Exception as error:  # no PyTorch, or no GPU for it
        print(json.dumps({"skipped": f"{type(error).__name__}: {error}"}))
        return 0
    import dlpack_abi

    tensor = torch.arange(1000, dtype=torch.float32, device="cuda")
    torch.cuda.synchronize()
    calls = {"dlpack_abi.from_dlpack(torch)": dlpack_abi.from_dlpack,
             "torch.from_dlpack(torch)": torch.from_dlpack}
    rounds = {name: [] for name in calls}
    for _ in range(7):
        for name, call in calls.items():
            start = time.perf_counter_ns()
            for _ in range(20_000):
                call(tensor)
            rounds[name].append((time.perf_counter_ns() - start) / 20_000)
    report = {name: {"median_ns": round(statistics.median(values), 1),
                     "min_ns": round(min(values), 1), "max_ns": round(max(values), 1)}
              for name, values in rounds.items()}
    report["versions"] = {"torch": torch.__version__, "python": sys.version.split()[0],
                          "device": torch.cuda.get_device_name(0)}
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
