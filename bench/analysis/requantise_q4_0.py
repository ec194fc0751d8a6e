"""The shipped Q4_K_M requantised with every matrix in Q4_0, for the batching measurement (not shipped).

.venv/bin/python bench/analysis/requantise_q4_0.py SHIPPED.gguf OUT.gguf
"""

import ctypes
import sys

import llama_cpp

params = llama_cpp.llama_model_quantize_default_params()
params.ftype = llama_cpp.LLAMA_FTYPE_MOSTLY_Q4_0
params.allow_requantize = True
params.pure = True  # every matrix in Q4_0, the output head and token embedding too
params.nthread = 2
sys.exit(llama_cpp.llama_model_quantize(sys.argv[1].encode(), sys.argv[2].encode(), ctypes.byref(params)))
