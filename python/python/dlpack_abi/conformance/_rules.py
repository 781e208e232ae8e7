"""The rules the checker applies, each with the section of the specification it checks, and the
verdicts it reports."""
from dataclasses import asdict, dataclass, field

#: Verdicts. ``pass``: followed. ``fail``: broken (or, in the consumer check, mishandled).
#: ``crash``: the library under test killed its process. ``refused``: a clean refusal the spec
#: allows (an optional feature, a ``BufferError``). ``warn``: a recommendation not followed.
#: ``n/a``: the rule does not apply to this library, or the checker cannot check it here; the
#: detail says why (device memory the producer will not copy to the CPU, a library that is not
#: installed). n/a is neither a pass nor a failure: it never sets the exit code.
VERDICTS = ("pass", "fail", "crash", "refused", "warn", "n/a")
FAILING = ("fail", "crash")

DLPACK = "dlpack-1.3.md"
ARROW = "arrow-c-interfaces.md"

#: rule id -> (spec reference, what it checks).
PRODUCER_RULES = {
    "dlpack.device": (f"{DLPACK} §6.4", "__dlpack_device__ returns (device_type, device_id), ints equal to the exported tensor's device"),
    "dlpack.call.plain": (f"{DLPACK} §6.1", "__dlpack__() returns a 'dltensor' capsule, or raises BufferError (legacy export refused)"),
    "dlpack.call.max_version_1_0": (f"{DLPACK} §6.1", "__dlpack__(max_version=(1, 0)) returns a versioned tensor of major 1"),
    "dlpack.call.max_version_1_3": (f"{DLPACK} §6.1", "__dlpack__(max_version=(1, 3)) returns a versioned tensor of major 1"),
    "dlpack.call.max_version_2_0": (f"{DLPACK} §6.1", "__dlpack__(max_version=(2, 0)) returns the producer's own 1.x version (max_version >= ours)"),
    "dlpack.call.copy_true": (f"{DLPACK} §6.1, §4", "copy=True returns a copy marked IS_COPIED in other memory, with the source's elements where the host can read them (or raises BufferError)"),
    "dlpack.call.copy_false": (f"{DLPACK} §6.1, §4", "copy=False shares the memory of a plain export and does not set IS_COPIED"),
    "dlpack.call.dl_device": (f"{DLPACK} §6.1", "dl_device equal to __dlpack_device__() is accepted and shares the memory"),
    "dlpack.call.to_cpu": (f"{DLPACK} §6.1, §4", "data not on the CPU: dl_device=(1, 0), copy=True gives a CPU tensor marked IS_COPIED with the source's elements, or raises BufferError"),
    "dlpack.call.stream_none": (f"{DLPACK} §6.2", "stream=None is accepted (the CPU's only stream; CUDA's and ROCm's legacy default stream)"),
    "dlpack.call.stream_minus_one": (f"{DLPACK} §6.2", "stream=-1 (on CUDA and ROCm: do not synchronise) is accepted or refused with an exception, never a crash"),
    "dlpack.call.stream_device": (f"{DLPACK} §6.2", "CUDA or ROCm data: the streams consumers pass (CUDA 1 and 2, ROCm 0) give a valid tensor or an exception (support is optional), never a crash"),
    "dlpack.capsule.name": (f"{DLPACK} §6.3", "capsules are named 'dltensor_versioned' (versioned) or 'dltensor' (legacy)"),
    "dlpack.capsule.unconsumed": (f"{DLPACK} §6.3, §5.1", "destroying an unconsumed capsule calls the deleter exactly once"),
    "dlpack.capsule.used": (f"{DLPACK} §6.3", "destroying a capsule renamed 'used_*' by its consumer does not call the deleter again"),
    "dlpack.fields.valid": (f"{DLPACK} §3, §5", "every field of the tensor passes dlpack-abi's validation"),
    "dlpack.fields.values": (f"{DLPACK} §5.3, §5.4", "shape, dtype and the elements read through strides and byte_offset equal the source's (device memory: read through the producer's copy to the CPU)"),
    "dlpack.fields.strides": (f"{DLPACK} §5.3", "a 1.2+ tensor with ndim > 0 has non-NULL strides"),
    "dlpack.flags.read_only": (f"{DLPACK} §4, §6.1", "a read-only source comes out READ_ONLY, and never as a legacy capsule (which cannot say so)"),
    "dlpack.flags.unknown": (f"{DLPACK} §4", "no flag bits beyond those 1.3 defines"),
    "dlpack.exchange.table": (f"{DLPACK} §6.5, §7", "type(x).__dlpack_c_exchange_api__, when present, is a 'dlpack_exchange_api' capsule of a major-1 table whose required slots are non-NULL"),
    "dlpack.exchange.export": (f"{DLPACK} §7", "managed_tensor_from_py_object_no_sync exports a valid tensor of the object's elements (device memory: the memory and layout of __dlpack__'s export), deleted once"),
    "dlpack.exchange.allocator": (f"{DLPACK} §7", "managed_tensor_allocator returns a valid tensor of the prototype on the sample's device (a failure there other than the CPU: refused), whose every described byte can be written where the host can"),
    "dlpack.exchange.import": (f"{DLPACK} §7", "managed_tensor_to_py_object_no_sync gives back an object with the same elements (device memory: read through its copy to the CPU)"),
    "dlpack.exchange.stream": (f"{DLPACK} §7", "current_work_stream succeeds for each device the samples lie on (the CPU included)"),
    "arrow.schema.present": (f"{ARROW} §7", "an object with __arrow_c_array__/__arrow_c_stream__ also has __arrow_c_schema__ (consumers such as DuckDB read the schema first)"),
    "arrow.schema.capsule": (f"{ARROW} §7, §3", "__arrow_c_schema__() returns a valid 'arrow_schema' capsule"),
    "arrow.array.capsules": (f"{ARROW} §7, §3", "__arrow_c_array__() returns valid ('arrow_schema', 'arrow_array') capsules"),
    "arrow.array.requested": (f"{ARROW} §7", "requested_schema equal to the object's own schema is honoured"),
    "arrow.array.incompatible": (f"{ARROW} §7", "an incompatible requested_schema (another field count) raises"),
    "arrow.device.capsules": (f"{ARROW} §7, §5.4", "__arrow_c_device_array__() returns valid ('arrow_schema', 'arrow_device_array') capsules; CPU data has no sync_event (device data may)"),
    "arrow.device.kwargs": (f"{ARROW} §7", "device methods accept an unknown keyword whose value is None and raise NotImplementedError for one that is not"),
    "arrow.release.unconsumed": (f"{ARROW} §5.1, §7", "destroying an unconsumed array capsule calls release exactly once"),
    "arrow.release.moved": (f"{ARROW} §5.1, §7", "destroying a capsule whose struct was moved out does not call release"),
    "arrow.stream.capsule": (f"{ARROW} §7, §5.3", "__arrow_c_stream__() returns an 'arrow_array_stream' capsule whose schema and every batch are valid, then ends"),
    "arrow.stream.release": (f"{ARROW} §5.1, §5.3", "destroying an unconsumed stream capsule calls release exactly once"),
    "arrow.stream.error": (f"{ARROW} §5.3", "a failing stream returns a non-zero errno from get_next and a message from get_last_error"),
}

