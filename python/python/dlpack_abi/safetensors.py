"""safetensors files as DLPack tensors, without a copy.

``open(path)`` maps the file and checks its header; each tensor is a read-only ``Tensor`` over
the mapping, which NumPy and PyTorch import zero-copy (``np.from_dlpack``, ``torch.from_dlpack``).
JAX keeps its own buffers: ``jax.numpy.asarray(np.from_dlpack(t))`` makes the one copy it needs.
The file must not be modified while mapped; every tensor keeps the mapping alive, and the file is
unmapped when the last one is gone.

>>> import numpy as np, safetensors.numpy, tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "model.safetensors")
>>> safetensors.numpy.save_file({"b": np.ones(2, np.float16), "w": np.eye(2)}, path)
>>> weights = {name: np.from_dlpack(t) for name, t in dlpack_abi.safetensors.load(path).items()}
>>> weights["w"]
array([[1., 0.],
       [0., 1.]])
"""

from __future__ import annotations

import os

from . import SafeTensors, Tensor  # the compiled names, bound before this module loads

__all__ = ["SafeTensors", "load", "open"]


def open(path: str | os.PathLike[str]) -> SafeTensors:  # noqa: A001 - the module's verb
    """Map the safetensors file at ``path`` and check its header (``SafeTensors(path)``).

    >>> import numpy as np, safetensors.numpy, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "one.safetensors")
    >>> safetensors.numpy.save_file({"x": np.arange(3, dtype=np.int64)}, path)
    >>> f = dlpack_abi.safetensors.open(path)
    >>> np.from_dlpack(f["x"]).tolist(), f.describe("x")
    ([0, 1, 2], ((0, 64, 1), (3,)))
    """
    return SafeTensors(path)


def load(path: str | os.PathLike[str]) -> dict[str, Tensor]:
    """Every tensor of the safetensors file at ``path``, by name in file order, each a read-only
    ``Tensor`` over one shared mapping (no copy).

    >>> import numpy as np, safetensors.numpy, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "two.safetensors")
    >>> safetensors.numpy.save_file({"a": np.zeros(2), "b": np.ones(1)}, path)
    >>> list(dlpack_abi.safetensors.load(path))
    ['a', 'b']
    """
    file = SafeTensors(path)
    return {name: file[name] for name in file.keys()}
