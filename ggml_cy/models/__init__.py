"""Model runners on ggml_cy's graph: ``ggml_cy.models.llama`` (llama-architecture GGUF
files, llama.cpp's LLM_ARCH_LLAMA graph)."""
