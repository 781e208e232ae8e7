"""Where the borrow registry lives and which builds share it: one table per process, found by
every extension built on dlpack-abi-pyo3 whatever `sys.modules` holds, and refused, in both load
orders, when another build's table has another meaning (another major, the pre-release table,
a smaller table). Each case runs in a fresh interpreter: the first extension to need the
registry decides for the process. The other builds are emulated with ctypes: a capsule under the
same key with the other build's name and layout, and the lookup that build's code makes."""
import subprocess
import sys
import textwrap

import pytest

PRELUDE = """
import ctypes, gc, sys
import numpy as np
api = ctypes.pythonapi
api.PyInterpreterState_Get.restype = ctypes.c_void_p
get_dict = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)(("PyInterpreterState_GetDict", api))
api.PyCapsule_New.restype = ctypes.py_object
api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
api.PyCapsule_GetName.restype = ctypes.c_char_p
api.PyCapsule_GetName.argtypes = [ctypes.py_object]
# A borrowed reference: read through a cast (a `py_object` result would be taken as new).
home = ctypes.cast(get_dict(api.PyInterpreterState_Get()), ctypes.py_object).value
KEY = "dlpack_abi.borrow_registry"
keep = []

def capsule(name, table_bytes):
    buffer = ctypes.create_string_buffer(table_bytes, 64)
    name = ctypes.create_string_buffer(name)
    keep.extend([buffer, name])
    return api.PyCapsule_New(ctypes.addressof(buffer), name, None)

def refused(call, match):
    try:
        call()
    except RuntimeError as error:
        assert match in str(error), str(error)
        return
    raise AssertionError("not refused")
"""


def run(body):
    code = PRELUDE + textwrap.dedent(body)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("first, second", [("dlpack_abi", "tensor_ops"),
                                           ("tensor_ops", "dlpack_abi")])
def test_one_registry_whatever_sys_modules_holds(first, second):
    run(f"""
    import dlpack_abi, tensor_ops
    a = np.arange(4.0)
    # {first} needs the registry first and publishes it in the interpreter's dict.
    if "{first}" == "dlpack_abi":
        held = dlpack_abi.Tensor.from_dlpack(a)
    else:
        tensor_ops.scale_(a, 1.0)
        held = None
    assert api.PyCapsule_GetName(home[KEY]) == b"dlpack_abi.borrow_registry.v2"
    for name in [n for n in sys.modules if "borrow" in n]:
        del sys.modules[name]  # what reloaders and test harnesses do
    gc.collect()
    # {second} meets its first borrow now, and finds the same registry.
    def during():
        try:
            dlpack_abi.Tensor.from_dlpack(a)
        except BufferError as error:
            assert "ReadwriteTensor" in str(error)
            return "refused"
        return "imported"
    del held
    assert tensor_ops.while_borrowed_(a, during) == "refused"
    """)


def test_another_major_loaded_first_is_refused():
    run("""
    home.setdefault(KEY, capsule(b"dlpack_abi.borrow_registry.v3", b"\\xff" * 8))
    import dlpack_abi
    refused(lambda: dlpack_abi.Tensor.from_dlpack(np.arange(2.0)), "dlpack_abi.borrow_registry.v3")
    """)


def test_another_major_loaded_second_finds_ours_and_refuses():
    run("""
    import dlpack_abi
    held = dlpack_abi.Tensor.from_dlpack(np.arange(2.0))
    found = home.setdefault(KEY, capsule(b"dlpack_abi.borrow_registry.v3", b""))
    # What a build of another major reads: the key is taken by a capsule it cannot open.
    assert api.PyCapsule_GetName(found) == b"dlpack_abi.borrow_registry.v2"
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    try:
        api.PyCapsule_GetPointer(found, b"dlpack_abi.borrow_registry.v3")
    except ValueError:
        pass
    else:
        raise AssertionError("another major could open our table")
    """)


def test_a_smaller_table_of_this_major_is_refused():
    run("""
    size = (8).to_bytes(ctypes.sizeof(ctypes.c_size_t), sys.byteorder)  # 8 bytes: no functions
    home.setdefault(KEY, capsule(b"dlpack_abi.borrow_registry.v2", size))
    import tensor_ops
    refused(lambda: tensor_ops.scale_(np.arange(2.0), 2.0), "the extension loaded first")
    """)


