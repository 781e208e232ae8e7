"""dlpack_abi.conformance: every rule is caught failing by a deliberately broken producer or
consumer (conformance_fakes.py), dlpack-abi's own objects pass every rule, and the checker runs
against the real libraries (their verdicts are findings, recorded in CONFORMANCE.md, not
asserted here)."""
import json
import os
import pathlib
import subprocess
import sys

import pytest

from dlpack_abi import conformance

HERE = pathlib.Path(__file__).resolve().parent

#: rule -> the fake adapters (in conformance_fakes) that break it.
PRODUCER_FAKES = {
    "dlpack.device": ["wrong_device"],
    "dlpack.call.plain": ["wrong_name"],
    "dlpack.call.max_version_1_0": ["wrong_major"],
    "dlpack.call.max_version_1_3": ["wrong_major"],
    "dlpack.call.max_version_2_0": ["refuse_newer", "wrong_major"],
    "dlpack.call.copy_true": ["ignore_copy"],
    "dlpack.call.copy_false": ["always_copied"],
    "dlpack.call.dl_device": ["copy_on_dl_device"],
    "dlpack.call.stream_none": ["no_stream_keyword"],
    "dlpack.call.stream_minus_one": ["crash_on_stream"],
    "dlpack.capsule.name": ["wrong_name"],
    "dlpack.capsule.unconsumed": ["double_delete"],
    "dlpack.capsule.used": ["ignore_used"],
    "dlpack.fields.valid": ["negative_ndim"],
    "dlpack.fields.values": ["wrong_values"],
    "dlpack.fields.strides": ["null_strides"],
    "dlpack.flags.read_only": ["drop_read_only"],
    "dlpack.flags.unknown": ["unknown_flag"],
    "dlpack.exchange.table": ["wrong_table_name"],
    "dlpack.exchange.export": ["broken_table"],
    "dlpack.exchange.allocator": ["broken_table"],
    "dlpack.exchange.import": ["broken_table"],
    "dlpack.exchange.stream": ["broken_table"],
    "arrow.schema.present": ["no_schema"],
    "arrow.schema.capsule": ["wrong_schema_name"],
    "arrow.array.capsules": ["list_not_tuple"],
    "arrow.array.requested": ["requested_breaks"],
    "arrow.array.incompatible": ["ignores_request"],
    "arrow.device.capsules": ["event_on_cpu"],
    "arrow.device.kwargs": ["no_kwargs"],
    "arrow.release.unconsumed": ["leaks_array"],
    "arrow.release.moved": ["releases_moved"],
    "arrow.stream.capsule": ["stream_wrong_name"],
    "arrow.stream.release": ["stream_leaks"],
    "arrow.stream.error": ["silent_stream"],
}

CONSUMER_FAKES = {
    "consumer.contiguous": ["leaky_consumer"],
    "consumer.strides": ["naive_consumer", "leaky_consumer"],
    "consumer.negative_strides": ["naive_consumer", "leaky_consumer"],
    "consumer.byte_offset": ["naive_consumer", "leaky_consumer"],
    "consumer.read_only": ["naive_consumer", "leaky_consumer"],
    "consumer.versioned_only": ["leaky_consumer"],
    "consumer.legacy_only": ["leaky_consumer"],
    "consumer.null_strides_legacy": ["leaky_consumer"],
    "consumer.zero_size": ["leaky_consumer"],
    "consumer.bool": ["leaky_consumer"],
    "consumer.subbyte_packed": ["leaky_consumer"],
    "consumer.subbyte_padded": ["leaky_consumer"],
    "consumer.read_only_exchange": ["naive_consumer"],
    "consumer.major_2": ["naive_consumer"],
    "consumer.raises": ["leaky_consumer"],
    "consumer.arrow_nulls_offset": ["leaky_consumer"],
    "consumer.arrow_string_view": ["leaky_consumer"],
    "consumer.arrow_stream_error": ["leaky_consumer"],
}


@pytest.fixture(autouse=True)
def fakes_importable(monkeypatch):
    # The checks run in child processes, which import the fakes by name.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))


def verdicts(mode, adapter):
    return {r.rule: r for r in conformance.check(mode, adapter)}


def test_every_rule_has_a_fake():
    assert set(PRODUCER_FAKES) == set(conformance.PRODUCER_RULES)
    assert set(CONSUMER_FAKES) == set(conformance.CONSUMER_RULES)


