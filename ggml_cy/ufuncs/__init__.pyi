# hand-written: ggml_cy.ufuncs re-exports the numpy-style functions of the compiled
# _eager module (their stubs: _eager.pyi) and the thread settings.
from types import TracebackType
from typing import Any

from ggml_cy.ufuncs._eager import (
    add as add,
    subtract as subtract,
    multiply as multiply,
    divide as divide,
    divide as true_divide,
    floor_divide as floor_divide,
    remainder as remainder,
    remainder as mod,
    fmod as fmod,
    maximum as maximum,
    minimum as minimum,
    fmax as fmax,
    fmin as fmin,
    power as power,
    logical_and as logical_and,
    logical_or as logical_or,
    logical_xor as logical_xor,
    equal as equal,
    not_equal as not_equal,
    greater as greater,
    greater_equal as greater_equal,
    less as less,
    less_equal as less_equal,
    logical_not as logical_not,
    negative as negative,
    absolute as absolute,
    absolute as abs,
    sign as sign,
    square as square,
    sqrt as sqrt,
    exp as exp,
    expm1 as expm1,
    log as log,
    log1p as log1p,
    log2 as log2,
    erf as erf,
    sin as sin,
    cos as cos,
    tanh as tanh,
    floor as floor,
    ceil as ceil,
    rint as rint,
    trunc as trunc,
    prelu as prelu,
    relu as relu,
    leaky_relu as leaky_relu,
    elu as elu,
    sigmoid as sigmoid,
    silu as silu,
    gelu as gelu,
    gelu_erf as gelu_erf,
    gelu_quick as gelu_quick,
    hardswish as hardswish,
    hardsigmoid as hardsigmoid,
    softplus as softplus,
    step as step,
    clip as clip,
    clamp as clamp,
    scale as scale,
    copyto as copyto,
    ascontiguousarray as ascontiguousarray,
    astype as astype,
    bfloat16 as bfloat16,
)

BINARY: tuple[str, ...]
UNARY: tuple[str, ...]
ACTIVATIONS: tuple[str, ...]
CONVERSIONS: tuple[str, ...]
THREADS: tuple[str, ...]
__all__: list[str]

def set_num_threads(n: int) -> int: ...
def get_num_threads() -> int: ...

class threads:
    n: int
    def __init__(self, n: int) -> None: ...
    def __enter__(self) -> threads: ...
    def __exit__(self, *exc: object) -> bool: ...

# --- issue 13: attention on numpy arrays (ops3)
def flash_attn(q: Any, k: Any, v: Any, mask: Any = ..., *, scale: float | None = ...,
               max_bias: float = ..., logit_softcap: float = ...,
               n_threads: int | None = ...) -> Any: ...