@pytest.mark.parametrize("fields", ["first", "with track_attached"])
def test_a_table_of_this_major_is_called_by_its_size(fields):
    # A build of this major loaded first, whose table has only the first fields (size 40 on
    # 64-bit) or also `track_attached`: an attached shared import calls `track_attached` only
    # when the table's size covers it, `track` otherwise; a mutable one always calls `track`.
    run(f"""
    calls = []
    TRACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p,
                             ctypes.c_size_t, ctypes.c_int)
    MAKE_SHARED = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t)
    UNTRACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_size_t)
    ATTACHED = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p)
    functions = [
        TRACK(lambda state, token, extents, count, mutable:
              calls.append(("track", count, mutable)) or 0),
        MAKE_SHARED(lambda state, token: calls.append(("make_shared",)) or 0),
        UNTRACK(lambda state, token: calls.append(("untrack",))),
        ATTACHED(lambda state, token, extent: calls.append(("track_attached",)) or 0),
    ]
    keep.extend(functions)
    count = 3 if "{fields}" == "first" else 4
    words = [0, 0] + [ctypes.cast(f, ctypes.c_void_p).value for f in functions[:count]]
    words[0] = ctypes.sizeof(ctypes.c_void_p) * len(words)
    table = b"".join(w.to_bytes(ctypes.sizeof(ctypes.c_void_p), sys.byteorder) for w in words)
    home.setdefault(KEY, capsule(b"dlpack_abi.borrow_registry.v2", table))
    import dlpack_abi, tensor_ops
    held = dlpack_abi.Tensor.from_dlpack(np.arange(2.0))
    del held
    tensor_ops.scale_(np.arange(2.0), 2.0)
    shared = "track_attached" if "{fields}" != "first" else "track"
    expected = [(shared,) if shared == "track_attached" else ("track", 1, 0), ("untrack",),
                ("track", 1, 1), ("untrack",)]
    assert calls == expected, calls
    """)


def test_the_pre_release_table_is_refused_in_both_orders():
    run("""
    import types
    legacy = types.ModuleType("_dlpack_abi_borrows")
    legacy.api = capsule(b"_dlpack_abi_borrows.api", b"\\x01" + b"\\0" * 7)
    sys.modules["_dlpack_abi_borrows"] = legacy  # a pre-release build, loaded first
    import dlpack_abi
    refused(lambda: dlpack_abi.Tensor.from_dlpack(np.arange(2.0)), "pre-release")
    """)
    run("""
    import dlpack_abi
    held = dlpack_abi.Tensor.from_dlpack(np.arange(2.0))
    # A pre-release build loaded second reads sys.modules["_dlpack_abi_borrows"].api.
    module = sys.modules["_dlpack_abi_borrows"]
    assert not hasattr(module, "api"), "it would find no table and fail to start"
    """)


def test_a_mutable_registration_from_a_thread_without_the_gil_takes_it():
    # Through the C table, from a thread that does not hold the GIL (ctypes gives it up around a
    # foreign call): the registry takes the GIL itself, also after a subinterpreter was made,
    # which (through CPython 3.11) makes `PyGILState_Check` answer 1 on every thread.
    run("""
    import threading
    import dlpack_abi
    held = dlpack_abi.Tensor.from_dlpack(np.arange(2.0))  # publishes the registry
    del held
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    table = api.PyCapsule_GetPointer(home[KEY], b"dlpack_abi.borrow_registry.v2")
    word = ctypes.sizeof(ctypes.c_void_p)
    state, track, untrack = (ctypes.c_void_p.from_address(table + i * word).value
                             for i in (1, 2, 4))
    TRACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p,
                             ctypes.c_size_t, ctypes.c_int)
    UNTRACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_size_t)
    memory = ctypes.create_string_buffer(64)
    start = ctypes.addressof(memory)
    # start, end, first, stride_gcd, element_bytes
    extent = (ctypes.c_size_t * 5)(start, start + 64, start, 8, 8)

    def register(token):
        # A foreign call: ctypes releases the GIL around it.
        assert TRACK(track)(state, token, ctypes.addressof(extent), 1, 1) == 0
        UNTRACK(untrack)(state, token)

    def takes(token):
        before = dlpack_abi.counts()["registry_gil_takes"]
        register(token)
        return dlpack_abi.counts()["registry_gil_takes"] - before

    assert takes(1) == 1
    try:
        import _interpreters as interpreters  # CPython 3.13 on
    except ImportError:
        import _xxsubinterpreters as interpreters
    interpreters.destroy(interpreters.create())
    assert takes(2) == 1, "the GIL was not taken after a subinterpreter was made"
    # And from a thread of its own.
    results = []
    thread = threading.Thread(target=lambda: results.append(takes(3)))
    thread.start()
    thread.join()
    assert results == [1]
    """)