@pytest.mark.parametrize("mode,fakes", [("producer", PRODUCER_FAKES), ("consumer", CONSUMER_FAKES)])
def test_every_rule_is_caught_failing(mode, fakes):
    adapters = sorted({a for names in fakes.values() for a in names})
    results = {a: verdicts(mode, f"conformance_fakes:{a}") for a in adapters}
    missed = []
    for rule, names in fakes.items():
        for name in names:
            got = results[name][rule]
            allowed = ("warn",) if rule == "arrow.schema.present" else ("fail", "crash")
            if got.verdict not in allowed:
                missed.append(f"{rule} / {name}: {got.verdict} {got.detail}")
    assert missed == []


def test_a_destructor_that_skips_the_deleter_is_a_warning():
    result = verdicts("producer", "conformance_fakes:leak_unconsumed")["dlpack.capsule.unconsumed"]
    assert result.verdict == "warn", result


def test_a_crash_is_reported_and_the_run_goes_on():
    results = verdicts("producer", "conformance_fakes:crash_on_stream")
    assert results["dlpack.call.stream_minus_one"].verdict == "crash"
    assert "SIGSEGV" in results["dlpack.call.stream_minus_one"].detail
    # The rules after the crash still ran, in a new process.
    assert results["dlpack.capsule.unconsumed"].verdict == "pass"


@pytest.mark.parametrize("mode", ["producer", "consumer"])
def test_our_objects_pass_every_rule(mode):
    results = conformance.check(mode, "dlpack_abi")
    assert [(r.rule, r.verdict, r.detail) for r in results if r.verdict not in ("pass", "refused", "n/a")] == []
    assert conformance.summarize(results) == 0


def test_the_command_line_prints_a_table_and_json_and_exits_for_ci():
    table = subprocess.run([sys.executable, "-m", "dlpack_abi.conformance", "producer", "numpy"],
                           capture_output=True, text=True)
    assert table.returncode == 0, table.stderr
    assert "dlpack.capsule.used" in table.stdout and "dlpack-1.3.md §6.3" in table.stdout
    broken = subprocess.run([sys.executable, "-m", "dlpack_abi.conformance", "producer",
                             "conformance_fakes:ignore_used", "--json"], capture_output=True, text=True)
    assert broken.returncode == 1
    report = json.loads(broken.stdout)["conformance_fakes:ignore_used"]
    used = next(r for r in report["results"] if r["rule"] == "dlpack.capsule.used")
    assert used["verdict"] == "fail" and used["spec"] == "dlpack-1.3.md §6.3"


@pytest.mark.parametrize("library", ["numpy", "pyarrow", "tvm_ffi", "jax", "polars", "nanoarrow", "arro3", "duckdb"])
def test_the_real_libraries_are_checked(library):
    for mode in ("producer", "consumer"):
        results = conformance.check(mode, library)
        assert len(results) == len(conformance.PRODUCER_RULES if mode == "producer" else conformance.CONSUMER_RULES)
        assert all(r.verdict in ("pass", "fail", "crash", "refused", "warn", "n/a") for r in results)


def test_the_module_docstring_example_runs():
    import doctest

    assert doctest.testmod(conformance, optionflags=doctest.ELLIPSIS).failed == 0


def test_the_checkers_ctypes_structs_have_the_c_layout():
    # The checker mirrors the C structs in ctypes; the reference's LP64 layout tables (checked
    # against the C compiler in layout-checks/) are the authority.
    import ctypes

    from dlpack_abi.conformance import _c

    if ctypes.sizeof(ctypes.c_void_p) != 8:
        pytest.skip("the expectations are LP64's")
    sizes = {"DLTensor": 48, "DLManagedTensor": 64, "DLManagedTensorVersioned": 80,
             "DLPackExchangeAPI": 56, "ArrowSchema": 72, "ArrowArray": 80, "ArrowDeviceArray": 128,
             "ArrowArrayStream": 40}
    assert {name: ctypes.sizeof(getattr(_c, name)) for name in sizes} == sizes
    assert _c.DLManagedTensorVersioned.dl_tensor.offset == 32
    assert _c.DLTensor.byte_offset.offset == 40
    assert _c.ArrowDeviceArray.sync_event.offset == 96
