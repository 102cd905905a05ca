#!/usr/bin/env bash
# Builds the ttap_torch module (src/detect/torch_module.cpp) against the libtorch inside a
# Python's PyTorch wheel: on a GPU machine, the CUDA libtorch that ttap's own build did not
# link. The rest of ttap does not change: point it at the module with TTAP_TORCH_MODULE.
#
#   bash scripts/bench/build_torch_module.sh OUT.so [PYTHON]
#   TTAP_TORCH_MODULE=OUT.so build/ttap analyze trace.json --device cuda
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: build_torch_module.sh OUT.so [PYTHON]}
py=${2:-python3}
read -r tdir abi < <("$py" -c 'import os, torch; print(os.path.dirname(torch.__file__), int(torch._C._GLIBCXX_USE_CXX11_ABI))')
if [[ ! -d $tdir/include/torch ]]; then
  echo "build_torch_module.sh: $tdir has no include/torch (not a PyTorch wheel's layout)" >&2
  exit 2
fi
libs=(-ltorch -ltorch_cpu -lc10)
# libtorch_cuda registers the CUDA backend when loaded: link it even though no symbol of it is used.
[[ -e $tdir/lib/libtorch_cuda.so ]] && libs+=(-ltorch_cuda -lc10_cuda)
"${CXX:-g++}" -O2 -std=c++17 -shared -fPIC -D_GLIBCXX_USE_CXX11_ABI="$abi" -Isrc/detect \
  -isystem "$tdir/include" -isystem "$tdir/include/torch/csrc/api/include" \
  src/detect/torch_module.cpp -o "$out" -L"$tdir/lib" -Wl,-rpath,"$tdir/lib" -Wl,--no-as-needed "${libs[@]}"
echo "built $out against $("$py" -c 'import torch; print(torch.__version__)') in $tdir"
