"""dlpack_abi.conformance: every rule is caught failing by a deliberately broken producer or
consumer (conformance_fakes.py), dlpack-abi's own objects pass every rule, device producers and
consumers (faked: host memory described as CUDA) get real verdicts or n/a with a reason, never a
failure for the checker's own limits, and the checker runs against the real libraries (their
verdicts are findings, recorded in CONFORMANCE.md, not asserted here)."""
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
    "dlpack.call.to_cpu": ["device_wrong_copy", "device_copy_on_device"],
    "dlpack.call.stream_none": ["no_stream_keyword"],
    "dlpack.call.stream_minus_one": ["crash_on_stream"],
    "dlpack.call.stream_device": ["device_crash_on_stream"],
    "dlpack.capsule.name": ["wrong_name"],
    "dlpack.capsule.unconsumed": ["double_delete"],
    "dlpack.capsule.used": ["ignore_used"],
    "dlpack.fields.valid": ["negative_ndim"],
    "dlpack.fields.values": ["wrong_values", "device_wrong_copy"],
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
    "consumer.stream": ["stream_zero_consumer", "device_stream_zero"],
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


def test_a_consumer_that_refuses_a_fake_keeps_its_error_and_the_deleter_runs():
    """The fakes' capsule destructor runs with the consumer's pending error set aside: NumPy's
    refusal of a major-2 tensor reaches the caller as NumPy raised it (with a destructor written
    in Python it came back as SystemError, which the report blamed on NumPy), and the
    unconsumed capsule's deleter runs once."""
    import numpy as np

    from dlpack_abi.conformance._consumer import SIX
    from dlpack_abi.conformance._fake import FakeProducer

    producer = FakeProducer(data=SIX, version=(2, 0))
    with pytest.raises(BufferError, match="major version is too high"):
        np.from_dlpack(producer)
    assert producer.deleter_calls == 1


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


# --- devices (faked: host memory described as CUDA, device type 2) ----------------------------

DLPACK_RULES = [rule for rule in conformance.PRODUCER_RULES if rule.startswith("dlpack.")]


def test_a_device_producer_whose_copy_to_the_cpu_works_gets_real_verdicts():
    results = verdicts("producer", "conformance_fakes:device_ok")
    assert {rule: results[rule].verdict for rule in DLPACK_RULES if results[rule].verdict in ("fail", "crash")} == {}
    values = results["dlpack.fields.values"]
    assert values.verdict == "pass" and "copy to the CPU" in values.detail
    assert results["dlpack.call.to_cpu"].verdict == "pass"
    assert results["dlpack.call.stream_device"].verdict == "pass"
    assert results["dlpack.flags.read_only"].verdict == "pass"
    # A wrong copy is the producer's fault, and fails.
    broken = verdicts("producer", "conformance_fakes:device_wrong_copy")
    assert broken["dlpack.fields.values"].verdict == "fail"


def test_a_refused_copy_to_the_cpu_is_na_with_the_reason_never_a_failure():
    results = verdicts("producer", "conformance_fakes:device_refuses_copy")
    values = results["dlpack.fields.values"]
    assert values.verdict == "n/a"
    assert values.detail.startswith("device memory on cuda:0: the producer's copy to the CPU was refused "
                                    "(BufferError: copy to the CPU is not supported)"), values.detail
    assert results["dlpack.call.to_cpu"].verdict == "refused"
    assert [r.rule for r in results.values() if r.verdict in ("fail", "crash")] == []
    assert conformance.summarize(list(results.values())) == 0


def test_an_unchecked_device_sample_is_not_hidden_by_the_passes_of_cpu_samples():
    values = verdicts("producer", "conformance_fakes:mixed_refuses_copy")["dlpack.fields.values"]
    assert values.verdict == "n/a" and values.samples == ["on cuda:0"], values


