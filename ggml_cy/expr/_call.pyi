# hand-written: ggml_cy.expr._call, evaluate()'s per-call path. evaluate is the public
# ggml_cy.evaluate (typed as it was in evaluate.py); the rest is internal.
# tools/gen_stubs.py leaves this file alone; tests/test_eco_types.py checks that every
# public name of the compiled module appears here.
from collections.abc import Callable
from typing import Any

import numpy as np

CACHE: dict[Any, Compiled]
CACHE_SIZE: int
KEEP_SCRATCH_BYTES: int

class Compiled:
    ctx: Any
    graph: Any
    keep: Any
    names: tuple[str, ...]
    numbers: dict[str, np.ndarray[Any, Any]] | None
    plan: Any
    plan_fresh: bool
    plan_threads: int
    scratch: list[tuple[Any, int]]
    scratch_buf: np.ndarray[Any, Any] | None
    scratch_bytes: int
    scratch_idx: list[int]
    tensors: list[Any]
    def __init__(self, ctx: Any, graph: Any, tensors: Any, names: Any, keep: Any,
                 scratch: Any, scratch_idx: Any, result: Any) -> None: ...

def evaluate(expr: str, /, n_threads: int | None = None, out: np.ndarray[Any, Any] | None = None,
             **arrays: Any) -> Any: ...
def file(key: Any, compiled: Compiled) -> None: ...
def keep_untouched_scratch(compiled: Any, buf: Any) -> None: ...
def layout_key(expr: Any, out: Any, arrays: dict[str, Any]) -> tuple[Any, ...] | None: ...
def run_compiled(c: Compiled, arrays: dict[str, Any], result: np.ndarray[Any, Any],
                 n_threads: int, key: Any, fresh: bool) -> int: ...
def set_paths(full_path: Callable[..., Any], fpe_reaction: Callable[..., Any]) -> None: ...
def take(key: Any) -> Compiled | None: ...
