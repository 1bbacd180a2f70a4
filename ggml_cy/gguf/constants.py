"""GGUF's constants, its value types and its error class (no compiled code here).

The limits below are ggml_cy's choices where the GGUF specification leaves a case open;
README's "GGUF files" section lists them.
"""
import enum

__all__ = ["GGUFError", "GGUFValueType", "GGUF_MAGIC", "GGUF_VERSION", "DEFAULT_ALIGNMENT",
           "MAX_ALIGNMENT", "MAX_KEY_LENGTH", "MAX_NAME_LENGTH", "MAX_ARRAY_DEPTH",
           "MAX_DIMS"]

GGUF_MAGIC = b"GGUF"
GGUF_VERSION = 3            # what the writer writes; the reader reads 2 and 3
DEFAULT_ALIGNMENT = 32      # ggml's GGUF_DEFAULT_ALIGNMENT
MAX_ALIGNMENT = 1 << 30     # general.alignment above this is refused as absurd
MAX_KEY_LENGTH = 65535      # the specification's limit on a key (2**16 - 1 bytes)
MAX_NAME_LENGTH = 63        # ggml's GGML_MAX_NAME (64) minus the terminating NUL
MAX_ARRAY_DEPTH = 32        # arrays of arrays nest at most this deep
MAX_DIMS = 4                # ggml's GGML_MAX_DIMS


class GGUFError(ValueError):
    """A GGUF file that cannot be read: the message names the field and its byte offset."""


class GGUFValueType(enum.IntEnum):
    """The 13 metadata value types of GGUF (gguf_type in ggml's gguf.h)."""
    UINT8 = 0
    INT8 = 1
    UINT16 = 2
    INT16 = 3
    UINT32 = 4
    INT32 = 5
    FLOAT32 = 6
    BOOL = 7
    STRING = 8
    ARRAY = 9
    UINT64 = 10
    INT64 = 11
    FLOAT64 = 12

    def __str__(self):
        return self.name.lower()