def test_the_checkers_own_limits_on_the_device_are_na_through_the_exchange_api_too():
    # dlpack_abi.Tensor over device memory: it cannot copy that memory to the CPU, so the
    # elements the exchange API gives back cannot be read; the export is the same memory.
    results = verdicts("producer", "conformance_fakes:device_tensor")
    assert [(r.rule, r.detail) for r in results.values() if r.verdict in ("fail", "crash")] == []
    assert results["dlpack.exchange.import"].verdict == "n/a"
    assert "copy to the CPU was refused" in results["dlpack.exchange.import"].detail
    assert results["dlpack.exchange.export"].verdict == "pass"
    assert results["dlpack.exchange.stream"].verdict == "pass"
    assert results["dlpack.fields.values"].verdict == "n/a"


def test_arrow_device_data_with_a_sync_event_and_a_refusing_cpu_method():
    results = verdicts("producer", "conformance_fakes:device_arrow")
    assert results["arrow.device.capsules"].verdict == "pass"
    assert results["arrow.array.capsules"].verdict == "refused"
    assert results["arrow.release.unconsumed"].verdict == "pass"
    assert results["arrow.release.moved"].verdict == "pass"
    assert [r.rule for r in results.values() if r.verdict in ("fail", "crash")] == []


def test_consumer_cases_run_again_in_device_memory():
    results = verdicts("consumer", "conformance_fakes:device_consumer")
    assert [(r.rule, r.detail) for r in results.values() if r.verdict in ("fail", "crash")] == []
    assert "cuda:0: stream=1" in results["consumer.stream"].detail
    # Results it cannot copy to the CPU cannot be read back: n/a with the reason.
    unread = verdicts("consumer", "conformance_fakes:device_consumer_no_copy")
    assert [r.rule for r in unread.values() if r.verdict in ("fail", "crash")] == []
    contiguous = unread["consumer.contiguous"]
    assert contiguous.verdict == "n/a" and "the producer's copy to the CPU was refused" in contiguous.detail
    # A consumer of device memory only is not asked to take CPU memory.
    only = verdicts("consumer", "conformance_fakes:device_only_consumer")
    assert [r.rule for r in only.values() if r.verdict in ("fail", "crash")] == []
    assert only["consumer.read_only_exchange"].detail == "cpu: the library imports device memory only"


