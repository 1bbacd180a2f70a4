"""Front end: the command line (``ggml-cy info|demo``, ``python -m ggml_cy``) and the
demo tour. ``main.main`` is the console script's entry point."""
