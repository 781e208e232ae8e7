// The peer of python/bench.py's argument rows: the same function as tensor_ops.element_count,
// taking its array as nanobind's `nb::ndarray` argument (nanobind's own DLPack import).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

namespace nb = nanobind;

NB_MODULE(bench_nanobind, m) {
    // Any dtype, layout and device, as `VersionedTensor` accepts.
    m.def("element_count", [](nb::ndarray<> x) { return x.size(); });
    // float64, C-contiguous, on the CPU: the typed argument nanobind's documentation shows.
    m.def("element_count_f64",
          [](nb::ndarray<double, nb::c_contig, nb::device::cpu> x) { return x.size(); });
}