def test_the_command_line_shows_na_in_text_and_json():
    text = subprocess.run([sys.executable, "-m", "dlpack_abi.conformance", "producer",
                           "conformance_fakes:device_refuses_copy"], capture_output=True, text=True)
    assert text.returncode == 0, text.stderr
    line = next(line for line in text.stdout.splitlines() if line.startswith("dlpack.fields.values"))
    assert " n/a " in line and "copy to the CPU was refused" in line
    assert "n/a" in conformance.__doc__ and "n/a" in text.stdout
    out = subprocess.run([sys.executable, "-m", "dlpack_abi.conformance", "producer",
                          "conformance_fakes:device_refuses_copy", "--json"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)["conformance_fakes:device_refuses_copy"]
    values = next(r for r in report["results"] if r["rule"] == "dlpack.fields.values")
    assert values["verdict"] == "n/a" and "refused" in values["detail"]
    usage = subprocess.run([sys.executable, "-m", "dlpack_abi.conformance", "--help"], capture_output=True, text=True)
    assert "n/a counts as neither a pass nor a failure" in " ".join(usage.stdout.split())


def test_a_library_that_is_not_installed_is_reported_not_checked():
    results = conformance.check("consumer", "conformance_fakes:not_installed")
    assert {r.verdict for r in results} == {"n/a"} and conformance.summarize(results) == 0
    assert "no_such_array_library" in results[0].unavailable
    assert results[0].detail.startswith("not checked: not installed")


@pytest.mark.parametrize("mode", ["producer", "consumer"])
def test_the_gpu_scripts_commands_give_json_wherever_they_run(mode):
    # scripts/gpu-test.sh runs exactly these; here torch and CuPy are usually missing (or have no
    # GPU), which must still give valid JSON, every rule present, and exit 0 unless a rule fails.
    out = subprocess.run([sys.executable, "-m", "dlpack_abi.conformance", mode, "torch", "cupy", "--json"],
                         capture_output=True, text=True, timeout=600)
    report = json.loads(out.stdout)
    assert set(report) == {"torch", "cupy"}
    rules = conformance.PRODUCER_RULES if mode == "producer" else conformance.CONSUMER_RULES
    failing = False
    for entry in report.values():
        assert [r["rule"] for r in entry["results"]] == list(rules)
        if "unavailable" in entry:
            assert {r["verdict"] for r in entry["results"]} == {"n/a"}
        failing |= any(r["verdict"] in ("fail", "crash") for r in entry["results"])
    assert out.returncode == (1 if failing else 0), out.stderr


def test_the_device_adapters_have_the_adapter_shape():
    # torch and CuPy cannot be installed in CI (torch's CUDA wheels are gigabytes; CuPy needs
    # CUDA): their runs are the GPU script's. Here: they are known, lazy, and complete.
    from dlpack_abi.conformance import libraries

    for name in ("torch", "cupy"):
        adapter = libraries.KNOWN[name]
        for method in ("version", "samples", "consume_dlpack", "consumer_device", "device_memory"):
            assert callable(getattr(adapter, method)), (name, method)
    assert libraries.cupy.imports_cpu is False
    assert getattr(libraries.torch, "imports_cpu", True) is True
    layouts = {name: source if view is None else view(source) for name, source, view in libraries._layouts()}
    assert not layouts["int64 strided"].flags.c_contiguous and not layouts["float64 transposed"].flags.c_contiguous
    lazy = subprocess.run([sys.executable, "-c", "import sys, dlpack_abi.conformance.libraries; "
                           "print(sorted({'torch', 'cupy'} & set(sys.modules)))"], capture_output=True, text=True)
    assert lazy.stdout.strip() == "[]", lazy.stderr


def test_the_report_renders_device_tables_from_the_gpu_runs_json(tmp_path):
    import importlib.util

    path = HERE.parents[1] / "scripts" / "conformance_report.py"
    spec = importlib.util.spec_from_file_location("conformance_report", path)
    report = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(report)
    for mode, libraries in [("producer", ["conformance_fakes:device_refuses_copy", "conformance_fakes:not_installed"]),
                            ("consumer", ["conformance_fakes:device_consumer_no_copy"])]:
        out = subprocess.run([sys.executable, "-m", "dlpack_abi.conformance", mode, *libraries, "--json"],
                             capture_output=True, text=True)
        (tmp_path / f"conformance-{mode}.json").write_text(out.stdout)
    (tmp_path / "other.json").write_text("[1, 2]")
    section = report.device_section(tmp_path)
    assert section.startswith("## Device\n") and section.rstrip().endswith(report.END)
    assert "| `dlpack.fields.values` | dlpack-1.3.md §5.3, §5.4 | **n/a** | device memory on cuda:0: " in section
    assert "| `consumer.contiguous` | dlpack-1.3.md §5.3 | **n/a** | cuda:0: device memory on cuda:0: " in section
    assert "Not checked: not installed" in section
    # The run's date is the one its reports carry (copies of the files lose their times); a
    # report without one takes a date in the folder's name.
    today = __import__("datetime").datetime.now(__import__("datetime").timezone.utc).date()
    assert f"*From the device run of {today.isoformat()} " in section
    old = tmp_path / "2026-11-27-h200"
    old.mkdir()
    for name in ("conformance-producer.json", "conformance-consumer.json"):
        reports = json.loads((tmp_path / name).read_text())
        for entry in reports.values():
            entry.pop("date")
        (old / name).write_text(json.dumps(reports))
    assert "*From the device run of 2026-11-27 " in report.device_section(old)
    # A regeneration without --device-json keeps the section it finds.
    page = tmp_path / "CONFORMANCE.md"
    page.write_text("# title\n\n## numpy\n\ntext\n\n" + section)
    assert report.kept_device_section(page) == section.rstrip() + "\n"
