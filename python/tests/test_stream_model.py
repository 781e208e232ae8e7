"""Stream ordering against a model GPU (``dlpack_abi._ModelGpu``, python/src/model.rs, feature
``model``): streams whose queued work runs late and in whatever order the test picks, events,
waits, host waits and frees, over memory every read of which is checked. Producers write late on
their stream; consumers read on theirs. The rule checked after every step: **every read sees the
writes it depends on, and no memory is freed before the reads of it**, and every hand-over the
glue cannot order is refused with a ``BufferError`` instead (never wrong data).

Each exchange test checks one path; the property tests drive random sequences of producers,
importers (``Tensor.from_dlpack`` with and without ``stream``, a ``#[pyfunction]`` taking a
``VersionedTensor``, an exporter class holding a ``Tensor``) and consumers (``__dlpack__``, the
exchange API, Arrow device arrays, host copies, ``tobytes``), with the glue given the model's
runtime and without one.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

import dlpack_abi

ext = dlpack_abi.dlpack_abi
assert hasattr(ext, "_ModelGpu"), "the test build has the model: maturin ... --features model"
Gpu, Reexporter = ext._ModelGpu, ext._ModelReexporter

N = 16
P, C, D = 1, 2, 3  # a producer's stream, the stream an import is made for, a third one


@pytest.fixture
def gpu(request):
    model = Gpu(streams=4, runtime=getattr(request, "param", True))
    yield model
    model.close()


def run_first(gpu, *streams):
    """Runs the queued work of ``streams`` first, as far as it can run, then everything."""
    for stream in streams:
        while gpu.step(stream):
            pass
    gpu.drain()


def test_the_model_sees_a_read_before_its_write(gpu):
    array = gpu.array(N, 5.0, P)
    use = gpu.use_dlpack(array, D, no_sync=True)  # the consumer orders nothing
    run_first(gpu, D)
    assert gpu.violations() == ["__dlpack__: read 0 on stream 3, before the write of 5"]
    use.release()


def test_the_model_sees_a_free_before_the_read(gpu):
    array = gpu.array(N, 5.0, P)
    gpu.synchronize(P)
    use = gpu.use_dlpack(array, D, fenced=False)
    use.release()  # the deleter runs at once, with the read still queued
    del array
    gpu.drain()
    assert gpu.violations() == ["__dlpack__: read on stream 3 after the memory was freed"]


def test_a_fenced_consumer_frees_after_its_read(gpu):
    array = gpu.array(N, 5.0, P)
    use = gpu.use_dlpack(array, D)
    use.release()  # the host waits for the read, then the deleter runs
    del array
    gpu.drain()
    assert gpu.violations() == []
    assert gpu.counts()["reads"] == 1


def test_a_producer_orders_its_stream_before_the_consumers(gpu):
    array = gpu.array(N, 5.0, P)
    use = gpu.use_dlpack(array, D)
    run_first(gpu, D)
    assert gpu.violations() == []
    use.release()


# The case a real GPU found (H200: zeros in 20 of 20 rounds): imported for stream c, consumed
# on stream d. With a runtime the glue makes d wait on an event recorded on c at the import; the
# late work of every stream runs in the worst order for it.
WAYS = ["dlpack", "arrow", "exchange", "bare", "reexporter", "copy", "tobytes"]


@pytest.mark.parametrize("way", WAYS)
def test_a_tensor_imported_for_one_stream_is_ordered_for_every_other_use(gpu, way):
    array = gpu.array(N, 7.0, P, writable=True)
    tensor = dlpack_abi.Tensor.from_dlpack(array, stream=gpu.handle(C))
    del array
    if way == "dlpack":
        use = gpu.use_dlpack(tensor, D)
    elif way == "arrow":
        use = gpu.use_arrow(tensor, D)
    elif way == "exchange":
        use = gpu.use_exchange(tensor)  # read on the legacy default stream (0)
    elif way == "bare":
        use = gpu.use_exchange(tensor, bare=True)  # the non-owning DLTensor, same stream
    elif way == "reexporter":
        use = gpu.use_dlpack(Reexporter(tensor), D)
    elif way == "copy":
        copy = dlpack_abi.Tensor.from_dlpack(tensor, dl_device=(1, 0), copy=True)
        assert np.all(np.frombuffer(copy.tobytes(), np.float32) == 7.0)
        use = None
    else:
        assert np.all(np.frombuffer(tensor.tobytes(), np.float32) == 7.0)
        use = None
    run_first(gpu, D, 0, C, P)
    del use, tensor
    gpu.drain()
    assert gpu.violations() == []


@pytest.mark.parametrize("gpu", [False], indirect=True)
def test_without_a_runtime_a_hand_over_to_another_stream_is_refused(gpu):
    c, d = gpu.handle(C), gpu.handle(D)
    array = gpu.array(N, 7.0, P, writable=True)
    tensor = dlpack_abi.Tensor.from_dlpack(array, stream=c)
    refused = f"the data is ready on stream {c:#x} only, and no device runtime is available"
    with pytest.raises(BufferError, match=f"{refused} to order it before stream {d:#x}"):
        tensor.__dlpack__(stream=d, max_version=(1, 3))
    with pytest.raises(BufferError, match=f"{refused} to order it before the host"):
        tensor.tobytes()
    with pytest.raises(BufferError, match=f"{refused} to order it before the host"):
        tensor.__dlpack__(dl_device=(1, 0), copy=True, max_version=(1, 3))
    with pytest.raises(BufferError, match=f"{refused} to record a sync_event"):
        tensor.__arrow_c_device_array__()
    for bare in (False, True):
        with pytest.raises(BufferError, match=f"{refused} to order it before the legacy default"):
            gpu.use_exchange(tensor, bare=bare)
    with pytest.raises(BufferError, match=f"before stream {d:#x}"):
        gpu.use_dlpack(Reexporter(tensor), D)
    # On the stream it was imported for, and with stream=-1 (the consumer's to order), it is
    # handed over as it is.
    use = gpu.use_dlpack(tensor, C)
    tensor.__dlpack__(stream=-1, max_version=(1, 3))
    run_first(gpu, C, P)
    assert gpu.violations() == []
    use.release()


def test_an_import_through_an_exchange_api_is_ready_on_the_producers_current_stream(gpu):
    gpu.current = C  # the producer's current_work_stream
    array = gpu.array(N, 3.0, P)
    tensor = dlpack_abi.Tensor.from_dlpack(array)  # through the producer's table: no sync
    use = gpu.use_dlpack(tensor, D)
    run_first(gpu, D, C, P)
    assert gpu.violations() == []
    use.release()


@pytest.mark.parametrize("gpu", [False], indirect=True)
def test_a_plain_import_is_on_the_default_stream_even_without_a_runtime(gpu):
    gpu.current = C
    array = gpu.array(N, 3.0, P)
    # A plain `VersionedTensor` argument through the table is ready on C: without a runtime to
    # order it on the default stream, the glue asks the producer's __dlpack__ instead.
    passed = gpu.passthrough(array)
    use = gpu.use_dlpack(passed, 0)
    run_first(gpu, 0, C, P)
    assert gpu.violations() == []
    use.release()


def test_an_import_with_stream_minus_one_is_the_importers_to_order(gpu):
    array = gpu.array(N, 3.0, P)
    tensor = dlpack_abi.Tensor.from_dlpack(array, stream=-1)
    gpu.synchronize(P)  # the importer's part: the producer's work is complete
    records = gpu.counts()["records"]
    use = gpu.use_dlpack(tensor, D)
    assert gpu.counts()["records"] == records, "stream=-1: nothing ordered"
    run_first(gpu, D)
    assert gpu.violations() == []
    use.release()
    # The host's reads and Arrow's sync_event are ours, and nothing orders them: refused.
    minus_one = "imported with stream=-1, which leaves its ordering to the importer"
    with pytest.raises(BufferError, match=minus_one):
        tensor.tobytes()
    with pytest.raises(BufferError, match=minus_one):
        tensor.__arrow_c_device_array__()


def test_a_capsule_is_ready_on_the_stream_it_was_made_for(gpu):
    array = gpu.array(N, 4.0, P)
    capsule = array.__dlpack__(stream=gpu.handle(C), max_version=(1, 3))
    tensor = dlpack_abi.Tensor.from_dlpack(capsule, stream=gpu.handle(C))  # say which
    with pytest.raises(ValueError, match="already consumed"):
        dlpack_abi.Tensor.from_dlpack(capsule, stream=gpu.handle(C))
    use = gpu.use_dlpack(tensor, D)
    run_first(gpu, D, 0, C, P)
    assert gpu.violations() == []
    use.release()


def test_a_stream_the_device_refuses_drops_the_import_once(gpu):
    """CUDA's table refuses 0 (ambiguous): a producer that exported anyway gets its tensor back
    through the deleter, once (the leak check of every test counts the import)."""
    array = gpu.array(N, 4.0, P)
    capsule = array.__dlpack__(max_version=(1, 3))
    with pytest.raises(BufferError, match="ambiguous"):
        dlpack_abi.Tensor.from_dlpack(capsule, stream=0)
    with pytest.raises(ValueError, match="already consumed"):
        dlpack_abi.Tensor.from_dlpack(capsule)


@pytest.fixture
def per_thread_gpu():
    """A model with CUDA's per-thread default stream (``stream=2``) as well: a blocking stream,
    ordered with the legacy default stream both ways."""
    model = Gpu(streams=4, per_thread=True)
    yield model
    model.close()


def test_the_model_orders_the_per_thread_default_stream_with_the_legacy_one(per_thread_gpu):
    gpu, T = per_thread_gpu, per_thread_gpu.per_thread
    assert gpu.handle(T) == 2
    written = gpu.array(N, 2.0, 0)  # on the legacy default stream
    # A consumer that orders nothing (stream=-1) still reads after the write on the per-thread
    # default stream (CUDA's implicit synchronization), and not on a non-blocking stream.
    blocking = gpu.use_dlpack(written, T, no_sync=True)
    non_blocking = gpu.use_dlpack(written, D, no_sync=True)
    run_first(gpu, T, D)
    assert gpu.violations() == ["__dlpack__: read 0 on stream 3, before the write of 2"]
    blocking.release()
    non_blocking.release()


def test_a_refused_per_thread_default_stream_is_ordered_through_the_legacy_one(per_thread_gpu):
    """PyTorch 2.11 refuses ``__dlpack__(stream=2)``; the import asks for the legacy default
    stream instead, which the per-thread default stream is ordered after (pitfalls 38)."""
    gpu, T = per_thread_gpu, per_thread_gpu.per_thread
    array = gpu.array(N, 5.0, P, refuses_per_thread=True)
    with pytest.raises(BufferError, match="per-thread default stream is not supported"):
        array.__dlpack__(stream=2, max_version=(1, 3))
    for importer in (lambda: dlpack_abi.Tensor.from_dlpack(array, stream=2),
                     lambda: Reexporter(array, stream=2)):
        imported = importer()
        use = gpu.use_dlpack(imported, T)  # read on the per-thread default stream
        run_first(gpu, T)  # as far as it can run first, then everything
        assert gpu.violations() == []
        use.release()
    assert gpu.counts()["reads"] == 2


class RefusesStream2:
    """A producer on ``device`` that refuses ``stream=2`` with ``BufferError`` and hands other
    requests to ``inner``; it records the streams asked for."""

    def __init__(self, device, inner):
        self.device, self.inner, self.asked = device, inner, []

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, stream=None, **keywords):
        self.asked.append(stream)
        if stream == 2:
            raise BufferError("per-thread default stream is not supported.")
        return self.inner.__dlpack__(stream=stream, **keywords)


def test_only_cudas_stream_2_has_a_stand_in(per_thread_gpu):
    gpu = per_thread_gpu
    array = gpu.array(N, 5.0, P)
    cuda_managed = RefusesStream2((13, 0), array)
    tensor = dlpack_abi.Tensor.from_dlpack(cuda_managed, stream=2)
    assert cuda_managed.asked == [2, 1]
    del tensor
    # ROCm's table has no stream 2, so nothing stands in for it: the refusal stands, asked once.
    rocm = RefusesStream2((10, 0), array)
    with pytest.raises(BufferError, match="per-thread default stream is not supported"):
        dlpack_abi.Tensor.from_dlpack(rocm, stream=2)
    assert rocm.asked == [2]
    # A refusal of another stream has no stand-in either.
    cuda = AlwaysRefuses((2, 0), array)
    with pytest.raises(BufferError, match="refused"):
        dlpack_abi.Tensor.from_dlpack(cuda, stream=gpu.handle(C))
    assert cuda.asked == [gpu.handle(C)]
    gpu.drain()
    assert gpu.violations() == []


class AlwaysRefuses(RefusesStream2):
    def __dlpack__(self, stream=None, **keywords):
        self.asked.append(stream)
        raise BufferError("refused")


def test_the_default_stream_is_recorded_on_only_when_a_hand_over_needs_it(gpu):
    array = gpu.array(N, 3.0, 0)
    tensor = dlpack_abi.Tensor.from_dlpack(array)  # ready on the legacy default stream
    records = gpu.counts()["records"]
    uses = [gpu.use_dlpack(tensor, 0) for _ in range(3)]
    assert gpu.counts()["records"] == records, "one stream: nothing to order"
    uses.append(gpu.use_dlpack(tensor, D))
    assert gpu.counts()["records"] == records + 1
    run_first(gpu, D)
    assert gpu.violations() == []
    del uses


def source_is_read_only(source):
    """Whether a bare ``DLTensor`` (which has no flags) is refused for ``source``: read-only data,
    or a class whose table has no ``dltensor_from_py_object_no_sync`` (exporter classes)."""
    return not isinstance(source, dlpack_abi.Tensor) or source.readonly


class Exchanges(RuleBasedStateMachine):
    """Random programs of producers, importers, re-exporters and consumers on a model GPU whose
    work runs in the order the program picks."""

    runtime = True

    def __init__(self):
        super().__init__()
        self.gpu = Gpu(streams=4, runtime=self.runtime)
        self.objects = []  # (producer, the value its reads must see)
        self.uses = []
        self.value = 0.0

    def refused(self, what, error):
        assert not self.runtime, f"{what} refused with a runtime: {error}"
        assert "no device runtime is available" in str(error), str(error)
        event(f"refused: {what}")

    @rule(stream=st.integers(0, 3), writable=st.booleans())
    def produce(self, stream, writable):
        self.value += 1.0
        self.objects.append((self.gpu.array(N, self.value, stream, writable), self.value))

    @precondition(lambda self: self.objects)
    @rule(data=st.data(), how=st.sampled_from(["stream", "plain", "passthrough", "reexporter"]),
          stream=st.integers(0, 3))
    def import_(self, data, how, stream):
        source, value = data.draw(st.sampled_from(self.objects))
        handle = self.gpu.handle(stream)
        try:
            if how == "stream":
                imported = dlpack_abi.Tensor.from_dlpack(source, stream=handle)
            elif how == "plain":
                imported = dlpack_abi.Tensor.from_dlpack(source)
            elif how == "passthrough":
                imported = self.gpu.passthrough(source)
            else:
                imported = Reexporter(source, stream=handle)
        except BufferError as error:
            self.refused(f"import {how}", error)
            return
        event(f"imported: {how}")
        self.objects.append((imported, value))

    @precondition(lambda self: self.objects)
    @rule(data=st.data(),
          how=st.sampled_from(["dlpack", "exchange", "bare", "arrow", "copy", "tobytes"]),
          stream=st.integers(0, 3))
    def consume(self, data, how, stream):
        source, value = data.draw(st.sampled_from(self.objects))
        try:
            if how == "dlpack":
                self.uses.append(self.gpu.use_dlpack(source, stream))
            elif how == "exchange":
                self.uses.append(self.gpu.use_exchange(source))
            elif how == "bare":
                if not hasattr(type(source), "__dlpack_c_exchange_api__") or source_is_read_only(source):
                    return
                self.uses.append(self.gpu.use_exchange(source, bare=True))
            elif how == "arrow":
                self.uses.append(self.gpu.use_arrow(source, stream))
            elif how == "copy":
                copy = dlpack_abi.Tensor.from_dlpack(source, dl_device=(1, 0), copy=True)
                assert np.all(np.frombuffer(copy.tobytes(), np.float32) == value)
            elif isinstance(source, dlpack_abi.Tensor):
                assert np.all(np.frombuffer(source.tobytes(), np.float32) == value)
            else:
                return
        except BufferError as error:
            self.refused(how, error)
            return
        event(f"consumed: {how}")

    @precondition(lambda self: self.uses)
    @rule(data=st.data())
    def release(self, data):
        index = data.draw(st.integers(0, len(self.uses) - 1))
        self.uses.pop(index).release()

    @precondition(lambda self: self.objects)
    @rule(data=st.data())
    def drop(self, data):
        del self.objects[data.draw(st.integers(0, len(self.objects) - 1))]

    @rule(stream=st.integers(0, 3), steps=st.integers(1, 4))
    def run(self, stream, steps):
        for _ in range(steps):
            self.gpu.step(stream)

    @rule(stream=st.integers(0, 3))
    def make_current(self, stream):
        self.gpu.current = stream

    @invariant()
    def every_read_so_far_saw_its_write(self):
        assert self.gpu.violations() == []

    def teardown(self):
        try:
            for use in self.uses:
                use.release()
            self.uses.clear()
            self.objects.clear()
            self.gpu.drain()
            assert self.gpu.violations() == []
        finally:
            self.gpu.close()


class ExchangesWithoutRuntime(Exchanges):
    runtime = False


SETTINGS = settings(max_examples=300, stateful_step_count=30, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
TestExchangesWithRuntime = Exchanges.TestCase
TestExchangesWithRuntime.settings = SETTINGS
TestExchangesWithoutRuntime = ExchangesWithoutRuntime.TestCase
TestExchangesWithoutRuntime.settings = SETTINGS


def test_a_readonly_argument_waits_for_the_producer_before_the_host_reads(gpu):
    array = gpu.array(N, 5.0, P)  # the write is still queued on P
    assert gpu.host_total(array) == 5.0 * N, "the host read after the producer's write"
    gpu.drain()
    assert gpu.violations() == []


@pytest.mark.parametrize("gpu", [False], indirect=True)
def test_without_a_runtime_a_readonly_argument_of_device_memory_is_refused(gpu):
    array = gpu.array(N, 5.0, P)
    with pytest.raises(BufferError):
        gpu.host_total(array)  # the host cannot wait for P's work: refused, not read early
    gpu.drain()
    assert gpu.violations() == []
