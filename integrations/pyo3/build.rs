//! Build script: the interpreter's cfgs (`Py_LIMITED_API`, `Py_3_12`, `PyPy`, ...), so that a
//! build whose Python API has `PyObject_VectorcallMethod` calls `__dlpack__` through it.

fn main() {
    pyo3_build_config::use_pyo3_cfgs();
}
