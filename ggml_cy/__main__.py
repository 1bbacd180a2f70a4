"""``python -m ggml_cy``: the command line (ggml_cy.cli.main)."""
import sys

from ggml_cy.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
