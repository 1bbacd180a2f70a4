"""Front end: GGUF, ggml's model file format (reader, writer, ggml's gguf_* API).

Empty until the GGUF issue fills it; the format code goes here.
"""
