#!/usr/bin/env bash
# Create .venv-peers with PyTorch, PaddlePaddle (CPU) and ONNX Runtime for the benchmarks.
# These are reference frameworks only, never dependencies of oar.
# Idempotent: does nothing when both already import.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${PEERS_VENV:-$ROOT/.venv-peers}"
PY="${PEERS_BASE_PYTHON:-/root/.pyenv/versions/3.11.7/bin/python3}"
command -v "$PY" >/dev/null 2>&1 || PY=python3

if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv "$VENV"
fi
# keep the (multi-GB) environment out of git
[ -f "$VENV/.gitignore" ] || echo '*' > "$VENV/.gitignore"

has() { "$VENV/bin/python" -c "import $1" >/dev/null 2>&1; }

pkgs=()
has numpy || pkgs+=(numpy)
# PyPI only carries CUDA builds of torch for Linux x86_64; they run fine on CPU.
has torch || pkgs+=(torch)
has paddle || pkgs+=(paddlepaddle)
# ONNX Runtime runs the PyTorch twins exported to ONNX (benchmarks/inference.py)
has onnxruntime || pkgs+=(onnxruntime)
has onnx || pkgs+=(onnx)
has onnxscript || pkgs+=(onnxscript)

if [ ${#pkgs[@]} -eq 0 ]; then
    echo "peers already installed in $VENV"
else
    echo "installing into $VENV: ${pkgs[*]}"
    "$VENV/bin/python" -m pip install --upgrade "${pkgs[@]}"
fi

# torch.compile's inductor backend (training.py and inference.py's torch-compile
# rows) builds its CPU kernels with the system C++ compiler at run time.
command -v "${CXX:-g++}" >/dev/null 2>&1 || command -v clang++ >/dev/null 2>&1 ||
    echo "warning: no C++ compiler found (g++ or clang++): the torch-compile rows will fail" >&2

"$VENV/bin/python" - <<'EOF'
import numpy, torch, paddle
print(f"numpy {numpy.__version__}, torch {torch.__version__}, paddle {paddle.__version__}")
EOF
