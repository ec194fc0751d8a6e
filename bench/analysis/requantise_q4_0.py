"""The shipped Q4_K_M requantised with every matrix in Q4_0, for the batching measurement (not shipped).

.venv/bin/python bench/analysis/requantise_q4_0.py SHIPPED.gguf OUT.gguf
"""

import argparse
import ctypes
import sys


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("shipped", help="the shipped Q4_K_M GGUF")
    parser.add_argument("out", help="where the Q4_0 GGUF is written")
    args = parser.parse_args()
    import llama_cpp  # the compiled library: loaded only to quantise

    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = llama_cpp.LLAMA_FTYPE_MOSTLY_Q4_0
    params.allow_requantize = True
    params.pure = True  # every matrix in Q4_0, the output head and token embedding too
    params.nthread = 2
    sys.exit(llama_cpp.llama_model_quantize(args.shipped.encode(), args.out.encode(), ctypes.byref(params)))


if __name__ == "__main__":
    main()
