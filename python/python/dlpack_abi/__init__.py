from .dlpack_abi import *  # noqa: F401,F403 - the compiled extension's names
from .dlpack_abi import __doc__  # noqa: F401

__all__ = dlpack_abi.__all__  # noqa: F405

from . import safetensors  # noqa: E402,F401 - dlpack_abi.safetensors.open(path)
