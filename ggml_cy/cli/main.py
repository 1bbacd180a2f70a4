"""Command line: ``ggml-cy info|demo|gguf|quantize`` (also ``python -m ggml_cy ...``)."""
import argparse
import sys


def info_lines():
    """The lines `python -m ggml_cy info` prints (ggml_cy.show_config()'s)."""
    from ggml_cy import _config
    return _config.lines()


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="ggml-cy", description="ggml_cy: ggml's core as a Cython package")
    sub = parser.add_subparsers(dest="command", metavar="{info,demo,gguf,quantize}")
    sub.add_parser("info", help="version, build and CPU instruction sets, dispatch level, OpenMP, threads, CUDA")
    sub.add_parser("demo", help="a short tour: context, tensors, views, ops, graph")
    from ggml_cy.cli import gguf_cmd
    gguf_cmd.add_parser(sub)
    from ggml_cy.cli import quantize_cmd
    quantize_cmd.add_parser(sub)
    args = parser.parse_args(argv)
    if args.command == "info":
        for line in info_lines():
            print(line)
        return 0
    if args.command == "demo":
        from ggml_cy.cli.demo import run_demo
        return run_demo()
    if args.command == "gguf":
        return gguf_cmd.run(args)
    if args.command == "quantize":
        return quantize_cmd.run(args)
    parser.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