#: The DLPack cases run on host memory and, for a library with device memory (its adapter's
#: ``device_memory``), again on the device, the result read back through its copy to the CPU.
CONSUMER_RULES = {
    "consumer.contiguous": (f"{DLPACK} §5.3", "a C-contiguous float32 tensor"),
    "consumer.strides": (f"{DLPACK} §5.3", "a column-major tensor (strides in elements)"),
    "consumer.negative_strides": (f"{DLPACK} §5.3", "negative strides"),
    "consumer.byte_offset": (f"{DLPACK} §5.4", "a non-zero byte_offset (the first element is data + byte_offset)"),
    "consumer.read_only": (f"{DLPACK} §4", "READ_ONLY: the result must not let anyone write the producer's memory"),
    "consumer.versioned_only": (f"{DLPACK} §6.1", "a producer that exports versioned tensors only (BufferError without max_version)"),
    "consumer.legacy_only": (f"{DLPACK} §6.1", "a legacy producer whose __dlpack__ takes no max_version (TypeError: retry the legacy call)"),
    "consumer.null_strides_legacy": (f"{DLPACK} §5.3", "a legacy tensor with NULL strides (compact row-major)"),
    "consumer.zero_size": (f"{DLPACK} §5.6", "an empty tensor (shape (0, 3))"),
    "consumer.bool": (f"{DLPACK} §5.5", "a kDLBool tensor"),
    "consumer.subbyte_packed": (f"{DLPACK} §5.5", "float4_e2m1fn, packed two per byte"),
    "consumer.subbyte_padded": (f"{DLPACK} §4, §5.5", "float4_e2m1fn, one per byte (IS_SUBBYTE_TYPE_PADDED)"),
    "consumer.read_only_exchange": (f"{DLPACK} §4, §7", "a READ_ONLY dlpack_abi.Tensor (which offers the C exchange API): the result must not let anyone write it"),
    "consumer.major_2": (f"{DLPACK} §5.2", "a tensor of major version 2 must be refused, its deleter called"),
    "consumer.raises": (f"{DLPACK} §6.1", "a producer whose __dlpack__ raises: the exception reaches the caller"),
    "consumer.stream": (f"{DLPACK} §6.2", "the stream passed suits the data's device: None on the CPU, never 0 on CUDA, never 1 or 2 on ROCm"),
    "consumer.arrow_nulls_offset": (f"{ARROW} §3, §5.1", "an Arrow int64 array with nulls and an offset"),
    "consumer.arrow_string_view": (f"{ARROW} §3", "a pyarrow string_view array (variadic buffers) is read or refused, never a crash"),
    "consumer.arrow_stream_error": (f"{ARROW} §5.3", "an Arrow stream that fails after one batch: an exception with the producer's message"),
}


@dataclass
class Result:
    """One rule's verdict for one library. ``unchecked``: an n/a because the checker could not
    check the rule here (the detail says why), not because it does not apply."""

    rule: str
    spec: str
    verdict: str
    detail: str = ""
    samples: list = field(default_factory=list)
    unchecked: bool = False

    def to_json(self):
        return asdict(self)


def summarize(results):
    """The exit code for CI: 1 when a rule failed or the library crashed, else 0."""
    return 1 if any(r.verdict in FAILING for r in results) else 0


def table(results, title=""):
    """A plain-text table: rule, spec reference, verdict, detail."""
    rows = [("rule", "spec", "result", "detail")]
    rows += [(r.rule, r.spec, r.verdict, r.detail) for r in results]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = [title] if title else []
    for row in rows:
        lines.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:3])) + "  " + row[3])
    return "\n".join(lines)
