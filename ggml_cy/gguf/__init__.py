"""Front end: GGUF, ggml's model file format.

* ``load(path)`` -> ``GGUFFile``: the header, metadata and tensor infos parsed in compiled
  code (``_gguf``), metadata decoded lazily, tensors as zero-copy views of a read-only
  mapping (``.raw(name)``, ``.numpy(name)``); malformed files raise ``GGUFError``.
* ``save(path, metadata, tensors)`` and the streaming ``GGUFWriter``.
* ggml's API: ``gguf_init_from_file(path, no_alloc=, ctx=)`` and the ``gguf_get_*``
  accessors (``api``).
"""
from ggml_cy.gguf.constants import (GGUFError, GGUFValueType, GGUF_MAGIC, GGUF_VERSION,
                                    DEFAULT_ALIGNMENT, MAX_ALIGNMENT, MAX_ARRAY_DEPTH,
                                    MAX_KEY_LENGTH, MAX_NAME_LENGTH)
from ggml_cy.gguf.reader import GGUFFile, Metadata, TensorInfo, load
from ggml_cy.gguf.writer import GGUFWriter, RawTensor, Value, save
from ggml_cy.gguf import api
from ggml_cy.gguf.api import *  # noqa: F401,F403  (ggml's gguf_* names)

__all__ = ["GGUFError", "GGUFValueType", "GGUFFile", "Metadata", "TensorInfo", "load",
           "GGUFWriter", "RawTensor", "Value", "save",
           "GGUF_MAGIC", "GGUF_VERSION", "DEFAULT_ALIGNMENT", "MAX_ALIGNMENT",
           "MAX_ARRAY_DEPTH", "MAX_KEY_LENGTH", "MAX_NAME_LENGTH", "api"] + api.__all__
